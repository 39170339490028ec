# Seed row "Unary variants": scalar inputs, out=, aliases (not covered), method arguments/keywords.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def scalar_input(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x * torch.exp(2)


def out_keyword(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.abs(x, out=x)


def alias(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.absolute(x)


def method_argument(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.sqrt(1)


def method_keyword(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.relu(out=x)


def int64_input(labels: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return labels.exp()
