# `Optional[int]` / `Optional[float]` / `Optional[bool]` parameters: a call passes None or the
# number, and the body fills in the default (DeepCTR's `_sequence_mask(lengths, maxlen=None)`
# takes the longest length, a scale defaults to `1 / sqrt(d)`). The function is walked once per
# combination, as with `Optional[<marker>]`; its entry runs the copy for the arguments given.
import math
from typing import Optional

import torch
from torchlower.types import TensorBoolCpu3D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu2D


def sequence_mask(lengths: TensorI64Cpu2D, maxlen: Optional[int] = None) -> TensorBoolCpu3D:
    # DeepCTR-Torch's SequencePoolingLayer._sequence_mask, its discarded `.type()` kept
    if maxlen is None:
        maxlen = lengths.max()
    row_vector = torch.arange(0, maxlen, 1).to(lengths.device)
    matrix = torch.unsqueeze(lengths, dim=-1)
    mask = row_vector < matrix
    mask.type(torch.float32)
    return mask


def pooled_mean(embeddings: TensorF32Cpu3D, lengths: TensorI64Cpu2D) -> TensorF32Cpu3D:
    # the caller passes an int: the helper's copy for an int
    mask = sequence_mask(lengths, maxlen=embeddings.shape[1])
    mask = torch.transpose(mask, 1, 2)
    mask = torch.repeat_interleave(mask, embeddings.shape[-1], dim=2)
    summed = torch.sum(embeddings * mask.float(), dim=1, keepdim=False)
    return torch.div(summed, lengths.float() + 1e-8).unsqueeze(1)


def scaled_scores(q: TensorF32Cpu3D, k: TensorF32Cpu3D, scale: Optional[float] = None, causal: Optional[bool] = None) -> TensorF32Cpu3D:
    if scale is None:
        scale = 1.0 / math.sqrt(q.size(-1))
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        scores = scores + torch.triu(torch.full((q.size(1), k.size(1)), float("-inf")), diagonal=1)
    return scores.softmax(dim=-1)


def discarded_values(x: TensorF32Cpu2D, n: Optional[int] = None) -> TensorF32Cpu2D:
    # values computed and dropped, as written: evaluated (a shape error would raise), not kept
    x.sum(dim=0)
    x.t() @ x
    if n is not None:
        return x * n
    return x
