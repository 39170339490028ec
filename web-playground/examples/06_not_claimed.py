# Not covered (seed: in-place ops, scalar operands, views, unresolved types): these are not
# claimed; the functions run on the Python fallback.
from torchlower.types import TensorF32Cpu2D
import torch


def in_place(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.relu_()


def scalar_operand(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x * 2.0


def view(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.transpose(0, 1)


def unannotated(x, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.matmul(x, w)
