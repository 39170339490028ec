# No return annotation: the return type is the first typed `return`'s, and every other
# `return` must agree (TL401 otherwise).
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D
import torch


def no_return_annotation(x: TensorF32Cpu2D):
    return x.relu()


def inferred_from_branches(x: TensorF32Cpu2D, b: TensorF32Cpu1D, flag: bool):
    if flag:
        return x + b
    return torch.tanh(x)


def inferred_tuple(x: TensorF32Cpu2D):
    return x.sum(dim=1), x.shape[0]
