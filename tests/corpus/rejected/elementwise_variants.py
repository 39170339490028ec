# Seed row "Elementwise variants": scalar operands, .add/.sub/.mul/.div, aliases, alpha/out/rounding_mode.
# Python int and float operands are claimed now (tests/corpus/accepted/scalars.py); a bool
# operand, and a number first in the function form, are still rejected (TL242).
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def scalar_operand(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x * True


def int_operand_first(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return torch.add(n, x)


def method_add(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.add(y, alpha=2)


def method_div(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # a rounding mode eager does not know (its ValueError)
    return x.div(y, rounding_mode="round")


def alias_subtract(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.subtract(x, y)


def alias_divide(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.divide(x, y)


def alpha(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.add(x, y, alpha=2)


def out(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.mul(x, y, out=x)


def rounding_mode(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # a number dividend (eager's __rfloordiv__ path) stays Python
    return torch.div(2.0, y, rounding_mode="trunc")


def floor_divide_operator(x: TensorF32Cuda0_2D, y: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:
    # CPU only (TL209 on cuda:0)
    return x // y
