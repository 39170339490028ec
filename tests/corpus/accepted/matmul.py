# Seed rows "Matmul binop / call / method": 2/2 -> 2, 2/1 and 1/2 -> 1.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D
import torch
import torch.nn.functional as F


def matmul_op_2d(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return a @ b


def matmul_op_2d_1d(a: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return a @ v


def matmul_op_1d_2d(v: TensorF32Cpu1D, a: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return v @ a


def matmul_call_2d(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.matmul(a, b)


def matmul_call_2d_1d(a: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.matmul(a, v)


def matmul_call_1d_2d(v: TensorF32Cpu1D, a: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.matmul(v, a)


def matmul_method_2d(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return a.matmul(b)


def matmul_method_2d_1d(a: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return a.matmul(v)


def matmul_method_1d_2d(v: TensorF32Cpu1D, a: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return v.matmul(a)
