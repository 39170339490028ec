"""Sequence models — state-space models and the rotary / sinusoidal position code of language models:
Mamba (state-spaces/mamba, Apache License 2.0) — the reference ops of
mamba_ssm/ops/triton/layernorm.py (`layer_norm_ref`, `rms_norm_ref`) and the naive segment sum of
mamba_ssm/modules/ssd_minimal.py; Hugging Face Transformers (huggingface/transformers, Apache License
2.0) — Mamba (src/transformers/models/mamba/modeling_mamba.py: `MambaRMSNorm`, `MambaCache.update_conv_state`,
the sequential `MambaMixer.slow_forward`), GPT-NeoX (src/transformers/models/gpt_neox/modeling_gpt_neox.py as
of commit 006bd23dd0ce18d54e1cf260b09b15fa943a731d, the version with the cos/sin cache and the eager `_attn`),
RoFormer (src/transformers/models/roformer/modeling_roformer.py); llama2.c (karpathy/llama2.c, MIT License) —
model.py; fairseq (facebookresearch/fairseq, MIT License) — fairseq/utils.py and
fairseq/modules/sinusoidal_positional_embedding.py.

Forward paths rewritten as annotated top-level functions: module weights and registered buffers (llama2.c's
causal `mask`, GPT-NeoX's bool `bias` and `inv_freq`, RoFormer's sinusoidal table, Mamba's `A_log` / `D`,
the layer's `MambaCache` tensors) are explicit parameters, `nn.Linear` / `nn.Conv1d` / `nn.Embedding` calls
are `F.linear` / `F.conv1d` / `F.embedding` (`nn.Embedding.forward` as the `super().forward(position_ids)`
RoFormer's positional table makes), `ACT2FN["silu"]` is `F.silu`, `self.x` hyper-parameters are `int` /
`float` / `bool` parameters, dropout (the identity in eval mode) is dropped, calls of self-methods are
calls of the functions of this file. A method that registers buffers (GPT-NeoX's `_set_cos_sin_cache`)
returns them instead; a `MambaCache` method that writes the cache (`update_conv_state`) writes the layer's
cache tensor passed to it, as the cache object's list entry would be written. Configuration is fixed as
named in the comment above each function (Transformers Mamba: `hidden_act="silu"`, `use_bias=False`,
`use_conv_bias=True`, the sequential path of a CPU run, eval mode; llama2.c: the manual attention path,
as without `F.scaled_dot_product_attention`). Mamba's `selective_scan_ref`, `selective_state_update_ref`,
`Mamba.step` and lucidrains' rotary-embedding-torch are not included: they are written with
`einops.rearrange` / `repeat`, which this corpus does not import. Everything else is kept as the
projects write it.
"""

import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from torchlower.types import (
    TensorBoolCpu4D,
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu1D,
    TensorI64Cpu2D,
)


# Mamba — mamba_ssm/ops/triton/layernorm.py, layer_norm_ref (state-spaces/mamba)
def layer_norm_ref(
    x: TensorF32Cpu3D,
    weight: TensorF32Cpu1D,
    bias: Optional[TensorF32Cpu1D],
    residual: Optional[TensorF32Cpu3D] = None,
    eps: float = 1e-6,
    prenorm: bool = False,
    upcast: bool = False,
) -> TensorF32Cpu3D:
    dtype = x.dtype
    if upcast:
        weight = weight.float()
        bias = bias.float() if bias is not None else None
    if upcast:
        x = x.float()
        residual = residual.float() if residual is not None else residual
    if residual is not None:
        x = (x + residual).to(x.dtype)
    out = F.layer_norm(x.to(weight.dtype), x.shape[-1:], weight=weight, bias=bias, eps=eps).to(
        dtype
    )
    return out if not prenorm else (out, x)


# Mamba — mamba_ssm/ops/triton/layernorm.py, rms_norm_ref (state-spaces/mamba)
def rms_norm_ref(
    x: TensorF32Cpu3D,
    weight: TensorF32Cpu1D,
    bias: Optional[TensorF32Cpu1D],
    residual: Optional[TensorF32Cpu3D] = None,
    eps: float = 1e-6,
    prenorm: bool = False,
    upcast: bool = False,
) -> TensorF32Cpu3D:
    dtype = x.dtype
    if upcast:
        weight = weight.float()
        bias = bias.float() if bias is not None else None
    if upcast:
        x = x.float()
        residual = residual.float() if residual is not None else residual
    if residual is not None:
        x = (x + residual).to(x.dtype)
    rstd = 1 / torch.sqrt((x.square()).mean(dim=-1, keepdim=True) + eps)
    out = (x * rstd * weight) + bias if bias is not None else (x * rstd * weight)
    out = out.to(dtype)
    return out if not prenorm else (out, x)


