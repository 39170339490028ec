# `break` and `continue` in `for … in range(…)` and `while` loops (issue: the language of real
# inference code): lowered to Rust's own; the environment after the loop joins every exit.
import torch
from torchlower.types import TensorF32Cpu2D


def layers_until(x: TensorF32Cpu2D, n: int, limit: int) -> TensorF32Cpu2D:
    h = x
    for i in range(n):
        if i >= limit:
            break
        if i % 2 == 1:
            continue
        h = torch.tanh(h)
    return h


def halve_while(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    k = 0
    while True:
        k = k + 1
        if k > n:
            break
        x = x * 0.5
    return x


def break_at_once(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    for i in range(n):
        break
    return x


def nested_loops(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            h = h + 1.0
        if i == 2:
            continue
        h = h.relu()
    return h
