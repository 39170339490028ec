# Literal defaults of the parameter's type (extension of TL105): the host binds the call's
# arguments and applies the defaults before the native call; calls between functions of the
# module pass an omitted argument's default as Python does (diffusers' get_timestep_embedding).
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D
import torch


def scaled(x: TensorF32Cpu2D, n: int = 2, eps: float = 1e-5, shift: float = 1, negate: bool = False) -> TensorF32Cpu2D:
    y = x * n + eps - shift
    if negate:
        y = -y
    return y


def calls_with_defaults(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return scaled(x, 3, negate=True) + scaled(x, eps=0.5)


# `w=None`: a call that omits `w` passes None, which the tensor boundary refuses (auto mode
# reruns Python); `torchlower.compile` of an open `w` specialises on None instead
def optional_weight(x: TensorF32Cpu2D, w: TensorF32Cpu2D = None) -> TensorF32Cpu2D:
    return x @ w.t()


def helper_bias(x: TensorF32Cpu2D, bias: TensorF32Cpu1D = None) -> TensorF32Cpu2D:
    if bias is not None:
        x = x + bias
    return x.relu()


def calls_the_helper_with_and_without(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return helper_bias(x) - helper_bias(x, x[0])
