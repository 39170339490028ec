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

from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D


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


def mnist_net(x: TensorF32Cpu4D, c1_w: TensorF32Cpu4D, c1_b: TensorF32Cpu1D, c2_w: TensorF32Cpu4D, c2_b: TensorF32Cpu1D,
              f1_w: TensorF32Cpu2D, f1_b: TensorF32Cpu1D, f2_w: TensorF32Cpu2D, f2_b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    # pytorch/examples mnist/main.py, Net.forward (dropout is the identity in eval)
    x = F.relu(F.conv2d(x, c1_w, c1_b))
    x = F.relu(F.conv2d(x, c2_w, c2_b))
    x = F.max_pool2d(x, 2)
    x = torch.flatten(x, 1)
    x = F.relu(F.linear(x, f1_w, f1_b))
    x = F.linear(x, f2_w, f2_b)
    return F.log_softmax(x, dim=1)


def squeeze_excitation(x: TensorF32Cpu4D, fc1_w: TensorF32Cpu4D, fc1_b: TensorF32Cpu1D, fc2_w: TensorF32Cpu4D, fc2_b: TensorF32Cpu1D) -> TensorF32Cpu4D:
    # torchvision ops/misc.py, SqueezeExcitation.forward
    scale = F.adaptive_avg_pool2d(x, 1)
    scale = F.relu(F.conv2d(scale, fc1_w, fc1_b))
    scale = torch.sigmoid(F.conv2d(scale, fc2_w, fc2_b))
    return scale * x


def mobilenet_v3_head(x: TensorF32Cpu4D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    # torchvision models/mobilenetv3.py: avgpool, flatten, Linear, Hardswish, (Dropout), Linear
    x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
    return F.linear(F.hardswish(F.linear(x, w1, b1)), w2, b2)


BATCHES = [1, 8, 64]
#: (function, hidden sizes: 768 is GPT-2 small's and BERT-base's); attention cells are (batch,
#: sequence, width)
BLOCKS = [("gpt_mlp", [64, 256, 768]), ("llama_mlp", [64, 256]), ("bert_head", [256, 768]), ("tanh_policy", [64]), ("two_tower", [64])]
ATTENTION = [("attention", 16, 64), ("attention", 128, 64), ("multi_head_attention", 16, 128), ("multi_head_attention", 128, 128)]


#: (function, batches): images are 1×28×28 (MNIST) or C×7×7 feature maps
VISION = [("mnist_net", [1, 64]), ("squeeze_excitation", [1, 8]), ("mobilenet_v3_head", [1, 8])]


def cells() -> list[tuple[str, str, tuple]]:
    """Every cell as (id, function, shape)."""
    out = [(f"{name}@{b}x{d}", name, (b, d)) for name, widths in BLOCKS for d in widths for b in BATCHES]
    out += [(f"{name}@{b}x{t}x{d}", name, (b, t, d)) for name, t, d in ATTENTION for b in (1, 8)]
    out += [(f"{name}@{b}", name, (b,)) for name, batches in VISION for b in batches]
    return out


def inputs(function: str, shape: tuple, generator: torch.Generator) -> tuple:
    """Deterministic arguments; weights scaled by 1/sqrt(fan-in)."""

    def randn(*size):
        return torch.randn(*size, generator=generator)

    def weight(fan_out, fan_in):
        return randn(fan_out, fan_in) / fan_in**0.5

    if function == "mnist_net":
        (b,) = shape
        return (randn(b, 1, 28, 28), randn(32, 1, 3, 3) / 3, randn(32), randn(64, 32, 3, 3) / 17, randn(64),
                weight(128, 9216), randn(128), weight(10, 128), randn(10))
    if function == "squeeze_excitation":
        (b,) = shape
        return (randn(b, 96, 14, 14), randn(24, 96, 1, 1) / 10, randn(24), randn(96, 24, 1, 1) / 5, randn(96))
    if function == "mobilenet_v3_head":
        (b,) = shape
        return (randn(b, 576, 7, 7), weight(1024, 576), randn(1024), weight(1000, 1024), randn(1000))
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
