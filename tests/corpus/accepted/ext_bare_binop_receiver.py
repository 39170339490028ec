# Extension torchlower/ext-bare-binop-receiver: methods on bare binary-operation receivers.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


def bare_receiver(a: TensorF32Cpu2D, b: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return (a @ b + bias).relu()


def nested_receivers(a: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return ((a @ v) * v).sigmoid().sum(dim=0, keepdim=True)
