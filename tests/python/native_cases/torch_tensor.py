"""Functions annotated as real projects annotate them: `torch.Tensor` parameters and returns,
tuples of tensors, helpers annotated the same way (Transformers' Llama rotary helpers and
RMSNorm, written as `modeling_llama.py` writes them, the module's weight as a parameter)."""

from typing import Optional, Tuple

import torch
from torch import nn


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, unsqueeze_dim: int = 1
) -> Tuple[torch.Tensor, torch.Tensor]:
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def rms_norm(hidden_states: torch.Tensor, weight: torch.Tensor, variance_epsilon: float = 1e-6) -> torch.Tensor:
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.float32)
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + variance_epsilon)
    return weight * hidden_states.to(input_dtype)


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def eager_attention_forward(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Optional[torch.Tensor],
    scaling: float,
    dropout: float = 0.0,
    num_key_value_groups: int = 1,
):
    # as modeling_llama.py writes it, less the module argument (`module.num_key_value_groups`,
    # `module.training` are parameters here)
    key_states = repeat_kv(key, num_key_value_groups)
    value_states = repeat_kv(value, num_key_value_groups)

    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask

    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=False)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()

    return attn_output, attn_weights


def linear_maybe_bias(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None, scale=None):
    out = nn.functional.linear(x, weight, bias)
    if scale is not None:
        out = out * scale
    return out


def maybe_scaled(x: torch.Tensor, scale: float) -> Optional[torch.Tensor]:
    return x * scale


def says_a_pair_returns_one(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    # Python does not check annotations; the analyzer does (TL401), and the function runs as Python
    return x.relu()


# diffusers — Attention.head_to_batch_dim as written: the return rank depends on `out_dim`
# (the first `return` fixes the specialisation's type; the other path is refused, TL404)
def head_to_batch_dim(tensor: torch.Tensor, heads: int, out_dim: int = 3) -> torch.Tensor:
    head_size = heads
    if tensor.ndim == 3:
        batch_size, seq_len, dim = tensor.shape
        extra_dim = 1
    else:
        batch_size, extra_dim, seq_len, dim = tensor.shape
    tensor = tensor.reshape(batch_size, seq_len * extra_dim, head_size, dim // head_size)
    tensor = tensor.permute(0, 2, 1, 3)

    if out_dim == 3:
        tensor = tensor.reshape(batch_size * head_size, seq_len * extra_dim, dim // head_size)

    return tensor
