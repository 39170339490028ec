"""The routed callable of a native function (``torchlower.NativeFunction``, written in Rust in
the backend crate, ``tl::route``): its fast path (positional arguments, mode unset or spelled
exactly) against eager, everything it hands to the Python router (keywords, defaults, other
spellings of a mode), the autocast rule, and what it shows as a Python object."""

from __future__ import annotations

import pickle
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import torchlower  # noqa: E402

SOURCE = '''
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu2D, TensorF32Cpu1D


def head(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    """The docstring of head."""
    return torch.tanh(F.linear(x, w, b))


def scaled(x: TensorF32Cpu2D, scale: float = 2.0) -> TensorF32Cpu2D:
    return x * scale


def transposed(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.t()


def plus(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x + y
'''


@pytest.fixture(scope="module")
def routed(tmp_path_factory):
    """The module's functions, compiled (one build), and the module itself."""
    folder = tmp_path_factory.mktemp("router")
    name = f"router_case_{uuid.uuid4().hex[:8]}"
    path = Path(folder) / f"{name}.py"
    path.write_text(textwrap.dedent(SOURCE))
    sys.path.insert(0, str(folder))
    try:
        module = __import__(name)
    finally:
        sys.path.remove(str(folder))
    sys.modules[name] = module
    compiled = {fn: torchlower.compile(getattr(module, fn)) for fn in ("head", "scaled", "transposed", "plus")}
    for fn, call in compiled.items():
        assert call.route == "native", (fn, call.reason)
        setattr(module, fn, call)  # as `@torchlower.native` would leave it (pickling looks it up)
    return module, compiled


def inputs():
    g = torch.Generator().manual_seed(0)
    return torch.randn(3, 8, generator=g), torch.randn(4, 8, generator=g), torch.randn(4, generator=g)


def test_native_function_is_a_function_like_object(routed):
    module, compiled = routed
    head = compiled["head"]
    assert type(head).__name__ == "NativeFunction"
    assert head.__name__ == "head" and head.__qualname__ == "head"
    assert head.__module__ == module.__name__
    assert head.__doc__ == "The docstring of head."
    assert head.__wrapped__.__name__ == "head" and head.report["name"] == "head"
    assert repr(head) == "<native function head>"
    assert str(__import__("inspect").signature(head)).startswith("(x: ")
    assert pickle.loads(pickle.dumps(head)) is head  # by reference, as functions are


@pytest.mark.parametrize("mode", [None, "auto", "native"])
def test_fast_path_matches_eager(routed, monkeypatch, mode):
    _, compiled = routed
    if mode is None:
        monkeypatch.delenv("TORCHLOWER_MODE", raising=False)
    else:
        monkeypatch.setenv("TORCHLOWER_MODE", mode)
    x, w, b = inputs()
    eager = torch.tanh(torch.nn.functional.linear(x, w, b))
    assert torch.equal(compiled["head"](x, w, b), eager)
    assert torch.equal(compiled["plus"](x, x), x + x)
    assert torch.equal(compiled["transposed"](x), x.t())


def test_keywords_and_defaults_go_through_the_python_router(routed, monkeypatch):
    monkeypatch.delenv("TORCHLOWER_MODE", raising=False)
    _, compiled = routed
    x, w, b = inputs()
    assert torch.equal(compiled["head"](x, b=b, w=w), torch.tanh(torch.nn.functional.linear(x, w, b)))
    assert torch.equal(compiled["scaled"](x), x * 2.0)
    assert torch.equal(compiled["scaled"](x, scale=0.5), x * 0.5)
    with pytest.raises(TypeError):
        compiled["head"](x)  # Python's own binding error


