# Activations and math from libtorch's kernels, bound by their Python signatures (options at
# eager's defaults or given as Python numbers).
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu2D, TensorF32Cpu3D


def hard_activations(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.relu6(x + 3.0) / 6.0 + F.hardswish(x) + F.hardsigmoid(x, inplace=False) + F.hardtanh(x, 0.0, 6.0)


def smooth_activations(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.mish(x) + F.selu(x) + F.elu(x, alpha=1.0) + F.leaky_relu(x, 0.2) + F.leaky_relu(x)


def math_functions(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.log1p(x) - x.expm1() + torch.sin(x) * x.cos() + torch.special.expm1(x)


def atanh(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return 0.5 * (x.log1p() - (-x).log1p())
