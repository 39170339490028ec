"""Tensor parameters as generated bodies receive them: borrowed from the caller's object,
rebound by the body (`x = f(x)`), passed on to a helper, returned as they are."""

import torch.nn.functional as F

from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


def transpose(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.t()


def identity(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x


def rebinds(x: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    x = x + b
    x = F.relu(x)
    return x * 2.0


def scaled(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return x * s


def calls_helpers(x: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return scaled(rebinds(x, b), 0.5) + scaled(x, 3.0)
