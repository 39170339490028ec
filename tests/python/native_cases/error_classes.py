# Errors whose class eager decides by the check that raised them, not by their words: topk's
# k out of range and gather's index out of bounds are RuntimeError (TORCH_CHECK), while the
# same words from index_select are IndexError.
import torch
from torchlower.types import TensorF32Cpu2D, TensorI64Cpu1D, TensorI64Cpu2D


def top_values(x: TensorF32Cpu2D, k: int) -> TensorF32Cpu2D:
    values, _ = torch.topk(x, k)
    return values


def gathered(x: TensorF32Cpu2D, index: TensorI64Cpu2D) -> TensorF32Cpu2D:
    return torch.gather(x, 1, index)


def selected(x: TensorF32Cpu2D, index: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return torch.index_select(x, 0, index)
