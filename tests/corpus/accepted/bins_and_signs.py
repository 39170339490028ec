"""Signs, floors, bins and outer products: the small math of model-based RL (`symlog`, two-hot
bins over `torch.linspace`) and of rotary embeddings (`torch.outer(positions, inv_freq)`)."""

import torch
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def symlog(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sign(x) * torch.log(1 + torch.abs(x))


def symexp(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.sign() * (torch.exp(torch.abs(x)) - 1)


def bin_index(x: TensorF32Cpu2D, vmin: float, vmax: float, num_bins: int) -> TensorF32Cpu2D:
    bin_size = (vmax - vmin) / (num_bins - 1)
    return torch.floor((x.clamp(vmin, vmax) - vmin) / bin_size)


def bin_values(logits: TensorF32Cpu2D, vmin: float, vmax: float) -> TensorF32Cpu2D:
    bins = torch.linspace(vmin, vmax, logits.shape[-1], device=logits.device)
    return (logits.softmax(dim=-1) * bins).sum(dim=-1, keepdim=True)


def fixed_bins(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return x + torch.linspace(start=-20, end=20, steps=x.shape[0], dtype=torch.float32)


def rotary_angles(positions: TensorI64Cpu1D, dim: int, base: float) -> TensorF32Cpu2D:
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    freqs = torch.outer(positions, inv_freq)
    return torch.cat((freqs, freqs), dim=-1).cos()


def outer_method(a: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return a.outer(b) + torch.ger(b, a).t()


def bin_offsets(x: TensorF32Cpu2D, ids: TensorI64Cpu1D, vmin: float, bin_size: float) -> tuple[TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cpu2D]:
    # Python's modulo: the divisor's sign (eager's `torch.remainder`)
    return (x - vmin) % bin_size, ids % 3 + torch.remainder(ids, -2), x.remainder(x.t()) + torch.remainder(x, 0.5)
