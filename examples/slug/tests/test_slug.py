from textkit.slug import slugify


def test_default_separator():
    assert slugify("Hello World") == "hello-world"


def test_explicit_separator():
    assert slugify("Hello World", sep="_") == "hello_world"
