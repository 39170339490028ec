"""The Python functions that native_cases/handwritten_lib.rs implements by hand.

test_native_cpu.py builds that lib.rs with the real pipeline (independently of the
analyzer) and routes these functions to it; each native result is compared with what the
function below returns when run as plain Python.
"""

import torch
import torch.nn.functional as F

from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def head(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1)


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


def classify(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return torch.softmax(x @ w, 1).argmax(dim=1)


def int_ops(a: int, b: int, op: int = 0) -> int:
    if op == 0:
        return a + b
    if op == 1:
        return a - b
    if op == 2:
        return a * b
    if op == 3:
        return a // b
    if op == 4:
        return a % b
    return -a


def range_sum(start: int, stop: int, step: int) -> int:
    total = 0
    for i in range(start, stop, step):
        total = total * 3 + i
        total = total % 1000003
    return total
