# Not claimed (seed: in-place ops, scalar operands, views, unresolved types): in-place
# methods, scalar operands and views are recognised and rejected with a code; a call whose
# operand type is unknown (no annotation) is not covered. Every function runs on the fallback.
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
