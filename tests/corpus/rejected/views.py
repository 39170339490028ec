# Seed row "Views / reshape": the seed rejected every view. view, reshape, permute, transpose,
# t, unsqueeze, flatten, contiguous, narrow, select, unflatten, squeeze(dim) and detach are claimed now (tests/corpus/accepted/views.py,
# and on cuda:0 tests/corpus/accepted/cuda_language.py); these stay rejected.
from torchlower.types import TensorBoolCpu1D, TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu1D, TensorI64Cpu2D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def squeeze_all(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.squeeze()


def t_attribute(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.T


def cuda_repeat(x: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:
    return x.repeat(2, 1)


def view_to_rank6(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.view(1, 1, 1, 1, 1, -1)


def transpose_dynamic_dim(x: TensorF32Cpu2D, d: int) -> TensorF32Cpu2D:
    return x.transpose(d, 1)


# Int64 index tensors, bool masks and lists of ints are claimed (tests/corpus/accepted/
# advanced_indexing.py); a float index and a mask beside another index tensor are not.
def float_index(x: TensorF32Cpu2D, idx: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x[idx]


def mask_with_index(x: TensorF32Cpu2D, mask: TensorBoolCpu1D, idx: TensorI64Cpu1D) -> TensorF32Cpu1D:
    return x[mask, idx]


def rank0_index(x: TensorI64Cpu2D) -> TensorI64Cpu1D:
    # `x[0, 0]` of int64 is TensorI64Cpu0D (claimed): the rank-1 annotation is wrong (TL401)
    return x[0, 0]


def chunk_not_unpacked(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.chunk(2, dim=1)[0]


def split_sizes(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # a float size is eager's TypeError
    a, b = x.split([1, 2.0], dim=1)
    return a
