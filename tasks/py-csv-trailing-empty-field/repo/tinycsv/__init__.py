from .parse import parse_line, read_rows

__all__ = ["parse_line", "read_rows"]
