from .decorator import retry

__all__ = ["retry"]
