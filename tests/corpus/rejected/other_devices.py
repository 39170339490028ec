# Seed rows "Other devices" / CUDA exclusions: mixed CPU/CUDA operands and transfers are rejected.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def mixed_matmul(x: TensorF32Cpu2D, w: TensorF32Cuda0_2D) -> TensorF32Cpu2D:
    return x @ w


def mixed_linear(x: TensorF32Cuda0_2D, w: TensorF32Cuda0_2D, b: TensorF32Cpu1D) -> TensorF32Cuda0_2D:
    return F.linear(x, w, b)


def transfer_cuda(x: TensorF32Cpu2D) -> TensorF32Cuda0_2D:
    return x.cuda()


def transfer_to(x: TensorF32Cuda0_2D) -> TensorF32Cpu2D:
    return x.to("cpu")


def cuda_argmax(x: TensorF32Cuda0_2D) -> TensorI64Cpu1D:
    return x.argmax(dim=1)
