"""Stand-ins for what a course might ship, for tests/test_no_answer_ships.py's own test: one of
them answers the tiny assignment's `double` exercise, the others do not."""


def twice(x):
    return x + x


def plus_two(x):
    return x + 2


def pair(x, y):
    return x, y
