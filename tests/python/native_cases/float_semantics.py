# Python float semantics of native scalar code, checked against CPython itself by
# tests/python/test_float_scalars.py.
import math


def power(a: float, b: float) -> float:
    return a ** b


def divide(a: float, b: float) -> float:
    return a / b


def int_divide(a: int, b: int) -> float:
    return a / b


def root(a: float) -> float:
    return math.sqrt(a)


def int_power(a: int) -> int:
    return a ** 3


def mixed(a: float, n: int) -> float:
    return (a * n - n / 4 + float(n)) * -a + 1e300 * 1e10


def compare(a: float, n: int) -> bool:
    return a < n <= 2.5 or a == n


def logarithm(a: float) -> float:
    return math.log(a)


def exponential(a: float) -> float:
    return math.exp(a)


def with_defaults(a: float, n: int = 3, scale: float = 0.5, negate: bool = False) -> float:
    y = a * n * scale
    return -y if negate else y


def calls_with_defaults(a: float) -> float:
    return with_defaults(a) + with_defaults(a, 2, negate=True)


def log_two(a: float) -> float:
    return math.log2(a)


def floor(a: float) -> int:
    return math.floor(a)


def ceil(a: float) -> int:
    return math.ceil(a)


def truncate(a: float) -> int:
    return int(a)


def truncate_negated(a: float) -> int:
    return math.trunc(-a)


def int_of_int(n: int) -> int:
    return int(n * 3) - 1


def runtime_power(a: int, b: int) -> int:
    return a ** b
