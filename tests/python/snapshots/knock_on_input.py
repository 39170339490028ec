"""One unsupported call and the uses of its result: the first is the root cause, the rest are
knock-ons (`caused_by` in the report), hidden by `torchlower check` unless `--all`."""

import torch
import torch.nn.functional as F

from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


def block(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = torch.special.i0(x)
    y = F.linear(h, w, b)
    z = y * 2.0
    return z.relu() + x
