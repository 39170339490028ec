"""Llama 2 reference implementation (meta-llama/llama, Llama 2 Community License) —
llama/model.py and llama/generation.py.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters (the fairscale Column/RowParallelLinear layers, run unsharded, are `F.linear`
without bias; ParallelEmbedding is `F.embedding`). Everything else is kept as the project
writes it. The complex-valued rotary embedding (`apply_rotary_emb` on complex64
`freqs_cis`) has no annotation marker and is not included.
"""

import math

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorBoolCpu1D,
    TensorBoolCpu2D,
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu2D,
)


# Llama 2 — llama/model.py, RMSNorm._norm (meta-llama/llama)
def _norm(x: TensorF32Cpu3D, eps: float) -> TensorF32Cpu3D:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


# Llama 2 — llama/model.py, RMSNorm.forward (meta-llama/llama)
def rms_norm(x: TensorF32Cpu3D, weight: TensorF32Cpu1D, eps: float) -> TensorF32Cpu3D:
    output = _norm(x.float(), eps).type_as(x)
    return output * weight


# Llama 2 — llama/model.py, repeat_kv (meta-llama/llama)
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


# Llama 2 — llama/model.py, FeedForward.forward (SwiGLU) (meta-llama/llama)
def feed_forward(x: TensorF32Cpu3D, w1: TensorF32Cpu2D, w2: TensorF32Cpu2D, w3: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2)


# Llama 2 — llama/model.py, Attention.forward after apply_rotary_emb: KV-cache update, GQA repeat,
# scaled scores + mask, softmax, output projection (meta-llama/llama)
def attention_from_rotated(
    xq: TensorF32Cpu4D,
    xk: TensorF32Cpu4D,
    xv: TensorF32Cpu4D,
    cache_k: TensorF32Cpu4D,
    cache_v: TensorF32Cpu4D,
    mask: TensorF32Cpu4D,
    wo: TensorF32Cpu2D,
    start_pos: int,
    n_rep: int,
    head_dim: int,
) -> TensorF32Cpu3D:
    bsz, seqlen, _, _ = xq.shape

    cache_k = cache_k.to(xq)
    cache_v = cache_v.to(xq)

    cache_k[:bsz, start_pos : start_pos + seqlen] = xk
    cache_v[:bsz, start_pos : start_pos + seqlen] = xv

    keys = cache_k[:bsz, : start_pos + seqlen]
    values = cache_v[:bsz, : start_pos + seqlen]

    # repeat k/v heads if n_kv_heads < n_heads
    keys = repeat_kv(keys, n_rep)  # (bs, seqlen, n_local_heads, head_dim)
    values = repeat_kv(values, n_rep)  # (bs, seqlen, n_local_heads, head_dim)

    xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
    keys = keys.transpose(1, 2)
    values = values.transpose(1, 2)
    scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(head_dim)
    if mask is not None:
        scores = scores + mask  # (bs, n_local_heads, seqlen, cache_len + seqlen)
    scores = F.softmax(scores.float(), dim=-1).type_as(xq)
    output = torch.matmul(scores, values)  # (bs, n_local_heads, seqlen, head_dim)
    output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
    return F.linear(output, wo)


# Llama 2 — llama/model.py, Transformer.forward, token embedding + causal mask (meta-llama/llama)
def embed_and_mask(
    tokens: TensorI64Cpu2D, tok_embeddings: TensorF32Cpu2D, start_pos: int
) -> tuple[TensorF32Cpu3D, TensorF32Cpu4D]:
    _bsz, seqlen = tokens.shape
    h = F.embedding(tokens, tok_embeddings)

    mask = None
    if seqlen > 1:
        mask = torch.full(
            (1, 1, seqlen, seqlen), float("-inf"), device=tokens.device
        )
        mask = torch.triu(mask, diagonal=start_pos + 1).type_as(h)
    return h, mask


# Llama 2 — llama/model.py, Transformer.forward, final norm + output projection (meta-llama/llama)
def output_logits(h: TensorF32Cpu3D, norm_weight: TensorF32Cpu1D, output_weight: TensorF32Cpu2D, norm_eps: float) -> TensorF32Cpu3D:
    h = rms_norm(h, norm_weight, norm_eps)
    output = F.linear(h, output_weight).float()
    return output


# Llama 2 — llama/generation.py, Llama.generate, prompt log-probs when min_prompt_len == total_len (meta-llama/llama)
def prompt_logprobs(logits: TensorF32Cpu3D, tokens: TensorI64Cpu2D, pad_id: int) -> TensorF32Cpu2D:
    token_logprobs = -F.cross_entropy(
        input=logits.transpose(1, 2),
        target=tokens,
        reduction="none",
        ignore_index=pad_id,
    )
    return token_logprobs


# Llama 2 — llama/generation.py, Llama.generate, one greedy (temperature == 0) decoding step (meta-llama/llama)
def greedy_step(
    logits: TensorF32Cpu3D,
    tokens: TensorI64Cpu2D,
    input_text_mask: TensorBoolCpu2D,
    eos_reached: TensorBoolCpu1D,
    cur_pos: int,
    eos_id: int,
) -> tuple[TensorI64Cpu2D, TensorBoolCpu1D]:
    next_token = torch.argmax(logits[:, -1], dim=-1)

    next_token = next_token.reshape(-1)
    # only replace token if prompt has already been generated
    next_token = torch.where(
        input_text_mask[:, cur_pos], tokens[:, cur_pos], next_token
    )
    tokens[:, cur_pos] = next_token
    eos_reached |= (~input_text_mask[:, cur_pos]) & (
        next_token == eos_id
    )
    return tokens, eos_reached


INPUTS = {
    "_norm": lambda: (torch.randn(2, 5, 16), 1e-5),
    "rms_norm": lambda: (torch.randn(2, 5, 16), torch.randn(16), 1e-5),
    "repeat_kv": lambda: (torch.randn(2, 5, 2, 8), 2),
    "feed_forward": lambda: (torch.randn(2, 5, 16), torch.randn(48, 16), torch.randn(16, 48), torch.randn(48, 16)),
    "attention_from_rotated": lambda: (
        torch.randn(2, 5, 4, 8), torch.randn(2, 5, 2, 8), torch.randn(2, 5, 2, 8),
        torch.zeros(4, 16, 2, 8), torch.zeros(4, 16, 2, 8),
        torch.triu(torch.full((1, 1, 5, 7), float("-inf")), diagonal=3),
        torch.randn(32, 32), 2, 2, 8,
    ),
    "embed_and_mask": lambda: (torch.randint(0, 50, (2, 5)), torch.randn(50, 16), 0),
    "output_logits": lambda: (torch.randn(2, 5, 16), torch.randn(16), torch.randn(50, 16), 1e-5),
    "prompt_logprobs": lambda: (torch.randn(2, 5, 50), torch.randint(0, 50, (2, 5)), 0),
    "greedy_step": lambda: (
        torch.randn(2, 4, 50),
        torch.cat([torch.randint(1, 50, (2, 4)), torch.zeros(2, 4, dtype=torch.long)], dim=1),
        torch.cat([torch.ones(2, 4, dtype=torch.bool), torch.zeros(2, 4, dtype=torch.bool)], dim=1),
        torch.zeros(2, dtype=torch.bool),
        4,
        2,
    ),
}