# Mamba — mamba_ssm/modules/ssd_minimal.py, segsum_unstable (state-spaces/mamba)
def segsum_unstable(x: TensorF32Cpu3D) -> TensorF32Cpu4D:
    """Naive segment sum calculation."""
    T = x.size(-1)
    x_cumsum = torch.cumsum(x, dim=-1)
    x_segsum = x_cumsum[..., :, None] - x_cumsum[..., None, :]
    mask = torch.tril(torch.ones(T, T, device=x.device, dtype=bool), diagonal=0)
    x_segsum = x_segsum.masked_fill(~mask, -torch.inf)
    return x_segsum


# Transformers — src/transformers/models/mamba/modeling_mamba.py, MambaRMSNorm.forward (huggingface/transformers)
def mamba_rms_norm(hidden_states: TensorF32Cpu3D, weight: TensorF32Cpu1D, variance_epsilon: float) -> TensorF32Cpu3D:
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.float32)
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + variance_epsilon)
    return weight * hidden_states.to(input_dtype)


# Transformers — src/transformers/models/mamba/modeling_mamba.py, MambaCache.update_conv_state (the layer's
# cache tensor `self.conv_states[layer_idx]` is the `conv_states` parameter, written in place; the multi-GPU
# device move rebinds it locally) (huggingface/transformers)
def mamba_cache_update_conv_state(
    conv_states: TensorF32Cpu3D,
    new_conv_state: TensorF32Cpu3D,
    cache_position: TensorI64Cpu1D,
    conv_kernel_size: int,
) -> TensorF32Cpu3D:
    # This `if` blocks is only reached in multigpu and if `layer_device_map` is not passed. It is used
    # when the cache is initialized in the forward pass (e.g. Mamba)
    if conv_states.device != new_conv_state.device:
        conv_states = conv_states.to(new_conv_state.device)

    conv_state = conv_states
    cache_position = cache_position.clamp(0, conv_kernel_size - 1)

    conv_state = conv_state.roll(shifts=-1, dims=-1)
    conv_state[:, :, cache_position] = new_conv_state.to(device=conv_state.device, dtype=conv_state.dtype)
    conv_states.zero_()
    conv_states += conv_state
    return conv_states


# Transformers — src/transformers/models/mamba/modeling_mamba.py, MambaMixer.slow_forward without a cache
# (cache_params=None: the `if cache_params is not None` blocks are not taken; eval mode, so not the mambapy
# branch; hidden_act="silu", use_bias=False, use_conv_bias=True) (huggingface/transformers)
def mamba_mixer_slow_forward(
    input_states: TensorF32Cpu3D,
    attention_mask: Optional[TensorI64Cpu2D],
    in_proj_weight: TensorF32Cpu2D,
    conv1d_weight: TensorF32Cpu3D,
    conv1d_bias: TensorF32Cpu1D,
    x_proj_weight: TensorF32Cpu2D,
    dt_proj_weight: TensorF32Cpu2D,
    dt_proj_bias: TensorF32Cpu1D,
    A_log: TensorF32Cpu2D,
    D: TensorF32Cpu1D,
    out_proj_weight: TensorF32Cpu2D,
    intermediate_size: int,
    ssm_state_size: int,
    conv_kernel_size: int,
    time_step_rank: int,
) -> TensorF32Cpu3D:
    batch_size, seq_len, _ = input_states.shape
    dtype = input_states.dtype
    # 1. Gated MLP's linear projection
    projected_states = F.linear(input_states, in_proj_weight).transpose(1, 2)       # [batch, 2 * intermediate_size, seq_len]
    hidden_states, gate = projected_states.chunk(2, dim=1)

    if attention_mask is not None:
        hidden_states = hidden_states * attention_mask.unsqueeze(1)

    # 2. Convolution sequence transformation
    ssm_state = torch.zeros(
        (batch_size, intermediate_size, ssm_state_size),
        device=hidden_states.device, dtype=dtype
    )
    hidden_states = F.silu(F.conv1d(hidden_states, conv1d_weight, conv1d_bias, padding=conv_kernel_size - 1, groups=intermediate_size)[..., :seq_len])         # [batch, intermediate_size, seq_len]

    if attention_mask is not None:
        hidden_states = hidden_states * attention_mask.unsqueeze(1)

    # 3. State Space Model sequence transformation
    # 3.a. Selection:  [batch, seq_len, self.time_step_rank + self.ssm_state_size * 2]
    ssm_parameters = F.linear(hidden_states.transpose(1, 2), x_proj_weight)
    time_step, B, C = torch.split(
        ssm_parameters, [time_step_rank, ssm_state_size, ssm_state_size], dim=-1
    )
    discrete_time_step = F.linear(time_step, dt_proj_weight, dt_proj_bias)          # [batch, seq_len, intermediate_size]
    discrete_time_step = nn.functional.softplus(discrete_time_step).transpose(1, 2) # [batch, intermediate_size, seq_len]

    # 3.b. Discretization: B and C to [batch, seq_len, intermediate_size, ssm_state_size] (SRAM)
    A = -torch.exp(A_log.float())                                                   # [intermediate_size, ssm_state_size]
    discrete_A = torch.exp(A[None, :, None, :] * discrete_time_step[:, :, :, None]) # [batch, intermediate_size, seq_len, ssm_state_size]
    discrete_B = discrete_time_step[:, :, :, None] * B[:, None, :, :].float()       # [batch, intermediate_size, seq_len, ssm_state_size]
    deltaB_u = discrete_B * hidden_states[:, :, :, None].float()

    # 3.c perform the recurrence y ← SSM(A, B, C)(x)
    scan_outputs = []
    for i in range(seq_len):
        ssm_state = discrete_A[:, :, i, :] * ssm_state + deltaB_u[:, :, i, :]      # [batch, intermediate_size, ssm_state]
        scan_output = torch.matmul(ssm_state.to(dtype), C[:, i, :].unsqueeze(-1))  # [batch, intermediate_size, 1]
        scan_outputs.append(scan_output[:, :, 0])
    scan_output = torch.stack(scan_outputs, dim=-1)                                # [batch, intermediate_size, seq_len]
    scan_output = scan_output + (hidden_states * D[None, :, None])
    scan_output = (scan_output * F.silu(gate))

    # 4. Final linear projection
    contextualized_states = F.linear(scan_output.transpose(1, 2), out_proj_weight)  # [batch, seq_len, hidden_size]
    return contextualized_states


