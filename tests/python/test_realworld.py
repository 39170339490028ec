"""Every function of the real-code corpus (tests/realworld/) that routes native runs against
eager PyTorch: on the file's example inputs, on special values (NaN, ±Inf, ±0), on
non-contiguous copies of its matrix inputs; values, dtypes, shapes, special-value positions and
signed zeros equal eager's, or both raise the same exception type; inputs are never mutated and
outputs never require grad. The corpus's native count may only go up (MIN_NATIVE)."""

from __future__ import annotations

import importlib.util
import math
import sys
import uuid
from pathlib import Path

import pytest
import torch

import torchlower

REALWORLD = Path(__file__).resolve().parents[1] / "realworld"
FILES = sorted(p for p in REALWORLD.glob("*.py") if p.name != "coverage.py")

# Functions of the corpus that route native today; raise it as coverage grows.
MIN_NATIVE = 341

SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.0, -1.0, 3.5, -2.25, 1e-30]


def _import(path: Path):
    name = f"_tl_realworld_{path.stem}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", params=FILES, ids=[p.stem for p in FILES])
def corpus_file(request):
    path = request.param
    report = torchlower.analyze(path.read_text(), filename=path.name)
    return _import(path), report


def _special_like(t: torch.Tensor, shift: int) -> torch.Tensor:
    if not t.is_floating_point():
        return t
    flat = [SPECIAL[(i + shift) % len(SPECIAL)] for i in range(t.numel())]
    return torch.tensor(flat, dtype=t.dtype).reshape(t.shape)


def _non_contiguous(t: torch.Tensor) -> torch.Tensor:
    if t.dim() < 2 or not t.is_floating_point():
        return t
    return t.transpose(-2, -1).contiguous().transpose(-2, -1)


def _same(native, eager, where: str) -> None:
    if isinstance(eager, (tuple, list)):
        # a list stays a list, a tuple a tuple, a `torch.return_types` record that record
        assert type(native) is type(eager) and len(native) == len(eager), where
        for i, (a, b) in enumerate(zip(native, eager)):
            _same(a, b, f"{where}[{i}]")
        return
    if not isinstance(eager, torch.Tensor):
        assert type(native) is type(eager) and (native == eager or (math.isnan(native) and math.isnan(eager))), where
        return
    assert isinstance(native, torch.Tensor), where
    assert native.dtype == eager.dtype and native.shape == eager.shape, f"{where}: {native.dtype}{tuple(native.shape)} vs {eager.dtype}{tuple(eager.shape)}"
    assert not native.requires_grad, where
    if eager.is_floating_point():
        assert torch.equal(native.isnan(), eager.isnan()), f"{where}: NaN positions"
        finite = eager.isfinite()
        assert torch.equal(native[~finite & ~eager.isnan()], eager[~finite & ~eager.isnan()]), f"{where}: ±Inf"
        zeros = eager == 0
        assert torch.equal(torch.signbit(native[zeros]), torch.signbit(eager[zeros])), f"{where}: signed zeros"
        torch.testing.assert_close(native[finite], eager[finite], rtol=1e-5, atol=1e-6, msg=where)
    else:
        assert torch.equal(native, eager), where


def _run_both(native_fn, eager_fn, args: tuple, where: str, writes: bool = False) -> None:
    """Native on ``args``, eager on copies: the same result (or error type) and, for a function
    that writes into its arguments (TL212), the arguments changed alike; else left alone."""
    eager_args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    expected_args = eager_args if writes else [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    # both sides draw from torch's default generator from the same state (torch.multinomial)
    torch.manual_seed(20261201)
    try:
        eager = eager_fn(*eager_args)
    except Exception as error:  # noqa: BLE001 - the native call must raise the same type
        torch.manual_seed(20261201)
        with pytest.raises(type(error)):
            native_fn(*args)
        eager = native = None
    else:
        torch.manual_seed(20261201)
        native = native_fn(*args)
        _same(native, eager, where)
    for a, b in zip(args, expected_args):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a.nan_to_num(7.0), b.nan_to_num(7.0)), f"{where}: input {'not written as eager writes it' if writes else 'mutated'}"


def test_native_functions_match_eager(corpus_file):
    module, report = corpus_file
    native = [f["name"] for f in report["functions"] if f["route"] == "native"]
    for name in native:
        fn = getattr(module, name)
        compiled = torchlower.compile(fn)
        assert compiled.route == "native", f"{name}: {compiled.reason}"
        make = module.INPUTS[name]
        writes = any(d["code"] == "TL212" for f in report["functions"] if f["name"] == name for d in f["diagnostics"])
        torch.manual_seed(0)
        args = make()
        _run_both(compiled, fn, args, f"{name} example", writes)
        for shift in range(3):
            special = tuple(_special_like(a, shift) if isinstance(a, torch.Tensor) else a for a in args)
            _run_both(compiled, fn, special, f"{name} special {shift}", writes)
        strided = tuple(_non_contiguous(a) if isinstance(a, torch.Tensor) else a for a in args)
        _run_both(compiled, fn, strided, f"{name} non-contiguous", writes)


def test_the_corpus_native_count_does_not_fall():
    native = 0
    for path in FILES:
        report = torchlower.analyze(path.read_text(), filename=path.name)
        native += sum(f["route"] == "native" for f in report["functions"])
    assert native >= MIN_NATIVE, f"{native} functions of tests/realworld route native, fewer than {MIN_NATIVE}"


def test_unannotated_corpus_specialises_to_the_same_native_functions():
    """Issue "real models as they are written": the corpus without any annotation, each
    function specialised on its example inputs as ``torchlower.compile`` specialises it on a
    first call, routes native exactly where the annotated corpus does."""
    coverage = _import(REALWORLD / "coverage.py")
    for path in FILES:
        stripped = torchlower.analyze(coverage.strip_annotations(path.read_text()), filename=path.name)
        typed = [f["name"] for f in stripped["functions"] if f["route"] == "native" and any(p["type"] for p in f["params"])]
        assert typed == [], f"{path.name}: annotations left after stripping: {typed}"
    result = coverage.measure_unannotated(FILES)
    lost = {row["file"]: row["lost"] for row in result["files"] if row["lost"]}
    assert result["specialised"] == result["native"] and not lost, lost
    assert result["native"] >= MIN_NATIVE


def test_corpus_annotated_with_torch_tensor_specialises_to_the_same_native_functions():
    """The corpus annotated as the projects write it (every tensor marker replaced by
    ``torch.Tensor``, or ``th.Tensor`` where the project imports torch as ``th``; returns such
    as ``-> tuple[torch.Tensor, int]``): each function's tensor parameters specialised on its
    example inputs, as ``torchlower.compile`` does on a first call, route native exactly where
    the marker-annotated corpus does."""
    coverage = _import(REALWORLD / "coverage.py")
    result = coverage.measure_open(FILES)
    lost = {row["file"]: row["lost"] for row in result["files"] if row["lost"]}
    assert result["specialised"] == result["native"] and not lost, lost
    assert result["native"] >= MIN_NATIVE
