# Extension torchlower/ext-flow-sensitive-types: a name re-bound to another type.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


def rebinding(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu1D:
    h = x.relu()
    h = h.sum(dim=1)
    n = h
    return n.tanh()


def scalar_then_tensor(x: TensorF32Cpu2D, k: int) -> TensorF32Cpu2D:
    t = k + 1
    t = x * x
    return t