# Transformers — src/transformers/models/mamba/modeling_mamba.py, MambaMixer.slow_forward with a cache (the layer's
# `cache_params.conv_states[layer_idx]` / `ssm_states[layer_idx]` are the `conv_states` / `ssm_states` parameters,
# written in place; `cache_params.update_conv_state` is mamba_cache_update_conv_state; eval mode, hidden_act="silu",
# use_bias=False) (huggingface/transformers)
def mamba_mixer_slow_forward_cached(
    input_states: TensorF32Cpu3D,
    conv_states: TensorF32Cpu3D,
    ssm_states: TensorF32Cpu3D,
    cache_position: TensorI64Cpu1D,
    attention_mask: Optional[TensorI64Cpu2D],
    in_proj_weight: TensorF32Cpu2D,
    conv1d_weight: TensorF32Cpu3D,
    conv1d_bias: TensorF32Cpu1D,
    x_proj_weight: TensorF32Cpu2D,
    dt_proj_weight: TensorF32Cpu2D,
    dt_proj_bias: TensorF32Cpu1D,
    A_log: TensorF32Cpu2D,
    D: TensorF32Cpu1D,
    out_proj_weight: TensorF32Cpu2D,
    intermediate_size: int,
    ssm_state_size: int,
    conv_kernel_size: int,
    time_step_rank: int,
    use_conv_bias: bool,
) -> TensorF32Cpu3D:
    batch_size, seq_len, _ = input_states.shape
    dtype = input_states.dtype
    # 1. Gated MLP's linear projection
    projected_states = F.linear(input_states, in_proj_weight).transpose(1, 2)       # [batch, 2 * intermediate_size, seq_len]
    hidden_states, gate = projected_states.chunk(2, dim=1)

    if attention_mask is not None:
        hidden_states = hidden_states * attention_mask.unsqueeze(1)

    # 2. Convolution sequence transformation
    ssm_state = ssm_states.clone()
    ssm_state = ssm_state.to(hidden_states.device)
    # use `cache_position.shape[0]` to check whether we are in prefill
    # stage, it's equivalent to check `cache_position[0] == 0`, which
    # breaks dynamo fullgraph constraints
    if cache_position.shape[0] == conv_kernel_size:
        conv_state = nn.functional.pad(
            hidden_states,
            (conv_kernel_size - hidden_states.shape[-1], 0)
        )

        mamba_cache_update_conv_state(conv_states, conv_state, cache_position, conv_kernel_size)
        hidden_states = F.silu(F.conv1d(hidden_states, conv1d_weight, conv1d_bias, padding=conv_kernel_size - 1, groups=intermediate_size)[..., :seq_len])     # [batch, intermediate_size, seq_len]
    else:
        conv_state = mamba_cache_update_conv_state(conv_states, hidden_states, cache_position, conv_kernel_size)
        conv_state = conv_state.to(conv1d_weight.device)
        hidden_states = torch.sum(conv_state * conv1d_weight[:, 0, :], dim=-1)
        if use_conv_bias:
            hidden_states += conv1d_bias
        hidden_states = F.silu(hidden_states).to(dtype).unsqueeze(-1)         # [batch, intermediate_size, 1] : decoding

    if attention_mask is not None:
        hidden_states = hidden_states * attention_mask.unsqueeze(1)

    # 3. State Space Model sequence transformation
    # 3.a. Selection:  [batch, seq_len, self.time_step_rank + self.ssm_state_size * 2]
    ssm_parameters = F.linear(hidden_states.transpose(1, 2), x_proj_weight)
    time_step, B, C = torch.split(
        ssm_parameters, [time_step_rank, ssm_state_size, ssm_state_size], dim=-1
    )
    discrete_time_step = F.linear(time_step, dt_proj_weight, dt_proj_bias)          # [batch, seq_len, intermediate_size]
    discrete_time_step = nn.functional.softplus(discrete_time_step).transpose(1, 2) # [batch, intermediate_size, seq_len]

    # 3.b. Discretization: B and C to [batch, seq_len, intermediate_size, ssm_state_size] (SRAM)
    A = -torch.exp(A_log.float())                                                   # [intermediate_size, ssm_state_size]
    discrete_A = torch.exp(A[None, :, None, :] * discrete_time_step[:, :, :, None]) # [batch, intermediate_size, seq_len, ssm_state_size]
    discrete_B = discrete_time_step[:, :, :, None] * B[:, None, :, :].float()       # [batch, intermediate_size, seq_len, ssm_state_size]
    deltaB_u = discrete_B * hidden_states[:, :, :, None].float()

    # 3.c perform the recurrence y ← SSM(A, B, C)(x)
    scan_outputs = []
    for i in range(seq_len):
        ssm_state = discrete_A[:, :, i, :] * ssm_state + deltaB_u[:, :, i, :]      # [batch, intermediate_size, ssm_state]
        scan_output = torch.matmul(ssm_state.to(dtype), C[:, i, :].unsqueeze(-1))  # [batch, intermediate_size, 1]
        scan_outputs.append(scan_output[:, :, 0])
    scan_output = torch.stack(scan_outputs, dim=-1)                                # [batch, intermediate_size, seq_len]
    scan_output = scan_output + (hidden_states * D[None, :, None])
    scan_output = (scan_output * F.silu(gate))

    ssm_states.copy_(ssm_state)

    # 4. Final linear projection
    contextualized_states = F.linear(scan_output.transpose(1, 2), out_proj_weight)  # [batch, seq_len, hidden_size]
    return contextualized_states


