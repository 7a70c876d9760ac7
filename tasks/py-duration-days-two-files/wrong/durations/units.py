# Largest first: format_seconds walks this table in order.
UNITS = [
    ("d", 86400),
    ("h", 3600),
    ("m", 60),
    ("s", 1),
]
