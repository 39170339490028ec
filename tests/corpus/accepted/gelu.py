# Seed row "Exact GELU": F.gelu(t) and F.gelu(t, approximate="none"), rank 1 and 2.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D
import torch
import torch.nn.functional as F


def gelu_default(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x)


def gelu_none(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.nn.functional.gelu(v, approximate="none")


def gelu_tanh(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x, approximate="tanh") + F.gelu(x, approximate="none")
