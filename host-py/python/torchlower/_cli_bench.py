"""``torchlower bench``: native vs eager PyTorch, TorchScript and torch.compile on the seed's cells.

(Over 500 lines: measuring, statistics and the three output formats of one command, kept
together because the sweep, ``_cli_bench_sweep.py``, reuses all of them.)

For each cell (``benchmarks/cells.py``) and each lane, the boundary-inclusive time of one
Python call, in one process, with ``torch.set_num_threads(1)`` unless ``--threads``. Lanes
run interleaved (the order rotates every sample) so drift and other load hit all alike; each
sample repeats the call until it lasts at least ``--sample-ms``. Reported: the median per
call, and per lane the paired speed-up over eager (eager time / lane time, sample by sample)
with its median and a bootstrap 95% interval. Results go to the terminal, and as JSON, a
Markdown table and a PNG chart to ``docs/benchmarks/<date>-<machine>.*``.

Lanes:
- ``native``: ``torchlower.compile(fn)`` — whatever route the analyzer gives (a fallback
  route is labelled as such and then measures Python);
- ``hand-fused`` (with ``--hand-fused``): ``benchmarks/fused_lib.rs``, the fused lib.rs the
  analyzer's fusion pass is to emit, written by hand and built with the same pipeline;
- ``eager``; ``torchscript`` (``torch.jit.script`` of the same source with the annotation
  markers read as ``torch.Tensor``); ``torch.compile`` (default inductor backend, warm).
A lane that cannot run records its error instead of a time.
"""

from __future__ import annotations

import argparse
import ast
import datetime as _dt
import gc
import importlib.util
import json
import math
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ALL_LANES = ["native", "hand-fused", "eager", "torchscript", "torch.compile"]
DEFAULT_LANES = ["native", "eager", "torchscript", "torch.compile"]
#: Parity tolerance of every lane against eager (torch.compile reorders sums, so it is
#: checked with the looser one and the difference is recorded).
RTOL, ATOL = 1e-5, 1e-6
COMPILE_RTOL, COMPILE_ATOL = 1e-4, 1e-5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cells", default="all", help="comma-separated cell ids (A1..A6, B1..B6) or 'all'")
    parser.add_argument("--lanes", default=",".join(DEFAULT_LANES), help=f"comma-separated, from {ALL_LANES}")
    parser.add_argument("--hand-fused", action="store_true", help="add the hand-fused lane (benchmarks/fused_lib.rs)")
    parser.add_argument("--samples", type=int, default=15, help="samples per lane and cell (default 15)")
    parser.add_argument("--sample-ms", type=float, default=20.0, help="minimum length of one sample (default 20)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 samples of 2 ms, small bootstrap")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: <repo>/docs/benchmarks)")
    parser.add_argument("--name", default=None, help="file stem (default: <date>-<machine>)")
    parser.add_argument("--cells-module", type=Path, default=None, help="path of cells.py (default: the repo's)")
    parser.add_argument("--no-chart", action="store_true", help="skip the PNG chart")
    parser.add_argument("--sweep", action="store_true",
                        help="every claimed op and fused pattern, native vs eager, over a grid of shapes (benchmarks/sweep.py)")
    parser.add_argument("--min-ratio", type=float, default=None,
                        help="with --sweep: fail when a stable cell is below this ×eager (e.g. 0.9)")
    parser.add_argument("--stable-us", type=float, default=5.0,
                        help="with --min-ratio: only cells whose eager time is at least this many µs count (default 5)")


