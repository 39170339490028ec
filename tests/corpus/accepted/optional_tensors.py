# `Optional[<marker>]` parameters: a call passes None or the tensor, and the body tests which
# (`mask is not None`, Swin V2's `logit_scale`, an attention mask, an optional bias). The
# function is walked once per combination; its entry runs the copy for the arguments given.
import math
from typing import Optional

import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D


def masked_scores(q: TensorF32Cpu3D, k: TensorF32Cpu3D, mask: Optional[TensorF32Cpu3D] = None) -> TensorF32Cpu3D:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores + mask
    return scores.softmax(dim=-1)


def cosine_or_dot(q: TensorF32Cpu3D, k: TensorF32Cpu3D, logit_scale: Optional[TensorF32Cpu3D] = None) -> TensorF32Cpu3D:
    # Swin V2's cosine attention with a learnt scale, else Swin V1's scaled dot product
    if logit_scale is not None:
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        logit_scale = torch.clamp(logit_scale, max=math.log(100.0)).exp()
        attn = attn * logit_scale
    else:
        q = q * q.size(-1) ** -0.5
        attn = q.matmul(k.transpose(-2, -1))
    return attn


def linear_parts(x: TensorF32Cpu2D, w: TensorF32Cpu2D, bias: Optional[TensorF32Cpu1D] = None,
                 scale: Optional[TensorF32Cpu1D] = None) -> TensorF32Cpu2D:
    y = x @ w.t()
    if bias is None:
        return y
    if scale is not None:
        y = y * scale
    return y + bias


def optional_passed_on(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: Optional[TensorF32Cpu1D]) -> TensorF32Cpu2D:
    return F.linear(x, w, b).relu()
