# Seed row "Tensor-dependent control flow": tensor conditions in if/while stay on Python.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def tensor_if(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    if v:
        return x.relu()
    return x


def tensor_comparison(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    if x > y:
        return x
    return y


def tensor_while(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    while v:
        x = x.relu()
    return x


def dtype_condition(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    if x.dtype:
        return x.relu()
    return x
