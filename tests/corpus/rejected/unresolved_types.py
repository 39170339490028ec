# Seed row "Unresolved types": missing annotations make operand types unknown; sites are not covered.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def unannotated(x, w):
    return (x @ w).relu()


def partially_annotated(x: TensorF32Cpu2D, w) -> TensorF32Cpu2D:
    return F.linear(x, w)


def unknown_local(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    y = make_tensor()
    return x + y
