import functools

DEFAULT_ATTEMPTS = 3


def retry(attempts=None, exceptions=(Exception,)):
    """Call the wrapped function up to `attempts` times (3 by default) while it raises one of
    `exceptions`; the last exception propagates."""
    total = DEFAULT_ATTEMPTS if attempts is None else attempts
    if total < 1:
        raise ValueError("attempts must be at least 1")

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for attempt in range(1, total + 1):
                try:
                    return fn(*args, **kwargs)
                except exceptions:
                    if attempt == total:
                        raise
        return wrapper

    return decorate
