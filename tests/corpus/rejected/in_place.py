# Seed row "In-place ops": relu_, sigmoid_, tanh_, unary _ variants, in-place operators, F.relu(inplace=True).
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorI64Cpu2D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def functional_inplace(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.relu(x, inplace=True)


def functional_inplace_positional(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.relu(x, False)


def rebound_in_loop(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x * 1.0
    for _ in range(n):
        h.relu_()
        h = x
    return h


def growing_in_place(x: TensorF32Cpu1D, y: TensorF32Cpu2D) -> TensorF32Cpu1D:
    h = x * 1.0
    h += y
    return h


# Activations with options besides `inplace` are lowered out of place only.
def leaky_relu_in_place(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = x - 1.0
    return F.leaky_relu(h, 0.2, inplace=True)


def write_back_that_would_change_the_dtype(ids: TensorI64Cpu1D) -> TensorI64Cpu1D:
    # eager raises: "result type Float can't be cast to the desired output type Long"
    i = ids + 0
    i.clamp_(max=2.5)
    return i


def write_back_with_a_tensor_bound(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # a tensor operand: eager's in-place kernel broadcasts and fails otherwise than the
    # out-of-place op (only masked_fill_ is lowered through its own kernel)
    y = x * 2
    y.clamp_(min=y.t())
    return y


def transpose_in_place(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # a view's in-place form changes the strides, not the values
    y = x * 2
    y.t_()
    return y


def write_back_into_a_draw(p: TensorF32Cpu2D) -> TensorI64Cpu2D:
    # the receiver would be computed twice (two draws): only a local or a view of one
    return torch.multinomial(p, 1).clamp_(max=3)


# A write into an argument is lowered (TL212) only where no call can be refused at run time
# after it: `squeeze(0)` refuses a dim that is not 1, so the function stays Python (TL203).
def write_then_squeeze(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    x.mul_(2.0)
    return x.squeeze(0)
