# The glue of real inference code (issue: the language of real inference code): `is None`
# checks of annotated values, conditional expressions, asserts on ints, and conversions to
# the dtype a tensor already has (eager returns the tensor itself).
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D


def optional_bias(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = F.linear(x, w)
    if b is not None:
        h = h + b
    return h


def pick(x: TensorF32Cpu2D, use_relu: bool, scale: float) -> TensorF32Cpu2D:
    y = x.relu() if use_relu else x.sigmoid()
    return y * (scale if scale > 0 else 1.0) if scale is not None else y


def checked(x: TensorF32Cpu3D, n_head: int) -> TensorF32Cpu3D:
    B, T, C = x.size()
    assert C % n_head == 0
    assert T <= 1024, "Cannot forward sequence of this length"
    return x


def same_dtype(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.float() + y.to(x.dtype) - x.to(torch.float32).type_as(y)


def shapes_agree(x: TensorF32Cpu3D, pos: TensorF32Cpu2D) -> TensorF32Cpu3D:
    assert x.shape[1:] == pos.shape, "incorrect audio shape"
    if x.shape != (1, 2) and x.shape[:1] != pos.shape:
        return x + pos
    return x
