# sum / mean over a tuple or list of dims (torchlower/sum-dims, torchlower/mean-dims): global
# average pooling as CNN heads and squeeze-and-excitation blocks write it.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D
import torch


def global_avg_pool(x: TensorF32Cpu4D) -> TensorF32Cpu2D:
    return x.mean((2, 3))


def squeeze_excite_pool(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return x.mean((2, 3), keepdim=True)


def spatial_mean_list(x: TensorF32Cpu4D) -> TensorF32Cpu2D:
    return x.mean(dim=[-2, -1])


def sum_over_two_dims(x: TensorF32Cpu3D) -> TensorF32Cpu1D:
    return torch.sum(x, dim=(1, 2))


def sum_keepdim_positional(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.sum((0, 2), True)


def mean_of_a_product(x: TensorF32Cpu4D, y: TensorF32Cpu4D) -> TensorF32Cpu2D:
    return torch.mean(x * y, (1, 3))


def every_dim_kept(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.sum(dim=(0, 1), keepdim=True) / x.mean(dim=(1, 0), keepdim=True)
