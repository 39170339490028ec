"""Hugging Face Transformers (huggingface/transformers, Apache License 2.0) — Llama:
src/transformers/models/llama/modeling_llama.py (eager attention path).

Forward paths rewritten as annotated top-level functions: module weights (and the `inv_freq`
buffer) are explicit parameters, `nn.Linear` calls are `F.linear` (attention_bias=False,
mlp_bias=False), `ACT2FN["silu"]` is `F.silu`, dropout is dropped, the rope type is the
default one, there is no KV cache. Everything else is kept as the project writes it.
"""

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu2D,
)


# Transformers — src/transformers/models/llama/modeling_llama.py, LlamaRMSNorm.forward (huggingface/transformers)
def llama_rms_norm(hidden_states: TensorF32Cpu3D, weight: TensorF32Cpu1D, variance_epsilon: float) -> TensorF32Cpu3D:
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.float32)
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + variance_epsilon)
    return weight * hidden_states.to(input_dtype)


# Transformers — src/transformers/models/llama/modeling_llama.py, LlamaRotaryEmbedding.forward (default rope) (huggingface/transformers)
def llama_rotary_embedding(
    x: TensorF32Cpu3D, position_ids: TensorI64Cpu2D, inv_freq: TensorF32Cpu1D, attention_scaling: float
) -> tuple[TensorF32Cpu3D, TensorF32Cpu3D]:
    # Core RoPE block
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    # Force float32 (see https://github.com/huggingface/transformers/pull/29285)
    device_type = x.device.type
    device_type = device_type if isinstance(device_type, str) and device_type != "mps" else "cpu"
    with torch.autocast(device_type=device_type, enabled=False):
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos()
        sin = emb.sin()

    # Advanced RoPE types (e.g. yarn) apply a post-processing scaling factor, equivalent to scaling attention
    cos = cos * attention_scaling
    sin = sin * attention_scaling

    return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


# Transformers — src/transformers/models/llama/modeling_llama.py, rotate_half (huggingface/transformers)
def rotate_half(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


# Transformers — src/transformers/models/llama/modeling_llama.py, apply_rotary_pos_emb (huggingface/transformers)
def apply_rotary_pos_emb(
    q: TensorF32Cpu4D, k: TensorF32Cpu4D, cos: TensorF32Cpu3D, sin: TensorF32Cpu3D, unsqueeze_dim: int
) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D]:
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


# Transformers — src/transformers/models/llama/modeling_llama.py, LlamaMLP.forward (hidden_act="silu") (huggingface/transformers)
def llama_mlp(
    x: TensorF32Cpu3D, gate_proj_weight: TensorF32Cpu2D, up_proj_weight: TensorF32Cpu2D, down_proj_weight: TensorF32Cpu2D
) -> TensorF32Cpu3D:
    down_proj = F.linear(F.silu(F.linear(x, gate_proj_weight)) * F.linear(x, up_proj_weight), down_proj_weight)
    return down_proj


# Transformers — src/transformers/models/llama/modeling_llama.py, repeat_kv (huggingface/transformers)
def repeat_kv(hidden_states: TensorF32Cpu4D, n_rep: int) -> TensorF32Cpu4D:
    """
    This is the equivalent of torch.repeat_interleave(x, dim=1, repeats=n_rep). The hidden states go from (batch,
    num_key_value_heads, seqlen, head_dim) to (batch, num_attention_heads, seqlen, head_dim)
    """
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


# Transformers — src/transformers/models/llama/modeling_llama.py, eager_attention_forward (huggingface/transformers)
def eager_attention_forward(
    query: TensorF32Cpu4D,
    key: TensorF32Cpu4D,
    value: TensorF32Cpu4D,
    attention_mask: TensorF32Cpu4D,
    scaling: float,
    num_key_value_groups: int,
) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D]:
    key_states = repeat_kv(key, num_key_value_groups)
    value_states = repeat_kv(value, num_key_value_groups)

    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask

    attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()

    return attn_output, attn_weights


