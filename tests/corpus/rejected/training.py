# Seed rows "Training / autograd" and "Modules": not covered, the function stays on Python.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def backward(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    y = x.relu()
    y.backward()
    return y


def module_call(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    layer = torch.nn.Linear(4, 4)
    return layer(x)


def module_gelu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.nn.GELU()(x)
