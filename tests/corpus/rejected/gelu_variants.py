# Seed row "GELU variants": dynamic, positional or unknown approximate, other keywords, .gelu(),
# nn.GELU. (The seed rejected approximate="tanh" too; the op-family issue claims it:
# tests/corpus/accepted/gelu.py.)
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def gelu_unknown_approximation(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x, approximate="erf")


def gelu_dynamic(x: TensorF32Cpu2D, flag: bool) -> TensorF32Cpu2D:
    mode = flag
    return F.gelu(x, approximate=mode)


def gelu_positional(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x, "none")


def gelu_other_keyword(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x, inplace=False)


def gelu_method(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.gelu()


def gelu_module(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.nn.GELU()(x)
