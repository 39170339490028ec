# Return checks: type mismatch, missing return on a path, bare return.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def wrong_rank(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.relu()


def wrong_device(x: TensorF32Cpu2D) -> TensorF32Cuda0_2D:
    return x


def int_for_tensor(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return n


def missing_on_a_path(x: TensorF32Cpu2D, c: bool) -> TensorF32Cpu2D:
    if c:
        return x


def bare_return(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return


def falls_off_loop(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    while n > 0:
        return x


# Without an annotation, returns of different types do not agree on one (TL401).
def inferred_returns_disagree(x: TensorF32Cpu2D, flag: bool):
    if flag:
        return x
    return x.sum(dim=0)


# `x.max(1)` is eager's `torch.return_types.max`, `(v, i)` a plain tuple: the entry gives
# every call one Python type, so returns of both stay Python (TL401).
def record_or_tuple(x: TensorF32Cpu2D, flag: bool) -> tuple[TensorF32Cpu1D, TensorI64Cpu1D]:
    if flag:
        return x.max(1)
    v, i = x.min(1)
    return v, i


# The local is `torch.return_types.max` on one path and `.min` on the other (TL401).
def record_by_path(x: TensorF32Cpu2D, flag: bool) -> tuple[TensorF32Cpu1D, TensorI64Cpu1D]:
    if flag:
        best = x.max(1)
    else:
        best = x.min(1)
    return best


# `-> None` with a value returned (TL401).
def none_but_a_tensor(x: TensorF32Cpu2D) -> None:
    return x
