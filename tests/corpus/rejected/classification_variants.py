# Seed row "Classification variations": dtype override, dynamic/duplicate dim, softmax keepdim,
# rank-2 argmax keepdim=True, rank-1 argmax keepdim=False.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def softmax_dtype(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.softmax(x, dim=1, dtype=torch.float64)


def softmax_torch_dtype_none(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.softmax(x, 1, dtype=None)


def softmax_float_dim(x: TensorF32Cpu2D, d: float) -> TensorF32Cpu2D:
    # a Python int known at run time is claimed; a float is eager's TypeError
    return x.softmax(dim=d)


def softmax_duplicate_dim(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.softmax(0, dim=1)


def softmax_keepdim(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.softmax(dim=1, keepdim=True)


def softmax_no_dim(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # F.softmax has an implicit dim; torch.softmax and the method are eager's TypeError
    return torch.softmax(x) + x.softmax()


# int64 rank 2 is a type now (TensorI64Cpu2D), so the keepdim form is claimed; this
# annotation says rank 1, so the function still falls back (TL401).
def argmax_rank2_keepdim(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return x.argmax(dim=1, keepdim=True)


def argmax_rank1_no_keepdim(v: TensorF32Cpu1D) -> TensorI64Cpu1D:
    return v.argmax(dim=0)


def argmax_whole(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return torch.argmax(x)
