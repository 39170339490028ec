# Pointwise ops with Python numbers (issue: the language of real inference code): powers,
# clamps, maximum/minimum, and batched products.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu0D, TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI32Cpu1D

EPS = 1e-6


def rms_norm(x: TensorF32Cpu3D, weight: TensorF32Cpu1D, eps: float) -> TensorF32Cpu3D:
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x / torch.sqrt(variance + eps))


def powers(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return x ** 2 + torch.pow(x, 3.0) - x ** n + x.pow(0.5) * x ** -1


def clamps(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.clamp(min=EPS) + torch.clamp(x, -1.0, 1) + x.clamp(None, 6) + torch.clip(x, max=0.5) + x.clamp_min(0) - torch.clamp_max(x, 2.5)


def relu6(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.minimum(torch.maximum(x, x * 0.0), x * 0.0 + 6.0)


def scores(q: TensorF32Cpu3D, k: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.bmm(q, k.transpose(1, 2)).softmax(dim=-1) + q.bmm(k)


def negated(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return -x + -(x * 2.0)


def swiglu(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, w3: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.silu(F.linear(x, w1)) * F.linear(x, w3)


def erf_gelu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return 0.5 * x * (1.0 + torch.erf(x / 1.4142135623730951)) + x.erf() - F.softplus(x, beta=1)


def inverse_norm(x: TensorF32Cpu3D, eps: float) -> TensorF32Cpu3D:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) + x.rsqrt()


def clamp_between(x: TensorF32Cpu2D, lower: TensorF32Cpu1D, upper: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.clamp(x, min=lower, max=upper) + x.clamp(lower) + torch.clip(x, None, upper)


# a tensor exponent (torchlower/pow-tensor-exponent): two tensors, a number base, and BLOOM's
# 0-dim float32 base over int32 powers
def tensor_power(x: TensorF32Cpu2D, e: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x ** x + torch.pow(x, e) - x.pow(e)


def number_base(m: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return 1.0 / torch.pow(2, m) + 0.5 ** m


def slopes(base: TensorF32Cpu0D, powers: TensorI32Cpu1D) -> TensorF32Cpu1D:
    return torch.pow(base, powers)
