"""Dropout that draws random masks (the default `training=True`), and an int `p` variable
(eager's range error would print it as an int)."""

import torch.nn.functional as F

from torchlower.types import TensorF32Cpu2D


def in_training(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.dropout(x, 0.1)


def int_rate(x: TensorF32Cpu2D, p: int) -> TensorF32Cpu2D:
    return F.dropout(x, p, training=False)
