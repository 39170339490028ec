# Sorting, running sums, scattering and membership as generation code writes them
# (Transformers' top-p / min-p / typical warpers, RoBERTa's position ids, YOLOv5's boxes,
# Swin's cyclic shift): libtorch's kernels, a copy where eager copies.
import torch
from torchlower.types import (
    TensorBoolCpu2D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorI64Cpu1D,
    TensorI64Cpu2D,
)


def top_p(scores: TensorF32Cpu2D, top_p: float = 0.8, filter_value: float = -float("Inf")) -> TensorF32Cpu2D:
    sorted_logits, sorted_indices = torch.sort(scores, descending=False)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    sorted_indices_to_remove = cumulative_probs <= (1 - top_p)
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
    return scores.masked_fill(indices_to_remove, filter_value)


def sorted_pair_parts(x: TensorF32Cpu3D) -> tuple[TensorF32Cpu3D, TensorI64Cpu2D, TensorI64Cpu2D]:
    values = x.sort(dim=1, descending=True).values
    order = torch.sort(x[0], 0)[1]
    return values, order, x[:, 0].argsort(descending=True) + torch.argsort(x[:, 0], dim=0)


def scatter_by_rank(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # a permutation index (argsort), so no two writes meet
    return x.scatter(1, x.argsort(dim=1), y) + torch.scatter(x, 0, torch.argsort(y, 0), y)


def one_hot_in_place(x: TensorI64Cpu2D, num_classes: int) -> TensorF32Cpu3D:
    # TD-MPC2's int_to_one_hot: a number scattered into new zeros, in place
    one_hot = torch.zeros(*x.shape, num_classes, device=x.device)
    one_hot.scatter_(-1, x.unsqueeze(-1), 1)
    return one_hot


def scatter_numbers(x: TensorF32Cpu2D, i: TensorI64Cpu2D, ids: TensorI64Cpu2D) -> tuple[TensorF32Cpu2D, TensorI64Cpu2D]:
    # eager's `value` overload: the number converted to the input's dtype
    return x.scatter(1, i, -0.0) + torch.scatter(x, 0, i, float("nan")), ids.scatter(1, i, 7)


def running_sums(x: TensorF32Cpu2D, mask: TensorBoolCpu2D, ids: TensorI64Cpu2D) -> tuple[TensorF32Cpu2D, TensorI64Cpu2D, TensorI64Cpu2D]:
    positions = mask.long().cumsum(-1) - 1
    return torch.cumsum(x, dim=0), positions, ids.cumsum(1) + mask.cumsum(dim=1)


def nan_sums(x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    logp = torch.log(x.abs())
    return -(logp * x).nansum(-1) + torch.nansum(x, dim=(0,)).t() * 0.0 + x.nansum((1, 2), keepdim=True)[:, :, 0]


def counted(mask: TensorBoolCpu2D, ids: TensorI64Cpu2D) -> TensorI64Cpu1D:
    return mask.sum(dim=1) + ids.sum(-1) + (ids > 2).sum(1)


def membership(ids: TensorI64Cpu2D, banned: TensorI64Cpu1D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    vocab = torch.arange(x.shape[-1])
    suppressed = torch.isin(vocab, banned)
    seen = torch.isin(ids, banned, invert=True)
    return torch.where(suppressed, -float("inf"), x) + seen.float()


def float_membership(x: TensorF32Cpu2D, y: TensorF32Cpu2D, ids: TensorI64Cpu2D) -> TensorBoolCpu2D:
    # NaN is never a member, -0.0 is one of 0.0; a long test list takes libtorch's sorting path
    return torch.isin(x, y[0]) | torch.isin(x, y, invert=True) | torch.isin(ids, ids.flatten())


def boxes_xywh_to_xyxy(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    y = x.clone()
    y[..., 0] = x[..., 0] - x[..., 2] / 2
    y[..., 1] = x[..., 1] - x[..., 3] / 2
    return y + torch.clone(x)


def clone_keeps_layout(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    # eager's clone keeps a dense input's strides: the transposed copy reshapes as eager's does
    t = x.transpose(1, 2).clone()
    return t.reshape(t.shape[0], -1, t.shape[2]) + t.contiguous()


def cyclic_shift(x: TensorF32Cpu3D, shift: int) -> TensorF32Cpu3D:
    x = torch.roll(x, shifts=(-shift, -shift), dims=(1, 2))
    return x.roll(shift, 0) + torch.roll(x, 1)


def angles(w: TensorF32Cpu2D, h: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return (torch.atan(w / h) - (w / h).atan()).pow(2) + torch.arctan(w)
