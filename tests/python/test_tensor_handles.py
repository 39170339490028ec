"""How tensor arguments cross the boundary: a plain ``torch.Tensor`` or ``nn.Parameter`` lends
its own handle to the native body (no copy, no reference-count traffic), a subclass gets a new
handle. Either way results match eager, inputs are untouched, and the caller's objects keep
their reference counts and stay usable after any number of calls."""

from __future__ import annotations

import gc
import sys

import pytest
import torch

import torchlower
from test_native_cpu import CASES, import_path

NAMES = ("transpose", "identity", "rebinds", "scaled", "calls_helpers")


class Tagged(torch.Tensor):
    """A tensor subclass: takes the copying path at the boundary."""


@pytest.fixture(scope="module")
def handles():
    module = import_path(CASES / "tensor_handles.py", "_tl_tensor_handles_case")
    compiled = {name: torchlower.compile(getattr(module, name)) for name in NAMES}
    assert all(f.route == "native" for f in compiled.values()), {n: f.route for n, f in compiled.items()}
    return module, compiled


def _inputs(kind: str):
    generator = torch.Generator().manual_seed(3)
    x, b = torch.randn(5, 7, generator=generator), torch.randn(7, generator=generator)
    if kind == "parameter":
        return torch.nn.Parameter(x), torch.nn.Parameter(b, requires_grad=False)
    if kind == "subclass":
        return x.as_subclass(Tagged), b.as_subclass(Tagged)
    if kind == "view":
        return torch.randn(7, 5, generator=generator).t(), b
    return x, b


def _args(name: str, x, b):
    return {"transpose": (x,), "identity": (x,), "rebinds": (x, b), "scaled": (x, 1.5), "calls_helpers": (x, b)}[name]


@pytest.mark.parametrize("kind", ["tensor", "parameter", "subclass", "view"])
@pytest.mark.parametrize("name", NAMES)
def test_results_match_eager_and_inputs_are_untouched(handles, name, kind, native_mode):
    module, compiled = handles
    x, b = _inputs(kind)
    before = (x.detach().clone(), b.detach().clone())
    args = _args(name, x, b)
    native = compiled[name](*args)
    with torch.no_grad():
        eager = getattr(module, name)(*args)
    # a new tensor is a plain torch.Tensor; `identity` gives back the argument object itself,
    # unless it requires grad (outputs never do: then a detached tensor of the same storage)
    if name == "identity":
        assert (native is x) == (not x.requires_grad)
    else:
        assert type(native) is torch.Tensor
    assert not native.requires_grad
    torch.testing.assert_close(native, eager.detach().as_subclass(torch.Tensor), rtol=0, atol=0)
    assert torch.equal(x.detach(), before[0]) and torch.equal(b.detach(), before[1])


def test_identity_returns_the_same_tensor_object_as_eager(handles, native_mode):
    module, compiled = handles
    x = torch.randn(3, 4)
    # eager returns its argument; native returns a new handle to the same tensor, which
    # PyTorch wraps as the very same Python object
    assert compiled["identity"](x) is module.identity(x) is x


@pytest.mark.parametrize("kind", ["tensor", "parameter", "subclass"])
def test_reference_counts_are_unchanged_after_many_calls(handles, kind, native_mode):
    _, compiled = handles
    x, b = _inputs(kind)
    counts = (sys.getrefcount(x), sys.getrefcount(b))
    for _ in range(20_000):
        compiled["calls_helpers"](x, b)
        compiled["transpose"](x)
    assert (sys.getrefcount(x), sys.getrefcount(b)) == counts
    keep = compiled["transpose"](x)
    del x, b
    gc.collect()
    assert keep.sum().item() == keep.sum().item()  # the storage outlives the argument object
