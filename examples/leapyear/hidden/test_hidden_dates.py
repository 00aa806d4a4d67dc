from calendarx.dates import days_in_month, is_leap_year

def test_centuries():
    assert not is_leap_year(1900)
    assert not is_leap_year(2100)
    assert is_leap_year(2000)

def test_february_1900():
    assert days_in_month(1900, 2) == 28

def test_ordinary():
    assert is_leap_year(1996)
