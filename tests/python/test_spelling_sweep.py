"""Every op spelling of the table, called with twenty argument patterns on a rank-0 and a
rank-2 float32 tensor: whatever the analyzer claims must give eager's values (bit for bit, NaN
and signed zeros included) or raise eager's exception class. A claim with a wrong argument
kind (`torch.stack(x)`, `torch.reshape(x, -1)`, `x.logical_not(0)`: eager's TypeError) or a
wrong error class (topk's k out of range) fails here, whatever op it is in.

The only difference allowed is the documented refusal: a ValueError saying "native code
refuses" where eager returns (auto mode then reruns Python; `squeeze(dim)` of a dim whose size
is not 1 is one).
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import pytest
import torch

import torchlower
from test_native_cpu import import_path

REPO = Path(__file__).resolve().parents[2]
OP_TABLE = REPO / "native-backend" / "ops" / "src" / "lib.rs"

ARGUMENTS = ["", "0", "-1", "dim=0", "dim=-1", "0, True", "dim=0, keepdim=True", "(0,)", "dim=()", "1", "s", "x",
             "s, s", "x, s", "2, 0", "[]", "[1]", "-1, 1", "0, 0"]
EXPRESSIONS = ["s[0]", "s[None]", "s[...]", "s[:, None]", "s.T", "s.mT", "s.ndim", "s.flatten()", "s.view(-1)", "s.reshape(1, 1)",
               "s.unsqueeze(0)", "s.squeeze()", "s.expand(3)", "s @ s", "x @ s", "s @ x", "s.sum()", "s.mean()", "s.t()",
               "s.max()", "s.argmax()", "torch.cat([s, s])", "torch.stack([s, s])", "torch.cat([s, s], 0)", "s.numel()",
               "s.dim()", "s.repeat(2)", "s.flatten(0)", "s.narrow(0, 0, 1)", "s.select(0, 0)", "F.linear(s, x)",
               "F.layer_norm(s, [1])", "F.layer_norm(s, (3,))", "torch.tril(s)", "s.triu()", "F.pad(s, (1, 1))",
               "F.normalize(s, dim=0)", "torch.where(s > 0, s, 0.0)", "s.masked_fill(s > 0, 1.0)", "s.clamp(min=s)",
               "s.var()", "s.std(0)", "s.norm()", "s.norm(dim=0)", "s.sum(dim=())", "s.amax(dim=())", "F.softmax(s, dim=0)",
               "F.log_softmax(s, 0)", "F.glu(s)", "s.prod()", "s.prod(0)", "s.all()", "s.any(0)", "len(s)", "s.shape"]
HEADER = ("import torch\nimport torch.nn.functional as F\nfrom torchlower.types import TensorF32Cpu0D, TensorF32Cpu1D, "
          "TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D, TensorF32Cpu5D, TensorF32Cpu6D, TensorBoolCpu1D, TensorBoolCpu2D, TensorBoolCpu3D, "
          "TensorBoolCpu4D, TensorBoolCpu0D, TensorI64Cpu0D, TensorI64Cpu1D, TensorI64Cpu2D, TensorI64Cpu3D, TensorI64Cpu4D, TensorI32Cpu1D, TensorI32Cpu2D, "
          "TensorI32Cpu3D, TensorI32Cpu4D\n\n")


def spellings() -> tuple[list[str], list[str]]:
    """The functions and methods of every row of the op table."""
    table = OP_TABLE.read_text()
    names = lambda field: sorted({n for m in re.finditer(field + r": \[([^\]]*)\]", table) for n in re.findall(r'"([^"]+)"', m.group(1))})
    return names("functions"), names("methods")


def bodies() -> list[str]:
    functions, methods = spellings()
    out = []
    for f in functions:
        for a in ARGUMENTS:
            out += [f"{f}(s{', ' if a else ''}{a})", f"{f}(x, s{', ' if a else ''}{a})"]
    out += [f"s.{m}({a})" for m in methods for a in ARGUMENTS]
    return out + EXPRESSIONS


def native_module(marker: str, folder: Path):
    """The claimed calls on an `s: marker` as a module of native functions (one per distinct
    call), with the result types the report gives them."""
    calls = bodies()
    source = HEADER + "".join(f"def f{i}(s: {marker}, x: TensorF32Cpu2D):\n    return {b}\n\n\n" for i, b in enumerate(calls))
    report = torchlower.analyze(source, filename=f"sweep_{marker}.py")
    native = [(int(f["name"][1:]), f["returns"]) for f in report["functions"] if f["route"] == "native"]
    lines = [HEADER]
    for i, returns in native:
        annotation = f" -> {returns}" if returns else ""
        lines.append(f"def f{i}(s: {marker}, x: TensorF32Cpu2D){annotation}:\n    return {calls[i]}\n\n\n")
    path = folder / f"sweep_{marker}.py"
    path.write_text("".join(lines))
    return import_path(path), {f"f{i}": returns for i, returns in native}, calls


_DTYPES = {"F32": torch.float32, "I64": torch.int64, "I32": torch.int32, "Bool": torch.bool}


def _typed_as_reported(value, returns) -> bool:
    """Whether eager's result has the dtype and rank of the type the report gave the call (a
    wrong one would mistype every later site of a real function)."""
    match = re.fullmatch(r"Tensor(F32|I64|I32|Bool)Cpu(\d)D", str(returns))
    if not isinstance(value, torch.Tensor) or match is None:
        return True
    return value.dtype == _DTYPES[match.group(1)] and value.dim() == int(match.group(2))


def _same(a, b) -> bool:
    if isinstance(b, tuple):
        return isinstance(a, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(b, torch.Tensor):
        if not isinstance(a, torch.Tensor) or a.dtype != b.dtype or a.shape != b.shape:
            return False
        if b.is_floating_point():
            bits = lambda t: torch.nan_to_num(t, 7.0).reshape(-1).view(torch.int32)
            return torch.equal(a.isnan(), b.isnan()) and torch.equal(bits(a), bits(b))
        return torch.equal(a, b)
    return a == b or (isinstance(b, float) and math.isnan(b) and math.isnan(a))


def _outcome(fn, s, x):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(s, x), None
    except Exception as error:  # noqa: BLE001 - the class is what is compared
        return None, error


def _receiver(marker: str, value):
    """`s` for the sweep: a 3×3 (or rank-0) tensor of the marker's dtype holding `value`."""
    if marker == "TensorF32Cpu0D":
        return torch.tensor(value)
    if marker == "TensorI32Cpu2D":
        s = torch.randint(-4, 5, (3, 3), generator=torch.Generator().manual_seed(2), dtype=torch.int32)
    else:
        s = torch.randn(3, 3, generator=torch.Generator().manual_seed(2))
    s[0, 0] = value
    return s


