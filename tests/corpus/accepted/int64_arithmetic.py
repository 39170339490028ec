# int64 tensors in `+ - * /` with another tensor (rtdl's categorical tokenizer, T5's relative
# positions): eager's promotion, libtorch's kernels.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu1D, TensorI64Cpu2D


def labels_add(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    labels = x.argmax(dim=1)
    return labels + labels


def labels_mixed(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    labels = x.argmax(dim=1)
    return v * labels


def labels_sub(a: TensorI64Cpu1D, b: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return a - b


def labels_div(a: TensorI64Cpu1D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v / a


def true_division(a: TensorI64Cpu1D, b: TensorI64Cpu1D) -> TensorF32Cpu1D:
    return a / b


def offset_lookup(x: TensorI64Cpu2D, offsets: TensorI64Cpu1D, weight: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return F.embedding(x + offsets[None], weight)


def relative_positions(q: TensorI64Cpu1D, k: TensorI64Cpu1D) -> TensorI64Cpu2D:
    return k[None, :] - q[:, None]
