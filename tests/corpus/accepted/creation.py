# Tensors made inside the function: torch.arange positions (int64 or float32, on the CPU), and
# asserts whose f-string messages format Python ints.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu1D, TensorI64Cpu2D


def positions(idx: TensorI64Cpu2D, wte: TensorF32Cpu2D, wpe: TensorF32Cpu2D, block_size: int) -> TensorF32Cpu3D:
    device = idx.device
    b, t = idx.size()
    assert t <= block_size, f"Cannot forward sequence of length {t}, block size is only {block_size}"
    pos = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0)
    return F.embedding(idx, wte) + F.embedding(pos, wpe)


def ramps(n: int, x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    assert n > 0, "n must be positive"
    return torch.arange(n, dtype=torch.float32) * x + torch.arange(1, 2 * n + 1, 2, dtype=torch.float32)


def even(n: int) -> TensorI64Cpu1D:
    return torch.arange(0, n, 2, device="cpu")


def class_token(x: TensorF32Cpu3D, class_embedding: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return torch.cat([class_embedding.to(x.dtype) + torch.zeros(x.shape[0], 1, x.shape[-1], dtype=x.dtype, device=x.device), x], dim=1)


def filled(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    mask = torch.full((n, n), float("-inf"))
    twos = torch.full((n,), 2) == torch.ones(n, dtype=torch.long) + 1 if False else torch.full((n,), 2) > torch.zeros((n,), dtype=torch.int64)
    flags = torch.ones(n, n, dtype=torch.bool)
    return torch.where(flags, x + mask, x) * torch.where(twos, 2.0, 0.0) + torch.ones((1, n)) - torch.zeros(n)


def likes(x: TensorF32Cpu2D, idx: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return torch.zeros_like(x) + torch.ones_like(x, dtype=torch.float32) * torch.full_like(x, 0.5) + torch.where(torch.full_like(idx, 3) == idx, 1.0, 0.0)


# Gemma's embedding normalizer: a 0-dim tensor of a Python number
def normalized_embedding(x: TensorF32Cpu3D, hidden_size: int) -> TensorF32Cpu3D:
    normalizer = torch.tensor(hidden_size**0.5, dtype=x.dtype)
    return x * normalizer


def offset_by_number(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return x + torch.tensor(0.1) - torch.tensor(2, dtype=torch.float32, device="cpu", requires_grad=False)
