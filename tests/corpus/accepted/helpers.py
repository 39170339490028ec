# Calls of other top-level functions of the module (issue: the language of real inference
# code): a call runs the callee's native body; the caller is native only if every callee is,
# and recursion stays Python.
import math

import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D


def new_gelu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))))


def mlp(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(new_gelu(F.linear(x, w1, b1)), w2, b2)


def scale(h: TensorF32Cpu2D, by: float) -> TensorF32Cpu2D:
    return h * by


def residual(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x + scale(mlp(x, w1, b1, w2, b2), by=0.5)


def size_of(x: TensorF32Cpu3D, d: int) -> int:
    return x.size(-1) // d


def heads(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.view(x.size(0), x.size(1), size_of(x, 1))


def box_sides(b: TensorF32Cpu2D) -> tuple[TensorF32Cpu1D, TensorF32Cpu1D]:
    return b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]


def box_area(b: TensorF32Cpu2D) -> TensorF32Cpu1D:
    w, h = box_sides(b)
    return w * h


def sides_again(b: TensorF32Cpu2D) -> tuple[TensorF32Cpu1D, TensorF32Cpu1D]:
    return box_sides(b)


def ln_fp16_safe(x: TensorF32Cpu3D, weight: TensorF32Cpu1D, bias: TensorF32Cpu1D) -> TensorF32Cpu3D:
    orig_type = x.dtype
    ret = F.layer_norm(x.type(torch.float32), (x.shape[-1],), weight, bias, 1e-5)
    return ret.type(orig_type)


def pooled_head(x: TensorF32Cpu3D, w: TensorF32Cpu1D, b: TensorF32Cpu1D, proj: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # Python ignores annotations: the helper written for rank 3 runs here on a matrix (a
    # specialised copy of it), and on rank 3 as annotated
    pooled = ln_fp16_safe(x[:, 0, :], w, b)
    tokens = ln_fp16_safe(x, w, b)
    return pooled @ proj + tokens.mean(dim=1) @ proj


def scaled(x: TensorF32Cpu2D, s: float) -> TensorF32Cpu2D:
    return x * s


def scaled_by_int(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return scaled(x, 2) + scaled(x, 0.5)


def attention_and_weights(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> tuple[TensorF32Cpu2D, TensorF32Cpu2D]:
    scores = torch.softmax(x @ w, dim=-1)
    return scores @ x, scores


def residual_block(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    x = x + attention_and_weights(x, w)[0]
    return x + attention_and_weights(x, w)[-1]
