from shop.cart import Cart

def test_total_of_several_lines():
    cart = Cart()
    cart.add("apple", 0.5, 3)
    cart.add("pear", 1.25)
    cart.add("apple", 0.5)
    assert cart.total() == 3.25
    assert cart.count() == 5

def test_empty():
    assert Cart().total() == 0
