# Seed row "Classification-result arithmetic": int64 tensors in `+ - * /` with another
# tensor or a Python number are claimed (accepted/int64_arithmetic.py); in a matrix product
# they stay rejected (TL241): the products are float32 only. The same for int32; `where` of
# int32 values and conversions to dtypes without a tensor type (int16) stay Python.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI32Cpu2D, TensorI64Cpu1D
import torch


def labels_matmul(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu1D:
    labels = x.argmax(dim=1)
    return labels @ w


def labels_matmul_call(a: TensorI64Cpu1D, w: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.matmul(a, w)


def int32_matmul(a: TensorI32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return a @ w


def int32_where(mask: TensorI32Cpu2D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # `torch.where` takes float32 and int64 values
    return torch.where(x > 0, mask, 0).float()


def to_int16(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.to(torch.int16).float()
