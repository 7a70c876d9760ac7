import pytest

from durations import format_seconds, parse


def test_parse_hours_minutes():
    assert parse("1h30m") == 5400


def test_parse_rejects_garbage():
    with pytest.raises(ValueError):
        parse("1x")


def test_format_minutes():
    assert format_seconds(125) == "2m5s"


def test_round_trip():
    assert parse(format_seconds(3725)) == 3725
