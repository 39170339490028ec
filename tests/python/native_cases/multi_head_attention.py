"""`F.multi_head_attention_forward` in the forms `nn.MultiheadAttention` calls it with
(test_attention.py compares each native function with eager, bit for bit, and their errors)."""

import torch.nn.functional as F

from torchlower.types import TensorBoolCpu2D, TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D


def self_attention(
    x: TensorF32Cpu3D, mask: TensorF32Cpu2D, w_in: TensorF32Cpu2D, b_in: TensorF32Cpu1D, w_out: TensorF32Cpu2D, b_out: TensorF32Cpu1D, d: int, heads: int
) -> TensorF32Cpu3D:
    return F.multi_head_attention_forward(
        x, x, x, d, heads, w_in, b_in, None, None, False, 0.0, w_out, b_out, training=False, need_weights=False, attn_mask=mask
    )[0]


def bool_mask(
    x: TensorF32Cpu3D, mask: TensorBoolCpu2D, w_in: TensorF32Cpu2D, b_in: TensorF32Cpu1D, w_out: TensorF32Cpu2D, b_out: TensorF32Cpu1D, heads: int
) -> TensorF32Cpu3D:
    out, _ = F.multi_head_attention_forward(
        x, x, x, x.shape[-1], heads, w_in, b_in, None, None, False, 0.1, w_out, b_out, training=False, need_weights=False, attn_mask=mask
    )
    return out


def causal(x: TensorF32Cpu3D, mask: TensorF32Cpu2D, w_in: TensorF32Cpu2D, w_out: TensorF32Cpu2D, heads: int) -> TensorF32Cpu3D:
    return F.multi_head_attention_forward(
        x, x, x, x.shape[-1], heads, w_in, None, None, None, False, 0.0, w_out, None,
        need_weights=False, attn_mask=mask, is_causal=True,
    )[0]


def cross_attention(
    q: TensorF32Cpu3D, memory: TensorF32Cpu3D, w_in: TensorF32Cpu2D, b_in: TensorF32Cpu1D, w_out: TensorF32Cpu2D, b_out: TensorF32Cpu1D, heads: int
) -> TensorF32Cpu3D:
    return F.multi_head_attention_forward(
        q, memory, memory, q.shape[-1], heads, w_in, b_in, None, None, False, 0.0, w_out, b_out, training=False, need_weights=False
    )[0]


def three_inputs(
    q: TensorF32Cpu3D, k: TensorF32Cpu3D, v: TensorF32Cpu3D, w_in: TensorF32Cpu2D, b_in: TensorF32Cpu1D, w_out: TensorF32Cpu2D, b_out: TensorF32Cpu1D, heads: int,
    mask: TensorF32Cpu3D,
) -> TensorF32Cpu3D:
    return F.multi_head_attention_forward(
        q, k, v, q.shape[-1], heads, w_in, b_in, None, None, False, 0.0, w_out, b_out, training=False, need_weights=False, attn_mask=mask
    )[0]


def separate_weights(
    x: TensorF32Cpu3D, w_q: TensorF32Cpu2D, w_k: TensorF32Cpu2D, w_v: TensorF32Cpu2D, b_in: TensorF32Cpu1D, w_out: TensorF32Cpu2D, b_out: TensorF32Cpu1D, heads: int
) -> TensorF32Cpu3D:
    x, _ = F.multi_head_attention_forward(
        query=x, key=x, value=x, embed_dim_to_check=x.shape[-1], num_heads=heads,
        q_proj_weight=w_q, k_proj_weight=w_k, v_proj_weight=w_v, in_proj_weight=None, in_proj_bias=b_in,
        bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0, out_proj_weight=w_out, out_proj_bias=b_out,
        use_separate_proj_weight=True, training=False, need_weights=False,
    )
    return x


def unbatched(x: TensorF32Cpu2D, w_in: TensorF32Cpu2D, b_in: TensorF32Cpu1D, w_out: TensorF32Cpu2D, b_out: TensorF32Cpu1D, heads: int) -> TensorF32Cpu2D:
    return F.multi_head_attention_forward(
        x, x, x, x.shape[-1], heads, w_in, b_in, None, None, False, 0.0, w_out, b_out, training=False, need_weights=False
    )[0]