# Transformers — src/transformers/models/llama/modeling_llama.py, LlamaAttention.forward (eager, no cache) (huggingface/transformers)
def llama_attention(
    hidden_states: TensorF32Cpu3D,
    cos: TensorF32Cpu3D,
    sin: TensorF32Cpu3D,
    attention_mask: TensorF32Cpu4D,
    q_proj_weight: TensorF32Cpu2D,
    k_proj_weight: TensorF32Cpu2D,
    v_proj_weight: TensorF32Cpu2D,
    o_proj_weight: TensorF32Cpu2D,
    head_dim: int,
    num_key_value_groups: int,
) -> tuple[TensorF32Cpu3D, TensorF32Cpu4D]:
    scaling = head_dim**-0.5  # LlamaAttention.__init__: self.scaling = self.head_dim**-0.5
    input_shape = hidden_states.shape[:-1]
    hidden_shape = (*input_shape, -1, head_dim)

    query_states = F.linear(hidden_states, q_proj_weight).view(hidden_shape).transpose(1, 2)
    key_states = F.linear(hidden_states, k_proj_weight).view(hidden_shape).transpose(1, 2)
    value_states = F.linear(hidden_states, v_proj_weight).view(hidden_shape).transpose(1, 2)

    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin, 1)

    attn_output, attn_weights = eager_attention_forward(
        query_states,
        key_states,
        value_states,
        attention_mask,
        scaling,
        num_key_value_groups,
    )

    attn_output = attn_output.reshape(*input_shape, -1).contiguous()
    attn_output = F.linear(attn_output, o_proj_weight)
    return attn_output, attn_weights


# Transformers — src/transformers/models/llama/modeling_llama.py, LlamaDecoderLayer.forward (huggingface/transformers)
def llama_decoder_layer(
    hidden_states: TensorF32Cpu3D,
    cos: TensorF32Cpu3D,
    sin: TensorF32Cpu3D,
    attention_mask: TensorF32Cpu4D,
    input_layernorm_weight: TensorF32Cpu1D,
    q_proj_weight: TensorF32Cpu2D,
    k_proj_weight: TensorF32Cpu2D,
    v_proj_weight: TensorF32Cpu2D,
    o_proj_weight: TensorF32Cpu2D,
    post_attention_layernorm_weight: TensorF32Cpu1D,
    gate_proj_weight: TensorF32Cpu2D,
    up_proj_weight: TensorF32Cpu2D,
    down_proj_weight: TensorF32Cpu2D,
    head_dim: int,
    num_key_value_groups: int,
    rms_norm_eps: float,
) -> TensorF32Cpu3D:
    residual = hidden_states

    hidden_states = llama_rms_norm(hidden_states, input_layernorm_weight, rms_norm_eps)

    # Self Attention
    hidden_states, self_attn_weights = llama_attention(
        hidden_states, cos, sin, attention_mask,
        q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight,
        head_dim, num_key_value_groups,
    )
    hidden_states = residual + hidden_states

    # Fully Connected
    residual = hidden_states
    hidden_states = llama_rms_norm(hidden_states, post_attention_layernorm_weight, rms_norm_eps)
    hidden_states = llama_mlp(hidden_states, gate_proj_weight, up_proj_weight, down_proj_weight)
    hidden_states = residual + hidden_states

    return hidden_states


INPUTS = {
    "llama_rms_norm": lambda: (torch.randn(2, 5, 16), torch.randn(16), 1e-6),
    "llama_rotary_embedding": lambda: (
        torch.randn(2, 5, 16), torch.arange(5).unsqueeze(0).expand(2, -1),
        1.0 / (10000.0 ** (torch.arange(0, 8, 2).float() / 8)), 1.0,
    ),
    "rotate_half": lambda: (torch.randn(2, 4, 5, 8),),
    "apply_rotary_pos_emb": lambda: (torch.randn(2, 4, 5, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 8), 1),
    "llama_mlp": lambda: (torch.randn(2, 5, 16), torch.randn(48, 16), torch.randn(48, 16), torch.randn(16, 48)),
    "repeat_kv": lambda: (torch.randn(2, 2, 5, 8), 2),
    "eager_attention_forward": lambda: (
        torch.randn(2, 4, 5, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8),
        torch.triu(torch.full((5, 5), float("-inf")), diagonal=1)[None, None].expand(2, 1, 5, 5),
        8 ** -0.5, 2,
    ),
    "llama_attention": lambda: (
        torch.randn(2, 5, 32), torch.randn(2, 5, 8), torch.randn(2, 5, 8),
        torch.triu(torch.full((5, 5), float("-inf")), diagonal=1)[None, None].expand(2, 1, 5, 5),
        torch.randn(32, 32), torch.randn(16, 32), torch.randn(16, 32), torch.randn(32, 32),
        8, 2,
    ),
    "llama_decoder_layer": lambda: (
        torch.randn(2, 5, 32), torch.randn(2, 5, 8), torch.randn(2, 5, 8),
        torch.triu(torch.full((5, 5), float("-inf")), diagonal=1)[None, None].expand(2, 1, 5, 5),
        torch.randn(32),
        torch.randn(32, 32), torch.randn(16, 32), torch.randn(16, 32), torch.randn(32, 32),
        torch.randn(32),
        torch.randn(64, 32), torch.randn(64, 32), torch.randn(32, 64),
        8, 2, 1e-6,
    ),
}
