def parse_line(line, sep=","):
    """Split one CSV line into fields; double quotes group, "" is a literal quote."""
    if line == "":
        return []
    fields = []
    field = []
    quoted = False
    i = 0
    while i < len(line):
        ch = line[i]
        if quoted:
            if ch == '"' and i + 1 < len(line) and line[i + 1] == '"':
                field.append('"')
                i += 1
            elif ch == '"':
                quoted = False
            else:
                field.append(ch)
        elif ch == '"':
            quoted = True
        elif ch == sep:
            fields.append("".join(field))
            field = []
        else:
            field.append(ch)
        i += 1
    if field:
        fields.append("".join(field))
    return fields


def read_rows(text, sep=","):
    return [parse_line(line, sep) for line in text.splitlines()]
