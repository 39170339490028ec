#!/usr/bin/env python3
"""Measures the analyzer on two generated module shapes of N lines (default 2,000):

- ``mixed``: the functions of `_TEMPLATES` in rotation (native ones with a little control
  flow, rejected and not-covered sites, plain Python classes the analyzer only skips);
- ``dense``: one function shape repeated (200 functions at 2,000 lines), dense in loops and
  branches, every one annotated and native (`_DENSE_TEMPLATE`).

For each shape:

- ``torchlower.analyze`` in wasmtime, warm (what a user calls: copy in, parse, type, claim,
  lower, JSON, copy out, each call in a fresh store, then the report as a dict), median of
  many calls, run alternately with CPython's ``ast.parse`` of the same source; the ratio
  printed is the median of the per-pair ratios (robust to a busy machine). The target is
  ``analyze / ast.parse <= 0.8`` on both shapes;
- ``analyze_json`` alone (the report's text, without building the dict), median;
- the native analyzer on the same source (``torchlower-analyze`` built with
  ``cargo build --release -p torchlower-analyzer``; the binary's own run time is measured
  inside a loop of `--repeat` runs, minus the run time on an empty file, so process start-up
  is left out);

and once: the first call in a fresh process (import + load module + analyze) with the
compiled-module cache cold (empty cache dir) and warm; the size of the wasm file.

Usage: .venv/bin/python scripts/bench_analyze.py [--lines 2000] [--shape mixed|dense|all]
       [--no-native] [--wasm OTHER.wasm] [--json]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_HEADER = '''"""Generated benchmark module for the torchlower analyzer."""
import math
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D

SCALE = 3
'''

# Each template is one function; {i} makes names unique. Most are claimed, a few are
# rejected or not covered, some are plain Python that the analyzer only has to skip.
_TEMPLATES = [
    '''
def mlp_{i}(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    h = F.linear(x, w, b).relu()
    h = torch.sigmoid(h) + h
    return h.mean(dim=1, keepdim=False)
''',
    '''
def blocks_{i}(x: TensorF32Cpu2D, w: TensorF32Cpu2D, n: int, flag: bool) -> TensorF32Cpu2D:
    h = x
    for k in range(n):
        if k % 2 == 0 and flag:
            h = (h @ w).relu()
        else:
            h = torch.tanh(h) * x - h
    while n > 3:
        n = n // 2
        h = h + x
    return F.gelu(h)
''',
    '''
def classify_{i}(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorI64Cpu1D:
    logits = x @ w
    probs = F.softmax(logits, dim=1)
    return probs.argmax(dim=1)
''',
    '''
def rejected_{i}(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = F.gelu(x, approximate="tanh")
    h.relu_()
    return torch.subtract(h, x)
''',
    '''
def count_{i}(n: int, m: int) -> int:
    total = 0
    for j in range(n):
        total = total + j * m - (j // 3) % 2
    return total
''',
    '''
class Helper{i}:
    """Plain Python the analyzer does not lower."""

    def __init__(self, values):
        self.values = [v * SCALE for v in values if v]

    def describe(self):
        return {{"n": len(self.values), "mean": sum(self.values) / max(len(self.values), 1)}}
''',
]


# One function of the dense shape: a layer loop with a branch per iteration, 10 lines with the
# two blank lines between functions, so a 2,000-line module holds 200 of them.
_DENSE_HEADER = '''"""Generated benchmark module for the torchlower analyzer: loops and branches."""
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D
'''

_DENSE_TEMPLATE = '''

def layers_{i}(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, n: int) -> TensorF32Cpu1D:
    h = F.linear(x, w, b)
    for k in range(n):
        if (k + {i}) % 2 == 0:
            h = (h @ w + b).relu()
        else:
            h = torch.sigmoid(h)
    return h.mean(dim=1, keepdim=False)
'''


def generate_dense_module(lines: int) -> str:
    """A module of about `lines` lines of `_DENSE_TEMPLATE` functions (200 at 2,000 lines)."""
    per_function = _DENSE_TEMPLATE.count("\n")
    functions = max(1, round((lines - _DENSE_HEADER.count("\n")) / per_function))
    return _DENSE_HEADER + "".join(_DENSE_TEMPLATE.format(i=i) for i in range(functions))


def generate_module(lines: int) -> str:
    """A module of about `lines` lines built from the templates above, in rotation."""
    parts = [_HEADER]
    count = _HEADER.count("\n")
    i = 0
    while count < lines:
        text = _TEMPLATES[i % len(_TEMPLATES)].format(i=i)
        parts.append(text)
        count += text.count("\n")
        i += 1
    return "".join(parts)


def _paired_medians(first, second, *, min_pairs: int = 15, min_seconds: float = 4.0):
    """Median times of `first` and `second` and the median of their per-pair ratio, the two
    run alternately so that a busy machine slows both alike."""
    a, b, ratios = [], [], []
    start = time.perf_counter()
    while len(a) < min_pairs or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        first()
        t1 = time.perf_counter()
        second()
        t2 = time.perf_counter()
        a.append(t1 - t0)
        b.append(t2 - t1)
        ratios.append((t1 - t0) / (t2 - t1))
    return statistics.median(a), statistics.median(b), statistics.median(ratios)


def _native_binary() -> Path:
    subprocess.run(
        ["cargo", "build", "--quiet", "--release", "-p", "torchlower-analyzer", "--bin", "torchlower-analyze"],
        cwd=REPO,
        check=True,
    )
    return REPO / "target" / "release" / "torchlower-analyze"


def _native_seconds(binary: Path, path: Path, empty: Path, repeat: int) -> float:
    """Median run time of the native CLI on `path` minus its median on an empty file."""

    def run(p: Path) -> float:
        t0 = time.perf_counter()
        subprocess.run([str(binary), str(p)], check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t0

    full = statistics.median(run(path) for _ in range(repeat))
    base = statistics.median(run(empty) for _ in range(repeat))
    return max(full - base, 0.0)


def _first_call_seconds(cache_dir: str, source_path: Path, wasm: Path | None = None) -> tuple[float, str]:
    code = (
        "import time; t0 = time.perf_counter(); "
        "from torchlower import _analyze; "
        + (f"_analyze.WASM_PATH = __import__('pathlib').Path({str(wasm)!r}); " if wasm else "")
        + f"_analyze.analyze_json(open({str(source_path)!r}, 'rb').read(), 'bench.py'); "
        "print(time.perf_counter() - t0, _analyze.cache_outcome())"
    )
    env = dict(os.environ, TORCHLOWER_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    seconds, outcome = out.stdout.split()
    return float(seconds), outcome


SHAPES = {"mixed": generate_module, "dense": generate_dense_module}


def measure_shape(shape: str, lines: int, tmp: Path, native_binary: Path | None, repeat: int) -> dict:
    """The numbers of one module shape (see the module docstring)."""
    import torchlower
    from torchlower import _analyze

    source = SHAPES[shape](lines)
    encoded = source.encode()
    name = f"bench_{shape}.py"
    torchlower.analyze(source, name)  # load the module, warm up
    report = torchlower.analyze(source, name)
    analyze, parse, ratio = _paired_medians(lambda: torchlower.analyze(source, name), lambda: ast.parse(source))
    json_only, _, json_ratio = _paired_medians(
        lambda: _analyze.analyze_json(encoded, name), lambda: ast.parse(source), min_seconds=2.0
    )
    numbers = {
        "shape": shape,
        "lines": source.count("\n"),
        "bytes": len(encoded),
        "functions": len(report["functions"]),
        "native_functions": sum(f["route"] == "native" for f in report["functions"]),
        "report_json_bytes": len(_analyze.analyze_json(encoded, name).encode()),
        "analyze_ms": analyze * 1e3,
        "analyze_json_ms": json_only * 1e3,
        "ast_parse_ms": parse * 1e3,
        "analyze_over_ast_parse": ratio,  # median of paired ratios: the target is <= 0.8
        "analyze_json_over_ast_parse": json_ratio,
    }
    if native_binary is not None:
        source_path = tmp / name
        source_path.write_text(source)
        empty = tmp / "empty.py"
        empty.write_text("")
        numbers["native_ms"] = _native_seconds(native_binary, source_path, empty, repeat) * 1e3
    return numbers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--shape", choices=(*SHAPES, "all"), default="all")
    parser.add_argument("--repeat", type=int, default=15, help="native CLI runs per measurement")
    parser.add_argument("--no-native", action="store_true", help="skip the native CLI and first-call timings")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("--wasm", type=Path, help="analyzer wasm to run instead of the package's (to compare builds)")
    args = parser.parse_args()

    from torchlower import _analyze

    if args.wasm:
        _analyze.WASM_PATH = args.wasm.resolve()

    shapes = list(SHAPES) if args.shape == "all" else [args.shape]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        binary = None if args.no_native else _native_binary()
        results = [measure_shape(shape, args.lines, tmp, binary, args.repeat) for shape in shapes]
        numbers: dict = {"shapes": results, "wasm_bytes": _analyze.WASM_PATH.stat().st_size}
        if not args.no_native:
            source_path = tmp / f"bench_{shapes[0]}.py"
            source_path.write_text(SHAPES[shapes[0]](args.lines))
            cache = tmp / "cache"
            cold, cold_outcome = _first_call_seconds(str(cache), source_path, _analyze.WASM_PATH)
            warm, warm_outcome = _first_call_seconds(str(cache), source_path, _analyze.WASM_PATH)
            numbers.update(
                first_call_cold_cache_ms=cold * 1e3,
                first_call_cold_cache_outcome=cold_outcome,
                first_call_warm_cache_ms=warm * 1e3,
                first_call_warm_cache_outcome=warm_outcome,
            )

    if args.json:
        print(json.dumps(numbers, indent=2))
        return 0
    for n in results:
        print(
            f"{n['shape']}: {n['lines']}-line module ({n['bytes']} bytes, {n['functions']} functions, "
            f"{n['native_functions']} native; report {n['report_json_bytes']} bytes of JSON)\n"
            f"  torchlower.analyze, warm (median)  {n['analyze_ms']:8.2f} ms\n"
            f"  analyze_json (text only)           {n['analyze_json_ms']:8.2f} ms\n"
            f"  CPython ast.parse                  {n['ast_parse_ms']:8.2f} ms\n"
            f"  analyze / ast.parse (paired)       {n['analyze_over_ast_parse']:8.2f}   "
            f"(analyze_json / ast.parse {n['analyze_json_over_ast_parse']:.2f}; target <= 0.8)"
        )
        if "native_ms" in n:
            print(f"  native analyzer                    {n['native_ms']:8.2f} ms")
    if "first_call_cold_cache_ms" in numbers:
        print(
            f"first call, fresh process, module cache cold  {numbers['first_call_cold_cache_ms']:8.1f} ms "
            f"({numbers['first_call_cold_cache_outcome']})\n"
            f"first call, fresh process, module cache warm  {numbers['first_call_warm_cache_ms']:8.1f} ms "
            f"({numbers['first_call_warm_cache_outcome']})"
        )
    print(f"analyzer.wasm {numbers['wasm_bytes']:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
