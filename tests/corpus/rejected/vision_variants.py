# Forms of the vision, norm and embedding ops that stay Python, each with its code.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D, TensorI64Cpu1D, TensorF32Cuda0_4D


def unknown_padding_string(x: TensorF32Cpu4D, w: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.conv2d(x, w, padding="full")


def interpolate_both_sizes(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.interpolate(x, size=4, scale_factor=2.0)


def pool_with_indices(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.max_pool2d(x, 2, return_indices=True)


def conv_of_a_matrix(x: TensorF32Cpu2D, w: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.conv2d(x, w)


def bn_training(x: TensorF32Cpu2D, mean: TensorF32Cpu1D, var: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.batch_norm(x, mean, var, training=True)


def embedding_max_norm(idx: TensorI64Cpu1D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.embedding(idx, w, max_norm=1.0)


# Direct convolution has a kernel of ours on cuda:0; the padding strings and the transposed
# convolution not yet (TL209)
def same_conv_on_cuda(x: TensorF32Cuda0_4D, w: TensorF32Cuda0_4D) -> TensorF32Cuda0_4D:
    return F.conv2d(x, w, padding="same")


def transposed_conv_on_cuda(x: TensorF32Cuda0_4D, w: TensorF32Cuda0_4D) -> TensorF32Cuda0_4D:
    return F.conv_transpose2d(x, w)
