import re

from .units import UNITS

_PART = re.compile(r"(\d+)([hms])")
_SECONDS = dict(UNITS)


def parse(text):
    """Seconds in a duration like '1h30m'."""
    text = text.strip()
    if not text or _PART.sub("", text) != "":
        raise ValueError(f"invalid duration {text!r}")
    return sum(int(n) * _SECONDS[unit] for n, unit in _PART.findall(text))
