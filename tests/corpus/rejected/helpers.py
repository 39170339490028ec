# Calls of module functions that stay Python: a specialised copy that cannot be typed (each
# call adds a dim until no tensor type has the rank).
import torch
from torchlower.types import TensorF32Cpu2D, TensorF32Cpu3D


def grow(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return grow_again(x[None], n)


def grow_again(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return grow(x, n)

