# `break`/`continue` the analyzer refuses: outside a loop (CPython's SyntaxError), and a
# `continue` that reaches the next iteration with another type (TL309).
import torch
from torchlower.types import TensorF32Cpu2D


def continue_changes_type(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x
    for i in range(n):
        if i == 0:
            h = h.sum(dim=1)
            continue
        h = h.relu()
    return h


def break_outside_loop(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    break
    return x
