#!/usr/bin/env python3
"""Compares torchlower's device kernels with *eager PyTorch on CUDA*.

Why: the GPU check (`torchlower-gpu-check`) proves each kernel matches its own host model,
but not that the model matches PyTorch. Our Rust extension cannot load on the GPU machine,
so the binary dumps every case (see native-backend/gpu-check/src/dump.rs: raw f32 input
storages with shape/strides/offset, op, args, the device output) and this script rebuilds
the inputs on CUDA with ``torch.as_strided``, runs the eager op and compares.

Verdicts: ``exact`` cases must be bitwise equal (any NaN equals any NaN; +0.0 vs -0.0
differs). Otherwise NaN and +-inf positions must agree and finite values must be within a
per-op tolerance (or within 4 ulps): elementwise ops ``2e-5*|expected|``; matmul/linear
conv and sum/mean ``1e-5`` times the sum of the absolute terms (computed in float64); softmax
``1e-6 + 2e-5*|expected|``; gelu (both forms), erf and mish add ``3e-7*max(|x|, 1)`` (their
``1 + erf``/``1 + tanh`` cancels for negative x); var/std/logsumexp/log_softmax ``1e-5*(|expected| + 1)``; layer/RMS norm ``1e-5*(|expected| + 1)`` times the line's
conditioning (``1 + |mean|/std`` for layer norm); argmax equal except at ties within 1e-6. ``max_ulps`` is
always reported, to show how close we are.

Usage: python3 scripts/gpu_eager_compare.py DUMP_DIR REPORT.json [--device cuda]
       python3 scripts/gpu_eager_compare.py --self-test   (CPU, fabricated dump)
Exit status: 0 all cases ok, 1 some case failed, 2 no (CUDA) torch.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the exit status tells the caller there is nothing to compare against
    torch = None

UNARY = {
    "relu": lambda x, a: torch.relu(x), "sigmoid": lambda x, a: torch.sigmoid(x),
    "tanh": lambda x, a: torch.tanh(x), "abs": lambda x, a: torch.abs(x),
    "gelu": lambda x, a: F.gelu(x, approximate=a.get("approximate", "none")),
    "neg": lambda x, a: torch.neg(x), "square": lambda x, a: torch.square(x),
    "exp": lambda x, a: torch.exp(x), "log": lambda x, a: torch.log(x),
    "sqrt": lambda x, a: torch.sqrt(x), "silu": lambda x, a: F.silu(x),
    "rsqrt": lambda x, a: torch.rsqrt(x), "reciprocal": lambda x, a: torch.reciprocal(x),
    "identity": lambda x, a: x.contiguous(), "contiguous": lambda x, a: x.contiguous(),
    # Python floats, as a model's `x + 0.5` passes them (eager keeps them as scalars).
    "add_scalar": lambda x, a: x + float(a["scalar"]), "sub_scalar": lambda x, a: x - float(a["scalar"]),
    "mul_scalar": lambda x, a: x * float(a["scalar"]), "div_scalar": lambda x, a: x / float(a["scalar"]),
    "scalar_add": lambda x, a: float(a["scalar"]) + x, "scalar_sub": lambda x, a: float(a["scalar"]) - x,
    "scalar_mul": lambda x, a: float(a["scalar"]) * x, "scalar_div": lambda x, a: float(a["scalar"]) / x,
    "pow": lambda x, a: x ** float(a["exponent"]),
    "clamp": lambda x, a: torch.clamp(x, min=a.get("min"), max=a.get("max")),
    "sum": lambda x, a: torch.sum(x, dim=a.get("dim"), keepdim=a.get("keepdim", False)),
    "mean": lambda x, a: torch.mean(x, dim=a.get("dim"), keepdim=a.get("keepdim", False)),
    "softmax": lambda x, a: torch.softmax(x, dim=a["dim"]),
    "argmax": lambda x, a: torch.argmax(x, dim=a.get("dim"), keepdim=a.get("keepdim", False)),
    "prod": lambda x, a: torch.prod(x, dim=a["dim"], keepdim=a.get("keepdim", False)),
    "glu": lambda x, a: F.glu(x, dim=a.get("dim", -1)),
    "amax": lambda x, a: torch.amax(x, dim=a.get("dim", []), keepdim=a.get("keepdim", False)),
    "amin": lambda x, a: torch.amin(x, dim=a.get("dim", []), keepdim=a.get("keepdim", False)),
    "logsumexp": lambda x, a: torch.logsumexp(x, dim=a["dim"], keepdim=a.get("keepdim", False)),
    "log_softmax": lambda x, a: F.log_softmax(x, dim=a["dim"]),
    "erf": lambda x, a: torch.erf(x), "log1p": lambda x, a: torch.log1p(x), "expm1": lambda x, a: torch.expm1(x),
    "gelu_tanh": lambda x, a: F.gelu(x, approximate="tanh"), "mish": lambda x, a: F.mish(x),
    "hardsigmoid": lambda x, a: F.hardsigmoid(x), "hardswish": lambda x, a: F.hardswish(x),
    "leaky_relu": lambda x, a: F.leaky_relu(x, a.get("negative_slope", 0.01)),
    "elu": lambda x, a: F.elu(x), "selu": lambda x, a: F.selu(x), "softplus": lambda x, a: F.softplus(x),
    "relu6": lambda x, a: F.relu6(x),
    "hardtanh": lambda x, a: F.hardtanh(x, a.get("min_val", -1.0), a.get("max_val", 1.0)),
    "max_pool": lambda x, a: (F.max_pool2d if a["dims"] == 2 else F.max_pool1d)(
        x, a["kernel_size"], a["stride"], a["padding"], a["dilation"], a["ceil_mode"]),
    "avg_pool": lambda x, a: (F.avg_pool2d if a["dims"] == 2 else F.avg_pool1d)(
        x, a["kernel_size"], a["stride"], a["padding"], a["ceil_mode"], a["count_include_pad"]),
    "adaptive_avg_pool": lambda x, a: (F.adaptive_avg_pool2d if a["dims"] == 2 else F.adaptive_avg_pool1d)(x, a["output_size"]),
    "adaptive_max_pool": lambda x, a: F.adaptive_max_pool2d(x, a["output_size"]),
    "var": lambda x, a: torch.var(x, dim=a.get("dim"), correction=a.get("correction", 1), keepdim=a.get("keepdim", False)),
    "std": lambda x, a: torch.std(x, dim=a.get("dim"), correction=a.get("correction", 1), keepdim=a.get("keepdim", False)),
}
BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
          "maximum": torch.maximum, "minimum": torch.minimum, "matmul": torch.matmul} if torch else {}


def _norm(layer: bool):
    """F.layer_norm / F.rms_norm: inputs (x, weight?, bias?) as the flags in args say."""
    def run(xs, a):
        shape = a.get("normalized_shape") or [xs[0].shape[-1]]
        w = xs[1] if a.get("weight") else None
        if layer:
            b = xs[2 if w is not None else 1] if a.get("bias") else None
            return F.layer_norm(xs[0], shape, w, b, a.get("eps", 1e-5))
        return F.rms_norm(xs[0], shape, w, a.get("eps"))
    return run


def _conv(xs, a):
    """F.conv1d/conv2d: inputs (x, weight, bias?)."""
    conv = F.conv2d if a["dims"] == 2 else F.conv1d
    return conv(xs[0], xs[1], xs[2] if a.get("bias") else None, a["stride"], a["padding"], a["dilation"], a["groups"])


MULTI = {"linear": lambda xs, a: F.linear(*xs), "conv": _conv, "cat": lambda xs, a: torch.cat(xs, dim=a["dim"]),
         "stack": lambda xs, a: torch.stack(xs, dim=a["dim"]),
         "layer_norm": _norm(True), "rms_norm": _norm(False)}
OPS = sorted([*UNARY, *BINARY, *MULTI])


def eager(op: str, xs: list, args: dict):
    if op in UNARY:
        return UNARY[op](xs[0], args)
    if op in BINARY:
        return BINARY[op](xs[0], xs[1])
    if op in MULTI:
        return MULTI[op](xs, args)
    raise ValueError(f"unknown op {op!r}")


def abs_terms(op: str, xs: list, args: dict):
    """Sum of |terms| behind each output (float64, CPU): the scale of a reduction's rounding."""
    a = [x.detach().cpu().double().abs() for x in xs]
    if op == "matmul":
        return torch.matmul(a[0], a[1]).numpy()
    if op == "linear":
        return F.linear(*a).numpy()
    if op == "conv":
        return _conv(a, args).numpy()
    s = torch.sum(a[0], dim=args.get("dim"), keepdim=args.get("keepdim", False))
    return (s / max(1, a[0].numel() // max(1, s.numel())) if op == "mean" else s).numpy()


def norm_conditions(xs: list, args: dict, shape) -> np.ndarray:
    """Per element, how much a norm's rounding may grow: ``1 + |mean| / std`` of its line
    for layer norm (the mean's error is amplified by rstd; float64, CPU), 1 for RMS norm."""
    x = xs[0].detach().cpu().double()
    n = len(args.get("normalized_shape") or [1])
    dims = tuple(range(x.dim() - n, x.dim()))
    mean = x.mean(dims, keepdim=True)
    std = x.var(dims, unbiased=False, keepdim=True).sqrt()
    c = torch.where((std > 0) & mean.isfinite(), 1 + mean.abs() / std, torch.ones_like(std))
    return c.expand_as(x).numpy().reshape(shape)


def ordered(bits: np.ndarray) -> np.ndarray:
    """float32 bits -> integers in float order, so that a difference counts ulps (-0 == +0)."""
    i = bits.astype(np.int64)
    return np.where(i < 0, -(2**31) - i, i)


def jnum(v):
    v = v.item()
    return v if isinstance(v, int) or math.isfinite(v) else repr(v)  # strict JSON: no NaN/inf


def compare(op, args, exact, xs, got, want) -> dict:
    """Counts mismatches between the device's `got` and eager's `want` (numpy, same shape)."""
    res = {"elements": int(got.size), "mismatches": 0, "max_ulps": 0, "max_abs": 0.0}
    if got.dtype == np.int64:
        bad = got != want
        if op == "argmax" and bad.any():  # a different index is fine when the values tie
            x = xs[0].detach().cpu().double().numpy()
            d, g, w = args.get("dim"), got, want
            if d is None:
                x, d, g, w = x.reshape(-1), 0, got.reshape(1), want.reshape(1)
            elif not args.get("keepdim", False):
                g, w = np.expand_dims(got, d), np.expand_dims(want, d)
            valid = (g >= 0) & (g < x.shape[d])
            xg = np.take_along_axis(x, np.where(valid, g, 0), d)
            xw = np.take_along_axis(x, w, d)
            tie = (valid & ((np.abs(xg - xw) <= 1e-6) | (np.isnan(xg) & np.isnan(xw)))).reshape(got.shape)
            res["ties"] = int((bad & tie).sum())
            if not exact:
                bad &= ~tie
    else:
        gb, wb = got.view(np.int32), want.view(np.int32)
        gn, wn = np.isnan(got), np.isnan(want)
        ulps = np.abs(ordered(gb) - ordered(wb))
        both = ~gn & ~wn
        res["max_ulps"] = int(ulps[both].max(initial=0))
        with np.errstate(all="ignore"):
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        fin = np.isfinite(got) & np.isfinite(want)
        res["max_abs"] = float(diff[fin].max(initial=0.0))
        if exact:
            bad = (gb != wb) & ~(gn & wn)
        else:
            if op in ("matmul", "linear", "conv", "sum", "mean"):
                tol = 1e-5 * abs_terms(op, xs, args).reshape(want.shape)
            elif op == "softmax":
                tol = 1e-6 + 2e-5 * np.abs(want.astype(np.float64))
            elif op in ("gelu", "gelu_tanh", "erf", "mish"):
                # 1 + erf / 1 + tanh cancel for negative x: a floor that scales with |x|
                x = np.abs(xs[0].detach().cpu().double().numpy()).reshape(want.shape)
                tol = 2e-5 * np.abs(want.astype(np.float64)) + 3e-7 * np.maximum(x, 1.0)
            elif op == "prod":
                # products of n terms round n times, in another order than eager's
                n = max(1, xs[0].shape[args["dim"]])
                tol = 1e-6 * n * np.abs(want.astype(np.float64))
            elif op in ("var", "std", "logsumexp", "log_softmax"):
                tol = 1e-5 * (np.abs(want.astype(np.float64)) + 1)
            elif op in ("layer_norm", "rms_norm"):
                cond = norm_conditions(xs, args, want.shape) if op == "layer_norm" else 1.0
                tol = 1e-5 * (np.abs(want.astype(np.float64)) + 1) * cond
            else:
                tol = 2e-5 * np.abs(want.astype(np.float64))
            close = (diff <= tol) | (ulps <= 4)
            bad = (gn != wn) | (both & ~fin & (got != want)) | (fin & ~close)
    res["mismatches"] = int(bad.sum())
    if res["mismatches"]:
        i = np.unravel_index(int(np.flatnonzero(bad)[0]), got.shape)
        res["first"] = {"index": [int(k) for k in i], "got": jnum(got[i]), "expected": jnum(want[i])}
        if got.dtype == np.float32:
            res["first"]["got_bits"] = f"{int(gb[i]) & 0xFFFFFFFF:08x}"
            res["first"]["expected_bits"] = f"{int(wb[i]) & 0xFFFFFFFF:08x}"
    return res


def run_case(d: Path, c: dict, device: str) -> dict:
    """Rebuilds the inputs on `device`, runs eager, compares. Errors fail the case, not the run."""
    res = {"case": c["case"], "op": c["op"], "ok": False}
    try:
        xs = []
        for inp in c["inputs"]:
            storage = torch.from_numpy(np.fromfile(d / inp["file"], dtype="<f4")).to(device)
            xs.append(torch.as_strided(storage, inp["shape"], inp["strides"], inp["offset"]))
        out = c["output"]
        got = np.fromfile(d / out["file"], dtype="<f4" if out["dtype"] == "float32" else "<i8")
        got = got.reshape(out["shape"]).astype(out["dtype"])
        with torch.no_grad():
            want = eager(c["op"], xs, c["args"] or {}).detach().cpu().numpy()
        if want.dtype != got.dtype or want.shape != got.shape:
            res["error"] = f"eager gives {want.dtype}{list(want.shape)}, device {got.dtype}{list(got.shape)}"
            return res
        res.update(compare(c["op"], c["args"] or {}, c["exact"], xs, got, want))
        res["ok"] = res["mismatches"] == 0
    except Exception as e:  # noqa: BLE001 - reported per case
        res["error"] = f"{type(e).__name__}: {e}"
    return res


def compare_dir(d: Path, device: str) -> list[dict]:
    manifest = json.loads((d / "manifest.json").read_text())
    return [run_case(d, c, device) for c in manifest["cases"]]


def print_table(results: list[dict]) -> None:
    print(f"{'case':<32} {'op':<12} {'ok':<4} {'elements':>9} {'bad':>7} {'max_ulps':>9} {'max_abs':>10}")
    for r in results:
        print(f"{r['case'][:32]:<32} {r['op']:<12} {'ok' if r['ok'] else 'FAIL':<4} {r.get('elements', 0):>9} "
              f"{r.get('mismatches', 0):>7} {r.get('max_ulps', 0):>9} {r.get('max_abs', 0.0):>10.3g}"
              + (f"  {r['error']}" if "error" in r else ""))
    print(f"{sum(r['ok'] for r in results)}/{len(results)} cases ok")


def write_dump(d: Path, cases: list) -> None:
    """The self-test's stand-in for dump.rs: same files, same manifest."""
    entries = []
    for n, (name, op, args, inputs, out, exact) in enumerate(cases):
        ins = []
        for i, (storage, shape, strides, offset) in enumerate(inputs):
            np.asarray(storage, dtype="<f4").tofile(d / f"c{n}_in{i}.bin")
            ins.append({"file": f"c{n}_in{i}.bin", "shape": shape, "strides": strides, "offset": offset})
        out.tofile(d / f"c{n}_out.bin")
        entries.append({"case": name, "op": op, "args": args, "exact": exact, "inputs": ins,
                        "output": {"file": f"c{n}_out.bin", "shape": list(out.shape), "dtype": str(out.dtype)}})
    (d / "manifest.json").write_text(json.dumps({"cases": entries}))


def self_test() -> int:
    """Fabricates a dump whose outputs eager itself computed on CPU (some tampered with) and
    checks that the verdicts are the expected ones: the checker must tell good from bad."""
    rng = np.random.default_rng(0)
    cases, expect = [], []

    def add(name, op, args, inputs, exact, ok, tamper=None):
        xs = [torch.as_strided(torch.from_numpy(np.asarray(s, np.float32)), sh, st, o) for s, sh, st, o in inputs]
        out = eager(op, xs, args).numpy().copy()
        if tamper:
            tamper(out)
        cases.append((name, op, args, inputs, out, exact))
        expect.append(ok)

    def c(*shape):  # a contiguous input of random values (positive for log/sqrt/rsqrt)
        return (rng.standard_normal(int(np.prod(shape))).astype(np.float32), list(shape),
                [int(np.prod(shape[i + 1:])) for i in range(len(shape))], 0)

    def pos(*shape):
        s, sh, st, o = c(*shape)
        return (np.abs(s) + 0.1, sh, st, o)

    args = {"scalar": 0.3, "exponent": 1.5, "min": -0.5, "max": None, "dim": 1, "keepdim": False, "correction": 1,
            "normalized_shape": [3], "eps": 1e-5, "weight": True, "bias": True,
            "dims": 2, "kernel_size": 2, "stride": 1, "padding": 0, "dilation": 1, "ceil_mode": False,
            "count_include_pad": True, "output_size": [1, 2], "groups": 1}
    for op in OPS:  # every op, exact and untampered: must pass (also checks the op table runs)
        n = {"matmul": [c(3, 4), c(4, 5)], "linear": [c(2, 4), c(3, 4), c(3)], "cat": [c(2, 3), c(2, 2)],
             "layer_norm": [c(2, 3), c(3), c(3)], "rms_norm": [c(2, 3), c(3)],
             "conv": [c(1, 2, 5, 5), c(3, 2, 3, 3), c(3)], "glu": [c(2, 4)],
             **{p: [c(1, 2, 3, 4)] for p in ("max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool")}}
        ins = n.get(op) or ([c(2, 3), c(2, 3)] if op in BINARY or op == "stack" else
                            [pos(2, 3)] if op in ("log", "sqrt", "rsqrt", "pow") else [c(2, 3)])
        add(f"all_{op}", op, args, ins, True, True)

    def nudge(out):  # one ulp up at element 0
        out.reshape(-1)[0] = np.nextafter(out.reshape(-1)[0], np.float32(np.inf))

    x = c(4, 5)
    add("tanh_exact", "tanh", {}, [x], True, True)
    add("tanh_1ulp_exact", "tanh", {}, [x], True, False, nudge)
    add("tanh_1ulp_tol", "tanh", {}, [x], False, True, nudge)
    add("tanh_big_error", "tanh", {}, [x], False, False, lambda o: o.__setitem__((0, 1), o[0, 1] + 1e-3))
    z = (np.array([0.0, -1.0, 2.0], np.float32), [3], [1], 0)
    add("relu_neg_zero", "relu", {}, [z], True, False, lambda o: o.__setitem__(0, -0.0))
    nan = (np.array([np.nan, 1.0], np.float32), [2], [1], 0)
    add("nan_payload", "exp", {}, [nan], True, True, lambda o: o.view(np.int32).__setitem__(0, 0x7FC00001))
    add("nan_vs_number", "exp", {}, [nan], False, False, lambda o: o.__setitem__(0, 1.0))
    # Strided: a transposed 3x4 view at offset 2 of a 16-element storage, and a transposed matmul operand.
    st = (rng.standard_normal(16).astype(np.float32), [3, 4], [1, 3], 2)
    add("strided_exp", "exp", {}, [st], False, True)
    add("strided_matmul", "matmul", {}, [c(2, 3), st], False, True, nudge)
    add("sum_tol", "sum", {"dim": 1, "keepdim": True}, [c(3, 50)], False, True, nudge)
    norm = {"normalized_shape": [50], "eps": 1e-5, "weight": True, "bias": False}
    w50 = c(50)
    add("layer_norm_tol", "layer_norm", norm, [c(3, 50), w50], False, True, nudge)
    add("layer_norm_wrong", "layer_norm", norm, [c(3, 50), w50], False, False, lambda o: o.__setitem__((1, 2), o[1, 2] + 1e-2))
    add("rms_norm_wrong", "rms_norm", norm, [c(3, 50), w50], False, False, lambda o: o.__setitem__((2, 0), -o[2, 0]))
    tie = (np.array([1.0, 3.0, 3.0, 0.0, 2.0, 5.0], np.float32), [2, 3], [3, 1], 0)
    add("argmax", "argmax", {"dim": 1, "keepdim": False}, [tie], True, True)
    add("argmax_tie", "argmax", {"dim": 1, "keepdim": False}, [tie], False, True, lambda o: o.__setitem__(0, 2))
    add("argmax_wrong", "argmax", {"dim": 1, "keepdim": False}, [tie], False, False, lambda o: o.__setitem__(1, 0))
    # The activations: gelu's floor for cancelling negative x, and what it must still catch.
    neg = (np.array([-5.0, -4.5, 0.5, 2.0], np.float32), [4], [1], 0)
    add("gelu_tanh_floor", "gelu_tanh", {}, [neg], False, True, lambda o: o.__setitem__(0, o[0] + 2e-7))
    add("gelu_tanh_wrong", "gelu_tanh", {}, [neg], False, False, lambda o: o.__setitem__(2, o[2] + 1e-4))
    add("hardswish_1ulp_exact", "hardswish", {}, [x], True, False, nudge)
    add("log_softmax_tol", "log_softmax", {"dim": 1}, [c(3, 50)], False, True, nudge)
    conv = {"dims": 2, "stride": 1, "padding": 1, "dilation": 1, "groups": 1, "bias": True}
    cx, cw, cb = c(1, 2, 6, 6), c(3, 2, 3, 3), c(3)
    add("conv_tol", "conv", conv, [cx, cw, cb], False, True, nudge)
    add("conv_wrong", "conv", conv, [cx, cw, cb], False, False, lambda o: o.__setitem__((0, 1, 2, 2), o[0, 1, 2, 2] + 1e-2))
    add("max_pool_1ulp_exact", "max_pool", args, [c(1, 2, 3, 4)], True, False, nudge)
    add("log_softmax_wrong", "log_softmax", {"dim": 1}, [c(3, 50)], False, False, lambda o: o.__setitem__((0, 0), o[0, 0] + 1e-3))

    with tempfile.TemporaryDirectory(prefix="gpu-eager-selftest-") as t:
        write_dump(Path(t), cases)
        results = compare_dir(Path(t), "cpu")
    print_table(results)
    # A bad case must fail by its mismatches, not by an error in the checker.
    wrong = [r["case"] for r, ok in zip(results, expect) if r["ok"] != ok or "error" in r]
    print("self-test:", f"FAILED, wrong verdicts: {wrong}" if wrong else f"ok ({len(results)} verdicts as expected)")
    return 1 if wrong else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dump_dir", nargs="?", type=Path)
    p.add_argument("report", nargs="?", type=Path)
    p.add_argument("--device", default="cuda", help="cpu only for testing this script")
    p.add_argument("--self-test", action="store_true")
    a = p.parse_args()
    if torch is None:
        print("no torch", file=sys.stderr)
        return 2
    if a.self_test:
        return self_test()
    if a.dump_dir is None or a.report is None:
        p.error("DUMP_DIR and REPORT are required")
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        print("torch has no usable CUDA device", file=sys.stderr)
        return 2
    torch.set_float32_matmul_precision("highest")  # no TF32: we compare with true fp32 eager
    torch.backends.cudnn.allow_tf32 = False  # cuDNN's convolutions default to TF32 on Ampere and later
    results = compare_dir(a.dump_dir, a.device)
    a.report.parent.mkdir(parents=True, exist_ok=True)
    dev = torch.cuda.get_device_name() if a.device.startswith("cuda") else a.device
    a.report.write_text(json.dumps({"device": dev, "torch": torch.__version__, "cases": results}, indent=1))
    print_table(results)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
