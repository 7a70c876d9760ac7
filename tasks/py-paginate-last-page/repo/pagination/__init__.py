from .core import Paginator, PageOutOfRange

__all__ = ["Paginator", "PageOutOfRange"]
