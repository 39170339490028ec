"""Code a user writes against torchlower's public API, checked by mypy in the tests: the
markers are torch.Tensor to a type checker, compile/native keep a function's signature, and
the report and registry are JSON-like dicts."""

from typing import Any

import torch
import torch.nn.functional as F

import torchlower
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


def head(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1)


@torchlower.native
def scaled(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return x * s


def use() -> float:
    fast = torchlower.compile(head)
    out: torch.Tensor = fast(torch.randn(2, 3), torch.randn(4, 3), torch.randn(4))
    doubled: torch.Tensor = scaled(out.unsqueeze(0), 2.0)
    report: dict[str, Any] = torchlower.analyze("def f(): pass\n", "f.py")
    codes = [entry["code"] for entry in torchlower.rules()["codes"]]
    model = torchlower.compile(torch.nn.Linear(3, 4))
    y = model(torch.randn(2, 3))
    try:
        torchlower.analyze(b"\xff", "bad.py")
    except torchlower.AnalyzerError as error:
        print(error.kind)
    return float(doubled.sum()) + len(report["functions"]) + len(codes) + float(y.sum())
