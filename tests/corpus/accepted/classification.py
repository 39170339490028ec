# Seed rows "Softmax" and "Argmax": literal dim once; argmax gives int64 rank-1 labels.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D
import torch
import torch.nn.functional as F


def softmax_method(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.softmax(dim=1)


def softmax_method_rank1(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.softmax(0)


def softmax_torch(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.softmax(x, 0)


def softmax_functional(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.softmax(x, dim=1, dtype=None)


def softmax_functional_positional(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.softmax(x, 1)


def argmax_rank2(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return x.argmax(dim=1)


def argmax_rank2_keepdim_false(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return torch.argmax(x, 0, keepdim=False)


def argmax_rank1_keepdim(v: TensorF32Cpu1D) -> TensorI64Cpu1D:
    return v.argmax(dim=0, keepdim=True)


def classification_head(logits: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return logits.softmax(dim=1).argmax(dim=1, keepdim=False)
