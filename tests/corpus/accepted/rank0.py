# Rank-0 float32 tensors (TensorF32Cpu0D): GPT-2's `torch.full([], value.size(-1) ** 0.5)`
# divisor and `torch.full([], finfo.min)` fill value, every dim indexed, a reduction over every
# dim, a rank-0 argument and result. Broadcast against any rank as eager does.
import torch
import torch.nn.functional as F
from torchlower.types import TensorBoolCpu4D, TensorF32Cpu0D, TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu4D


def gpt2_attn_weights(query: TensorF32Cpu4D, key: TensorF32Cpu4D, value: TensorF32Cpu4D, bias: TensorBoolCpu4D) -> TensorF32Cpu4D:
    # Transformers' GPT2Attention._attn (v4.3x), up to the softmax
    attn_weights = torch.matmul(query, key.transpose(-1, -2))
    attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
    query_length, key_length = query.size(-2), key.size(-2)
    causal_mask = bias[:, :, key_length - query_length : key_length, :key_length]
    mask_value = torch.finfo(attn_weights.dtype).min
    mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
    attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
    return F.softmax(attn_weights, dim=-1)


def scale_by_scalar_tensor(x: TensorF32Cpu2D, s: TensorF32Cpu0D) -> TensorF32Cpu2D:
    return torch.relu(x * s + 1.0)


def corner(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x[0, 0]


def corner_times_row(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x[0, 0] * x[1]


def total(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.sum(dim=(0, 1))


def centred_by_mean(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x - x.mean(dim=(0, 1))


def full_scalar_exp(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.exp(torch.full([], 0.5)) * x


def scalar_chain(s: TensorF32Cpu0D, t: TensorF32Cpu0D) -> TensorF32Cpu0D:
    # a rank-0 result of the fused elementwise pass
    return torch.tanh(s * t + 1.0) - t


def scalar_compare(x: TensorF32Cpu2D, s: TensorF32Cpu0D) -> TensorF32Cpu2D:
    return torch.where(x > s, x, s)
