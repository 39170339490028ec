# Seed row "Classification-result arithmetic": int64 tensors in `+ - * /` with another
# tensor or a Python number are claimed (accepted/int64_arithmetic.py); in a matrix product
# they stay rejected (TL241): the products are float32 only.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D
import torch


def labels_matmul(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu1D:
    labels = x.argmax(dim=1)
    return labels @ w


def labels_matmul_call(a: TensorI64Cpu1D, w: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.matmul(a, w)
