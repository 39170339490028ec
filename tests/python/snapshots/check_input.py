# Input of the `torchlower check` snapshot test: one native function, one function with a
# rejected site (an unknown GELU approximation), one with a site outside the claimed surface, one with a wide
# character before the span (the caret must still line up).
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu2D, TensorF32Cpu1D


def mlp(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b).relu()


def gelu_erf(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x, approximate="erf")


def not_covered(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.subtract(x, y)


def wide(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    名前 = x
    return 名前.lerp_(x, 0.5)
