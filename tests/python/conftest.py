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
