# The forms of detection, segmentation, recommender and speech code (DETR, Segment Anything,
# DINOv2, DeepCTR, Wav2Vec2, the Time-Series-Library): rounded division, tensordot, flip,
# repeat_interleave, cumsum with a dtype, linear / bicubic resizing, `.all()` in an assert,
# loops over enumerate / zip, chained assignment, `int()` and the grad-mode decorators.
import math

import numpy as np
import torch
import torch.nn.functional as F
from torchlower.types import (
    TensorBoolCpu3D,
    TensorF32Cpu0D,
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu1D,
    TensorI64Cpu2D,
)


def sine_positions(mask: TensorBoolCpu3D, num_pos_feats: int, temperature: int) -> TensorF32Cpu4D:
    not_mask = ~mask
    y_embed = not_mask.cumsum(1, dtype=torch.float32)
    x_embed = not_mask.cumsum(2, dtype=torch.float32)
    dim_t = torch.arange(num_pos_feats, dtype=torch.float32)
    dim_t = temperature ** (2 * (dim_t // 2) / num_pos_feats)
    pos_x = x_embed[:, :, :, None] / dim_t
    pos_y = y_embed[:, :, :, None] / dim_t
    return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2) * (2 * np.pi)


def rounded_divisions(x: TensorF32Cpu2D, lengths: TensorI64Cpu2D, k: int) -> tuple[TensorF32Cpu2D, TensorI64Cpu2D, TensorF32Cpu2D]:
    # int64 // int64 with zeros in the divisor: eager's ZeroDivisionError, natively too
    floored = torch.div(lengths + 7 - k, 2, rounding_mode="floor") + lengths.div(3, rounding_mode="trunc")
    return x // 0.5 + torch.floor_divide(x, x.abs() + 1), floored + (lengths + 1).floor_divide(lengths + 1), lengths // x


def contractions(x: TensorF32Cpu3D, w: TensorF32Cpu2D) -> tuple[TensorF32Cpu3D, TensorF32Cpu2D, TensorF32Cpu0D]:
    by_pair = torch.tensordot(x, w, dims=([-1], [0])) + torch.tensordot(x, w, dims=[[2], [1]])
    return by_pair + torch.tensordot(x, w, 1), torch.tensordot(x, x, dims=([0, 1], [0, 1])), torch.tensordot(x, x, 3) * 2.0


def reversed_running_mask(mask: TensorI64Cpu2D, x: TensorF32Cpu3D) -> tuple[TensorI64Cpu2D, TensorF32Cpu3D]:
    return mask.flip([-1]).cumsum(-1).flip([-1]), torch.flip(x, (0, 2)) + x.flip(1)


def repeated_mask(mask: TensorBoolCpu3D, x: TensorF32Cpu3D, n: int) -> tuple[TensorBoolCpu3D, TensorF32Cpu1D, TensorF32Cpu3D]:
    return torch.repeat_interleave(mask, n, dim=2), x.repeat_interleave(2), x.repeat_interleave(repeats=3, dim=-1)


def resized(x: TensorF32Cpu4D, rel_pos: TensorF32Cpu2D, size: int) -> tuple[TensorF32Cpu4D, TensorF32Cpu2D, TensorF32Cpu3D]:
    resized = F.interpolate(rel_pos.reshape(1, rel_pos.shape[0], -1).permute(0, 2, 1), size=size * 2 - 1, mode="linear")
    bicubic = F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=False)
    nearest = F.interpolate(rel_pos[None], scale_factor=2.0, mode="nearest")
    return bicubic, resized.reshape(-1, size * 2 - 1).permute(1, 0), nearest


def checked_boxes(boxes: TensorF32Cpu2D, offset: float) -> TensorF32Cpu2D:
    boxes = torch.cat([boxes[:, :2], boxes[:, :2] + boxes[:, 2:].abs()], dim=1)
    assert (boxes[:, 2:] >= boxes[:, :2]).all()
    if offset:
        boxes = boxes + offset
    if torch.any(boxes > 1e30):
        return boxes * 0.0
    return boxes


def layer_stack(x: TensorF32Cpu3D, w0: TensorF32Cpu2D, b0: TensorF32Cpu1D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, num_layers: int) -> TensorF32Cpu3D:
    layers = [(w0, b0), (w1, b1)]
    for i, (weight, bias) in enumerate(layers):
        x = F.relu(F.linear(x, weight, bias)) if i < num_layers - 1 else F.linear(x, weight, bias)
    return x


def conv_lengths(input_lengths: TensorI64Cpu1D, conv_kernel: list[int, int, int], conv_stride: list[int, int, int]) -> TensorI64Cpu1D:
    input_lengths = input_lengths + 10
    for kernel_size, stride in zip(conv_kernel, conv_stride):
        input_lengths = torch.div(input_lengths - kernel_size, stride, rounding_mode="floor") + 1
    for step, (kernel_size, _) in enumerate(zip(conv_kernel, conv_stride), start=1):
        input_lengths = input_lengths + step * kernel_size
    return input_lengths


def shared_query_key(src: TensorF32Cpu3D, pos: TensorF32Cpu3D, max_rel: float) -> TensorF32Cpu3D:
    q = k = src + pos
    n = int(2 * max(max_rel, 1.0) - 1) + math.trunc(-max_rel)
    if torch.jit.is_tracing():
        n = n + 1
    return q @ k.transpose(1, 2) + n


@torch.no_grad()
def scored(logits: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.softmax(logits, -1)[..., :-1]


def patches(x: TensorF32Cpu3D, patch_len: int, stride: int) -> TensorF32Cpu4D:
    # PatchTST: windows along the last dim, a view (the write-free use of eager's alias)
    n_vars = x.shape[1]
    x = x.unfold(dimension=-1, size=patch_len, step=stride)
    return torch.reshape(x, (x.shape[0] * n_vars, x.shape[2], x.shape[3]))[None] + x.unfold(1, 1, 1)[..., 0][:1, :1]
