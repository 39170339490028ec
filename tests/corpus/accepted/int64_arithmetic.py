# int64 tensors in `+ - * /` with another tensor (rtdl's categorical tokenizer, T5's relative
# positions) or a Python number (T5's buckets, position offsets): eager's promotion, libtorch's
# kernels.
import math

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


def labels_times_number(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    labels = x.argmax(dim=1)
    return labels * 2


def labels_plus_number(a: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return 1 + a


def shifted_positions(positions: TensorI64Cpu2D, past_length: int) -> TensorI64Cpu2D:
    return positions + past_length - 1


def number_minus(a: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return 3 - a


def scaled_by_float(a: TensorI64Cpu2D) -> TensorF32Cpu2D:
    return a * 0.5


def halves(a: TensorI64Cpu1D) -> TensorF32Cpu1D:
    return a / 2


def number_over(a: TensorI64Cpu1D) -> TensorF32Cpu1D:
    return 2 / a


def method_and_function_forms(a: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return torch.add(a.mul(3), 5)


def log_buckets(relative_position: TensorI64Cpu2D, num_buckets: int, max_distance: int) -> TensorI64Cpu2D:
    max_exact = num_buckets // 2
    return max_exact + (
        torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)


# `+=` on a Python number rebinds it to `number + tensor` (numbers have no in-place
# operators): T5's `relative_buckets = 0` then `relative_buckets += … * num_buckets`.
def number_accumulates_tensors(relative_position: TensorI64Cpu2D, num_buckets: int) -> TensorI64Cpu2D:
    relative_buckets = 0
    relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
    relative_buckets += relative_position
    return relative_buckets


def float_scaled_by_tensor(x: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    scale = 0.5
    scale *= x
    scale -= b
    return scale
