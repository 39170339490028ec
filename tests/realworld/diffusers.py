"""Diffusers (huggingface/diffusers, Apache License 2.0) — src/diffusers/models/embeddings.py,
models/activations.py, models/attention.py, models/resnet.py and models/attention_processor.py.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters, `nn.Linear` / `nn.Conv2d` / `nn.GroupNorm` are `F.linear` / `F.conv2d` /
`F.group_norm`, the SiLU nonlinearity is `F.silu`, dropout is dropped, `Attention` helper
methods (`head_to_batch_dim`, `batch_to_head_dim`, `get_attention_scores`) are top-level
helpers taking the module attributes they read (`heads`, `scale`, `upcast_*`) as parameters,
no LoRA scale / PEFT arguments. Everything else is kept as the project writes it.
"""

import math

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
)


# Diffusers — src/diffusers/models/embeddings.py, get_timestep_embedding (huggingface/diffusers)
def get_timestep_embedding(
    timesteps: TensorF32Cpu1D,
    embedding_dim: int,
    flip_sin_to_cos: bool = False,
    downscale_freq_shift: float = 1,
    scale: float = 1,
    max_period: int = 10000,
) -> TensorF32Cpu2D:
    """
    This matches the implementation in Denoising Diffusion Probabilistic Models: Create sinusoidal timestep embeddings.
    """
    assert len(timesteps.shape) == 1, "Timesteps should be a 1d-array"

    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * torch.arange(
        start=0, end=half_dim, dtype=torch.float32, device=timesteps.device
    )
    exponent = exponent / (half_dim - downscale_freq_shift)

    emb = torch.exp(exponent)
    emb = timesteps[:, None].float() * emb[None, :]

    # scale embeddings
    emb = scale * emb

    # concat sine and cosine embeddings
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)

    # flip sine and cosine embeddings
    if flip_sin_to_cos:
        emb = torch.cat([emb[:, half_dim:], emb[:, :half_dim]], dim=-1)

    # zero pad
    if embedding_dim % 2 == 1:
        emb = torch.nn.functional.pad(emb, (0, 1, 0, 0))
    return emb


# Diffusers — src/diffusers/models/embeddings.py, Timesteps.forward (huggingface/diffusers)
def timesteps_forward(
    timesteps: TensorF32Cpu1D, num_channels: int, flip_sin_to_cos: bool, downscale_freq_shift: float, scale: float
) -> TensorF32Cpu2D:
    t_emb = get_timestep_embedding(
        timesteps,
        num_channels,
        flip_sin_to_cos=flip_sin_to_cos,
        downscale_freq_shift=downscale_freq_shift,
        scale=scale,
    )
    return t_emb


