def slugify(text, sep="-"):
    """Lower-case ASCII slug: letters and digits kept, everything else becomes `sep`."""
    out = []
    for ch in text.lower():
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        else:
            out.append(sep)
    return "".join(out).replace(sep + sep, sep)
