# Comparisons give bool tensors; masks fill and select (causal attention, box filtering).
import math

import torch
import torch.nn.functional as F
from torchlower.types import TensorBoolCpu2D, TensorF32Cpu2D, TensorF32Cpu4D, TensorI64Cpu1D, TensorI64Cpu2D


def causal_scores(q: TensorF32Cpu4D, k: TensorF32Cpu4D, bias: TensorF32Cpu4D) -> TensorF32Cpu4D:
    T = q.size(-2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = att.masked_fill(bias[:, :, :T, :T] == 0, float("-inf"))
    return F.softmax(att, dim=-1)


def comparisons(x: TensorF32Cpu2D, y: TensorF32Cpu2D, labels: TensorI64Cpu1D) -> TensorBoolCpu2D:
    a = (x < y) == (x.le(0.5))
    b = torch.ge(x, y) != (0 < x)
    return torch.eq(a, b) == (labels > 1)


def select(x: TensorF32Cpu2D, y: TensorF32Cpu2D, mask: TensorBoolCpu2D) -> TensorF32Cpu2D:
    return torch.where(mask, x, y) + torch.where(x > 0, x, 0.0) + torch.where(mask, 1, y) + torch.masked_fill(x, mask, 2)


def box_masks(boxes: TensorF32Cpu2D, min_size: float, flags: TensorBoolCpu2D) -> TensorBoolCpu2D:
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return (~flags | keep[:, None]) ^ torch.logical_and(flags, torch.logical_not(boxes > 0))


# torchvision's remove_small_boxes: `torch.where(keep)` of a rank-1 mask is the 1-tuple of
# the indices kept.
def kept_indices(boxes: TensorF32Cpu2D, min_size: float) -> TensorI64Cpu1D:
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    keep = torch.where(keep)[0]
    return keep


# minGPT's sampling step: draws from torch's default generator, as eager draws.
def sample_next(logits: TensorF32Cpu2D, idx: TensorI64Cpu2D) -> TensorI64Cpu2D:
    probs = F.softmax(logits, dim=-1)
    idx_next = torch.multinomial(probs, num_samples=1)
    return torch.cat((idx, idx_next), dim=1)