# llama2.c — model.py, RMSNorm._norm (karpathy/llama2.c)
def llama2c_rmsnorm_norm(x: TensorF32Cpu3D, eps: float) -> TensorF32Cpu3D:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


# llama2.c — model.py, RMSNorm.forward (karpathy/llama2.c)
def llama2c_rmsnorm(x: TensorF32Cpu3D, weight: TensorF32Cpu1D, eps: float) -> TensorF32Cpu3D:
    output = llama2c_rmsnorm_norm(x.float(), eps).type_as(x)
    return output * weight


# llama2.c — model.py, precompute_freqs_cis (karpathy/llama2.c)
def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0) -> tuple[TensorF32Cpu2D, TensorF32Cpu2D]:
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)  # type: ignore
    freqs = torch.outer(t, freqs).float()  # type: ignore
    freqs_cos = torch.cos(freqs)  # real part
    freqs_sin = torch.sin(freqs)  # imaginary part
    return freqs_cos, freqs_sin


# llama2.c — model.py, reshape_for_broadcast (karpathy/llama2.c)
def reshape_for_broadcast(freqs_cis: TensorF32Cpu2D, x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(shape)


# llama2.c — model.py, apply_rotary_emb (karpathy/llama2.c)
def apply_rotary_emb(
    xq: TensorF32Cpu4D,
    xk: TensorF32Cpu4D,
    freqs_cos: TensorF32Cpu2D,
    freqs_sin: TensorF32Cpu2D
) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D]:

    # reshape xq and xk to match the complex representation
    xq_r, xq_i = xq.float().reshape(xq.shape[:-1] + (-1, 2)).unbind(-1)
    xk_r, xk_i = xk.float().reshape(xk.shape[:-1] + (-1, 2)).unbind(-1)

    # reshape freqs_cos and freqs_sin for broadcasting
    freqs_cos = reshape_for_broadcast(freqs_cos, xq_r)
    freqs_sin = reshape_for_broadcast(freqs_sin, xq_r)

    # apply rotation using real numbers
    xq_out_r = xq_r * freqs_cos - xq_i * freqs_sin
    xq_out_i = xq_r * freqs_sin + xq_i * freqs_cos
    xk_out_r = xk_r * freqs_cos - xk_i * freqs_sin
    xk_out_i = xk_r * freqs_sin + xk_i * freqs_cos

    # flatten last two dimensions
    xq_out = torch.stack([xq_out_r, xq_out_i], dim=-1).flatten(3)
    xk_out = torch.stack([xk_out_r, xk_out_i], dim=-1).flatten(3)

    return xq_out.type_as(xq), xk_out.type_as(xk)


