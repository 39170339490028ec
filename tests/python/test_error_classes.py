"""The exception class of a libtorch error natively is eager's: tch keeps only the text, and
the same words come from checks eager raises as RuntimeError (topk, gather) and as IndexError
(index_select). Found by running every op spelling against eager on generated arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import torchlower
from test_native_cpu import import_path

CASES = Path(__file__).parent / "native_cases" / "error_classes.py"


@pytest.fixture(scope="module")
def module():
    return import_path(CASES)


def _raised(fn, *args):
    with pytest.raises(Exception) as caught:
        fn(*args)
    return type(caught.value), str(caught.value).splitlines()[0]


@pytest.mark.parametrize(
    "name,make",
    [
        ("top_values", lambda: (torch.randn(3, 4), 5)),
        ("top_values", lambda: (torch.randn(3, 4), -1)),
        ("gathered", lambda: (torch.randn(3, 4), torch.tensor([[0, 4], [1, 1], [0, 0]]))),
        ("gathered", lambda: (torch.randn(3, 4), torch.tensor([[0, -9], [1, 1], [0, 0]]))),
        ("selected", lambda: (torch.randn(3, 4), torch.tensor([0, 3]))),
    ],
)
def test_native_errors_have_eagers_class_and_text(module, name, make):
    fn = getattr(module, name)
    compiled = torchlower.compile(fn)
    assert compiled.route == "native", compiled.reason
    args = make()
    assert _raised(compiled, *args) == _raised(fn, *args)


def test_argument_forms_eager_refuses_are_not_claimed():
    """`t.logical_not(0)` (no argument allowed) and `torch.group_norm` (the C++ op, without
    F.group_norm's Python checks) stay Python, which gives eager's behaviour."""
    report = torchlower.analyze(
        "import torch\nfrom torchlower.types import TensorF32Cpu2D, TensorF32Cpu3D\n"
        "def a(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x.logical_not(0)\n"
        "def b(x: TensorF32Cpu3D) -> TensorF32Cpu3D:\n    return torch.group_norm(x, 1)\n",
        filename="t.py",
    )
    assert [f["route"] for f in report["functions"]] == ["fallback", "fallback"]
