# The op families of real models: reductions over dims, log-softmax, GLU, triangles, gathers,
# one-hot, RMSNorm and scaled dot-product attention (libtorch's kernels).
import torch
import torch.nn.functional as F
from torchlower.types import (
    TensorBoolCpu2D,
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu1D,
    TensorI64Cpu2D,
)


def reductions(x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    return x.amax(dim=-1) + torch.amin(x, (0,)).t() * 0.0 + torch.logsumexp(x, dim=2) + x.var(-1, unbiased=False) + torch.std(x, dim=2, correction=0) + x.prod(dim=2)


def moments(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, unbiased=False)
    return (x - mean) / torch.sqrt(var + 1e-5) + x.std(dim=1, keepdim=True)


def argmins_and_flags(x: TensorF32Cpu2D) -> tuple[TensorI64Cpu1D, TensorBoolCpu2D]:
    flags = (x > 0).all(dim=1, keepdim=True) == torch.any(x.unsqueeze(-1) > 0, dim=-1)
    return x.argmin(dim=1), flags


def log_probs(logits: TensorF32Cpu2D, actions: TensorI64Cpu2D) -> TensorF32Cpu2D:
    logp = F.log_softmax(logits, dim=-1)
    return logp.gather(-1, actions) + torch.log_softmax(logits, 1).gather(1, actions) + logits.log_softmax(-1)[:, :1]


def gated(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.glu(torch.cat([x, x], dim=-1)) + F.glu(torch.cat([x, x], dim=0), 0)


def causal_mask(scores: TensorF32Cpu2D) -> TensorF32Cpu2D:
    t = scores.shape[-1]
    keep = torch.tril(torch.ones(t, t, dtype=torch.bool))
    return scores.masked_fill(keep == 0, float("-inf")) + torch.triu(scores, diagonal=1)


def picks(table: TensorF32Cpu2D, ids: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return table.index_select(0, ids) + torch.index_select(table, 0, ids)


def one_hot_counts(labels: TensorI64Cpu1D) -> TensorI64Cpu2D:
    return torch.where(F.one_hot(labels, 10) == F.one_hot(labels, num_classes=10), 1, 0)


def rms(h: TensorF32Cpu3D, weight: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.rms_norm(h, (h.shape[-1],), weight, 1e-6) + F.rms_norm(h, h.shape[-1:])


def attention(q: TensorF32Cpu4D, k: TensorF32Cpu4D, v: TensorF32Cpu4D, mask: TensorBoolCpu2D) -> TensorF32Cpu4D:
    causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    masked = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0, scale=0.125)
    return causal + masked + F.scaled_dot_product_attention(q, k, v)


def multi_head(x: TensorF32Cpu3D, mask: TensorBoolCpu2D, w_in: TensorF32Cpu2D, b_in: TensorF32Cpu1D, w_out: TensorF32Cpu2D, heads: int) -> TensorF32Cpu3D:
    # what nn.MultiheadAttention(x, x, x, need_weights=False, attn_mask=mask) calls
    out, _ = F.multi_head_attention_forward(
        x, x, x, x.shape[-1], heads, w_in, b_in, None, None, False, 0.1, w_out, None, training=False, need_weights=False, attn_mask=mask
    )
    return out
