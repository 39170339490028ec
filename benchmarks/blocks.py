"""Real blocks for ``torchlower bench --cells-module benchmarks/blocks.py``: the MLP, norm,
attention, policy and scorer blocks of real inference code (the op-family issue's list), each
at batch 1, 8 and 64, timed native against eager, TorchScript and ``torch.compile`` with the
protocol of ``cells.py`` (see ``README.md``).

Each function is written as the projects write it (nanoGPT's MLP, LLaMA's RMSNorm and SwiGLU,
BERT's prediction head, attention by hand and through SDPA, a tanh policy, a two-tower
scorer), annotated, weights as parameters.
"""

import math

import torch
import torch.nn.functional as F

from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D


def gpt_mlp(x: TensorF32Cpu2D, w_fc: TensorF32Cpu2D, b_fc: TensorF32Cpu1D, w_proj: TensorF32Cpu2D, b_proj: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(F.gelu(F.linear(x, w_fc, b_fc)), w_proj, b_proj)


def llama_mlp(x: TensorF32Cpu2D, g: TensorF32Cpu1D, w1: TensorF32Cpu2D, w2: TensorF32Cpu2D, w3: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g
    return x + F.linear(F.silu(F.linear(h, w1)) * F.linear(h, w3), w2)


def bert_head(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, g: TensorF32Cpu1D, beta: TensorF32Cpu1D, w_cls: TensorF32Cpu2D, b_cls: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = F.layer_norm(F.gelu(F.linear(x, w, b)), (x.shape[-1],), g, beta, 1e-12)
    return F.linear(h, w_cls, b_cls)


def attention(x: TensorF32Cpu3D, wq: TensorF32Cpu2D, wk: TensorF32Cpu2D, wv: TensorF32Cpu2D) -> TensorF32Cpu3D:
    q, k, v = F.linear(x, wq), F.linear(x, wk), F.linear(x, wv)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    return F.softmax(att, dim=-1) @ v


def multi_head_attention(x: TensorF32Cpu3D, w_qkv: TensorF32Cpu2D, w_out: TensorF32Cpu2D, n_head: int) -> TensorF32Cpu3D:
    B, T, C = x.size()
    q, k, v = F.linear(x, w_qkv).split(C, dim=2)
    q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
    k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
    v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return F.linear(y.transpose(1, 2).contiguous().view(B, T, C), w_out)


def tanh_policy(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D,
                w3: TensorF32Cpu2D, b3: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = torch.tanh(F.linear(x, w1, b1))
    h = torch.tanh(F.linear(h, w2, b2))
    return F.linear(h, w3, b3)


def two_tower(user: TensorF32Cpu2D, item: TensorF32Cpu2D, wu1: TensorF32Cpu2D, bu1: TensorF32Cpu1D, wu2: TensorF32Cpu2D,
              wi1: TensorF32Cpu2D, bi1: TensorF32Cpu1D, wi2: TensorF32Cpu2D) -> TensorF32Cpu1D:
    u = F.linear(F.relu(F.linear(user, wu1, bu1)), wu2)
    i = F.linear(F.relu(F.linear(item, wi1, bi1)), wi2)
    return (F.normalize(u, dim=-1) * F.normalize(i, dim=-1)).sum(dim=-1)


BATCHES = [1, 8, 64]
#: (function, hidden sizes); attention cells are (batch, sequence, width)
BLOCKS = [("gpt_mlp", [64, 256]), ("llama_mlp", [64, 256]), ("bert_head", [256]), ("tanh_policy", [64]), ("two_tower", [64])]
ATTENTION = [("attention", 16, 64), ("attention", 128, 64), ("multi_head_attention", 16, 128), ("multi_head_attention", 128, 128)]


def cells() -> list[tuple[str, str, tuple]]:
    """Every cell as (id, function, shape)."""
    out = [(f"{name}@{b}x{d}", name, (b, d)) for name, widths in BLOCKS for d in widths for b in BATCHES]
    out += [(f"{name}@{b}x{t}x{d}", name, (b, t, d)) for name, t, d in ATTENTION for b in (1, 8)]
    return out


def inputs(function: str, shape: tuple, generator: torch.Generator) -> tuple:
    """Deterministic arguments; weights scaled by 1/sqrt(fan-in)."""

    def randn(*size):
        return torch.randn(*size, generator=generator)

    def weight(fan_out, fan_in):
        return randn(fan_out, fan_in) / fan_in**0.5

    if function in ("attention", "multi_head_attention"):
        b, t, d = shape
        x = randn(b, t, d)
        if function == "attention":
            return (x, weight(d, d), weight(d, d), weight(d, d))
        return (x, weight(3 * d, d), weight(d, d), 4)
    b, d = shape
    x = randn(b, d)
    if function == "gpt_mlp":
        return (x, weight(4 * d, d), randn(4 * d), weight(d, 4 * d), randn(d))
    if function == "llama_mlp":
        hidden = 8 * d // 3
        return (x, randn(d), weight(hidden, d), weight(d, hidden), weight(hidden, d))
    if function == "bert_head":
        return (x, weight(d, d), randn(d), randn(d), randn(d), weight(2, d), randn(2))
    if function == "tanh_policy":
        return (x[:, :17].contiguous(), weight(d, 17), randn(d), weight(d, d), randn(d), weight(6, d), randn(6))
    return (x, randn(b, d), weight(d, d), randn(d), weight(d, d), weight(d, d), randn(d), weight(d, d))