def test_every_way_of_calling_reaches_the_same_decisions(routed, monkeypatch):
    """CPython calls the object through its vectorcall slot (a plain call, `f(*args)`,
    `f(**kwargs)`, a call from C code) and through `tp_call` (`type(f).__call__`); keywords are
    forwarded to the Python router with their values, and the rerun of eager in auto mode gets
    the arguments as they came."""
    monkeypatch.delenv("TORCHLOWER_MODE", raising=False)
    _, compiled = routed
    head, plus = compiled["head"], compiled["plus"]
    x, w, b = inputs()
    eager = torch.tanh(torch.nn.functional.linear(x, w, b))
    assert torch.equal(head(*(x, w, b)), eager)
    assert torch.equal(head(*(x, w), **{"b": b}), eager)
    assert torch.equal(head(**{"x": x, "w": w, "b": b}), eager)
    assert torch.equal(type(head).__call__(head, x, w, b), eager)
    assert torch.equal(type(head).__call__(head, x, b=b, w=w), eager)
    assert torch.equal(head.__call__(x, w, b), eager)
    assert torch.equal(__import__("functools").partial(plus, x)(x), x + x)  # called from C
    double = x.double()
    assert torch.equal(plus(double, double), double + double)  # refused: eager reruns
    assert torch.equal(type(plus).__call__(plus, double, double), double + double)
    with pytest.raises(TypeError):
        head(x, w, b, b)  # too many: Python's own binding error
    with pytest.raises(TypeError):
        type(head).__call__(head, x, w, b, c=b)


def test_refused_arguments_rerun_python_in_auto_mode_and_raise_in_native(routed, monkeypatch):
    _, compiled = routed
    x = torch.randn(3, 8, dtype=torch.float64)
    monkeypatch.delenv("TORCHLOWER_MODE", raising=False)
    assert torch.equal(compiled["plus"](x, x), x + x)  # eager's float64 result
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    with pytest.raises(ValueError, match="expects dtype float32"):
        compiled["plus"](x, x)
    monkeypatch.setenv("TORCHLOWER_MODE", " Native ")  # another spelling: the Python router
    with pytest.raises(ValueError, match="expects dtype float32"):
        compiled["plus"](x, x)
    monkeypatch.setenv("TORCHLOWER_MODE", "sometimes")
    with pytest.raises(ValueError, match="TORCHLOWER_MODE"):
        compiled["plus"](x, x)


def test_fallback_mode_runs_python(routed, monkeypatch):
    _, compiled = routed
    monkeypatch.setenv("TORCHLOWER_MODE", "fallback")
    x = torch.randn(3, 8, requires_grad=True)
    assert compiled["transposed"](x).requires_grad  # eager's autograd: Python ran


def test_inside_autocast_functions_run_eager(routed, monkeypatch):
    """Eager computes F.linear in bfloat16 inside a CPU autocast region: auto mode runs the
    Python function there (either path), native code again outside."""
    _, compiled = routed
    x, w, b = inputs()
    for mode in (None, "auto"):
        if mode is None:
            monkeypatch.delenv("TORCHLOWER_MODE", raising=False)
        else:
            monkeypatch.setenv("TORCHLOWER_MODE", mode)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            eager = torch.tanh(torch.nn.functional.linear(x, w, b))
            assert eager.dtype == torch.bfloat16
            assert torch.equal(compiled["head"](x, w, b), eager)
            assert torch.equal(compiled["head"](x, w=w, b=b), eager)
        assert compiled["head"](x, w, b).dtype == torch.float32
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert compiled["head"](x, w, b).dtype == torch.float32  # forced native: the user's choice


def test_outputs_never_require_grad_and_inputs_keep_theirs(routed, monkeypatch):
    """With grad mode on: inputs without grad take the path without the no-grad guard, inputs
    with grad the guarded one; neither output requires grad nor carries a graph."""
    monkeypatch.delenv("TORCHLOWER_MODE", raising=False)
    _, compiled = routed
    x, w, b = inputs()
    assert torch.is_grad_enabled()
    out = compiled["head"](x, w, b)
    assert not out.requires_grad and out.grad_fn is None
    w.requires_grad_()
    out = compiled["head"](x, w, b)
    assert not out.requires_grad and out.grad_fn is None
    x.requires_grad_()
    view = compiled["transposed"](x)  # a view of an input that requires grad: detached
    assert not view.requires_grad and view.data_ptr() == x.data_ptr()
    assert torch.is_grad_enabled()  # the guard restored the mode


def test_bound_as_a_method(routed, monkeypatch):
    monkeypatch.delenv("TORCHLOWER_MODE", raising=False)
    _, compiled = routed

    class Holder:
        plus = compiled["plus"]

    x = torch.randn(2, 3)
    holder = Holder()
    with pytest.raises(TypeError, match="expects a torch.Tensor"):
        monkeypatch.setenv("TORCHLOWER_MODE", "native")
        holder.plus(x)  # `self` is the first argument, as for a function
    assert Holder.plus is compiled["plus"]
