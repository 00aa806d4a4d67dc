import pytest
from timefmt.duration import format_duration, parse_duration

def test_hours_alone_and_round_trip():
    assert parse_duration("2h") == 7200
    assert parse_duration(format_duration(3723)) == 3723

def test_unknown_unit_still_fails():
    with pytest.raises(ValueError):
        parse_duration("3d")

def test_seconds():
    assert parse_duration("45s") == 45
