TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off"}


def to_bool(text):
    lowered = text.strip().lower()
    if lowered in TRUE:
        return True
    if lowered in FALSE:
        return False
    raise ValueError(f"not a boolean: {text!r}")


def to_int(text):
    return int(text.strip(), 10)
