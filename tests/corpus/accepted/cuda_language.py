# The language of real code on cuda:0 (extension torchlower/ext-cuda0-full-surface): ranks 3–4,
# Python numbers, pow's special exponents, clamps, views (metadata only), reshape/contiguous/
# cat/stack (the copy kernel), batched matmul and reductions over any dim. Emitted code calls
# tl::cuda::ops.
from torchlower.types import TensorF32Cuda0_1D, TensorF32Cuda0_2D, TensorF32Cuda0_3D, TensorF32Cuda0_4D
import math
import torch
import torch.nn.functional as F


def cuda_rank3_broadcast(x: TensorF32Cuda0_3D, v: TensorF32Cuda0_1D) -> TensorF32Cuda0_3D:
    return x + v


def cuda_view(x: TensorF32Cuda0_2D) -> TensorF32Cuda0_1D:
    return x.view(-1)


def cuda_attention(q: TensorF32Cuda0_4D, k: TensorF32Cuda0_4D, v: TensorF32Cuda0_4D) -> TensorF32Cuda0_3D:
    b, h, t, d = q.shape
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    return out.transpose(1, 2).contiguous().view(b, t, h * d)


def cuda_numbers(x: TensorF32Cuda0_3D, eps: float) -> TensorF32Cuda0_3D:
    y = 1.0 - x * 0.5
    y = y / (x.pow(2).mean(dim=-1, keepdim=True) + eps) ** 0.5
    return torch.clamp(2.0 / (y + 3), min=-1.0, max=1.0)


def cuda_joins(a: TensorF32Cuda0_2D, b: TensorF32Cuda0_2D) -> TensorF32Cuda0_3D:
    c = torch.cat([a, b], dim=1)
    s = torch.stack([a, b], dim=0)
    return torch.maximum(s, c[:, : a.shape[1]].unsqueeze(0)) - s.flatten(1).view(2, a.shape[0], -1)


def cuda_batched_linear(x: TensorF32Cuda0_3D, w: TensorF32Cuda0_2D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_3D:
    h = F.linear(x, w, b)
    first, second = h.chunk(2, dim=-1)
    return torch.bmm(first, second.transpose(1, 2)).sum(dim=0, keepdim=True)
