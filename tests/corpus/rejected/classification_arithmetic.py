# Seed row "Classification-result arithmetic": int64 labels in + * - / are rejected.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def labels_add(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    labels = x.argmax(dim=1)
    return labels + labels


def labels_mixed(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    labels = x.argmax(dim=1)
    return v * labels


def labels_sub(a: TensorI64Cpu1D, b: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return a - b


def labels_div(a: TensorI64Cpu1D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v / a
