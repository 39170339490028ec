"""``torchlower bench --sweep``: every claimed op alone and every fused pattern, native against
eager, over a grid of shapes (``benchmarks/sweep.py``), to find where native is slower.

Same protocol as the cell benchmark (:mod:`torchlower._cli_bench`): boundary-inclusive time of
one Python call, lanes interleaved, paired per-sample ratios eager/native, one process. The
table is printed slowest cells first; JSON, Markdown (slowest first, then one function per
row and one shape per column) and a heat-map PNG go to ``docs/benchmarks/<stem>-sweep.*``.
``--min-ratio R`` makes the run fail (exit status 1) when a cell whose eager time is at least
``--stable-us`` is below R×, or when a native result differs from eager.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from . import _cli_bench as bench


def main(args: argparse.Namespace) -> int:
    """The sweep, with ``args`` as :func:`torchlower._cli_bench.main` prepared them (samples for
    ``--quick``, torch threads set)."""
    sweep_path = args.cells_module or _find_sweep_module()
    if sweep_path is None or not sweep_path.is_file():
        print("torchlower bench --sweep: cannot find benchmarks/sweep.py (pass --cells-module)", file=sys.stderr)
        return 2
    module = bench._import_file(sweep_path, "_torchlower_bench_sweep")
    selected = module.cells(quick=args.quick)
    if args.cells != "all":
        wanted = {s.strip() for s in args.cells.split(",")}
        selected = [c for c in selected if c[1] in wanted or c[0] in wanted]
    if not selected:
        print(f"torchlower bench --sweep: no cell matches {args.cells!r}", file=sys.stderr)
        return 2
    lanes = ["native", "eager"]
    print(f"torchlower bench --sweep: {len(selected)} cells, native vs eager, torch threads {args.threads}, "
          f"{args.samples} samples ≥ {args.sample_ms:g} ms; load {bench._loadavg()}", flush=True)
    machine = bench._machine()
    builders = bench._LaneBuilders(module, sweep_path, lanes)
    results = [bench._bench_cell(cell_id, function, shape, module, builders, args, quiet=True)
               for cell_id, function, shape in _progress(selected)]
    report = bench._report(results, lanes, args, machine)
    report["sweep"] = {"ops": getattr(module, "OPS", {})}
    problems = _problems(report, args.min_ratio, args.stable_us)
    print()
    for line in _slowest_lines(report, limit=25):
        print(line)
    print()
    for line in bench._summary_lines(report) + problems:
        print(line)
    out_dir = args.out or bench._default_out_dir(sweep_path)
    stem = (args.name or f"{report['date']}-{report['machine']['name']}") + f"-{args.threads}t-sweep"
    written = _write_outputs(report, out_dir, stem, chart=not args.no_chart)
    print("wrote " + ", ".join(str(p) for p in written))
    return 1 if problems else 0


def _progress(cells: list) -> list:
    """The cells, with a progress line on a terminal (the sweep takes minutes)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return cells
    return tqdm(cells, desc="sweep", unit="cell", file=sys.stderr, disable=not sys.stderr.isatty())


def _ratio(cell: dict) -> float | None:
    s = cell["speedup_vs_eager"].get("native")
    return s["median"] if s else None


def _problems(report: dict, min_ratio: float | None, stable_us: float) -> list[str]:
    """Cells that break the floor (when asked for) and native results that differ from eager."""
    problems = []
    for cell in report["cells"]:
        native = cell["lanes"].get("native", {})
        if native.get("route", "native") != "native":
            problems.append(f"{cell['id']}: native fell back to Python ({native.get('reason', native.get('error', '?'))})")
        elif native.get("matches_eager") is False:
            problems.append(f"{cell['id']}: native differs from eager (max |diff| {native.get('max_abs_diff')})")
        eager_us = cell["lanes"].get("eager", {}).get("median_us", 0.0)
        ratio = _ratio(cell)
        if min_ratio is not None and ratio is not None and eager_us >= stable_us and ratio < min_ratio:
            problems.append(f"{cell['id']}: native ×{ratio:.2f} eager, below the floor ×{min_ratio:g}")
    return problems


def _sorted_cells(report: dict) -> list[dict]:
    return sorted((c for c in report["cells"] if _ratio(c) is not None), key=_ratio)


