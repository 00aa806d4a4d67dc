from textkit.slug import slugify

def test_accents_and_punctuation():
    assert slugify("Crème Brûlée, 2 ways!") == "creme-brulee-2-ways"

def test_max_length():
    assert slugify("a long title here", max_length=7) == "a-long"

def test_underscore_kept_when_asked():
    assert slugify("A B", sep="_") == "a_b"
