"""Shortening text for display."""

ELLIPSIS = "..."


def truncate(text, width):
    """``text`` cut to at most ``width`` characters, ending in an ellipsis when cut."""
    if len(text) <= width:
        return text
    return text[:width] + ELLIPSIS


def initials(name):
    """``"Ada Lovelace"`` -> ``"A.L."``."""
    return "".join(part[0].upper() + "." for part in name.split())