# llama2.c — model.py, repeat_kv (karpathy/llama2.c)
def repeat_kv(x: TensorF32Cpu4D, n_rep: int) -> TensorF32Cpu4D:
    """torch.repeat_interleave(x, dim=2, repeats=n_rep)"""
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (
        x[:, :, :, None, :]
        .expand(bs, slen, n_kv_heads, n_rep, head_dim)
        .reshape(bs, slen, n_kv_heads * n_rep, head_dim)
    )


# llama2.c — model.py, Attention.forward, manual (non-flash) path (the `mask` buffer explicit, so its
# `assert hasattr(self, 'mask')` is left out; attn/resid dropout dropped) (karpathy/llama2.c)
def llama2c_attention(
    x: TensorF32Cpu3D,
    freqs_cos: TensorF32Cpu2D,
    freqs_sin: TensorF32Cpu2D,
    wq: TensorF32Cpu2D,
    wk: TensorF32Cpu2D,
    wv: TensorF32Cpu2D,
    wo: TensorF32Cpu2D,
    mask: TensorF32Cpu4D,
    n_local_heads: int,
    n_local_kv_heads: int,
    n_rep: int,
    head_dim: int,
) -> TensorF32Cpu3D:
    bsz, seqlen, _ = x.shape

    # QKV
    xq, xk, xv = F.linear(x, wq), F.linear(x, wk), F.linear(x, wv)
    xq = xq.view(bsz, seqlen, n_local_heads, head_dim)
    xk = xk.view(bsz, seqlen, n_local_kv_heads, head_dim)
    xv = xv.view(bsz, seqlen, n_local_kv_heads, head_dim)

    # RoPE relative positional embeddings
    xq, xk = apply_rotary_emb(xq, xk, freqs_cos, freqs_sin)

    # grouped multiquery attention: expand out keys and values
    xk = repeat_kv(xk, n_rep)  # (bs, seqlen, n_local_heads, head_dim)
    xv = repeat_kv(xv, n_rep)  # (bs, seqlen, n_local_heads, head_dim)

    # make heads into a batch dimension
    xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
    xk = xk.transpose(1, 2)
    xv = xv.transpose(1, 2)

    # manual implementation
    scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(head_dim)
    scores = scores + mask[:, :, :seqlen, :seqlen]   # (bs, n_local_heads, seqlen, cache_len + seqlen)
    scores = F.softmax(scores.float(), dim=-1).type_as(xq)
    output = torch.matmul(scores, xv)  # (bs, n_local_heads, seqlen, head_dim)

    # restore time as batch dimension and concat heads
    output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)

    # final projection into the residual stream
    output = F.linear(output, wo)
    return output


# llama2.c — model.py, FeedForward.forward (dropout dropped) (karpathy/llama2.c)
def llama2c_feed_forward(x: TensorF32Cpu3D, w1: TensorF32Cpu2D, w2: TensorF32Cpu2D, w3: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2)


# Transformers — src/transformers/models/gpt_neox/modeling_gpt_neox.py, rotate_half (huggingface/transformers)
def rotate_half(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


# Transformers — src/transformers/models/gpt_neox/modeling_gpt_neox.py, apply_rotary_pos_emb (copied from Mixtral;
# the cos/sin cache indexed by position_ids) (huggingface/transformers)
def apply_rotary_pos_emb(
    q: TensorF32Cpu4D,
    k: TensorF32Cpu4D,
    cos: TensorF32Cpu2D,
    sin: TensorF32Cpu2D,
    position_ids: TensorI64Cpu2D,
    unsqueeze_dim: int = 1,
) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D]:
    """Applies Rotary Position Embedding to the query and key tensors."""
    cos = cos[position_ids].unsqueeze(unsqueeze_dim)
    sin = sin[position_ids].unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


# Transformers — src/transformers/models/gpt_neox/modeling_gpt_neox.py, GPTNeoXRotaryEmbedding._set_cos_sin_cache
# (`self.inv_freq` explicit, `self.max_seq_len_cached` is seq_len, `device` the buffer's device as __init__
# passes it, the `dtype` argument unused as in the project; the `cos_cached` / `sin_cached` buffers it
# registers are returned) (huggingface/transformers)
def gpt_neox_set_cos_sin_cache(inv_freq: TensorF32Cpu1D, seq_len: int) -> tuple[TensorF32Cpu2D, TensorF32Cpu2D]:
    max_seq_len_cached = seq_len
    t = torch.arange(max_seq_len_cached, device=inv_freq.device, dtype=torch.int64).type_as(inv_freq)

    freqs = torch.outer(t, inv_freq)
    # Different from paper, but it uses a different permutation in order to obtain the same calculation
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