def _slowest_lines(report: dict, limit: int | None = None) -> list[str]:
    """Markdown table of the cells, slowest (lowest ×eager) first."""
    lines = ["| cell | native µs | eager µs | native ×eager [95% CI] |", "|---|---|---|---|"]
    cells = _sorted_cells(report)
    for cell in cells[:limit]:
        s = cell["speedup_vs_eager"]["native"]
        lines.append(f"| {cell['id']} | {cell['lanes']['native']['median_us']:.2f} | {cell['lanes']['eager']['median_us']:.2f} | "
                     f"{s['median']:.2f} [{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}] |")
    if limit is not None and len(cells) > limit:
        lines.append(f"| … {len(cells) - limit} more | | | |")
    return lines


def _grid(report: dict) -> tuple[list[str], list[str], dict]:
    """(functions, shapes, {(function, shape): ratio}) in the sweep's order."""
    functions, shapes, ratios = [], [], {}
    for cell in report["cells"]:
        shape = "x".join(map(str, cell["shape"]))
        if cell["function"] not in functions:
            functions.append(cell["function"])
        if shape not in shapes:
            shapes.append(shape)
        ratios[(cell["function"], shape)] = _ratio(cell)
    shapes.sort(key=lambda s: tuple(int(v) for v in s.split("x")))
    return functions, shapes, ratios


def _grid_lines(report: dict) -> list[str]:
    functions, shapes, ratios = _grid(report)
    lines = ["| function | " + " | ".join(shapes) + " |", "|---|" + "---|" * len(shapes)]
    for function in functions:
        cells = []
        for shape in shapes:
            r = ratios.get((function, shape))
            cells.append("" if r is None else (f"**{r:.2f}**" if r < 1.0 else f"{r:.2f}"))
        lines.append(f"| {function} | " + " | ".join(cells) + " |")
    return lines


def _write_outputs(report: dict, out_dir: Path, stem: str, chart: bool) -> list[Path]:
    machine, settings = report["machine"], report["settings"]
    ratios = [r for r in (_ratio(c) for c in report["cells"]) if r is not None]
    md = [
        f"# torchlower bench --sweep — {report['date']}, {machine['name']}, {settings['threads']} thread(s)",
        "",
        f"CPU: {machine['cpu']} ({machine['cores']} cores); torch {settings['torch']}; {settings['samples']} interleaved "
        f"samples ≥ {settings['sample_ms']:g} ms per lane; load average before/after: {machine['load_before']} / {report['load_after']}.",
        "",
        "×eager is the median of the paired per-sample ratios eager time / native time (boundary-inclusive Python "
        f"calls). Cells: {len(ratios)}; below 1.0: {sum(r < 1.0 for r in ratios)}; below 0.97: {sum(r < 0.97 for r in ratios)}; "
        f"lowest ×{min(ratios):.2f}; geometric mean ×{bench._geomean(ratios):.2f}." if ratios else "No cell measured.",
        "",
        "## By function and shape (rows × cols; bold: slower than eager)",
        "",
        *_grid_lines(report),
        "",
        "## Slowest first",
        "",
        *_slowest_lines(report),
        "",
    ]
    return bench.write_files(report, out_dir, stem, md, _heatmap if chart else None, "torchlower bench --sweep")


def _heatmap(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    functions, shapes, ratios = _grid(report)
    values = [[math.log2(ratios[(f, s)]) if ratios.get((f, s)) else math.nan for s in shapes] for f in functions]
    finite = [abs(v) for row in values for v in row if not math.isnan(v)] or [1.0]
    span = max(1.0, max(finite))
    fig, axis = plt.subplots(figsize=(max(8, len(shapes) * 0.55), max(5, len(functions) * 0.32)))
    image = axis.imshow(values, cmap="RdYlGn", norm=TwoSlopeNorm(vmin=-span, vcenter=0.0, vmax=span), aspect="auto")
    axis.set_xticks(range(len(shapes)), shapes, rotation=70, fontsize=7)
    axis.set_yticks(range(len(functions)), functions, fontsize=7)
    for i, f in enumerate(functions):
        for j, s in enumerate(shapes):
            r = ratios.get((f, s))
            if r is not None:
                axis.text(j, i, f"{r:.2f}", ha="center", va="center", fontsize=5)
    fig.colorbar(image, ax=axis, label="log2(native speed-up over eager)")
    axis.set_title(f"torchlower sweep {report['date']} — {report['machine']['name']}, {report['settings']['threads']} thread(s)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _find_sweep_module() -> Path | None:
    cells = bench._find_cells_module()
    return cells.parent / "sweep.py" if cells is not None else None
