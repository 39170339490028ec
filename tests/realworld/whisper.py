"""Whisper (openai/whisper, MIT License) — whisper/model.py.

Forward paths rewritten as annotated top-level functions: module weights (and the
`positional_embedding` buffer / parameter) are explicit parameters, Whisper's LayerNorm /
Linear / Conv1d subclasses keep their dtype casts, the `nn.Sequential(Linear, GELU, Linear)`
MLP is written out, the attention is the manual (non-SDPA) branch of `qkv_attention`, there is
no KV cache. Everything else is kept as the project writes it.
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


# Whisper — whisper/model.py, LayerNorm.forward (openai/whisper)
def layer_norm(x: TensorF32Cpu3D, weight: TensorF32Cpu1D, bias: TensorF32Cpu1D, n_state: int) -> TensorF32Cpu3D:
    return F.layer_norm(x.float(), (n_state,), weight, bias, 1e-5).type(x.dtype)


# Whisper — whisper/model.py, Linear.forward (openai/whisper)
def linear(x: TensorF32Cpu3D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.linear(
        x,
        weight.to(x.dtype),
        None if bias is None else bias.to(x.dtype),
    )


# Whisper — whisper/model.py, MultiHeadAttention.qkv_attention, manual branch (openai/whisper)
def qkv_attention(
    q: TensorF32Cpu3D, k: TensorF32Cpu3D, v: TensorF32Cpu3D, mask: TensorF32Cpu2D, n_head: int
) -> tuple[TensorF32Cpu3D, TensorF32Cpu4D]:
    n_batch, n_ctx, n_state = q.shape
    scale = (n_state // n_head) ** -0.25
    q = q.view(*q.shape[:2], n_head, -1).permute(0, 2, 1, 3)
    k = k.view(*k.shape[:2], n_head, -1).permute(0, 2, 1, 3)
    v = v.view(*v.shape[:2], n_head, -1).permute(0, 2, 1, 3)

    qk = (q * scale) @ (k * scale).transpose(-1, -2)
    if mask is not None:
        qk = qk + mask[:n_ctx, :n_ctx]
    qk = qk.float()

    w = F.softmax(qk, dim=-1).to(q.dtype)
    out = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
    qk = qk.detach()

    return out, qk


# Whisper — whisper/model.py, MultiHeadAttention.forward, self-attention without KV cache (openai/whisper)
def multi_head_attention(
    x: TensorF32Cpu3D,
    mask: TensorF32Cpu2D,
    query_weight: TensorF32Cpu2D,
    query_bias: TensorF32Cpu1D,
    key_weight: TensorF32Cpu2D,
    value_weight: TensorF32Cpu2D,
    value_bias: TensorF32Cpu1D,
    out_weight: TensorF32Cpu2D,
    out_bias: TensorF32Cpu1D,
    n_head: int,
) -> tuple[TensorF32Cpu3D, TensorF32Cpu4D]:
    q = linear(x, query_weight, query_bias)

    # self.key is Linear(n_state, n_state, bias=False)
    k = F.linear(x, key_weight.to(x.dtype), None)
    v = linear(x, value_weight, value_bias)

    wv, qk = qkv_attention(q, k, v, mask, n_head)
    return linear(wv, out_weight, out_bias), qk


# Whisper — whisper/model.py, ResidualAttentionBlock.forward, decoder self-attention + MLP
# (cross-attention sub-block not included) (openai/whisper)
def residual_attention_block(
    x: TensorF32Cpu3D,
    mask: TensorF32Cpu2D,
    attn_ln_weight: TensorF32Cpu1D,
    attn_ln_bias: TensorF32Cpu1D,
    query_weight: TensorF32Cpu2D,
    query_bias: TensorF32Cpu1D,
    key_weight: TensorF32Cpu2D,
    value_weight: TensorF32Cpu2D,
    value_bias: TensorF32Cpu1D,
    out_weight: TensorF32Cpu2D,
    out_bias: TensorF32Cpu1D,
    mlp_ln_weight: TensorF32Cpu1D,
    mlp_ln_bias: TensorF32Cpu1D,
    mlp_0_weight: TensorF32Cpu2D,
    mlp_0_bias: TensorF32Cpu1D,
    mlp_2_weight: TensorF32Cpu2D,
    mlp_2_bias: TensorF32Cpu1D,
    n_state: int,
    n_head: int,
) -> TensorF32Cpu3D:
    x = x + multi_head_attention(
        layer_norm(x, attn_ln_weight, attn_ln_bias, n_state), mask,
        query_weight, query_bias, key_weight, value_weight, value_bias, out_weight, out_bias, n_head,
    )[0]
    x = x + linear(F.gelu(linear(layer_norm(x, mlp_ln_weight, mlp_ln_bias, n_state), mlp_0_weight, mlp_0_bias)), mlp_2_weight, mlp_2_bias)
    return x


# Whisper — whisper/model.py, AudioEncoder.forward, convolutional stem + positional embedding (openai/whisper)
def audio_encoder_stem(
    x: TensorF32Cpu3D,
    conv1_weight: TensorF32Cpu3D,
    conv1_bias: TensorF32Cpu1D,
    conv2_weight: TensorF32Cpu3D,
    conv2_bias: TensorF32Cpu1D,
    positional_embedding: TensorF32Cpu2D,
) -> TensorF32Cpu3D:
    """
    x : torch.Tensor, shape = (batch_size, n_mels, n_ctx)
        the mel spectrogram of the audio
    """
    x = F.gelu(F.conv1d(x, conv1_weight.to(x.dtype), conv1_bias.to(x.dtype), padding=1))
    x = F.gelu(F.conv1d(x, conv2_weight.to(x.dtype), conv2_bias.to(x.dtype), stride=2, padding=1))
    x = x.permute(0, 2, 1)

    assert x.shape[1:] == positional_embedding.shape, "incorrect audio shape"
    x = (x + positional_embedding).to(x.dtype)
    return x


# Whisper — whisper/model.py, TextDecoder.forward, token + positional embedding (openai/whisper)
def text_decoder_embed(
    x: TensorI64Cpu2D,
    xa: TensorF32Cpu3D,
    token_embedding: TensorF32Cpu2D,
    positional_embedding: TensorF32Cpu2D,
    offset: int,
) -> TensorF32Cpu3D:
    """
    x : torch.LongTensor, shape = (batch_size, <= n_ctx)
        the text tokens
    xa : torch.Tensor, shape = (batch_size, n_audio_ctx, n_audio_state)
        the encoded audio features to be attended on
    """
    x = (
        F.embedding(x, token_embedding)
        + positional_embedding[offset : offset + x.shape[-1]]
    )
    x = x.to(xa.dtype)
    return x


# Whisper — whisper/model.py, TextDecoder.forward, final LayerNorm + tied-embedding logits (openai/whisper)
def text_decoder_logits(
    x: TensorF32Cpu3D, ln_weight: TensorF32Cpu1D, ln_bias: TensorF32Cpu1D, token_embedding: TensorF32Cpu2D, n_state: int
) -> TensorF32Cpu3D:
    x = layer_norm(x, ln_weight, ln_bias, n_state)
    logits = (
        x @ torch.transpose(token_embedding.to(x.dtype), 0, 1)
    ).float()

    return logits


INPUTS = {
    "layer_norm": lambda: (torch.randn(2, 5, 16), torch.randn(16), torch.randn(16), 16),
    "linear": lambda: (torch.randn(2, 5, 16), torch.randn(32, 16), torch.randn(32)),
    "qkv_attention": lambda: (
        torch.randn(2, 5, 16), torch.randn(2, 5, 16), torch.randn(2, 5, 16),
        torch.empty(8, 8).fill_(float("-inf")).triu_(1), 2,
    ),
    "multi_head_attention": lambda: (
        torch.randn(2, 5, 16), torch.empty(8, 8).fill_(float("-inf")).triu_(1),
        torch.randn(16, 16), torch.randn(16), torch.randn(16, 16), torch.randn(16, 16), torch.randn(16),
        torch.randn(16, 16), torch.randn(16), 2,
    ),
    "residual_attention_block": lambda: (
        torch.randn(2, 5, 16), torch.empty(8, 8).fill_(float("-inf")).triu_(1),
        torch.randn(16), torch.randn(16),
        torch.randn(16, 16), torch.randn(16), torch.randn(16, 16), torch.randn(16, 16), torch.randn(16),
        torch.randn(16, 16), torch.randn(16),
        torch.randn(16), torch.randn(16),
        torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16),
        16, 2,
    ),
    "audio_encoder_stem": lambda: (
        torch.randn(2, 8, 20), torch.randn(16, 8, 3), torch.randn(16), torch.randn(16, 16, 3), torch.randn(16),
        torch.randn(10, 16),
    ),
    "text_decoder_embed": lambda: (torch.randint(0, 50, (2, 5)), torch.randn(2, 10, 16), torch.randn(50, 16), torch.randn(8, 16), 1),
    "text_decoder_logits": lambda: (torch.randn(2, 5, 16), torch.randn(16), torch.randn(16), torch.randn(50, 16), 16),
}
