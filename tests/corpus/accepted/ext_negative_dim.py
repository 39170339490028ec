# Extension torchlower/ext-negative-static-dim: negative literal dims normalised like PyTorch.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def negative_dims(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    p = x.softmax(dim=-1)
    s = p.sum(dim=-2, keepdim=True)
    return (p * s).argmax(dim=-1)
