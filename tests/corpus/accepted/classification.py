# Seed rows "Softmax" and "Argmax": literal dim once; argmax gives int64 rank-1 labels.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu1D
import torch
import torch.nn.functional as F


def softmax_method(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.softmax(dim=1)


def softmax_method_rank1(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.softmax(0)


def softmax_torch(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.softmax(x, 0)


def softmax_functional(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.softmax(x, dim=1, dtype=None)


def softmax_functional_positional(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.softmax(x, 1)


def argmax_rank2(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return x.argmax(dim=1)


def argmax_rank2_keepdim_false(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return torch.argmax(x, 0, keepdim=False)


def argmax_rank1_keepdim(v: TensorF32Cpu1D) -> TensorI64Cpu1D:
    return v.argmax(dim=0, keepdim=True)


def classification_head(logits: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return logits.softmax(dim=1).argmax(dim=1, keepdim=False)


def softmax_run_time_dim(x: TensorF32Cpu2D, dim: int, onnx_trace: bool = False) -> TensorF32Cpu2D:
    # fairseq's utils.softmax: the dim a Python int known at run time (eager's IndexError
    # when it is out of range; the corpus runs pass 3)
    if onnx_trace:
        return F.softmax(x.float(), dim=dim)
    else:
        return F.softmax(x, dim=dim - 4, dtype=torch.float32) + x.softmax(dim - 3) * 0.0


def causal_log_mask(x: TensorF32Cpu2D) -> TensorF32Cpu3D:
    # Mamba's segsum: a Python type as the dtype, torch's own infinity
    T = x.size(-1)
    x_cumsum = torch.cumsum(x, dim=-1)
    x_segsum = x_cumsum[..., :, None] - x_cumsum[..., None, :]
    mask = torch.tril(torch.ones(T, T, device=x.device, dtype=bool), diagonal=0)
    return x_segsum.masked_fill(~mask, -torch.inf) + torch.pi * 0.0


def implicit_log_softmax(x: TensorF32Cpu2D, v: TensorF32Cpu1D, t: TensorF32Cpu3D) -> tuple[TensorF32Cpu2D, TensorF32Cpu1D, TensorF32Cpu3D]:
    # pyGAT's `F.log_softmax(x)`: eager's implicit dim (1 for rank 2, 0 for ranks 1 and 3)
    return F.log_softmax(x) + F.softmax(x), F.log_softmax(v) + F.softmax(v, dim=None), F.log_softmax(t, dim=None) + F.softmax(t)