# Diffusers — src/diffusers/models/embeddings.py, TimestepEmbedding.forward (act_fn="silu", no condition, no post_act) (huggingface/diffusers)
def timestep_embedding(
    sample: TensorF32Cpu2D,
    linear_1_weight: TensorF32Cpu2D,
    linear_1_bias: TensorF32Cpu1D,
    linear_2_weight: TensorF32Cpu2D,
    linear_2_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    sample = F.linear(sample, linear_1_weight, linear_1_bias)

    sample = F.silu(sample)

    sample = F.linear(sample, linear_2_weight, linear_2_bias)

    return sample


# Diffusers — src/diffusers/models/activations.py, GEGLU.gelu (huggingface/diffusers)
def _geglu_gelu(gate: TensorF32Cpu3D) -> TensorF32Cpu3D:
    if gate.device.type != "mps":
        return F.gelu(gate)
    # mps: gelu is not implemented for float16
    return F.gelu(gate.to(dtype=torch.float32)).to(dtype=gate.dtype)


# Diffusers — src/diffusers/models/activations.py, GEGLU.forward (huggingface/diffusers)
def geglu(hidden_states: TensorF32Cpu3D, proj_weight: TensorF32Cpu2D, proj_bias: TensorF32Cpu1D) -> TensorF32Cpu3D:
    hidden_states, gate = F.linear(hidden_states, proj_weight, proj_bias).chunk(2, dim=-1)
    return hidden_states * _geglu_gelu(gate)


# Diffusers — src/diffusers/models/activations.py, ApproximateGELU.forward (huggingface/diffusers)
def approximate_gelu(x: TensorF32Cpu3D, proj_weight: TensorF32Cpu2D, proj_bias: TensorF32Cpu1D) -> TensorF32Cpu3D:
    x = F.linear(x, proj_weight, proj_bias)
    return x * torch.sigmoid(1.702 * x)


# Diffusers — src/diffusers/models/attention.py, FeedForward.forward (activation_fn="geglu": net = [GEGLU, Dropout, Linear]) (huggingface/diffusers)
def feed_forward(
    hidden_states: TensorF32Cpu3D,
    net_0_proj_weight: TensorF32Cpu2D,
    net_0_proj_bias: TensorF32Cpu1D,
    net_2_weight: TensorF32Cpu2D,
    net_2_bias: TensorF32Cpu1D,
) -> TensorF32Cpu3D:
    hidden_states = geglu(hidden_states, net_0_proj_weight, net_0_proj_bias)
    hidden_states = F.linear(hidden_states, net_2_weight, net_2_bias)
    return hidden_states


# Diffusers — src/diffusers/models/resnet.py, ResnetBlock2D.forward (time_embedding_norm="default", no up/down,
# conv_shortcut for in_channels != out_channels) (huggingface/diffusers)
def resnet_block_2d(
    input_tensor: TensorF32Cpu4D,
    temb: TensorF32Cpu2D,
    norm1_weight: TensorF32Cpu1D,
    norm1_bias: TensorF32Cpu1D,
    conv1_weight: TensorF32Cpu4D,
    conv1_bias: TensorF32Cpu1D,
    time_emb_proj_weight: TensorF32Cpu2D,
    time_emb_proj_bias: TensorF32Cpu1D,
    norm2_weight: TensorF32Cpu1D,
    norm2_bias: TensorF32Cpu1D,
    conv2_weight: TensorF32Cpu4D,
    conv2_bias: TensorF32Cpu1D,
    conv_shortcut_weight: TensorF32Cpu4D,
    conv_shortcut_bias: TensorF32Cpu1D,
    groups: int,
    groups_out: int,
    eps: float,
    skip_time_act: bool,
    output_scale_factor: float,
) -> TensorF32Cpu4D:
    hidden_states = input_tensor

    hidden_states = F.group_norm(hidden_states, groups, norm1_weight, norm1_bias, eps)
    hidden_states = F.silu(hidden_states)

    hidden_states = F.conv2d(hidden_states, conv1_weight, conv1_bias, stride=1, padding=1)

    if time_emb_proj_weight is not None:
        if not skip_time_act:
            temb = F.silu(temb)
        temb = F.linear(temb, time_emb_proj_weight, time_emb_proj_bias)[:, :, None, None]

    if temb is not None:
        hidden_states = hidden_states + temb

    hidden_states = F.group_norm(hidden_states, groups_out, norm2_weight, norm2_bias, eps)

    hidden_states = F.silu(hidden_states)

    hidden_states = F.conv2d(hidden_states, conv2_weight, conv2_bias, stride=1, padding=1)

    if conv_shortcut_weight is not None:
        input_tensor = F.conv2d(input_tensor, conv_shortcut_weight, conv_shortcut_bias, stride=1, padding=0)

    output_tensor = (input_tensor + hidden_states) / output_scale_factor

    return output_tensor


# Diffusers — src/diffusers/models/resnet.py, Upsample2D.forward (name="conv", no conv transpose) (huggingface/diffusers)
def upsample_2d(x: TensorF32Cpu4D, conv_weight: TensorF32Cpu4D, conv_bias: TensorF32Cpu1D, channels: int, use_conv: bool) -> TensorF32Cpu4D:
    assert x.shape[1] == channels

    x = F.interpolate(x, scale_factor=2.0, mode="nearest")

    if use_conv:
        x = F.conv2d(x, conv_weight, conv_bias, padding=1)

    return x


# Diffusers — src/diffusers/models/resnet.py, Downsample2D.forward (use_conv=True, name="conv") (huggingface/diffusers)
def downsample_2d(x: TensorF32Cpu4D, conv_weight: TensorF32Cpu4D, conv_bias: TensorF32Cpu1D, channels: int, padding: int) -> TensorF32Cpu4D:
    assert x.shape[1] == channels
    if padding == 0:
        pad = (0, 1, 0, 1)
        x = F.pad(x, pad, mode="constant", value=0)

    return F.conv2d(x, conv_weight, conv_bias, stride=2, padding=padding)


# Diffusers — src/diffusers/models/attention_processor.py, Attention.head_to_batch_dim (huggingface/diffusers)
def head_to_batch_dim(tensor: TensorF32Cpu3D, heads: int, out_dim: int) -> TensorF32Cpu3D:
    head_size = heads
    batch_size, seq_len, dim = tensor.shape
    tensor = tensor.reshape(batch_size, seq_len, head_size, dim // head_size)
    tensor = tensor.permute(0, 2, 1, 3)

    if out_dim == 3:
        tensor = tensor.reshape(batch_size * head_size, seq_len, dim // head_size)

    return tensor


# Diffusers — src/diffusers/models/attention_processor.py, Attention.batch_to_head_dim (huggingface/diffusers)
def batch_to_head_dim(tensor: TensorF32Cpu3D, heads: int) -> TensorF32Cpu3D:
    head_size = heads
    batch_size, seq_len, dim = tensor.shape
    tensor = tensor.reshape(batch_size // head_size, head_size, seq_len, dim)
    tensor = tensor.permute(0, 2, 1, 3).reshape(batch_size // head_size, seq_len, dim * head_size)
    return tensor


# Diffusers — src/diffusers/models/attention_processor.py, Attention.get_attention_scores (attention_mask is None) (huggingface/diffusers)
def get_attention_scores(
    query: TensorF32Cpu3D, key: TensorF32Cpu3D, scale: float, upcast_attention: bool, upcast_softmax: bool
) -> TensorF32Cpu3D:
    dtype = query.dtype
    if upcast_attention:
        query = query.float()
        key = key.float()

    baddbmm_input = torch.empty(
        query.shape[0], query.shape[1], key.shape[1], dtype=query.dtype, device=query.device
    )
    beta = 0

    attention_scores = torch.baddbmm(
        baddbmm_input,
        query,
        key.transpose(-1, -2),
        beta=beta,
        alpha=scale,
    )
    del baddbmm_input

    if upcast_softmax:
        attention_scores = attention_scores.float()

    attention_probs = attention_scores.softmax(dim=-1)
    del attention_scores

    attention_probs = attention_probs.to(dtype)

    return attention_probs


# Diffusers — src/diffusers/models/attention_processor.py, AttnProcessor.__call__ (3-D input, cross-attention,
# no mask / group norm / spatial norm / norm_cross) (huggingface/diffusers)
def attn_processor(
    hidden_states: TensorF32Cpu3D,
    encoder_hidden_states: TensorF32Cpu3D,
    to_q_weight: TensorF32Cpu2D,
    to_k_weight: TensorF32Cpu2D,
    to_v_weight: TensorF32Cpu2D,
    to_out_0_weight: TensorF32Cpu2D,
    to_out_0_bias: TensorF32Cpu1D,
    heads: int,
    scale: float,
    residual_connection: bool,
    rescale_output_factor: float,
) -> TensorF32Cpu3D:
    residual = hidden_states

    query = F.linear(hidden_states, to_q_weight)

    key = F.linear(encoder_hidden_states, to_k_weight)
    value = F.linear(encoder_hidden_states, to_v_weight)

    query = head_to_batch_dim(query, heads, 3)
    key = head_to_batch_dim(key, heads, 3)
    value = head_to_batch_dim(value, heads, 3)

    attention_probs = get_attention_scores(query, key, scale, False, False)
    hidden_states = torch.bmm(attention_probs, value)
    hidden_states = batch_to_head_dim(hidden_states, heads)

    # linear proj
    hidden_states = F.linear(hidden_states, to_out_0_weight, to_out_0_bias)

    if residual_connection:
        hidden_states = hidden_states + residual

    hidden_states = hidden_states / rescale_output_factor

    return hidden_states


INPUTS = {
    "get_timestep_embedding": lambda: (torch.tensor([1.0, 250.0, 999.0]), 16, True, 0.0, 1.0, 10000),
    "timesteps_forward": lambda: (torch.tensor([1.0, 250.0, 999.0]), 16, True, 0.0, 1.0),
    "timestep_embedding": lambda: (torch.randn(3, 16), torch.randn(64, 16), torch.randn(64), torch.randn(64, 64), torch.randn(64)),
    "_geglu_gelu": lambda: (torch.randn(2, 5, 16),),
    "geglu": lambda: (torch.randn(2, 5, 16), torch.randn(64, 16), torch.randn(64)),
    "approximate_gelu": lambda: (torch.randn(2, 5, 16), torch.randn(32, 16), torch.randn(32)),
    "feed_forward": lambda: (torch.randn(2, 5, 16), torch.randn(128, 16), torch.randn(128), torch.randn(16, 64), torch.randn(16)),
    "resnet_block_2d": lambda: (
        torch.randn(2, 8, 6, 6), torch.randn(2, 32),
        torch.randn(8), torch.randn(8),
        torch.randn(16, 8, 3, 3), torch.randn(16),
        torch.randn(16, 32), torch.randn(16),
        torch.randn(16), torch.randn(16),
        torch.randn(16, 16, 3, 3), torch.randn(16),
        torch.randn(16, 8, 1, 1), torch.randn(16),
        4, 4, 1e-6, False, 1.0,
    ),
    "upsample_2d": lambda: (torch.randn(2, 8, 4, 4), torch.randn(8, 8, 3, 3), torch.randn(8), 8, True),
    "downsample_2d": lambda: (torch.randn(2, 8, 8, 8), torch.randn(8, 8, 3, 3), torch.randn(8), 8, 1),
    "head_to_batch_dim": lambda: (torch.randn(2, 5, 16), 2, 3),
    "batch_to_head_dim": lambda: (torch.randn(4, 5, 8), 2),
    "get_attention_scores": lambda: (torch.randn(4, 5, 8), torch.randn(4, 7, 8), 8 ** -0.5, False, False),
    "attn_processor": lambda: (
        torch.randn(2, 5, 16), torch.randn(2, 7, 24),
        torch.randn(16, 16), torch.randn(16, 24), torch.randn(16, 24), torch.randn(16, 16), torch.randn(16),
        2, 8 ** -0.5, False, 1.0,
    ),
}
