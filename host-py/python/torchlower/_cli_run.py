"""``torchlower run FILE.py``: the demo of the whole pipeline on one file.

analyze → show the claims per function → build → for every native function: generate
inputs from its annotations, run it natively and as eager PyTorch, check parity and time
both (median per call, paired in this process) → one table.

Inputs: tensors are drawn from a seeded normal distribution (int64 and int32 ones uniformly from
``[0, size)``). Their shapes come from a comment in or just above the function,

    # torchlower: inputs x=(8, 64) w=(32, 64) b=(32,) depth=4 phase=1

and otherwise every dimension is ``--size`` (default 32): all-square shapes are consistent
for every claimed form (linear, matmul, broadcasting). ``int`` parameters default to 3,
``bool`` ones to True.

Unlike ``torchlower build``, this imports (runs) the file, to get the functions to call.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

from ._cli_build import describe_build, format_table, read_source, route_rows
from ._compile import build_module, compile

_INPUTS_COMMENT = re.compile(r"#\s*torchlower:\s*(?:inputs|shapes)\b(.*)")
_ASSIGNMENT = re.compile(r"(\w+)\s*=\s*(\([^)]*\)|-?\d+|True|False)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="Python source file to run")
    parser.add_argument("--size", type=int, default=32, help="every tensor dimension without a shape comment (default 32)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for both lanes (default 1)")
    parser.add_argument("--samples", type=int, default=7, help="timing samples per lane (default 7)")
    parser.add_argument("--sample-ms", type=float, default=20.0, help="minimum length of one sample (default 20 ms)")
    parser.add_argument("--no-time", action="store_true", help="check parity only")
    parser.add_argument("--seed", type=int, default=0)


# --- inputs -----------------------------------------------------------------------------------


def parse_inputs_comment(source_lines: list[str], entry: dict) -> dict[str, Any]:
    """Values of ``# torchlower: inputs …`` comments from two lines above the ``def`` to
    the end of the function."""
    first = max(entry.get("line", 1) - 3, 0)
    last = entry.get("end_line", entry.get("line", 1))
    found: dict[str, Any] = {}
    for line in source_lines[first:last]:
        match = _INPUTS_COMMENT.search(line)
        if not match:
            continue
        for name, text in _ASSIGNMENT.findall(match.group(1)):
            if text.startswith("("):
                found[name] = tuple(int(part) for part in text.strip("()").split(",") if part.strip())
            elif text in ("True", "False"):
                found[name] = text == "True"
            else:
                found[name] = int(text)
    return found


def tensor_contract(type_name: Any) -> tuple[str, str, int] | None:
    """(dtype, device, rank) of an annotation name such as ``TensorF32Cpu2D``, else None."""
    text = str(type_name)
    match = re.search(r"Tensor(F32|I64|I32|Bool)(Cpu|Cuda0_?)(\d)D", text)
    if not match:
        return None
    dtype = {"F32": "float32", "I64": "int64", "I32": "int32", "Bool": "bool"}[match.group(1)]
    device = "cpu" if match.group(2) == "Cpu" else "cuda:0"
    return dtype, device, int(match.group(3))


def make_inputs(entry: dict, overrides: dict[str, Any], size: int, seed: int) -> list[Any]:
    import torch

    generator = torch.Generator().manual_seed(seed)
    values = []
    for param in entry.get("params", []):
        name, type_name = param["name"], param.get("type")
        contract = tensor_contract(type_name)
        if name in overrides and not isinstance(overrides[name], tuple):
            values.append(overrides[name])
        elif contract is not None:
            dtype, device, rank = contract
            shape = overrides.get(name, (size,) * rank)
            if dtype == "float32":
                tensor = torch.randn(shape, generator=generator, dtype=torch.float32)
            elif dtype == "bool":
                tensor = torch.rand(shape, generator=generator) > 0.5
            else:
                tensor = torch.randint(0, size, shape, generator=generator, dtype=getattr(torch, dtype))
            values.append(tensor.to(device))
        elif re.fullmatch(r"(list|tuple)\[int(, int)*\]", str(type_name)):
            # a list or tuple of ints (a window size): 2s, which divide the default sizes
            ints = [2] * str(type_name).count("int")
            values.append(ints if str(type_name).startswith("list") else tuple(ints))
        elif str(type_name) == "bool":
            values.append(True)
        elif str(type_name) == "float":
            values.append(0.75)
        else:
            values.append(3)
    return values


# --- parity -----------------------------------------------------------------------------------


def parity_problems(native: Any, eager: Any) -> list[str]:
    """Differences between a native and an eager result, by the comparison of docs/architecture.md ("Exactness"):
    dtype, shape, device, NaN/±Inf positions, signed zeros, values (rtol 1e-5, atol 1e-6),
    and a native output that does not require grad."""
    import torch

    if isinstance(eager, torch.Tensor) != isinstance(native, torch.Tensor):
        return [f"type {type(native).__name__} != eager {type(eager).__name__}"]
    if isinstance(eager, (tuple, list)):
        # a list stays a list, a tuple a tuple, a `torch.return_types` record that record
        if type(native) is not type(eager) or len(native) != len(eager):
            return [f"{type(native).__name__} of {len(native)} != eager {type(eager).__name__} of {len(eager)}"]
        return [f"[{i}] {problem}" for i, (n, e) in enumerate(zip(native, eager)) for problem in parity_problems(n, e)]
    if not isinstance(eager, torch.Tensor):
        return [] if (type(native), native) == (type(eager), eager) else [f"value {native!r} != eager {eager!r}"]
    problems = []
    if native.requires_grad:
        problems.append("native output requires grad")
    for what in ("dtype", "shape", "device"):
        if getattr(native, what) != getattr(eager, what):
            problems.append(f"{what} {getattr(native, what)} != eager {getattr(eager, what)}")
    if problems:
        return problems
    n, e = native.detach().cpu(), eager.detach().cpu()
    if not n.is_floating_point():
        return [] if torch.equal(n, e) else ["values differ"]
    if not torch.equal(torch.isnan(n), torch.isnan(e)):
        problems.append("NaN positions differ")
    if not torch.equal(torch.isposinf(n), torch.isposinf(e)) or not torch.equal(torch.isneginf(n), torch.isneginf(e)):
        problems.append("±Inf positions differ")
    finite = torch.isfinite(n) & torch.isfinite(e)
    if not torch.allclose(n[finite], e[finite], rtol=1e-5, atol=1e-6):
        worst = (n[finite] - e[finite]).abs().max().item()
        problems.append(f"values differ (max abs difference {worst:.3g})")
    zeros = (n == 0) & (e == 0)
    if not torch.equal(torch.signbit(n[zeros]), torch.signbit(e[zeros])):
        problems.append("signs of zeros differ")
    return problems


def snapshot(values: list[Any]) -> list[Any]:
    """Bitwise copies of the tensor inputs, to prove they are not mutated."""
    import torch

    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in values]


def unchanged(before: list[Any], after: list[Any]) -> bool:
    import torch

    for old, new in zip(before, after):
        if isinstance(old, torch.Tensor):
            if old.shape != new.shape or old.dtype != new.dtype:
                return False
            if old.cpu().contiguous().view(torch.uint8).ne(new.detach().cpu().contiguous().view(torch.uint8)).any():
                return False
    return True


# --- timing -----------------------------------------------------------------------------------


def time_pair(native: Callable, eager: Callable, args: list[Any], samples: int, sample_ms: float) -> tuple[float, float]:
    """Median µs per call of each lane; samples interleaved so drift hits both alike."""
    for _ in range(20):  # warm both (allocator, caches)
        native(*args)
        eager(*args)
    calls = 1
    while True:  # calls per sample so the slower lane runs at least sample_ms
        slowest = max(_run(native, args, calls), _run(eager, args, calls))
        if slowest >= sample_ms / 1000 or calls >= 1 << 20:
            break
        calls *= 2
    native_us, eager_us = [], []
    for _ in range(samples):
        native_us.append(_run(native, args, calls) / calls * 1e6)
        eager_us.append(_run(eager, args, calls) / calls * 1e6)
    return statistics.median(native_us), statistics.median(eager_us)


def _run(fn: Callable, args: list[Any], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return time.perf_counter() - started


# --- the command ------------------------------------------------------------------------------


def show_claims(report: dict) -> None:
    for diagnostic in report.get("diagnostics", []):
        print(f"  module: {diagnostic.get('code')} line {diagnostic.get('line')}: {diagnostic.get('message')}")
    for entry in report.get("functions", []):
        sites = entry.get("sites", [])
        claimed = sum(1 for s in sites if s.get("outcome") == "claimed")
        print(f"{entry['name']} (line {entry.get('line')}): {entry.get('route')}, {claimed}/{len(sites)} sites claimed")
        for site in sites:
            rule = site.get("rule") or site.get("code") or ""
            print(f"    {site.get('line')}:{site.get('col')}  {site.get('target')}  {site.get('outcome')}  {rule}")
        for diagnostic in entry.get("diagnostics", []):
            print(f"    ! {diagnostic.get('code')}: {diagnostic.get('message')}")


def import_file(path: Path):
    """Imports (runs) the file as a fresh module, its folder first on sys.path."""
    name = "_torchlower_run_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def main(args: argparse.Namespace) -> int:
    import torch

    from ._analyze import analyze

    path: Path = args.file.resolve()
    try:
        source = read_source(path)
    except (OSError, SyntaxError) as error:
        print(f"torchlower run: cannot read {path}: {error}", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)

    report = analyze(source, str(path))
    print(f"== claims ({path.name})")
    show_claims(report)
    print("\n== build")
    build = build_module(source, str(path), report)
    print(describe_build(build))

    try:
        module = import_file(path)
    except Exception as error:  # the user's module does not import: nothing to run
        print(f"torchlower run: importing {path.name} failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    source_lines = source.splitlines()
    rows, failures = [], 0
    for entry, route, reason in route_rows(build):
        function = getattr(module, entry["name"], None)
        original = getattr(function, "__wrapped__", function)
        if route != "native" or original is None:
            rows.append([entry["name"], "fallback", "-", "-", "-", "-", reason])
            continue
        needs_cuda = any((tensor_contract(p.get("type")) or ("", "cpu", 0))[1] != "cpu" for p in entry.get("params", []))
        if needs_cuda and not torch.cuda.is_available():
            rows.append([entry["name"], "native", "-", "-", "-", "-", "not run: no CUDA device here"])
            continue
        compiled = compile(original)
        inputs = make_inputs(entry, parse_inputs_comment(source_lines, entry), args.size, args.seed)
        before = snapshot(inputs)
        try:
            native_out = compiled(*inputs)
            eager_out = original(*inputs)
            problems = parity_problems(native_out, eager_out)
        except Exception as error:  # an input the generator got wrong, or a real failure
            problems = [f"{type(error).__name__}: {error}"]
        if not unchanged(before, inputs):
            problems.append("inputs were mutated")
        failures += bool(problems)
        timing = ["-", "-", "-"]
        if not problems and not args.no_time:
            native_us, eager_us = time_pair(compiled, original, inputs, args.samples, args.sample_ms)
            timing = [f"{native_us:.2f}", f"{eager_us:.2f}", f"{eager_us / native_us:.2f}x"]
        rows.append([entry["name"], compiled.route, "FAIL" if problems else "OK", *timing, "; ".join(problems)])
    print(f"\n== run (torch threads: {args.threads}; median per call, paired in this process)")
    print(format_table(["function", "route", "parity", "native µs", "eager µs", "speed-up", "note"], rows))
    return 1 if failures or build.error is not None else 0
