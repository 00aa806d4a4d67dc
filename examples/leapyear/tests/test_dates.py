from calendarx.dates import days_in_month, is_leap_year


def test_common_leap_years():
    assert is_leap_year(2024)
    assert not is_leap_year(2023)


def test_month_lengths():
    assert days_in_month(2023, 2) == 28
    assert days_in_month(2024, 2) == 29
    assert days_in_month(2023, 4) == 30
