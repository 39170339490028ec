"""Ops with a Python number among their arguments raise eager's error when their tensors do not
fit: tch 0.26 frees a call's temporary Scalar before reading libtorch's error and panics there,
so these ops call libtorch through `tl::scalar_call` (found by `torchlower export --fixtures`:
a mask one column wider made `masked_fill` an internal error instead of eager's RuntimeError)."""

from __future__ import annotations

import uuid

import pytest
import torch

import torchlower
from test_native_cpu import import_path

SOURCE = '''
import torch
from torchlower.types import TensorBoolCpu2D, TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu2D


def fill(x: TensorF32Cpu2D, mask: TensorBoolCpu2D) -> TensorF32Cpu2D:
    return x.masked_fill(mask, float("-inf"))


def pick(mask: TensorBoolCpu2D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.where(mask, x, 0.5)


def pick_left(mask: TensorBoolCpu2D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.where(mask, -1.0, x)


def scores(bias: TensorF32Cpu3D, q: TensorF32Cpu3D, k: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.baddbmm(bias, q, k, beta=0.5, alpha=2.0)


def floored_by(ids: TensorI64Cpu2D, n: int) -> TensorI64Cpu2D:
    return ids // n


def floored_by_tensor(ids: TensorI64Cpu2D, by: TensorI64Cpu2D) -> TensorI64Cpu2D:
    return torch.div(ids, by, rounding_mode="trunc") + torch.floor_divide(ids, by)


def floored_floats(x: TensorF32Cpu2D, y: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return x // y + torch.div(x, s, rounding_mode="trunc") + x // s


def grid_add(i: TensorF32Cpu1D, j: TensorF32Cpu1D) -> TensorF32Cpu2D:
    a, b = torch.meshgrid(i, j, indexing="ij")
    a += 1.0
    return a + b
'''


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    path = tmp_path_factory.mktemp("scalar_errors") / f"scalar_errors_{uuid.uuid4().hex[:8]}.py"
    path.write_text(SOURCE)
    return import_path(path, path.stem)


CASES = {
    "fill": lambda: (torch.randn(9, 8), torch.rand(8, 8) > 0.5),
    "pick": lambda: (torch.rand(8, 8) > 0.5, torch.randn(9, 8)),
    "pick_left": lambda: (torch.rand(3, 4) > 0.5, torch.randn(3, 5)),
    "scores": lambda: (torch.randn(2, 3, 3), torch.randn(2, 3, 4), torch.randn(2, 5, 3)),
}


@pytest.mark.parametrize("name", CASES)
def test_a_shape_eager_refuses_is_eager_s_error_natively(module, name, native_mode):
    fn = torchlower.compile(getattr(module, name))
    assert fn.route == "native", fn.reason
    args = CASES[name]()
    with pytest.raises(RuntimeError) as eager:
        getattr(module, name)(*args)
    with pytest.raises(RuntimeError) as native:
        fn(*args)
    assert str(native.value) == str(eager.value)
    assert "internal error" not in str(native.value)


@pytest.mark.parametrize("name", CASES)
def test_shapes_that_fit_give_eager_s_values(module, name, native_mode):
    fn = torchlower.compile(getattr(module, name))
    fitting = {
        "fill": (torch.randn(8, 8), torch.rand(8, 8) > 0.5),
        "pick": (torch.rand(8, 8) > 0.5, torch.randn(8, 8)),
        "pick_left": (torch.rand(3, 4) > 0.5, torch.randn(3, 4)),
        "scores": (torch.randn(2, 3, 3), torch.randn(2, 3, 4), torch.randn(2, 4, 3)),
    }[name]
    assert torch.equal(fn(*fitting), getattr(module, name)(*fitting))


@pytest.mark.parametrize(
    "name,args",
    [
        ("grid_add", lambda: (torch.randn(3), torch.randn(4))),
        ("floored_by", lambda: (torch.randint(-9, 9, (3, 4)), 0)),
        ("floored_by_tensor", lambda: (torch.randint(-9, 9, (3, 4)), torch.randint(-2, 3, (3, 4)) * torch.tensor([1, 1, 0, 1]))),
        ("floored_by_tensor", lambda: (torch.randint(-9, 9, (3, 4)), torch.randint(-9, 9, (5, 4)))),
    ],
)
def test_number_ops_raise_eagers_error(module, name, args, native_mode):
    """`t += s` & co. with a Python number where eager refuses the write (a grid whose elements
    share memory: meshgrid's expanded view) raise eager's RuntimeError natively (it was an
    internal error: tch's Scalar drop panicked); so do `//`, `floor_divide` and
    `div(…, rounding_mode=…)` of integers by zero (the number divisor through scalar_call) and
    of sizes that do not broadcast."""
    fn = torchlower.compile(getattr(module, name))
    assert fn.route == "native", fn.reason
    eager_args, native_args = args(), args()
    with pytest.raises(RuntimeError) as eager:
        getattr(module, name)(*eager_args)
    with pytest.raises(RuntimeError) as native:
        fn(*native_args)
    assert str(native.value) == str(eager.value)
    assert "internal error" not in str(native.value)


def test_in_place_number_op_through_a_grid_writes_as_eager(module, native_mode):
    """A grid of one column shares no memory: `+=` writes through it into the argument (TL212),
    natively as in eager."""
    fn = torchlower.compile(module.grid_add)
    i, j = torch.randn(3), torch.randn(1)
    native_i, eager_i = i.clone(), i.clone()
    native = fn(native_i, j)
    eager = module.grid_add(eager_i, j)
    assert torch.equal(native, eager) and torch.equal(native_i, eager_i) and not torch.equal(native_i, i)


def test_rounded_division_gives_eagers_values(module, native_mode):
    """Floor and trunc division of int64 (negative operands: floor and trunc differ) and of
    float32 with special values (±0, ±inf, NaN, a zero divisor): eager's values, dtypes, bits."""
    ids, by = torch.randint(-9, 9, (6, 5)), torch.randint(1, 4, (6, 5)) * torch.where(torch.rand(6, 5) > 0.5, 1, -1)
    for name, values in [
        ("floored_by", (ids, 3)),
        ("floored_by", (ids, -2)),
        ("floored_by_tensor", (ids, by)),
    ]:
        native, eager = torchlower.compile(getattr(module, name))(*values), getattr(module, name)(*values)
        assert native.dtype == eager.dtype and torch.equal(native, eager), name
    specials = torch.tensor([0.0, -0.0, 1.5, -1.5, 7.0, -7.0, float("inf"), float("-inf"), float("nan"), 1e30])
    x = specials.repeat(10, 1)
    y = specials[:, None].repeat(1, 10)
    fn = torchlower.compile(module.floored_floats)
    for s in [0.5, -2.0, 0.0, float("inf")]:
        native, eager = fn(x, y, s), module.floored_floats(x, y, s)
        assert native.dtype == eager.dtype
        same = (native == eager) | (native.isnan() & eager.isnan())
        assert bool(same.all()) and torch.equal(native.signbit(), eager.signbit()), s
