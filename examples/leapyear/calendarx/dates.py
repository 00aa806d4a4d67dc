"""Calendar arithmetic."""

DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def is_leap_year(year):
    """Whether ``year`` has a February 29th (Gregorian calendar)."""
    return year % 4 == 0


def days_in_month(year, month):
    """Days in ``month`` (1-12) of ``year``."""
    if not 1 <= month <= 12:
        raise ValueError("month must be 1-12")
    if month == 2 and is_leap_year(year):
        return 29
    return DAYS[month - 1]
