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


def mm_call(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.mm(a, b)


def mm_method(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return a.mm(b)


def mm_bias_relu(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    # the epilogue of `@`, fused the same way
    return torch.relu(torch.mm(x, w.t()) + b)


def cos_sim(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # sentence-transformers' util.cos_sim: the type guards fold away on typed tensors
    if not isinstance(a, torch.Tensor):
        a = torch.tensor(a)
    if len(a.shape) == 1:
        a = a.unsqueeze(0)
    a_norm = torch.nn.functional.normalize(a, p=2, dim=1)
    b_norm = torch.nn.functional.normalize(b, p=2, dim=1)
    return torch.mm(a_norm, b_norm.transpose(0, 1))
