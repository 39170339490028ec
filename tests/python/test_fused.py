"""Fused CPU kernels (``tl::fused``) end to end, and the ``torchlower bench`` harness.

``fused_cases/fused_cases_lib.rs`` is the code the analyzer's fusion pass emits for the
functions of ``fused_cases/fused_cases.py``, written by hand against native-backend/API.md
("Fused kernels") and built with the real pipeline. Every fused entry point is compared with
eager PyTorch — values (rtol 1e-5 / atol 1e-6), NaN and ±Inf positions, signs of zeros,
dtype/shape, no grad on outputs, inputs unchanged bitwise, eager's errors — on random data
and on the special values, at the benchmark sizes and at degenerate ones. Products go to our
own small-GEMM kernel or to libtorch's BLAS by shape (native-backend/src/fused/small_gemm/:
one row, or at least 4 rows with at least 16 columns, k cut into MKL's panels above 192;
m*k*n <= 2^20 for @; a several-row F.linear transposes weights of at most 2^13 elements and
reads larger ones by rows, up to 64 rows; k a multiple of 4 for one-row F.linear); the shapes
below sit on both sides of each of those thresholds, and odd layouts
go through the tch fallback. (The Rust test fused_parity.rs also checks those products bit
for bit against eager.)
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from torchlower import _compile

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CASES = HERE / "fused_cases"
SPECIAL = torch.tensor([-math.inf, -3.0, -1.0, -0.0, 0.0, 1.0, 3.0, math.inf, math.nan])
SYMBOLS = {"linear_relu_mean": "tl_fn_0", "alternating": "tl_fn_1", "matmul_tanh_colsum": "tl_fn_2",
           "gelu_linear": "tl_fn_3", "chain": "tl_fn_4"}

torch.set_num_threads(1)


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fused():
    """(python module, {name: native callable}) with the hand-written fused lib.rs built."""
    module = _import(CASES / "fused_cases.py", "_tl_fused_cases")
    functions = [
        {"name": name, "line": getattr(module, name).__code__.co_firstlineno, "route": "native", "symbol": symbol,
         "params": [{"name": p} for p in inspect.signature(getattr(module, name)).parameters], "sites": [],
         "diagnostics": []}
        for name, symbol in SYMBOLS.items()
    ]
    report = {"schema": 1, "functions": functions, "diagnostics": [], "rust": (CASES / "fused_cases_lib.rs").read_text()}
    filename = str(CASES / "fused_cases.py")
    build = _compile.build_module(Path(filename).read_text(), filename, report)
    assert build.error is None, str(build.error)
    natives = {}
    for name, symbol in SYMBOLS.items():
        fn = getattr(module, name)
        natives[name] = _compile._native_callable(fn, build.extension, {"name": name, "symbol": symbol})
    return module, natives


def assert_parity(native, eager, what=""):
    assert isinstance(native, torch.Tensor), what
    assert native.requires_grad is False, what
    assert (native.dtype, native.shape, native.device) == (eager.dtype, eager.shape, eager.device), what
    n, e = native.detach(), eager.detach()
    assert torch.equal(n.isnan(), e.isnan()), f"{what}: NaN positions"
    finite = ~e.isnan()
    assert torch.equal(n[finite & e.isinf()], e[finite & e.isinf()]), f"{what}: ±Inf"
    zeros = e == 0
    assert torch.equal(torch.signbit(n[zeros]), torch.signbit(e[zeros])), f"{what}: signs of zeros"
    assert torch.allclose(n[finite], e[finite], rtol=1e-5, atol=1e-6), f"{what}: values"


def special(shape, generator):
    return SPECIAL[torch.randint(0, len(SPECIAL), shape, generator=generator)]


def check(natives, module, name, args, what):
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    eager = getattr(module, name)(*args)
    native = natives[name](*args)
    assert_parity(native, eager, f"{name} {what}")
    for a, b in zip(args, before):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a.view(torch.int32), b.view(torch.int32)), f"{name} {what}: input changed"


LINEAR_SHAPES = [(1, 32, 32), (1, 128, 64), (8, 64, 64), (16, 128, 64), (64, 128, 64), (256, 256, 128), (1, 1, 1), (3, 1, 5), (2, 7, 1),
                 # both sides of the small-GEMM thresholds: rows 3|4, columns 15|16, k 192|193,
                 # F.linear work 2^19 (64*128*64) | above, @ work 2^20 (64*128*128) | above, one-row
                 # F.linear's four-lane head k mod 4 = 2 | 0 | 1 | 3 (LLaMA's 170 and 682)
                 (3, 32, 16), (4, 32, 16), (4, 32, 15), (8, 192, 16), (8, 193, 16), (64, 128, 65), (64, 128, 128), (64, 128, 129),
                 (1, 30, 16), (1, 32, 16), (1, 5, 9), (1, 3, 8), (1, 170, 64), (1, 682, 256), (1, 683, 64),
                 # MKL's panels (k 200, 385), weights of 2^13 elements | above, 64 | 65 rows by rows
                 (8, 200, 40), (13, 385, 64), (8, 64, 128), (8, 64, 129), (8, 256, 1024), (64, 256, 96), (65, 256, 96)]


@pytest.mark.parametrize("batch,fan_in,fan_out", LINEAR_SHAPES)
@pytest.mark.parametrize("kind", ["random", "special"])
def test_linear_epilogues_match_eager(fused, batch, fan_in, fan_out, kind):
    module, natives = fused
    g = torch.Generator().manual_seed(batch * 1000 + fan_in * 10 + fan_out)
    make = (lambda *s: torch.randn(*s, generator=g)) if kind == "random" else (lambda *s: special(s, g))
    x, w, b, wt = make(batch, fan_in), make(fan_out, fan_in), make(fan_out), make(fan_in, fan_out)
    check(natives, module, "linear_relu_mean", (x, w, b), f"{(batch, fan_in, fan_out)} {kind}")
    check(natives, module, "gelu_linear", (x, w), f"{(batch, fan_in, fan_out)} {kind}")
    check(natives, module, "matmul_tanh_colsum", (x, wt, b), f"{(batch, fan_in, fan_out)} {kind}")


LOOP_CELLS = [(1, 16, 4, 0), (1, 32, 8, 1), (4, 32, 16, 0), (8, 64, 16, 1), (32, 128, 8, 0), (64, 128, 16, 1), (2, 3, 0, 0), (2, 3, 1, 1),
              # small-GEMM thresholds inside the loop: 3|4 rows, 15|16 wide, 2^20 work | above
              (3, 32, 3, 0), (4, 15, 3, 1), (4, 16, 3, 1), (65, 128, 2, 0)]


@pytest.mark.parametrize("batch,width,depth,phase", LOOP_CELLS)
@pytest.mark.parametrize("kind", ["random", "special"])
def test_weight_tied_loop_matches_eager(fused, batch, width, depth, phase, kind):
    module, natives = fused
    g = torch.Generator().manual_seed(batch * 100 + width + depth)
    if kind == "random":
        x, w, b = torch.randn(batch, width, generator=g), torch.randn(width, width, generator=g) / width**0.5, torch.randn(width, generator=g)
    else:
        x, w, b = special((batch, width), g), special((width, width), g), special((width,), g)
    check(natives, module, "alternating", (x, w, b, depth, phase), f"{(batch, width, depth, phase)} {kind}")


def test_all_negative_zero_products_keep_eagers_signs(fused):
    module, natives = fused
    for batch, fan_in, fan_out in [(1, 1, 4), (2, 1, 3), (1, 4, 4), (8, 64, 64)]:
        x = torch.full((batch, fan_in), -0.0)
        w, b = torch.ones(fan_out, fan_in), torch.full((fan_out,), -0.0)
        check(natives, module, "gelu_linear", (x, w), "all -0 products")
        check(natives, module, "matmul_tanh_colsum", (x, w.t().contiguous(), b), "all -0 products")


@pytest.mark.parametrize("shape", [(4, 5), (1, 1), (64, 700), (3, 1000)])
@pytest.mark.parametrize("kind", ["random", "special"])
def test_elementwise_chain_matches_eager(fused, shape, kind):
    module, natives = fused
    g = torch.Generator().manual_seed(shape[0] * shape[1])
    make = (lambda *s: torch.randn(*s, generator=g)) if kind == "random" else (lambda *s: special(s, g))
    check(natives, module, "chain", (make(*shape), make(shape[1])), f"{shape} {kind}")


def test_odd_layouts_take_the_fallback_with_eager_results(fused):
    module, natives = fused
    g = torch.Generator().manual_seed(7)
    x_t = torch.randn(32, 8, generator=g).t()  # non-contiguous
    w, b = torch.randn(16, 32, generator=g), torch.randn(16, generator=g)
    check(natives, module, "linear_relu_mean", (x_t, w, b), "non-contiguous x")
    check(natives, module, "chain", (torch.randn(6, 4, generator=g).t(), torch.randn(6, generator=g)), "non-contiguous a")


def test_outputs_never_require_grad(fused):
    module, natives = fused
    x = torch.randn(4, 8, requires_grad=True)
    w, b = torch.randn(8, 8, requires_grad=True), torch.randn(8)
    assert natives["linear_relu_mean"](x, w, b).requires_grad is False
    assert natives["alternating"](x, w, b, 3, 0).requires_grad is False


def test_shape_errors_are_eagers(fused):
    module, natives = fused
    x, w, b = torch.randn(3, 4), torch.randn(5, 6), torch.randn(5)
    for name, args in [("linear_relu_mean", (x, w, b)), ("alternating", (x, torch.randn(5, 5), b, 2, 0)),
                       ("chain", (torch.randn(3, 4), torch.randn(5)))]:
        with pytest.raises(RuntimeError) as eager_error:
            getattr(module, name)(*args)
        with pytest.raises(RuntimeError) as native_error:
            natives[name](*args)
        assert str(native_error.value) == str(eager_error.value)


# --- the harness ----------------------------------------------------------------------------------


def test_bench_quick_run_writes_valid_json(tmp_path):
    """The harness runs end to end (two cells, every lane that needs no long compile) and
    writes its JSON, Markdown and chart. Checks the output's structure, not speed."""
    command = [sys.executable, "-m", "torchlower.cli", "bench", "--quick", "--cells", "A1,B1",
               "--lanes", "native,eager,torchscript", "--hand-fused", "--out", str(tmp_path), "--name", "smoke",
               "--cells-module", str(REPO / "benchmarks" / "cells.py")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "smoke.json").read_text())
    assert report["schema"] == 1 and report["settings"]["quick"] is True
    assert [c["id"] for c in report["cells"]] == ["A1", "B1"]
    for cell in report["cells"]:
        eager = cell["lanes"]["eager"]
        assert eager["median_us"] > 0 and len(eager["samples_us"]) == 3
        for lane in ("hand-fused", "torchscript"):
            record = cell["lanes"][lane]
            assert record.get("matches_eager") is True, record
            low, high = cell["speedup_vs_eager"][lane]["ci95"]
            assert low <= cell["speedup_vs_eager"][lane]["median"] <= high
        native = cell["lanes"]["native"]
        assert native.get("route") == "native" and native.get("matches_eager") is True, native
    assert (tmp_path / "smoke.md").read_text().startswith("# torchlower bench")
    assert (tmp_path / "smoke.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
