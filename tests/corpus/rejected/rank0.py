# Rank-0 float32 tensors are claimed by elementwise ops only (TL207 elsewhere): the lanes that
# take dims, sizes or shapes check them for ranks 1 and up, and eager's errors on a rank-0
# tensor are its own.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu0D, TensorF32Cpu1D, TensorF32Cpu2D


def stack_scalars(s: TensorF32Cpu0D, t: TensorF32Cpu0D) -> TensorF32Cpu1D:
    return torch.stack([s, t])


def normalize_scalar(s: TensorF32Cpu0D) -> TensorF32Cpu0D:
    return F.normalize(s, dim=0)


def softmax_of_scalar(s: TensorF32Cpu0D) -> TensorF32Cpu0D:
    return s.softmax(-1)


def length_of_scalar(s: TensorF32Cpu0D) -> int:
    return len(s)


def max_with_indices(s: TensorF32Cpu0D) -> TensorF32Cpu0D:
    # the (values, indices) pair would hold int64 rank-0 indices
    values, indices = s.max(dim=0)
    return values


def linear_of_scalar(s: TensorF32Cpu0D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.linear(s, w)


def shape_of_scalar(s: TensorF32Cpu0D) -> tuple:
    return s.shape
