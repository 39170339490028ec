"""Reductions over every element and `.item()`: the forms metric, RL and normalisation code
writes (`(x - x.mean()) / (x.std() + 1e-8)`, `q.argmax().item()`, `int(lengths.max().item())`),
with int64 and bool rank-0 results."""

import torch
from torchlower.types import (
    TensorBoolCpu0D,
    TensorBoolCpu2D,
    TensorF32Cpu0D,
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorI32Cpu2D,
    TensorI64Cpu0D,
    TensorI64Cpu1D,
)


def standardized(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # Stable-Baselines3's advantage normalisation
    return (x - x.mean()) / (x.std() + 1e-8)


def whole_sums(x: TensorF32Cpu2D, m: TensorBoolCpu2D, ids: TensorI32Cpu2D) -> tuple[TensorF32Cpu0D, TensorI64Cpu0D, TensorF32Cpu0D, TensorI64Cpu0D]:
    return x.sum(), m.sum(), torch.sum(x * 2.0), ids.sum()


def extremes(x: TensorF32Cpu2D, ids: TensorI64Cpu1D, m: TensorBoolCpu2D) -> tuple[TensorF32Cpu0D, TensorF32Cpu0D, TensorI64Cpu0D, TensorI64Cpu0D, TensorI64Cpu0D, TensorBoolCpu0D]:
    return x.max(), torch.min(x), ids.max(), torch.argmax(x), x.argmin(), m.max()


def moments(x: TensorF32Cpu1D, ids: TensorI64Cpu1D) -> tuple[TensorF32Cpu0D, TensorF32Cpu0D, TensorF32Cpu0D, TensorF32Cpu0D, TensorI64Cpu0D]:
    return x.var(), x.var(unbiased=False), torch.std(x, False), x.prod(), (ids + 1).prod()


def greedy_action(q: TensorF32Cpu1D) -> int:
    return q.argmax().item()


def scalar_metrics(x: TensorF32Cpu2D, lengths: TensorI64Cpu1D) -> tuple[float, int, bool, float]:
    total = x.abs().sum().item()
    longest = int(torch.max(lengths).item())
    return total, longest, (lengths > 2).sum().item() > 1, x[-1, 0].item()


def items(s: TensorF32Cpu0D, n: TensorI64Cpu0D, flag: TensorBoolCpu0D, ids: TensorI64Cpu1D) -> tuple[float, int, bool, int]:
    return s.item(), n.item(), flag.item(), ids[0].item() + n.item()


def rank0_arithmetic(x: TensorF32Cpu2D, n: TensorI64Cpu0D, ids: TensorI64Cpu1D) -> tuple[TensorF32Cpu2D, TensorI64Cpu1D, TensorBoolCpu2D, TensorI64Cpu1D]:
    return x * n, ids - ids.min(), x > x.mean(), ids + torch.tensor(2)


def padding_mask(lengths: TensorI64Cpu1D) -> TensorBoolCpu2D:
    # torchaudio's `_lengths_to_padding_mask`
    batch_size = lengths.shape[0]
    max_length = int(torch.max(lengths).item())
    padding_mask = torch.arange(max_length, device=lengths.device, dtype=lengths.dtype).expand(
        batch_size, max_length
    ) >= lengths.unsqueeze(1)
    return padding_mask


def checked_item(x: TensorF32Cpu1D) -> float:
    # eager's RuntimeError for a tensor of more than one element
    return x.item()
