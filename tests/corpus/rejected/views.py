# Seed row "Views / reshape": transpose, view, reshape are intentionally not claimed.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def transpose(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.transpose(0, 1)


def view(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.view(-1)


def reshape(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.reshape(2, -1)


def t_attribute(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.T
