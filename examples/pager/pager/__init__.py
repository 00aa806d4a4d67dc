from pager.core import page_count, paginate

__all__ = ["paginate", "page_count"]