# the receiver's special values: float32's, and int32's bounds (where int32 math wraps)
_VALUES = {"TensorI32Cpu2D": [1, -2, 0, 2**31 - 1, -(2**31)]}


@pytest.mark.parametrize("marker,least", [("TensorF32Cpu0D", 100), ("TensorF32Cpu2D", 600), ("TensorI32Cpu2D", 100)])
def test_every_claimed_spelling_matches_eager(marker, least, tmp_path):
    module, names, calls = native_module(marker, tmp_path)
    assert len(names) > least, len(names)
    mismatches = []
    for name, returns in names.items():
        fn = getattr(module, name)
        compiled = torchlower.compile(fn)
        assert compiled.route == "native", f"{calls[int(name[1:])]}: {compiled.reason}"
        for value in _VALUES.get(marker, [0.5, -2.0, float("nan"), float("inf"), -0.0]):
            x = torch.randn(3, 3, generator=torch.Generator().manual_seed(1))
            s = _receiver(marker, value)
            eager, eager_error = _outcome(fn, s.clone(), x.clone())
            native, native_error = _outcome(compiled, s, x)
            if eager_error is None and isinstance(native_error, ValueError) and "native code refuses" in str(native_error):
                continue
            if eager_error is not None or native_error is not None:
                if type(eager_error) is not type(native_error):
                    mismatches.append(f"{calls[int(name[1:])]} at {value}: eager {eager_error!r}, native {native_error!r}")
            elif not _same(native, eager):
                mismatches.append(f"{calls[int(name[1:])]} at {value}: native {native} vs eager {eager}")
            elif not _typed_as_reported(eager, returns):
                mismatches.append(f"{calls[int(name[1:])]}: the report types it {returns}, eager gives {eager.dtype} rank {eager.dim()}")
    assert not mismatches, "\n".join(mismatches[:40])
