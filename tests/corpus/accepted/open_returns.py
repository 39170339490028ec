"""Return annotations as real code writes them: `torch.Tensor`, tuples of tensors, `Optional`,
strings. The type is inferred from the `return`s and checked against the annotation."""

from typing import Optional, Tuple

import torch
from torch import Tensor

from torchlower.types import TensorF32Cpu2D, TensorF32Cpu3D


def gate(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> torch.Tensor:
    return torch.sigmoid(x @ w) * x


def split_last(x: TensorF32Cpu3D) -> Tuple[torch.Tensor, torch.Tensor]:
    half = x.shape[-1] // 2
    return x[..., :half], x[..., half:]


def scores_and_count(x: TensorF32Cpu2D) -> tuple[Tensor, int]:
    return x.softmax(dim=-1), x.shape[0]


def maybe(x: TensorF32Cpu2D) -> Optional[Tensor]:
    return x.relu()


def postponed(x: TensorF32Cpu2D) -> "torch.Tensor":
    return x.tanh()


def each_a_tensor(x: TensorF32Cpu2D) -> Tuple[Tensor, ...]:
    return x, x.t(), x.sum(dim=0)
