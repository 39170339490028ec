"""`F.dropout` with its `training` flag a parameter, as a module's `self.training` becomes when
its forward is written as a function: native outside training, refused (auto mode reruns
Python) in training."""

import torch.nn.functional as F

from torchlower.types import TensorF32Cpu2D


def with_flag(x: TensorF32Cpu2D, p: float, training: bool) -> TensorF32Cpu2D:
    return F.dropout(x, p=p, training=training)