def main(args: argparse.Namespace) -> int:
    import torch

    if args.quick:
        args.samples, args.sample_ms = 3, 2.0
    torch.set_num_threads(args.threads)
    if args.sweep:
        from . import _cli_bench_sweep

        return _cli_bench_sweep.main(args)
    cells_path = args.cells_module or _find_cells_module()
    if cells_path is None or not cells_path.is_file():
        print("torchlower bench: cannot find benchmarks/cells.py (pass --cells-module)", file=sys.stderr)
        return 2
    cells_module = _import_file(cells_path, "_torchlower_bench_cells")
    lanes = [lane.strip() for lane in args.lanes.split(",") if lane.strip()]
    if args.hand_fused and "hand-fused" not in lanes:
        lanes.insert(1 if "native" in lanes else 0, "hand-fused")
    unknown = [lane for lane in lanes if lane not in ALL_LANES]
    if unknown or "eager" not in lanes:
        print(f"torchlower bench: lanes must include eager and come from {ALL_LANES}; got {unknown or lanes}", file=sys.stderr)
        return 2
    selected = _select_cells(cells_module.cells(), args.cells)
    if not selected:
        print(f"torchlower bench: no cell matches {args.cells!r}", file=sys.stderr)
        return 2

    print(f"torchlower bench: {len(selected)} cells, lanes {', '.join(lanes)}, torch threads {args.threads}, "
          f"{args.samples} samples ≥ {args.sample_ms:g} ms; load {_loadavg()}", flush=True)
    machine = _machine()
    builders = _LaneBuilders(cells_module, cells_path, lanes)
    results = []
    for cell_id, function, shape in selected:
        results.append(_bench_cell(cell_id, function, shape, cells_module, builders, args))
    report = _report(results, lanes, args, machine)
    _print_table(report)
    out_dir = args.out or _default_out_dir(cells_path)
    stem = args.name or f"{report['date']}-{report['machine']['name']}"
    written = _write_outputs(report, out_dir, stem, chart=not args.no_chart)
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


# --- lanes ------------------------------------------------------------------------------------


class _LaneBuilders:
    """Makes each lane's callable for a function of the cells module, once per function
    (torch.compile once per cell: its graphs are specialised to the shapes)."""

    def __init__(self, cells_module, cells_path: Path, lanes: list[str]):
        self.module, self.path, self.lanes = cells_module, cells_path, lanes
        self.notes: dict[str, str] = {}
        self._native: dict[str, Any] = {}
        self._scripted: dict[str, Any] = {}
        self._hand_fused_ext: Any = None

    def make(self, lane: str, function: str) -> tuple[Callable | None, dict]:
        """(callable or None, facts about the lane such as route or error)."""
        fn = getattr(self.module, function)
        try:
            if lane == "eager":
                return fn, {}
            if lane == "native":
                return self._native_lane(fn)
            if lane == "hand-fused":
                return self._hand_fused_lane(fn)
            if lane == "torchscript":
                return self._torchscript_lane(function), {}
            if lane == "torch.compile":
                import torch

                torch._dynamo.reset()
                return torch.compile(fn), {}
        except BaseException as error:  # the lane cannot run here (pyo3 panics are BaseException)
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            return None, {"error": _error_line(error)}
        raise ValueError(lane)

    def _native_lane(self, fn) -> tuple[Callable, dict]:
        import torchlower

        if fn.__name__ not in self._native:
            self._native[fn.__name__] = torchlower.compile(fn)
        compiled = self._native[fn.__name__]
        facts = {"route": compiled.route}
        if compiled.route != "native":
            facts["reason"] = compiled.reason
        return compiled, facts

    def _hand_fused_lane(self, fn) -> tuple[Callable, dict]:
        from torchlower import _build, _compile

        if self._hand_fused_ext is None:
            rust = (self.path.parent / "fused_lib.rs").read_text()
            self._hand_fused_ext = _build.build_extension(rust, label="fused_lib.rs").module
        symbol = {"linear_relu_mean": "tl_fn_0", "alternating": "tl_fn_1"}[fn.__name__]
        entry = {"name": fn.__name__, "route": "native", "symbol": symbol}
        return _compile._native_callable(fn, self._hand_fused_ext, entry), {"route": "native"}

    def _torchscript_lane(self, function: str):
        import torch

        if function not in self._scripted:
            twin = _tensor_annotated_twin(self.path)
            self._scripted[function] = torch.jit.script(getattr(twin, function))
        return self._scripted[function]


def _tensor_annotated_twin(path: Path):
    """The cells module with torchlower's annotation markers replaced by ``torch.Tensor``
    (TorchScript cannot resolve the markers), written to a temporary file and imported."""
    tree = ast.parse(path.read_text())

    class Retype(ast.NodeTransformer):
        def _retype(self, node):
            if isinstance(node, ast.Name) and node.id.startswith("Tensor"):
                return ast.Attribute(value=ast.Name(id="torch", ctx=ast.Load()), attr="Tensor", ctx=ast.Load())
            return node

        def visit_FunctionDef(self, node):
            for arg in node.args.args:
                arg.annotation = self._retype(arg.annotation)
            node.returns = self._retype(node.returns)
            return node

    tree = ast.fix_missing_locations(Retype().visit(tree))
    folder = Path(tempfile.mkdtemp(prefix="torchlower-bench-"))
    twin_path = folder / "cells_torchscript.py"
    twin_path.write_text(ast.unparse(tree))
    return _import_file(twin_path, "_torchlower_bench_cells_ts")