# Transformers — src/transformers/models/gpt_neox/modeling_gpt_neox.py, GPTNeoXAttention._attn (the bool causal
# `bias` buffer explicit and large enough, so the `_init_bias` regrowth that re-registers it is not included;
# attention dropout dropped) (huggingface/transformers)
def gpt_neox_attn(
    query: TensorF32Cpu4D,
    key: TensorF32Cpu4D,
    value: TensorF32Cpu4D,
    attention_mask: Optional[TensorF32Cpu4D],
    head_mask: Optional[TensorF32Cpu4D],
    bias: TensorBoolCpu4D,
    norm_factor: float,
) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D]:
    # q, k, v: [bs, num_attention_heads, seq_len, attn_head_size]
    # compute causal mask from causal mask buffer
    batch_size, num_attention_heads, query_length, attn_head_size = query.size()
    key_length = key.size(-2)

    causal_mask = bias[:, :, key_length - query_length : key_length, :key_length]

    query = query.view(batch_size * num_attention_heads, query_length, attn_head_size)
    key = key.view(batch_size * num_attention_heads, key_length, attn_head_size)
    attn_scores = torch.zeros(
        batch_size * num_attention_heads,
        query_length,
        key_length,
        dtype=query.dtype,
        device=key.device,
    )
    attn_scores = torch.baddbmm(
        attn_scores,
        query,
        key.transpose(1, 2),
        beta=1.0,
        alpha=norm_factor,
    )
    attn_scores = attn_scores.view(batch_size, num_attention_heads, query_length, key_length)

    mask_value = torch.finfo(attn_scores.dtype).min
    # Need to be a tensor, otherwise we get error: `RuntimeError: expected scalar type float but found double`.
    # Need to be on the same device, otherwise `RuntimeError: ..., x and y to be on the same device`
    mask_value = torch.tensor(mask_value, dtype=attn_scores.dtype).to(attn_scores.device)
    attn_scores = torch.where(causal_mask, attn_scores, mask_value)

    if attention_mask is not None:
        # Apply the attention mask
        attn_scores = attn_scores + attention_mask

    attn_weights = nn.functional.softmax(attn_scores, dim=-1)
    attn_weights = attn_weights.to(value.dtype)

    # Mask heads if we want to
    if head_mask is not None:
        attn_weights = attn_weights * head_mask

    attn_output = torch.matmul(attn_weights, value)
    return attn_output, attn_weights


# Transformers — src/transformers/models/roformer/modeling_roformer.py,
# RoFormerSelfAttention.apply_rotary_position_embeddings (a staticmethod; called with the value layer,
# config.rotary_value=True) (huggingface/transformers)
def roformer_apply_rotary_position_embeddings(
    sinusoidal_pos: TensorF32Cpu4D,
    query_layer: TensorF32Cpu4D,
    key_layer: TensorF32Cpu4D,
    value_layer: Optional[TensorF32Cpu4D] = None,
) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D, TensorF32Cpu4D]:
    # https://kexue.fm/archives/8265
    # sin [batch_size, num_heads, sequence_length, embed_size_per_head//2]
    # cos [batch_size, num_heads, sequence_length, embed_size_per_head//2]
    sin, cos = sinusoidal_pos.chunk(2, dim=-1)
    # sin [θ0,θ1,θ2......θd/2-1] -> sin_pos [θ0,θ0,θ1,θ1,θ2,θ2......θd/2-1,θd/2-1]
    sin_pos = torch.stack([sin, sin], dim=-1).reshape_as(sinusoidal_pos)
    # cos [θ0,θ1,θ2......θd/2-1] -> cos_pos [θ0,θ0,θ1,θ1,θ2,θ2......θd/2-1,θd/2-1]
    cos_pos = torch.stack([cos, cos], dim=-1).reshape_as(sinusoidal_pos)
    # rotate_half_query_layer [-q1,q0,-q3,q2......,-qd-1,qd-2]
    rotate_half_query_layer = torch.stack([-query_layer[..., 1::2], query_layer[..., ::2]], dim=-1).reshape_as(
        query_layer
    )
    query_layer = query_layer * cos_pos + rotate_half_query_layer * sin_pos
    # rotate_half_key_layer [-k1,k0,-k3,k2......,-kd-1,kd-2]
    rotate_half_key_layer = torch.stack([-key_layer[..., 1::2], key_layer[..., ::2]], dim=-1).reshape_as(key_layer)
    key_layer = key_layer * cos_pos + rotate_half_key_layer * sin_pos
    if value_layer is not None:
        # rotate_half_value_layer [-v1,v0,-v3,v2......,-vd-1,vd-2]
        rotate_half_value_layer = torch.stack([-value_layer[..., 1::2], value_layer[..., ::2]], dim=-1).reshape_as(
            value_layer
        )
        value_layer = value_layer * cos_pos + rotate_half_value_layer * sin_pos
        return query_layer, key_layer, value_layer
    return query_layer, key_layer


