"""``torchlower bench --sweep``: every op of the op table has its sweep rows, and the sweep runs
end to end (native routes and matches eager in every cell, slowest cells first, outputs written).

The sweep's speed floor (``--min-ratio``) is not asserted here: the shared CI machines are too
noisy for a timed unit test, and the sweep's own numbers go to ``docs/benchmarks/``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import torchlower

REPO = Path(__file__).resolve().parents[2]
SWEEP = REPO / "benchmarks" / "sweep.py"


def _sweep_module():
    spec = importlib.util.spec_from_file_location("_sweep_under_test", SWEEP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_op_of_the_table_has_sweep_rows():
    """Each op a claim rule lowers (the registry names it) is measured alone by the sweep."""
    ops = {rule["op"] for rule in torchlower.rules()["rules"]}
    sweep = _sweep_module()
    measured = set(sweep.OPS.values())
    assert ops <= measured, f"ops without sweep rows: {sorted(ops - measured)}"
    functions = {function for _, function, _ in sweep.cells()}
    assert set(sweep.OPS) <= functions, "every op's function has cells in the grid"


def test_every_sweep_function_routes_native():
    report = torchlower.analyze(SWEEP.read_text(), str(SWEEP))
    routes = {f["name"]: f["route"] for f in report["functions"]}
    sweep = _sweep_module()
    for _, function, _ in sweep.cells():
        assert routes[function] == "native", function


def test_quick_sweep_runs_and_lists_the_slowest_first(tmp_path):
    command = [sys.executable, "-m", "torchlower.cli", "bench", "--sweep", "--quick",
               "--cells", "relu,sum_rows,linear_relu_mean,argmax", "--out", str(tmp_path), "--name", "smoke",
               "--cells-module", str(SWEEP)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "smoke-1t-sweep.json").read_text())
    assert {c["function"] for c in report["cells"]} == {"relu", "sum_rows", "linear_relu_mean", "argmax"}
    for cell in report["cells"]:
        native = cell["lanes"]["native"]
        assert native.get("route") == "native" and native.get("matches_eager") is True, (cell["id"], native)
        assert cell["lanes"]["eager"]["median_us"] > 0
    markdown = (tmp_path / "smoke-1t-sweep.md").read_text()
    slowest = markdown.split("## Slowest first", 1)[1]
    ratios = [float(m) for m in re.findall(r"^\| \S+ \| [\d.]+ \| [\d.]+ \| ([\d.]+) \[", slowest, re.MULTILINE)]
    assert len(ratios) == len(report["cells"]) and ratios == sorted(ratios)
    assert (tmp_path / "smoke-1t-sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_min_ratio_fails_the_run_when_a_cell_is_below_it(tmp_path):
    """An impossible floor (×1000) must fail: the check is live, whatever the machine."""
    command = [sys.executable, "-m", "torchlower.cli", "bench", "--sweep", "--quick", "--cells", "relu",
               "--min-ratio", "1000", "--stable-us", "0", "--no-chart", "--out", str(tmp_path), "--name", "floor",
               "--cells-module", str(SWEEP)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "below the floor ×1000" in done.stdout