# --- one cell ---------------------------------------------------------------------------------


def _bench_cell(cell_id: str, function: str, shape: tuple, cells_module, builders: _LaneBuilders, args, quiet: bool = False) -> dict:
    import torch

    generator = torch.Generator().manual_seed(0)
    inputs = cells_module.inputs(function, shape, generator)
    # the global generator reseeded before each compared call, so that functions that draw
    # (torch.multinomial) are compared on the same draws
    torch.manual_seed(0)
    expected = getattr(cells_module, function)(*inputs)
    lanes: dict[str, dict] = {}
    runnable: dict[str, Callable] = {}
    for lane in builders.lanes:
        call, facts = builders.make(lane, function)
        record = dict(facts)
        if call is not None:
            try:
                for _ in range(5 if lane != "torch.compile" else 3):  # compile and warm up
                    call(*inputs)
                torch.manual_seed(0)
                out = call(*inputs)
                loose = lane == "torch.compile"
                rtol, atol = (COMPILE_RTOL, COMPILE_ATOL) if loose else (RTOL, ATOL)
                if out.is_floating_point():
                    record["matches_eager"] = bool(torch.allclose(out, expected, rtol=rtol, atol=atol, equal_nan=True))
                    record["max_abs_diff"] = float((out - expected).abs().nan_to_num(0.0).max()) if out.numel() else 0.0
                else:  # int64 and bool results (comparisons, argmin, one_hot) match exactly or not at all
                    record["matches_eager"] = bool(torch.equal(out, expected))
                    record["max_abs_diff"] = 0.0 if record["matches_eager"] else float("inf")
                runnable[lane] = call
            except BaseException as error:
                if isinstance(error, (KeyboardInterrupt, SystemExit)):
                    raise
                record["error"] = _error_line(error)
        lanes[lane] = record

    calls = {lane: _calls_per_sample(call, inputs, args.sample_ms) for lane, call in runnable.items()}
    order = list(runnable)
    samples: dict[str, list[float]] = {lane: [] for lane in order}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for s in range(args.samples if order else 0):
            rotated = order[s % len(order):] + order[: s % len(order)]
            for lane in rotated:
                seconds = _run(runnable[lane], inputs, calls[lane])
                samples[lane].append(seconds / calls[lane] * 1e6)
    finally:
        if gc_was_enabled:
            gc.enable()

    for lane in order:
        lanes[lane].update(median_us=statistics.median(samples[lane]), samples_us=samples[lane], calls_per_sample=calls[lane])
    speedups = {}
    if "eager" in samples:
        for lane in order:
            if lane == "eager":
                continue
            ratios = [e / x for e, x in zip(samples["eager"], samples[lane])]
            low, high = _bootstrap_median_ci(ratios, reps=200 if args.quick else 2000)
            speedups[lane] = {"median": statistics.median(ratios), "ci95": [low, high]}
    line = "  ".join(
        f"{lane} {lanes[lane]['median_us']:.2f}µs" if "median_us" in lanes[lane] else f"{lane} n/a" for lane in builders.lanes
    )
    if not quiet:
        print(f"{cell_id} {function}{shape}: {line}", flush=True)
    return {"id": cell_id, "function": function, "shape": list(shape), "lanes": lanes, "speedup_vs_eager": speedups}


def _calls_per_sample(call: Callable, inputs: tuple, sample_ms: float) -> int:
    calls = 1
    while calls < 1 << 22:
        if _run(call, inputs, calls) >= sample_ms / 1000:
            break
        calls *= 2
    return calls


