import os

from .values import to_bool, to_int

CONVERTERS = {bool: to_bool, int: to_int, str: str}


def from_environ(schema, prefix="", environ=None):
    """Read `schema` ({name: (type, default)}) from PREFIX_NAME environment variables."""
    env = os.environ if environ is None else environ
    settings = {}
    for name, (kind, default) in schema.items():
        raw = env.get(f"{prefix}{name.upper()}")
        settings[name] = default if raw is None else CONVERTERS[kind](raw)
    return settings
