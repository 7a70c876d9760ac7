def slugify(text, sep="-"):
    """Lower-case ASCII slug: letters and digits kept, every other run becomes one `sep`."""
    words = []
    word = []
    for ch in text.lower():
        if ch.isascii() and ch.isalnum():
            word.append(ch)
        elif word:
            words.append("".join(word))
            word = []
    if word:
        words.append("".join(word))
    return sep.join(words)
