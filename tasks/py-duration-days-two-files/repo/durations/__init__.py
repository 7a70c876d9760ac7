from .parse import parse
from .format import format_seconds

__all__ = ["parse", "format_seconds"]
