#!/usr/bin/env python3
"""Measures the analyzer on a generated module of N lines (default 2,000):

- warm analysis in wasmtime (``torchlower._analyze.analyze_json``: copy in, parse, type,
  claim, lower, JSON, copy out; each call in a fresh store), median of many calls;
- the native analyzer on the same source (``torchlower-analyze`` built with
  ``cargo build --release -p torchlower-analyzer``; the binary's own run time is measured
  inside a loop of `--repeat` runs, minus the run time on an empty file, so process start-up
  is left out);
- CPython's ``ast.parse`` of the same source, median, run alternately with the wasm analysis
  (the ratio printed is the median of the per-pair ratios, robust to a busy machine);
- first call in a fresh process (import + load module + analyze) with the compiled-module
  cache cold (empty cache dir) and warm;
- the size of the wasm file.

Usage: .venv/bin/python scripts/bench_analyze.py [--lines 2000] [--json]
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


def _first_call_seconds(cache_dir: str, source_path: Path) -> float:
    code = (
        "import time; t0 = time.perf_counter(); "
        "from torchlower import _analyze; "
        f"_analyze.analyze_json(open({str(source_path)!r}, 'rb').read(), 'bench.py'); "
        "print(time.perf_counter() - t0, _analyze.cache_outcome())"
    )
    env = dict(os.environ, TORCHLOWER_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    seconds, outcome = out.stdout.split()
    return float(seconds), outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=15, help="native CLI runs per measurement")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args()

    from torchlower import _analyze

    source = generate_module(args.lines)
    encoded = source.encode()
    with tempfile.TemporaryDirectory() as tmp:
        source_path = Path(tmp) / "bench.py"
        source_path.write_text(source)
        empty = Path(tmp) / "empty.py"
        empty.write_text("")

        _analyze.analyze_json(encoded, "bench.py")  # load the module, warm up
        report = json.loads(_analyze.analyze_json(encoded, "bench.py"))
        wasm, parse, ratio = _paired_medians(
            lambda: _analyze.analyze_json(encoded, "bench.py"), lambda: ast.parse(source)
        )
        native = _native_seconds(_native_binary(), source_path, empty, args.repeat)

        cache = Path(tmp) / "cache"
        cold, cold_outcome = _first_call_seconds(str(cache), source_path)
        warm, warm_outcome = _first_call_seconds(str(cache), source_path)

    routes = [f["route"] for f in report["functions"]]
    numbers = {
        "lines": source.count("\n"),
        "bytes": len(encoded),
        "functions": len(routes),
        "native_functions": routes.count("native"),
        "wasm_warm_ms": wasm * 1e3,
        "native_ms": native * 1e3,
        "ast_parse_ms": parse * 1e3,
        "wasm_over_ast_parse": ratio,  # median of paired ratios
        "first_call_cold_cache_ms": cold * 1e3,
        "first_call_cold_cache_outcome": cold_outcome,
        "first_call_warm_cache_ms": warm * 1e3,
        "first_call_warm_cache_outcome": warm_outcome,
        "wasm_bytes": _analyze.WASM_PATH.stat().st_size,
    }
    if args.json:
        print(json.dumps(numbers, indent=2))
    else:
        print(
            f"{numbers['lines']}-line module ({numbers['bytes']} bytes, {numbers['functions']} functions, "
            f"{numbers['native_functions']} native)\n"
            f"  wasmtime, warm (median)   {numbers['wasm_warm_ms']:8.2f} ms\n"
            f"  native analyzer          {numbers['native_ms']:8.2f} ms\n"
            f"  CPython ast.parse        {numbers['ast_parse_ms']:8.2f} ms   "
            f"(wasm / ast.parse = {numbers['wasm_over_ast_parse']:.2f})\n"
            f"  first call, fresh process, module cache cold  {numbers['first_call_cold_cache_ms']:8.1f} ms "
            f"({cold_outcome})\n"
            f"  first call, fresh process, module cache warm  {numbers['first_call_warm_cache_ms']:8.1f} ms "
            f"({warm_outcome})\n"
            f"  analyzer.wasm            {numbers['wasm_bytes']:,} bytes"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
