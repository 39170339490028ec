# Assignment through an index on a local that aliases no parameter (extension
# torchlower/tensor-index-assignment), in place as eager's __setitem__; builtin min/max of ints.
from torchlower.types import TensorBoolCpu2D, TensorF32Cpu2D, TensorI64Cpu1D
import torch
import torch.nn.functional as F


def top_k_filter(logits: TensorF32Cpu2D, temperature: float, top_k: int) -> TensorF32Cpu2D:
    logits = logits / temperature
    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
    logits[logits < v[:, [-1]]] = -float('Inf')
    return F.softmax(logits, dim=-1)


def zero_first_column(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    y = x * 2.0
    y[:, 0] = 0.0
    return y


def copy_rows(x: TensorF32Cpu2D, idx: TensorI64Cpu1D, rows: TensorF32Cpu2D) -> TensorF32Cpu2D:
    y = x + 0.0
    y[idx] = rows
    return y


def mask_fill_by_index(x: TensorF32Cpu2D, mask: TensorBoolCpu2D) -> TensorF32Cpu2D:
    y = x * 1.0
    y[mask] = max(1, 3)
    return y
