# Seed rows "Unrelated torch APIs" and "Custom operators": not covered.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def max_method(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # clamp is claimed now (tests/corpus/accepted/pointwise.py); cummax is not
    return x.cummax(dim=0)[0]


def custom_op(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.ops.mylib.myop(x)


def special_softmax(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.special.softmax(x, 1)
