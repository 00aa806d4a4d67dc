"""Durations written like 1h30m or 45s."""

import re

_PART = re.compile(r"(\d+)([a-z]+)")


def unit_seconds(unit):
    """Seconds in one ``unit``."""
    if unit == "s":
        return 1
    if unit == "m":
        return 60
    raise ValueError(f"unknown unit {unit!r}")


def parse_duration(text):
    """Total seconds of a duration such as ``"2m5s"``."""
    text = text.strip().lower()
    if not text:
        raise ValueError("empty duration")
    total = 0
    for number, unit in _PART.findall(text):
        total += int(number) * unit_seconds(unit)
    return total


def format_duration(seconds):
    """``seconds`` as ``1h2m3s`` (zero parts left out)."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "") + (f"{secs}s" if secs else "")
    return out or "0s"
