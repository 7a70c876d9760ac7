import pytest

from semverlite import Version


def test_parse():
    assert str(Version.parse("v1.2.3")) == "1.2.3"


def test_equal():
    assert Version.parse("1.2.3") == Version.parse("1.2.3")


def test_single_digit_order():
    assert Version.parse("1.2.3") < Version.parse("1.3.0")


def test_parse_rejects():
    with pytest.raises(ValueError):
        Version.parse("1.2")
