# A local whose type differs between the branches of an `if` and that the code after it reads
# (T5's `_relative_position_bucket`: `relative_buckets` is the int 0 on one path and an int64
# tensor on the other, and `relative_buckets += …` follows): the rest of the block is walked
# once per branch with that branch's types, as if each branch held its own copy of it.
import torch
from torchlower.types import TensorF32Cpu2D, TensorI64Cpu1D, TensorI64Cpu2D


def relative_buckets(relative_position: TensorI64Cpu2D, bidirectional: bool, num_buckets: int) -> TensorI64Cpu2D:
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    is_small = relative_position < num_buckets // 2
    large = torch.max(relative_position, torch.full_like(relative_position, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, large)
    return relative_buckets


def scale_or_tensor(x: TensorF32Cpu2D, per_row: bool) -> TensorF32Cpu2D:
    if per_row:
        scale = x.abs().amax(dim=1, keepdim=True)
    elif x.shape[0] > 4:
        scale = 2.0
    else:
        scale = 0.5
    y = x / scale
    return y.relu()


def int64_sign_forms(a: TensorI64Cpu2D, b: TensorI64Cpu2D) -> TensorI64Cpu2D:
    return torch.minimum(a.abs(), -b).neg() + torch.maximum(a, b)


def int64_abs_method(labels: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return labels.abs()
