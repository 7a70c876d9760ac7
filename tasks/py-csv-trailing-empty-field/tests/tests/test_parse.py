from tinycsv import parse_line


def test_simple():
    assert parse_line("a,b,c") == ["a", "b", "c"]


def test_quoted_comma():
    assert parse_line('a,"b,c",d') == ["a", "b,c", "d"]


def test_escaped_quote():
    assert parse_line('"say ""hi""",x') == ['say "hi"', "x"]


def test_empty_line():
    assert parse_line("") == []


def test_trailing_empty_field():
    assert parse_line("a,b,") == ["a", "b", ""]


def test_two_trailing_empty_fields():
    assert parse_line("a,,") == ["a", "", ""]


def test_rows_keep_width():
    from tinycsv import read_rows

    rows = read_rows("id,name,note\n1,ann,\n2,bob,x")
    assert [len(r) for r in rows] == [3, 3, 3]
