from .units import UNITS


def format_seconds(seconds):
    """The shortest duration text for a whole number of seconds ('0s' for zero)."""
    if seconds == 0:
        return "0s"
    parts = []
    for unit, size in UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
