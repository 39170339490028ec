"""Python functions whose fused native versions are hand-written in fused_cases_lib.rs (the
code the analyzer's fusion pass emits for them); test_fused.py compares each with eager."""

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


def matmul_tanh_colsum(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return (x @ w + b).tanh().sum(dim=0, keepdim=True)


def gelu_linear(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(F.linear(x, w))


def chain(a: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return ((a + b).relu() * a - b).sigmoid()
