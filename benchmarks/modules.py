"""torchlower.compile(module) against eager on the module corpus (tests/realworld/modules/).

    python benchmarks/modules.py

Each module of the corpus in eval mode under torch.no_grad(), its example inputs cut to batch
1; median of 7 runs of 2000 calls per lane, both lanes in one process. Prints one row per
module that runs native (eager µs, native µs, speed-up) and the geomean.
"""

import importlib.util
import math
import statistics
import sys
import time
from pathlib import Path

import torch

import torchlower

MODULES = Path(__file__).resolve().parents[1] / "tests" / "realworld" / "modules"


def bench(f, n=2000, runs=7):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        times.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(times)


def main() -> None:
    ratios = []
    for path in sorted(MODULES.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"_tl_bench_{path.stem}", path)
        corpus = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = corpus
        spec.loader.exec_module(corpus)
        for name, (make, inputs) in corpus.EXAMPLES.items():
            torch.manual_seed(0)
            model = make().eval()
            compiled = torchlower.compile(model)
            args = tuple(a[:1] if a.dim() > 1 else a for a in inputs())
            with torch.no_grad():
                compiled(*args)
                if compiled.calls["native"] == 0:
                    continue
                eager, native = bench(lambda: model(*args)), bench(lambda: compiled(*args))
            ratios.append(eager / native)
            print(f"{path.stem}.{name:30} eager {eager:7.1f} us  native {native:7.1f} us  x{eager / native:.2f}")
    print(f"geomean x{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f} over {len(ratios)} modules")


if __name__ == "__main__":
    main()
