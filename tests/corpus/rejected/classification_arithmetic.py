# Seed row "Classification-result arithmetic": int64 tensors with a Python number stay
# rejected (TL241); with another tensor they are claimed (accepted/int64_arithmetic.py).
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def labels_times_number(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    labels = x.argmax(dim=1)
    return labels * 2


def labels_plus_number(a: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return 1 + a
