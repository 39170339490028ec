# Signatures the native route does not model.
import functools
from typing import Optional
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


# A literal default of the parameter's type, or None, is applied by the host (tests/corpus/
# accepted/defaults.py); a default computed by an expression is not.
def defaults(x: TensorF32Cpu2D, n: int = len("ab")) -> TensorF32Cpu2D:
    return x


def varargs(*xs: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return xs


def kwonly(x: TensorF32Cpu2D, *, n: int) -> TensorF32Cpu2D:
    return x


@functools.lru_cache
def decorated(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x


async def coroutine(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x


# Without a return annotation the type is inferred from the returns
# (tests/corpus/accepted/inferred_returns.py), None when the end is reached without one; here
# no `return` carries a type and the end is never reached (TL103).
def no_return_annotation(x: TensorF32Cpu2D):
    raise ValueError("never returns")


# (`-> None` is a type now: tests/corpus/accepted/argument_writes.py)
def dict_return(x: TensorF32Cpu2D) -> dict:
    return {"x": x}


# `Optional[<marker>]` parameters are walked once per None / tensor combination; the function
# is native only if every copy is
def optional_used_as_a_tensor(x: TensorF32Cpu2D, mask: Optional[TensorF32Cpu2D] = None) -> TensorF32Cpu2D:
    return x + mask  # with None: eager's TypeError, no native copy


def optional_copies_differ(x: TensorF32Cpu2D, b: Optional[TensorF32Cpu1D] = None) -> TensorF32Cpu2D:
    if b is None:
        return x.sum(0)  # rank 1 here, rank 2 with a bias
    return x + b


def four_optional(x: TensorF32Cpu1D, a: Optional[TensorF32Cpu1D] = None, b: Optional[TensorF32Cpu1D] = None,
                  c: Optional[TensorF32Cpu1D] = None, d: Optional[TensorF32Cpu1D] = None) -> TensorF32Cpu1D:
    return x if a is None else x + a


def optional_and_open(x: torch.Tensor, mask: Optional[TensorF32Cpu2D] = None) -> TensorF32Cpu2D:
    return x if mask is None else x + mask


@torch.inference_mode()
def inference_mode_decorated(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # its results are inference tensors (a later in-place update raises), native ones are not
    return x.softmax(-1)
