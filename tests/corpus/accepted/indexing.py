# Basic indexing (issue: the language of real inference code): ints (negative too), slices
# with steps and int bounds, None and `...`; each result is a view of its input, as eager's.
import torch
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D, TensorI64Cpu2D, TensorI64Cpu4D


def cls_token(x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    return x[:, 0]


def last_token(x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    return x[:, -1, :]


def first_k(x: TensorF32Cpu3D, k: int) -> TensorF32Cpu3D:
    return x[..., :k]


def strided(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x[1::2, ::3]


def mask_4d(m: TensorI64Cpu2D) -> TensorI64Cpu4D:
    return m[:, None, None, :]


def window(x: TensorF32Cpu2D, start: int, length: int) -> TensorF32Cpu2D:
    return x[start : start + length]


def pick(x: TensorF32Cpu3D, i: int) -> TensorF32Cpu2D:
    return x[i] + x[-1]


def rotate_half(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return x2 - x1


def vector_slice(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v[2:]
