"""Open return annotations that the `return` breaks (TL401), and torch.Tensor parameters of a
function analyzed on its own (TL101: `torchlower.compile` specialises them)."""

from typing import Tuple

import torch

from torchlower.types import TensorF32Cpu2D


def count_as_tensor(x: TensorF32Cpu2D) -> torch.Tensor:
    return x.shape[0]


def one_for_two(x: TensorF32Cpu2D) -> Tuple[torch.Tensor, torch.Tensor]:
    return x.relu()


def open_parameter(x: torch.Tensor) -> torch.Tensor:
    return x.relu()
