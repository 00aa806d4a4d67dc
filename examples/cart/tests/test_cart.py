from shop.cart import Cart


def test_count():
    cart = Cart()
    cart.add("apple", 0.5, 3)
    assert cart.count() == 3


def test_total_uses_quantity():
    cart = Cart()
    cart.add("apple", 0.5, 3)
    assert cart.total() == 1.5