def _run(call: Callable, inputs: tuple, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        call(*inputs)
    return time.perf_counter() - started


def _bootstrap_median_ci(values: list[float], reps: int) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the median (fixed seed: reproducible)."""
    rng = random.Random(0)
    n = len(values)
    medians = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(reps))
    return medians[int(0.025 * (reps - 1))], medians[int(math.ceil(0.975 * (reps - 1)))]


# --- the report -------------------------------------------------------------------------------


def _report(results: list[dict], lanes: list[str], args, machine: dict) -> dict:
    import torch

    summary = {}
    for lane in lanes:
        if lane == "eager":
            continue
        speedups = [c["speedup_vs_eager"][lane]["median"] for c in results if lane in c["speedup_vs_eager"]]
        summary[lane] = {
            "cells_measured": len(speedups),
            "geomean_speedup_vs_eager": _geomean(speedups) if speedups else None,
            "min_speedup_vs_eager": min(speedups) if speedups else None,
            "cells_slower_than_eager": sum(1 for s in speedups if s < 1.0),
        }
    for lane in ("native", "hand-fused"):
        if lane not in summary:
            continue
        beats = {}
        for rival in ("torchscript", "torch.compile"):
            if rival not in lanes:
                continue
            wins = [
                c["lanes"][rival]["median_us"] / c["lanes"][lane]["median_us"] > 1.0
                for c in results
                if "median_us" in c["lanes"].get(lane, {}) and "median_us" in c["lanes"].get(rival, {})
            ]
            beats[rival] = {"cells_faster": sum(wins), "cells_compared": len(wins)}
        summary[lane]["faster_than"] = beats
    return {
        "schema": 1,
        "date": _dt.date.today().isoformat(),
        "machine": machine,
        "settings": {"threads": args.threads, "samples": args.samples, "sample_ms": args.sample_ms, "quick": args.quick,
                     "lanes": lanes, "torch": torch.__version__, "python": platform.python_version()},
        "load_after": _loadavg(),
        "cells": results,
        "summary": summary,
    }


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _table_lines(report: dict) -> list[str]:
    lanes = report["settings"]["lanes"]
    header = ["cell", "shape"] + [f"{lane} µs" for lane in lanes] + [f"{lane} ×eager [95% CI]" for lane in lanes if lane != "eager"]
    rows = []
    for cell in report["cells"]:
        row = [cell["id"], "(" + ",".join(map(str, cell["shape"])) + ")"]
        for lane in lanes:
            record = cell["lanes"].get(lane, {})
            if "median_us" in record:
                mark = "" if record.get("route", "native") == "native" else " (fallback)"
                mark += "" if record.get("matches_eager", True) else " (MISMATCH)"
                row.append(f"{record['median_us']:.2f}{mark}")
            else:
                row.append("error")
        for lane in lanes:
            if lane == "eager":
                continue
            s = cell["speedup_vs_eager"].get(lane)
            row.append(f"{s['median']:.2f} [{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}]" if s else "-")
        rows.append(row)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _summary_lines(report: dict) -> list[str]:
    lines = []
    for lane, s in report["summary"].items():
        if s["geomean_speedup_vs_eager"] is None:
            continue
        text = (f"{lane}: geometric mean ×{s['geomean_speedup_vs_eager']:.2f} over eager on {s['cells_measured']} cells, "
                f"min ×{s['min_speedup_vs_eager']:.2f}, {s['cells_slower_than_eager']} slower than eager")
        for rival, b in s.get("faster_than", {}).items():
            text += f"; faster than {rival} on {b['cells_faster']}/{b['cells_compared']}"
        lines.append(text)
    errors = {
        (lane, record["error"])
        for cell in report["cells"]
        for lane, record in cell["lanes"].items()
        if "error" in record
    }
    lines += [f"{lane} could not run: {error}" for lane, error in sorted(errors)]
    reasons = {
        (lane, record["reason"])
        for cell in report["cells"]
        for lane, record in cell["lanes"].items()
        if record.get("route") == "fallback" and record.get("reason")
    }
    lines += [f"{lane} fell back to Python: {reason}" for lane, reason in sorted(reasons)]
    return lines


def _print_table(report: dict) -> None:
    print()
    for line in _table_lines(report):
        print(line)
    print()
    for line in _summary_lines(report):
        print(line)


def _write_outputs(report: dict, out_dir: Path, stem: str, chart: bool) -> list[Path]:
    machine = report["machine"]
    settings = report["settings"]
    md = [
        f"# torchlower bench — {report['date']}, {machine['name']}",
        "",
        f"CPU: {machine['cpu']} ({machine['cores']} cores); torch {settings['torch']}, Python {settings['python']}; "
        f"torch threads {settings['threads']}; {settings['samples']} interleaved samples ≥ {settings['sample_ms']:g} ms per lane; "
        f"load average before/after: {machine['load_before']} / {report['load_after']}.",
        "",
        "Times are boundary-inclusive medians per Python call; ×eager is the median of the paired per-sample "
        "ratios (eager time / lane time) with a bootstrap 95% interval.",
        "",
        *_table_lines(report),
        "",
        *[f"- {line}" for line in _summary_lines(report)],
        "",
    ]
    return write_files(report, out_dir, stem, md, _chart if chart else None, "torchlower bench")


def write_files(report: dict, out_dir: Path, stem: str, markdown: list[str], chart: Callable | None, label: str) -> list[Path]:
    """``<stem>.json`` (the report), ``<stem>.md`` and, when ``chart`` draws one, ``<stem>.png``
    (a chart that cannot be drawn is reported, not fatal)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{stem}.json"
    json_path.write_text(json.dumps(report, indent=1) + "\n")
    md_path = out_dir / f"{stem}.md"
    md_path.write_text("\n".join(markdown))
    written = [json_path, md_path]
    if chart is not None:
        png_path = out_dir / f"{stem}.png"
        try:
            chart(report, png_path)
            written.append(png_path)
        except Exception as error:
            print(f"{label}: no chart: {_error_line(error)}", file=sys.stderr)
    return written


def _chart(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lanes = [lane for lane in report["settings"]["lanes"] if lane != "eager"]
    cells = report["cells"]
    width = 0.8 / max(1, len(lanes))
    fig, axis = plt.subplots(figsize=(max(8, len(cells) * 0.9), 4.5))
    for i, lane in enumerate(lanes):
        xs, ys, lows, highs = [], [], [], []
        for j, cell in enumerate(cells):
            s = cell["speedup_vs_eager"].get(lane)
            if s:
                xs.append(j + (i - (len(lanes) - 1) / 2) * width)
                ys.append(s["median"])
                lows.append(s["median"] - s["ci95"][0])
                highs.append(s["ci95"][1] - s["median"])
        axis.bar(xs, ys, width, yerr=[lows, highs], capsize=2, label=lane)
    axis.axhline(1.0, color="black", linewidth=0.8)
    axis.set_yscale("log")
    axis.set_xticks(range(len(cells)), [c["id"] for c in cells])
    axis.set_ylabel("speed-up over eager (×, log)")
    axis.set_title(f"torchlower bench {report['date']} — {report['machine']['name']}, {report['settings']['threads']} thread(s)")
    axis.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- helpers ----------------------------------------------------------------------------------


def _select_cells(all_cells: list, spec: str) -> list:
    if spec == "all":
        return all_cells
    wanted = {s.strip().upper() for s in spec.split(",")}
    return [c for c in all_cells if c[0].upper() in wanted]


#: The copy of benchmarks/ that an installed package carries (put there by scripts/setup.sh).
_PACKAGED_BENCHMARKS = Path(__file__).resolve().parent / "benchmarks"


def _find_cells_module() -> Path | None:
    """``benchmarks/cells.py`` of the working folder or the checkout the package runs from,
    else the copy inside the installed package."""
    here = Path(__file__).resolve()
    for base in [Path.cwd(), *here.parents[1:]]:
        candidate = base / "benchmarks" / "cells.py"
        if candidate.is_file():
            return candidate
    packaged = _PACKAGED_BENCHMARKS / "cells.py"
    return packaged if packaged.is_file() else None


def _default_out_dir(cells_path: Path) -> Path:
    """A checkout's ``docs/benchmarks/``; for the packaged cells, ``./torchlower-benchmarks``."""
    if cells_path.resolve().parent == _PACKAGED_BENCHMARKS:
        return Path.cwd() / "torchlower-benchmarks"
    return cells_path.resolve().parent.parent / "docs" / "benchmarks"


def _import_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = os.cpu_count() or 1
    name = re.sub(r"[^a-z0-9]+", "-", f"{cpu} {cores}c".lower()).strip("-")
    return {"name": name, "cpu": cpu, "cores": cores, "platform": platform.platform(), "load_before": _loadavg()}


def _loadavg() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def _error_line(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    first = text.splitlines()[0] if text else type(error).__name__
    return first[:300]
