# Seed row "Mean / sum": dim literal once (positional or keyword), keepdim omitted or keyword bool.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D
import torch
import torch.nn.functional as F


def mean_dim1(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.mean(dim=1, keepdim=False)


def mean_dim0_positional(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.mean(0)


def mean_keepdim(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.mean(dim=0, keepdim=True)


def mean_rank1_keepdim(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.mean(dim=0, keepdim=True)


def sum_dim1(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.sum(dim=1)


def sum_keepdim_first(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.sum(keepdim=True, dim=1)


def torch_sum_positional(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sum(x, 0, keepdim=True)


def torch_mean_keyword(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.mean(x, dim=1)


def torch_sum_rank1(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.sum(v, dim=0, keepdim=True)


def predicted(outputs: TensorF32Cpu2D) -> tuple[TensorF32Cpu1D, TensorI64Cpu1D]:
    _, labels = torch.max(outputs, 1)
    best, _ = outputs.min(dim=1)
    indices = outputs.max(1).indices
    return outputs.max(dim=1).values + best + torch.min(outputs, 1, keepdim=True)[0][:, 0], torch.where(labels == indices, labels, indices)


def top(outputs: TensorF32Cpu2D) -> tuple[TensorF32Cpu1D, TensorI64Cpu1D]:
    return outputs.max(-1)
