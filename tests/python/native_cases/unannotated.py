"""Unannotated inference code, as most users write it: torchlower.compile specialises each
function on its calls' argument types (tests/python/test_specialise.py)."""

import math

import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu2D


def gelu_mlp(x, w1, b1, w2, b2, scale=1.0):
    h = F.linear(x, w1, b1)
    h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
    return F.linear(h, w2, b2) * scale


def scaled(x, n, flag):
    y = x * n
    return -y if flag else y


def norm_then_helper(x, weight, eps=1e-5):
    variance = x.pow(2).mean(-1, keepdim=True)
    return _gate(x * torch.rsqrt(variance + eps) * weight)


def _gate(h):
    return F.silu(h) * h


def partly_annotated(x: TensorF32Cpu2D, w):
    return (x @ w).relu()
