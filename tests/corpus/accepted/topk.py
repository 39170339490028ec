# torch.topk / t.topk (extension torchlower/topk): the (values, indices) pair, unpacked,
# returned or indexed, as nanoGPT's and minGPT's samplers write it.
from torchlower.types import TensorF32Cpu2D, TensorI64Cpu2D
import torch


def top_values(logits: TensorF32Cpu2D, k: int) -> TensorF32Cpu2D:
    v, _ = torch.topk(logits, k)
    return v


def bottom_pair(x: TensorF32Cpu2D) -> tuple[TensorF32Cpu2D, TensorI64Cpu2D]:
    return x.topk(2, dim=0, largest=False)


def kth_threshold(logits: TensorF32Cpu2D, k: int) -> TensorF32Cpu2D:
    return torch.topk(logits, k, dim=-1, sorted=True)[0][:, -1:]


def top_indices(x: TensorF32Cpu2D) -> TensorI64Cpu2D:
    return x.topk(3).indices
