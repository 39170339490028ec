"""GELU bit for bit: eager runs ``F.gelu`` of a contiguous float32 tensor of two or more
elements through oneDNN, and ATen's kernel otherwise; the two differ in the last bits and at
±inf. Our fused kernels reproduce the oneDNN one (``native-backend/src/fused/gelu.rs``) and
leave the others to libtorch. Every case compares raw bits with eager in the same process: a
lone GELU, GELU in an elementwise chain, after ``F.linear``, and the GPT MLP, on random values
with ±inf and NaN planted, at one element, at sizes around the 16-lane vector and its tail,
and on non-contiguous inputs."""

from __future__ import annotations

import importlib.util
import sys
import uuid

import pytest
import torch
import torch.nn.functional as F

import torchlower

SOURCE = '''
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


def lone(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x)


def chain(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x + y) * 2.0


def after_linear(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.gelu(F.linear(x, w, b))


def mlp(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)
'''

SHAPES = [(1, 1), (1, 2), (1, 15), (1, 16), (1, 17), (3, 5), (7, 33), (16, 256), (64, 1024)]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    path = tmp_path_factory.mktemp("gelu") / f"gelu_bits_{uuid.uuid4().hex[:8]}.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    functions = {name: torchlower.compile(getattr(module, name)) for name in ("lone", "chain", "after_linear", "mlp")}
    assert all(f.route == "native" for f in functions.values()), {n: f.reason for n, f in functions.items()}
    return module, functions


def same_bits(native: torch.Tensor, eager: torch.Tensor) -> bool:
    return native.dtype == eager.dtype and native.shape == eager.shape and torch.equal(
        native.contiguous().view(torch.int32), eager.contiguous().view(torch.int32)
    )


def planted(shape, seed: int) -> torch.Tensor:
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * 4
    flat = x.view(-1)
    for i, value in enumerate([float("inf"), float("-inf"), float("nan"), -0.0, 0.0, 6.0, -6.0]):
        if i < flat.numel():
            flat[i] = value
    return x


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_gelu_has_eagers_bits(compiled, shape):
    module, native = compiled
    x = planted(shape, 1)
    for inp in (x, x.t().contiguous().t()):
        assert same_bits(native["lone"](inp), module.lone(inp)), f"lone, contiguous={inp.is_contiguous()}"
    y = torch.randn(shape)
    assert same_bits(native["chain"](x, y), module.chain(x, y))
    finite = x.nan_to_num(0.0, 0.0, 0.0)
    w, b = torch.randn(2 * shape[1], shape[1]), torch.randn(2 * shape[1])
    assert same_bits(native["after_linear"](finite, w, b), module.after_linear(finite, w, b))
    w2, b2 = torch.randn(shape[1], 2 * shape[1]), torch.randn(shape[1])
    assert same_bits(native["mlp"](finite, w, b, w2, b2), module.mlp(finite, w, b, w2, b2))

