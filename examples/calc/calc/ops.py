"""The binary operators the calculator knows."""


def add(a, b):
    return a + b


def subtract(a, b):
    return a - b


def multiply(a, b):
    return a * b


def divide(a, b):
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return a // b


BINARY = {"+": add, "-": subtract, "*": multiply, "/": divide}
PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}
