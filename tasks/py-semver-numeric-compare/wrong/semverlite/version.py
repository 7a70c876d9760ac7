import functools


@functools.total_ordering
class Version:
    def __init__(self, major, minor, patch):
        self.parts = (major, minor, patch)

    @classmethod
    def parse(cls, text):
        pieces = text.strip().lstrip("v").split(".")
        if len(pieces) != 3 or not all(p.isdigit() for p in pieces):
            raise ValueError(f"not a version: {text!r}")
        return cls(*pieces)

    def __eq__(self, other):
        return self.parts == other.parts

    def __lt__(self, other):
        return tuple(p.zfill(2) for p in self.parts) < tuple(p.zfill(2) for p in other.parts)

    def __str__(self):
        return ".".join(str(p) for p in self.parts)


def latest(versions):
    return str(max(Version.parse(v) for v in versions))
