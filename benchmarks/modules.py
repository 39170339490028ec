"""torchlower.compile(module) against eager on the module corpus (tests/realworld/modules/).

    python benchmarks/modules.py

Each module of the corpus in eval mode under torch.no_grad(), its example inputs cut to batch
1; median of 7 runs of 2000 calls per lane, all lanes in one process. Prints one row per
module that runs native: eager µs, the compiled module µs, the speed-up, and the module path's
overhead: the compiled module minus its specialised native function called alone with the
same values (arguments, then the instance's tensors) — the guards and the reading of the
instance's tensors — as the median of 21 paired differences (timed f, g, g, f); and the
guards' own cost: the same path with a native function that does nothing (`"".format`, which
takes any number of arguments and returns "" at once) minus that function called alone, which resolves
a few ns where the first difference carries the noise of a 100 µs native call. Then the
geomean speed-up and the median and largest of both.
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


def paired_difference(f, g, n=1000, runs=21):
    """Median over runs of (µs per call of f) − (µs per call of g), timed f, g, g, f in each
    run: the machine's drift and the first lane's penalty cancel."""

    def timed(h):
        t0 = time.perf_counter()
        for _ in range(n):
            h()
        return time.perf_counter() - t0

    differences = []
    for _ in range(runs):
        first_f, first_g, second_g, second_f = timed(f), timed(g), timed(g), timed(f)
        differences.append((first_f + second_f - first_g - second_g) / (2 * n) * 1e6)
    return statistics.median(differences)


def main() -> None:
    ratios, overheads, guard_costs = [], [], []
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
                bare_fn = next(f for f in compiled.specialisations.values() if f is not None)
                values = (*args, *compiled.instance_tensors())
                eager, native = bench(lambda: model(*args)), bench(lambda: compiled(*args))
                overhead = paired_difference(lambda: compiled(*args), lambda: bare_fn(*values))
                guards = guard_cost(compiled, args, values, bare_fn)
            ratios.append(eager / native)
            overheads.append(overhead)
            guard_costs.append(guards)
            print(f"{path.stem}.{name:30} eager {eager:7.1f} us  native {native:7.1f} us  x{eager / native:.2f}"
                  f"  overhead {overhead:+.2f} us  guards {guards:+.3f} us")
    print(f"geomean x{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f} over {len(ratios)} modules")
    print(f"module-path overhead: median {statistics.median(overheads):+.2f} us, largest {max(overheads):+.2f} us")
    print(f"guards alone: median {statistics.median(guard_costs):+.3f} us, largest {max(guard_costs):+.3f} us")


def guard_cost(compiled, args, values, native) -> float:
    """The module path's own cost: the compiled module's fast path with `"".format` as its
    native function, minus `"".format(*values)`; the real native function is put back after."""
    nothing = "".format
    compiled.use_native(nothing)
    try:
        return paired_difference(lambda: compiled(*args), lambda: nothing(*values), n=20000)
    finally:
        compiled.use_native(native)


if __name__ == "__main__":
    main()
