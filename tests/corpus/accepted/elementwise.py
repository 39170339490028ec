# Seed rows "Elementwise + * - /" (operators) and "Functional elementwise arithmetic": same rank keeps it, 2d/1d broadcasts to 2.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D
import torch
import torch.nn.functional as F


def add_op_1d_1d(v: TensorF32Cpu1D, u: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v + u


def add_fn_1d_1d(v: TensorF32Cpu1D, u: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.add(v, u)


def add_op_2d_2d(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x + y


def add_fn_2d_2d(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.add(x, y)


def add_op_2d_1d(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x + v


def add_fn_2d_1d(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.add(x, v)


def add_op_1d_2d(v: TensorF32Cpu1D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return v + x


def add_fn_1d_2d(v: TensorF32Cpu1D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.add(v, x)


def sub_op_1d_1d(v: TensorF32Cpu1D, u: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v - u


def sub_fn_1d_1d(v: TensorF32Cpu1D, u: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.sub(v, u)


def sub_op_2d_2d(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x - y


def sub_fn_2d_2d(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sub(x, y)


def sub_op_2d_1d(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x - v


def sub_fn_2d_1d(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.sub(x, v)


def sub_op_1d_2d(v: TensorF32Cpu1D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return v - x


def sub_fn_1d_2d(v: TensorF32Cpu1D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sub(v, x)


def mul_op_1d_1d(v: TensorF32Cpu1D, u: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v * u


def mul_fn_1d_1d(v: TensorF32Cpu1D, u: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.mul(v, u)


def mul_op_2d_2d(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x * y


def mul_fn_2d_2d(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.mul(x, y)


def mul_op_2d_1d(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x * v


def mul_fn_2d_1d(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.mul(x, v)


def mul_op_1d_2d(v: TensorF32Cpu1D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return v * x


def mul_fn_1d_2d(v: TensorF32Cpu1D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.mul(v, x)


def div_op_1d_1d(v: TensorF32Cpu1D, u: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v / u


def div_fn_1d_1d(v: TensorF32Cpu1D, u: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.div(v, u)


def div_op_2d_2d(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x / y


def div_fn_2d_2d(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.div(x, y)


def div_op_2d_1d(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x / v


def div_fn_2d_1d(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.div(x, v)


def div_op_1d_2d(v: TensorF32Cpu1D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return v / x


def div_fn_1d_2d(v: TensorF32Cpu1D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.div(v, x)


def arithmetic_methods(x: TensorF32Cpu2D, y: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x.add(y).sub(b).mul(torch.tanh(x)).div(6.0) + x.subtract(1).multiply(y).true_divide(y.divide(2))
