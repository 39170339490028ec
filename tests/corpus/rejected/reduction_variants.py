# Seed row "Reductions other shapes": whole-tensor, dynamic/duplicate/out-of-range dim,
# positional keepdim, dtype/out, rank-0 result.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D
import torch
import torch.nn.functional as F


# Every element summed is rank 0 (TensorF32Cpu0D, claimed): the rank-1 annotation is wrong (TL401).
def whole_tensor(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.sum()


def dynamic_dim(x: TensorF32Cpu2D, d: int) -> TensorF32Cpu1D:
    return x.mean(dim=d)


def duplicate_dim(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.sum(0, dim=1)


def out_of_range_dim(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.mean(dim=2)


def positional_keepdim(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.mean(0, True)


def dynamic_keepdim(x: TensorF32Cpu2D, k: bool) -> TensorF32Cpu2D:
    return x.mean(dim=0, keepdim=k)


def dtype_option(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.sum(x, dim=1, dtype=torch.float64)


def rank0_result(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.mean(dim=0)


# Every dim reduced is rank 0 (TensorF32Cpu0D, claimed): the rank-1 annotation is wrong (TL401).
def tuple_dim(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.sum(dim=(0, 1))


def norm_of_everything(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.norm()


# F.cross_entropy's default reduction ("mean") returns a rank-0 tensor: TL207.
def mean_cross_entropy(scores: TensorF32Cpu2D, labels: TensorI64Cpu1D) -> TensorF32Cpu1D:
    return F.cross_entropy(scores, labels)


# An empty tuple of dims reduces every dim in eager (a rank-0 result without keepdim).
def empty_dims(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.sum(dim=(), keepdim=True)