# Transformers — src/transformers/models/roformer/modeling_roformer.py, RoFormerSinusoidalPositionalEmbedding.forward
# (the embedding's `weight` explicit; `super().forward(position_ids)` is nn.Embedding's, padding_idx None; called
# with `hidden_states.shape[:-1]`) (huggingface/transformers)
@torch.no_grad()
def roformer_sinusoidal_positional_embedding(
    input_ids_shape: tuple[int, int],
    weight: TensorF32Cpu2D,
    past_key_values_length: int = 0,
    position_ids: Optional[TensorI64Cpu1D] = None,
) -> TensorF32Cpu2D:
    """`input_ids_shape` is expected to be [bsz x seqlen]."""
    if position_ids is None:
        bsz, seq_len = input_ids_shape[:2]
        position_ids = torch.arange(
            past_key_values_length, past_key_values_length + seq_len, dtype=torch.long, device=weight.device
        )
    return F.embedding(position_ids, weight)


# fairseq — fairseq/utils.py, make_positions (facebookresearch/fairseq)
def make_positions(tensor: TensorI64Cpu2D, padding_idx: int, onnx_trace: bool = False) -> TensorI64Cpu2D:
    """Replace non-padding symbols with their position numbers.

    Position numbers begin at padding_idx+1. Padding symbols are ignored.
    """
    # The series of casts and type-conversions here are carefully
    # balanced to both work with ONNX export and XLA. In particular XLA
    # prefers ints, cumsum defaults to output longs, and ONNX doesn't know
    # how to handle the dtype kwarg in cumsum.
    mask = tensor.ne(padding_idx).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx


# fairseq — fairseq/utils.py, convert_padding_direction (facebookresearch/fairseq)
def convert_padding_direction(
    src_tokens: TensorI64Cpu2D, padding_idx: int, right_to_left: bool = False, left_to_right: bool = False
) -> TensorI64Cpu2D:
    assert right_to_left ^ left_to_right
    pad_mask = src_tokens.eq(padding_idx)
    if not pad_mask.any():
        # no padding, return early
        return src_tokens
    if left_to_right and not pad_mask[:, 0].any():
        # already right padded
        return src_tokens
    if right_to_left and not pad_mask[:, -1].any():
        # already left padded
        return src_tokens
    max_len = src_tokens.size(1)
    buffered = torch.empty(0).long()
    if max_len > 0:
        torch.arange(max_len, out=buffered)
    range = buffered.type_as(src_tokens).expand_as(src_tokens)
    num_pads = pad_mask.long().sum(dim=1, keepdim=True)
    if right_to_left:
        index = torch.remainder(range - num_pads, max_len)
    else:
        index = torch.remainder(range + num_pads, max_len)
    return src_tokens.gather(1, index)


# fairseq — fairseq/utils.py, softmax (as MultiheadAttention calls it on its (bsz * heads, tgt, src) weights)
# (facebookresearch/fairseq)
def softmax(x: TensorF32Cpu3D, dim: int, onnx_trace: bool = False) -> TensorF32Cpu3D:
    if onnx_trace:
        return F.softmax(x.float(), dim=dim)
    else:
        return F.softmax(x, dim=dim, dtype=torch.float32)


# fairseq — fairseq/modules/sinusoidal_positional_embedding.py, SinusoidalPositionalEmbedding.get_embedding
# (a staticmethod) (facebookresearch/fairseq)
def get_embedding(
    num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None
) -> TensorF32Cpu2D:
    """Build sinusoidal embeddings.

    This matches the implementation in tensor2tensor, but differs slightly
    from the description in Section 3.5 of "Attention Is All You Need".
    """
    half_dim = embedding_dim // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
    emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(
        1
    ) * emb.unsqueeze(0)
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(
        num_embeddings, -1
    )
    if embedding_dim % 2 == 1:
        # zero pad
        emb = torch.cat([emb, torch.zeros(num_embeddings, 1)], dim=1)
    if padding_idx is not None:
        emb[padding_idx, :] = 0
    return emb


