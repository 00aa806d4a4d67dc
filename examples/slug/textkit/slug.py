"""URL slugs."""

import re
import unicodedata


def ascii_fold(text):
    """``text`` with accents removed."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def slugify(text, sep="_", max_length=None):
    """A lowercase slug of ``text``: words joined by ``sep``."""
    words = re.findall(r"[a-z0-9]+", ascii_fold(text).lower())
    slug = sep.join(words)
    if max_length is not None:
        slug = slug[:max_length].rstrip(sep)
    return slug
