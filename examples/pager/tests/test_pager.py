from pager import page_count, paginate


def test_page_count():
    assert page_count(7, 3) == 3
    assert page_count(6, 3) == 2


def test_first_page():
    assert paginate([1, 2, 3, 4, 5, 6, 7], page=1, size=3) == [1, 2, 3]
