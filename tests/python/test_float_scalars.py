"""Python float (and int-to-float) semantics of native scalar code, against CPython on grids
of special and ordinary values: the same results (bit for bit, NaN for NaN), the same
exception types and messages where CPython raises (ZeroDivisionError, ValueError,
OverflowError), and floats refused where an int is passed (auto mode reruns Python)."""

from __future__ import annotations

import itertools
import math
import struct
from pathlib import Path

import pytest

import torchlower
from test_native_cpu import import_path

CASES = Path(__file__).resolve().parent / "native_cases"

FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 1e-300, 1e300, -1e300, 7.25, -7.25,
          float("inf"), float("-inf"), float("nan"), 0.1, 2.5, -2.5, 1e-5]
INTS = [0, 1, -1, 2, -3, 7, 2**53, -(2**53), 2**53 + 1, 2**62, -(2**63)]


@pytest.fixture(scope="module")
def compiled():
    module = import_path(CASES / "float_semantics.py")
    names = ["power", "divide", "int_divide", "root", "int_power", "mixed", "compare", "logarithm", "exponential",
             "with_defaults", "calls_with_defaults", "log_two", "floor", "ceil", "runtime_power",
             "truncate", "truncate_negated", "int_of_int"]
    functions = {name: torchlower.compile(getattr(module, name)) for name in names}
    for name, fn in functions.items():
        assert fn.route == "native", f"{name}: {fn.reason}"
    return module, functions


def bits(x: float) -> bytes:
    return b"nan" if math.isnan(x) else struct.pack("<d", x)


def same_outcome(native, python, *args) -> None:
    try:
        want = python(*args)
    except Exception as error:  # noqa: BLE001 - the native call must raise the same
        if isinstance(error, TypeError):
            raise
        with pytest.raises(Exception) as raised:
            native(*args)
        if "is complex in Python" in str(raised.value):
            # CPython went to complex arithmetic (and raised there): refused natively
            assert isinstance(raised.value, ValueError) and str(error) == "complex exponentiation", args
            return
        assert type(raised.value) is type(error) and str(raised.value) == str(error), (args, raised.value, error)
        return
    try:
        got = native(*args)
    except ValueError as error:
        # a negative float to a fractional power is complex in Python, an int to a negative
        # int power a float: refused natively
        assert isinstance(want, complex) or (isinstance(want, float) and "native code refuses" in str(error)), (args, error)
        return
    except OverflowError as error:
        # refused natively (auto mode reruns Python): int true division beyond 2**53, and an
        # int result beyond 64 bits
        beyond_53 = any(isinstance(a, int) and abs(a) > 2**53 for a in args) and "true division" in str(error)
        beyond_64 = isinstance(want, int) and not -(2**63) <= want < 2**63 and "integer overflow" in str(error)
        assert beyond_53 or beyond_64, (args, error)
        return
    assert type(got) is type(want), (args, got, want)
    assert bits(got) == bits(want), (args, got, want)


def test_float_power_and_division_match_cpython(compiled):
    module, native = compiled
    for a, b in itertools.product(FLOATS, FLOATS):
        same_outcome(native["power"], module.power, a, b)
        same_outcome(native["divide"], module.divide, a, b)


def test_int_true_division_and_int_power(compiled):
    module, native = compiled
    for a, b in itertools.product(INTS, INTS):
        same_outcome(native["int_divide"], module.int_divide, a, b)
    for a in INTS:
        same_outcome(native["int_power"], module.int_power, a)


def test_sqrt_and_mixed_arithmetic(compiled):
    module, native = compiled
    for a in FLOATS:
        same_outcome(native["root"], module.root, a)
        for n in INTS[:6]:
            same_outcome(native["mixed"], module.mixed, a, n)


def test_log_and_exp_match_cpython(compiled):
    module, native = compiled
    for a in FLOATS + [1e-320, 709.0, 710.0, -745.0, -746.0]:
        same_outcome(native["logarithm"], module.logarithm, a)
        same_outcome(native["exponential"], module.exponential, a)


def test_log2_floor_ceil_and_run_time_int_powers_match_cpython(compiled):
    """math.log2 / floor / ceil / trunc and int(): CPython's values, its ValueError for log2 at and below zero and
    for floor(nan), its OverflowError for floor(±inf); an int beyond 64 bits, and an int to a
    negative power known only at run time (a float in Python), refuse natively."""
    module, native = compiled
    for a in FLOATS + [4.0, 1024.0, 3.0000001, -0.9999999, 2.0**62, 2.0**63, -(2.0**63), 1e19]:
        same_outcome(native["log_two"], module.log_two, a)
        same_outcome(native["floor"], module.floor, a)
        same_outcome(native["ceil"], module.ceil, a)
        same_outcome(native["truncate"], module.truncate, a)
        same_outcome(native["truncate_negated"], module.truncate_negated, a)
    for a, b in itertools.product(INTS, [0, 1, 2, 3, 7, 63, 64, -1, -2]):
        same_outcome(native["runtime_power"], module.runtime_power, a, b)
    for n in [0, 1, -1, 7, 2**40]:
        same_outcome(native["int_of_int"], module.int_of_int, n)


def test_literal_defaults_are_applied_as_python_applies_them(compiled):
    module, native = compiled
    for a in FLOATS:
        same_outcome(native["with_defaults"], module.with_defaults, a)
        same_outcome(lambda a: native["with_defaults"](a, 4, negate=True), lambda a: module.with_defaults(a, 4, negate=True), a)
        same_outcome(native["calls_with_defaults"], module.calls_with_defaults, a)


def test_float_comparisons_match_cpython(compiled):
    module, native = compiled
    for a, n in itertools.product(FLOATS, INTS):
        try:
            want = module.compare(a, n)
        except Exception:  # noqa: BLE001 - no comparison raises in CPython
            raise
        try:
            got = native["compare"](a, n)
        except OverflowError:
            # an int beyond 2**53 against a float: refused natively (auto mode reruns Python)
            assert abs(n) > 2**53
            continue
        assert got is want, (a, n)


def test_a_float_parameter_refuses_an_int(compiled, native_mode):
    _, native = compiled
    with pytest.raises(TypeError, match="parameter 'a' expects float, got int"):
        native["root"](4)
