"""Shared set-up of the Python tests.

- The seed's annotation spelling ``rextio_torch.types.<Name>`` is accepted by the analyzer;
  for corpus files written that way to be importable here, ``rextio_torch.types`` is made an
  alias of ``torchlower.types`` (the same marker classes).
- Native builds go to the normal per-machine cache (``~/.cache/torchlower`` or
  ``$TORCHLOWER_CACHE_DIR``), so the first run compiles tch once and later runs reuse it.
"""

from __future__ import annotations

import sys
import types as _types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _alias_seed_types() -> None:
    if "rextio_torch" in sys.modules:
        return
    try:
        import torchlower.types as marker_types
    except ImportError:
        return
    package = _types.ModuleType("rextio_torch")
    package.__path__ = []  # a package, so "rextio_torch.types" imports
    package.types = marker_types
    sys.modules["rextio_torch"] = package
    sys.modules["rextio_torch.types"] = marker_types


_alias_seed_types()


def _warm_up_mkl_vml() -> None:
    """Eager's references must not race on MKL VML's first calls: oneMKL picks each vector
    math function's kernel on its first call, and when libtorch's worker threads make that call
    together one of them can run the low-accuracy kernel (pytorch/pytorch#188792). One call of
    each VML-backed op on one thread first, as the native backend does before its first call
    (``native-backend/src/vml.rs``)."""
    try:
        import torch
    except ImportError:
        return
    names = ("sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
             "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv", "lgamma", "trunc")
    with torch.no_grad():
        for dtype in (torch.float32, torch.float64):
            x = torch.full((64,), 0.25, dtype=dtype)
            for name in names:
                getattr(torch, name)(x)


_warm_up_mkl_vml()


@pytest.fixture(autouse=True)
def _native_mode_by_default(monkeypatch):
    """Every test runs with TORCHLOWER_MODE=native unless it sets the mode itself: in `auto`
    mode a native TypeError/ValueError/OverflowError reruns the Python function, which would
    let a parity test compare eager with eager and pass on broken native code."""
    monkeypatch.setenv("TORCHLOWER_MODE", "native")


@pytest.fixture
def native_mode(monkeypatch):
    """TORCHLOWER_MODE=native for one test: errors surface instead of falling back."""
    monkeypatch.setenv("TORCHLOWER_MODE", "native")


@pytest.fixture
def torch_threads():
    """``torch.set_num_threads`` for one test; the count before it is restored afterwards."""
    import torch

    before = torch.get_num_threads()
    yield torch.set_num_threads
    torch.set_num_threads(before)
