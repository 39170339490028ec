"""Reductions over every element (`x.sum()`, `torch.max(x)`, `x.argmax()`, `x.std()` …) and
`.item()` natively: eager's values bit for bit on special values (NaN first or among ties, ±inf,
±0.0), its dtypes (int64 sums of bools and int32), Python number types, and its errors (an empty
tensor's `max()`, `.item()` of several elements), with rank-0 int64 / bool results and
arguments at the boundary."""

from __future__ import annotations

import math
import uuid

import pytest
import torch

import torchlower
from test_native_cpu import import_path

SOURCE = '''
import torch
from torchlower.types import TensorBoolCpu0D, TensorBoolCpu2D, TensorF32Cpu0D, TensorF32Cpu1D, TensorF32Cpu2D, TensorI32Cpu2D, TensorI64Cpu0D, TensorI64Cpu1D


def float_reductions(x: TensorF32Cpu2D) -> tuple[TensorF32Cpu0D, TensorF32Cpu0D, TensorF32Cpu0D, TensorF32Cpu0D, TensorF32Cpu0D, TensorF32Cpu0D, TensorF32Cpu0D, TensorF32Cpu0D]:
    return x.sum(), x.mean(), x.max(), torch.min(x), x.prod(), x.std(), x.var(unbiased=False), torch.std(x, False)


def indices(x: TensorF32Cpu2D) -> tuple[TensorI64Cpu0D, TensorI64Cpu0D]:
    return x.argmax(), torch.argmin(x)


def integer_reductions(ids: TensorI64Cpu1D, small: TensorI32Cpu2D, mask: TensorBoolCpu2D) -> tuple[TensorI64Cpu0D, TensorI64Cpu0D, TensorI64Cpu0D, TensorI64Cpu0D, TensorBoolCpu0D, TensorBoolCpu0D]:
    return ids.sum(), small.sum(), mask.sum(), ids.max(), mask.max(), torch.min(mask)


def item(x: TensorF32Cpu1D) -> float:
    return x.item()


def items(s: TensorF32Cpu0D, n: TensorI64Cpu0D, flag: TensorBoolCpu0D) -> tuple[float, int, bool]:
    return s.item(), n.item(), flag.item()


def greedy(q: TensorF32Cpu1D) -> int:
    return q.argmax().item()


def longest(lengths: TensorI64Cpu1D) -> TensorBoolCpu2D:
    width = int(torch.max(lengths).item())
    return torch.arange(width).expand(lengths.shape[0], width) >= lengths.unsqueeze(1)
'''

SPECIALS = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5, -2.0, 3e38, -3e38, 1e-45]


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    path = tmp_path_factory.mktemp("whole_tensor") / f"whole_tensor_{uuid.uuid4().hex[:8]}.py"
    path.write_text(SOURCE)
    return import_path(path, path.stem)


def compiled(module, name):
    fn = torchlower.compile(getattr(module, name))
    assert fn.route == "native", fn.reason
    return fn


def same(native, eager):
    """Equal values, dtypes, shapes and Python types, NaN where eager has NaN, sign bits too."""
    if isinstance(eager, tuple):
        assert isinstance(native, tuple) and len(native) == len(eager)
        for n, e in zip(native, eager):
            same(n, e)
        return
    assert type(native) is type(eager)
    if isinstance(eager, torch.Tensor):
        assert native.dtype == eager.dtype and native.shape == eager.shape
        assert torch.equal(native.view(-1).view(torch.int32) if native.dtype == torch.float32 else native, eager.view(-1).view(torch.int32) if eager.dtype == torch.float32 else eager) or (
            torch.isnan(native).all() and torch.isnan(eager).all()
        )
    elif isinstance(eager, float):
        assert (math.isnan(native) and math.isnan(eager)) or (native == eager and math.copysign(1, native) == math.copysign(1, eager))
    else:
        assert native == eager


@pytest.mark.parametrize("values", [SPECIALS, [v for v in SPECIALS if v == v], [1.0, 1.0, 2.0, 2.0], [-0.0, 0.0, 0.0, -0.0], [float("nan")] * 4])
def test_float_reductions_and_indices_match_eager(module, values, native_mode):
    x = torch.tensor(values, dtype=torch.float32).repeat(3)[: 2 * (len(values) * 3 // 2)].view(2, -1)
    for name in ("float_reductions", "indices"):
        same(compiled(module, name)(x), getattr(module, name)(x))
        # a non-contiguous view reduces as eager reduces it
        same(compiled(module, name)(x.t()), getattr(module, name)(x.t()))


def test_integer_and_bool_reductions_keep_eagers_dtypes(module, native_mode):
    ids = torch.tensor([3, -7, 2**62, 5])
    small = torch.tensor([[2**30, 2**30], [2**30, 7]], dtype=torch.int32)
    mask = torch.tensor([[True, False], [False, False]])
    native, eager = compiled(module, "integer_reductions")(ids, small, mask), module.integer_reductions(ids, small, mask)
    same(native, eager)
    assert [t.dtype for t in native] == [torch.int64] * 4 + [torch.bool] * 2


def test_item_gives_python_numbers_and_eagers_error(module, native_mode):
    for value in SPECIALS:
        x = torch.tensor([value])
        same(compiled(module, "item")(x), module.item(x))
    for bad in (torch.ones(3), torch.ones(0)):
        with pytest.raises(RuntimeError) as eager:
            module.item(bad)
        with pytest.raises(RuntimeError) as native:
            compiled(module, "item")(bad)
        assert str(native.value) == str(eager.value)
    args = (torch.tensor(-0.0), torch.tensor(-(2**63)), torch.tensor(True))
    native = compiled(module, "items")(*args)
    same(native, module.items(*args))
    assert [type(v) for v in native] == [float, int, bool]


def test_empty_reductions_raise_eagers_error(module, native_mode):
    empty = torch.ones(0, 3)
    for name in ("float_reductions", "indices"):
        # max(): RuntimeError; argmax(): IndexError
        with pytest.raises((RuntimeError, IndexError)) as eager:
            getattr(module, name)(empty)
        with pytest.raises(type(eager.value)) as native:
            compiled(module, name)(empty)
        assert type(native.value) is type(eager.value)
        assert str(native.value) == str(eager.value)


def test_a_greedy_action_and_a_padding_mask(module, native_mode):
    q = torch.tensor([0.5, float("nan"), 2.0, float("nan")])
    same(compiled(module, "greedy")(q), module.greedy(q))
    lengths = torch.tensor([3, 0, 5])
    same(compiled(module, "longest")(lengths), module.longest(lengths))


def test_rank0_int64_and_bool_arguments_are_checked_at_the_boundary(module, native_mode):
    fn = compiled(module, "items")
    with pytest.raises(ValueError, match="parameter 'n' expects a rank-0 tensor, got rank 1"):
        fn(torch.tensor(0.5), torch.tensor([1]), torch.tensor(True))
    with pytest.raises(ValueError, match="parameter 'flag' expects dtype bool, got int64"):
        fn(torch.tensor(0.5), torch.tensor(1), torch.tensor(1))
