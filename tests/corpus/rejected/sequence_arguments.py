# Where eager's signature takes one sequence, a lone int or tensor is eager's TypeError
# ("argument 'shape' (position 2) must be tuple of ints, not int"): not claimed (TL201/TL202),
# so Python raises it. The method spellings take ints one by one (`x.reshape(-1)`, claimed).
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D


def reshape_to_an_int(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.reshape(x, -1)


def stack_a_tensor(x: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return torch.stack(x)


def cat_a_tensor(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat(x, 0)


def layer_norm_of_an_int(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.layer_norm(x, 4)


def rms_norm_of_an_int(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.rms_norm(x, 4)


def pad_by_an_int(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.pad(x, 1)


# torch.log_softmax(x, dim, dtype) and x.log_softmax(dim, dtype): the third positional is a
# dtype, not F.log_softmax's `_stacklevel`
def log_softmax_int_dtype(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.log_softmax(x, -1, 1)


def log_softmax_method_int_dtype(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.log_softmax(0, 0)


def log_softmax_without_dim(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # only F.log_softmax has an implicit dim: these are eager's TypeError
    return torch.log_softmax(x) + x.log_softmax()


def log_softmax_none_dim(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # None is F.log_softmax's default only; the method's dim is an int (eager's TypeError)
    return x.log_softmax(dim=None)
