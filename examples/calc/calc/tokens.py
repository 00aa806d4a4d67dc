"""Split an expression into number and operator tokens."""

OPERATORS = "+-*/()"


def tokenize(text):
    """Return a list of tokens: floats for numbers, one-character strings for operators."""
    tokens = []
    number = ""
    for char in text:
        if char.isdigit() or char == ".":
            number += char
            continue
        if number:
            tokens.append(float(number))
            number = ""
        if char in OPERATORS:
            tokens.append(char)
        elif not char.isspace():
            raise ValueError(f"unexpected character {char!r}")
    if number:
        tokens.append(float(number))
    return tokens
