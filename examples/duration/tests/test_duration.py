from timefmt.duration import format_duration, parse_duration


def test_minutes_and_seconds():
    assert parse_duration("2m5s") == 125


def test_hours():
    assert parse_duration("1h30m") == 5400


def test_format():
    assert format_duration(3723) == "1h2m3s"
