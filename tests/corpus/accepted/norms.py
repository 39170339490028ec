# Normalization (first step of the op families): F.layer_norm with a shape tuple or int,
# optional weight and bias, eps.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D

EPS = 1e-5


def ln(x: TensorF32Cpu3D, w: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.layer_norm(x, (x.size(-1),), w, b, EPS)


def ln_no_affine(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.layer_norm(x, x.shape[-1:])


def ln_keywords(x: TensorF32Cpu3D, w: TensorF32Cpu1D, eps: float) -> TensorF32Cpu3D:
    return F.layer_norm(x, [x.shape[-1]], weight=w, bias=None, eps=eps)