INPUTS = {
    "layer_norm_ref": lambda: (
        torch.randn(2, 6, 16), torch.randn(16), torch.randn(16), torch.randn(2, 6, 16), 1e-6, False, True,
    ),
    "rms_norm_ref": lambda: (torch.randn(2, 6, 16), torch.randn(16), None, None, 1e-5, False, False),
    "segsum_unstable": lambda: (torch.randn(2, 3, 6),),
    "mamba_rms_norm": lambda: (torch.randn(2, 6, 16), torch.randn(16), 1e-5),
    "mamba_cache_update_conv_state": lambda: (torch.randn(2, 16, 4), torch.randn(2, 16, 1), torch.tensor([6]), 4),
    "mamba_mixer_slow_forward": lambda: (
        torch.randn(2, 6, 8),
        torch.tensor([[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1]]),
        torch.randn(32, 8) * 0.3,
        torch.randn(16, 1, 4) * 0.5, torch.randn(16),
        torch.randn(2 + 2 * 4, 16) * 0.3,
        torch.randn(16, 2) * 0.5, torch.randn(16),
        torch.log(torch.arange(1, 5, dtype=torch.float32)[None, :].expand(16, -1).contiguous()),
        torch.ones(16),
        torch.randn(8, 16) * 0.3,
        16, 4, 4, 2,
    ),
    "mamba_mixer_slow_forward_cached": lambda: (
        torch.randn(2, 1, 8),
        torch.randn(2, 16, 4),
        torch.randn(2, 16, 4),
        torch.tensor([6]),
        None,
        torch.randn(32, 8) * 0.3,
        torch.randn(16, 1, 4) * 0.5, torch.randn(16),
        torch.randn(2 + 2 * 4, 16) * 0.3,
        torch.randn(16, 2) * 0.5, torch.randn(16),
        torch.log(torch.arange(1, 5, dtype=torch.float32)[None, :].expand(16, -1).contiguous()),
        torch.ones(16),
        torch.randn(8, 16) * 0.3,
        16, 4, 4, 2, True,
    ),
    "llama2c_rmsnorm_norm": lambda: (torch.randn(2, 6, 16), 1e-5),
    "llama2c_rmsnorm": lambda: (torch.randn(2, 6, 16), torch.randn(16), 1e-5),
    "precompute_freqs_cis": lambda: (8, 10, 10000.0),
    "reshape_for_broadcast": lambda: (torch.randn(6, 4), torch.randn(2, 6, 4, 4)),
    "apply_rotary_emb": lambda: (torch.randn(2, 6, 4, 8), torch.randn(2, 6, 2, 8), torch.randn(6, 4), torch.randn(6, 4)),
    "repeat_kv": lambda: (torch.randn(2, 6, 2, 4), 2),
    "llama2c_attention": lambda: (
        torch.randn(2, 6, 16), torch.randn(6, 2), torch.randn(6, 2),
        torch.randn(16, 16), torch.randn(8, 16), torch.randn(8, 16), torch.randn(16, 16),
        torch.triu(torch.full((1, 1, 8, 8), float("-inf")), diagonal=1),
        4, 2, 2, 4,
    ),
    "llama2c_feed_forward": lambda: (torch.randn(2, 6, 16), torch.randn(32, 16), torch.randn(16, 32), torch.randn(32, 16)),
    "rotate_half": lambda: (torch.randn(2, 2, 6, 8),),
    "apply_rotary_pos_emb": lambda: (
        torch.randn(2, 2, 6, 4), torch.randn(2, 2, 6, 4), torch.randn(10, 4), torch.randn(10, 4),
        torch.tensor([[0, 1, 2, 3, 4, 5], [2, 3, 4, 5, 6, 7]]), 1,
    ),
    "gpt_neox_set_cos_sin_cache": lambda: (1.0 / (10000 ** (torch.arange(0, 4, 2, dtype=torch.int64).float() / 4)), 10),
    "gpt_neox_attn": lambda: (
        torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8),
        torch.cat([torch.zeros(2, 1, 1, 4), torch.full((2, 1, 1, 1), torch.finfo(torch.float32).min)], dim=-1),
        None,
        torch.tril(torch.ones((8, 8), dtype=torch.bool)).view(1, 1, 8, 8),
        8**-0.5,
    ),
    "roformer_apply_rotary_position_embeddings": lambda: (
        torch.randn(1, 1, 6, 8), torch.randn(2, 2, 6, 8), torch.randn(2, 2, 6, 8), torch.randn(2, 2, 6, 8),
    ),
    "roformer_sinusoidal_positional_embedding": lambda: ((2, 6), torch.randn(16, 8), 0, None),
    "make_positions": lambda: (torch.tensor([[5, 6, 7, 1, 1], [8, 9, 10, 11, 1]]), 1, False),
    "convert_padding_direction": lambda: (torch.tensor([[1, 1, 5, 6, 7], [8, 9, 10, 11, 12]]), 1, False, True),
    "softmax": lambda: (torch.randn(4, 5, 5), -1, False),
    "get_embedding": lambda: (10, 9, 1),
}
