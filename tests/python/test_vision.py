"""Vision ops on the layouts real CNN code feeds them: channels-last and non-contiguous
inputs give eager's values and eager's output layout (libtorch's own kernels), and eager's
errors for sizes that do not fit."""

from __future__ import annotations

import pytest
import torch

import torchlower
from test_native_cpu import CORPUS, assert_matches_eager, import_path


@pytest.fixture(scope="module")
def vision():
    module = import_path(CORPUS / "vision.py")
    names = ["conv_block", "pools", "upsample", "transposed", "same_padding"]
    compiled = {name: torchlower.compile(getattr(module, name)) for name in names}
    for name, fn in compiled.items():
        assert fn.route == "native", f"{name}: {fn.reason}"
    return module, compiled


def _args(name: str):
    torch.manual_seed(0)
    x = torch.randn(2, 4, 12, 12)
    return {
        "conv_block": (x, torch.randn(6, 4, 3, 3), torch.randn(6)),
        "pools": (x,),
        "upsample": (x, torch.randn(5, 4, 3, 3), torch.randn(5)),
        "transposed": (x, torch.randn(4, 3, 3, 3), torch.randn(3)),
        "same_padding": (x, torch.randn(6, 4, 3, 3)),
    }[name]


@pytest.mark.parametrize("name", ["conv_block", "pools", "upsample", "transposed", "same_padding"])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "strided"])
def test_layouts_give_eagers_values_and_layout(vision, name, layout):
    module, compiled = vision
    args = list(_args(name))
    if layout == "channels_last":
        args[0] = args[0].to(memory_format=torch.channels_last)
    elif layout == "strided":
        args[0] = args[0].transpose(2, 3).contiguous().transpose(2, 3)
    native, eager = compiled[name](*args), getattr(module, name)(*args)
    assert_matches_eager(native, eager)
    assert native.stride() == eager.stride(), f"{name} on {layout}: strides {native.stride()} vs {eager.stride()}"


def test_size_errors_are_eagers(vision, native_mode):
    module, compiled = vision
    x, w, b = torch.randn(2, 3, 8, 8), torch.randn(6, 4, 3, 3), torch.randn(6)  # 3 channels, weight wants 4
    with pytest.raises(RuntimeError) as eager:
        module.conv_block(x, w, b)
    with pytest.raises(RuntimeError) as native:
        compiled["conv_block"](x, w, b)
    assert str(native.value) == str(eager.value)
