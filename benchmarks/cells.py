"""The benchmark functions and cells of ``torchlower bench`` (from the seed's protocol).

Cell A: ``F.linear(x, w, b).relu().mean(dim=1)`` at (batch, in, out).
Cell B: the seed's weight-tied alternating loop at (batch, width, depth, phase).

The functions are ordinary annotated PyTorch code: ``torchlower.compile`` analyzes this file
and builds its native extension like any user module.
"""

import torch
import torch.nn.functional as F

from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


def linear_relu_mean(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, weight, bias).relu().mean(dim=1)


def alternating(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D, depth: int, phase: int) -> TensorF32Cpu1D:
    hidden = x
    for layer in range(depth):
        if (layer + phase) % 2 == 0:
            even = hidden @ weight + bias
            hidden = even.relu()
        else:
            odd = hidden @ weight + bias
            hidden = odd.sigmoid()
    return hidden.mean(dim=1, keepdim=False)


#: (batch, in, out)
CELLS_A = [(1, 32, 32), (1, 128, 64), (8, 64, 64), (16, 128, 64), (64, 128, 64), (256, 256, 128)]
#: (batch, width, depth, phase)
CELLS_B = [(1, 16, 4, 0), (1, 32, 8, 1), (4, 32, 16, 0), (8, 64, 16, 1), (32, 128, 8, 0), (64, 128, 16, 1)]


def cells() -> list[tuple[str, str, tuple]]:
    """Every cell as (id, function name, shape): ``A1``…``A6``, ``B1``…``B6``."""
    return [(f"A{i + 1}", "linear_relu_mean", c) for i, c in enumerate(CELLS_A)] + [
        (f"B{i + 1}", "alternating", c) for i, c in enumerate(CELLS_B)
    ]


def inputs(function: str, shape: tuple, generator: torch.Generator) -> tuple:
    """Deterministic arguments for one cell. Weights are scaled by 1/sqrt(fan-in) so that the
    values stay in a normal range through 16 layers (neither saturated nor vanishing)."""
    if function == "linear_relu_mean":
        batch, fan_in, fan_out = shape
        x = torch.randn(batch, fan_in, generator=generator)
        w = torch.randn(fan_out, fan_in, generator=generator) / fan_in**0.5
        b = torch.randn(fan_out, generator=generator)
        return (x, w, b)
    batch, width, depth, phase = shape
    x = torch.randn(batch, width, generator=generator)
    w = torch.randn(width, width, generator=generator) / width**0.5
    b = torch.randn(width, generator=generator)
    return (x, w, b, depth, phase)
