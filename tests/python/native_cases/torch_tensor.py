"""Functions annotated as real projects annotate them: `torch.Tensor` parameters and returns,
tuples of tensors, helpers annotated the same way (Transformers' Llama rotary helpers and
RMSNorm, written as `modeling_llama.py` writes them, the module's weight as a parameter)."""

from typing import Optional, Tuple

import torch


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


def maybe_scaled(x: torch.Tensor, scale: float) -> Optional[torch.Tensor]:
    return x * scale


def says_a_pair_returns_one(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    # Python does not check annotations; the analyzer does (TL401), and the function runs as Python
    return x.relu()
