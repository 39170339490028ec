# Seed row "Unary math": torch.{abs,neg,negative,square,exp,log,sqrt}(t) and zero-arg methods, rank 1 and 2.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D
import torch
import torch.nn.functional as F


def unary_functions_rank2(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    a = torch.abs(x)
    a = torch.neg(a)
    a = torch.negative(a)
    a = torch.square(a)
    a = torch.exp(a)
    a = torch.log(a)
    return torch.sqrt(a)


def unary_methods_rank1(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.abs().neg().negative().square().exp().log().sqrt()


def unary_mixed(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.sqrt(v) + x.exp().log()
