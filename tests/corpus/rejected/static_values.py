# Static values that do not make a conversion the identity: a real conversion is still the
# transfer lane's rejection (TL205); a string that differs by path is not static.
import torch
from torchlower.types import TensorF32Cpu2D


def to_float64(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.to(torch.float64)


def to_other_device(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.to("cuda:0")


def string_by_path(x: TensorF32Cpu2D, fast: bool) -> TensorF32Cpu2D:
    mode = "none"
    if fast:
        mode = "tanh"
    return torch.nn.functional.gelu(x, approximate=mode)
