import pytest
from pager import page_count, paginate

ITEMS = list(range(1, 8))

def test_middle_and_last_pages():
    assert paginate(ITEMS, page=2, size=3) == [4, 5, 6]
    assert paginate(ITEMS, page=3, size=3) == [7]

def test_past_the_end():
    assert paginate(ITEMS, page=4, size=3) == []

def test_bad_page():
    with pytest.raises(ValueError):
        paginate(ITEMS, page=0)

def test_count():
    assert page_count(0, 5) == 0
