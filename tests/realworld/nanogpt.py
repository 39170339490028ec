"""nanoGPT (karpathy/nanoGPT, MIT License) — model.py and the sampling loop of GPT.generate.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters, registered buffers (the causal mask `bias`) are explicit parameters, the
`nn.Dropout` modules are what they run in eval mode (`F.dropout(x, dropout, training=False)`,
`dropout` the config's rate). Everything else is kept as the project writes it.
"""

import math

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu2D,
)


# nanoGPT — model.py, LayerNorm.forward (karpathy/nanoGPT)
def layer_norm(input: TensorF32Cpu3D, weight: TensorF32Cpu1D, bias: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.layer_norm(input, weight.shape, weight, bias, 1e-5)


# nanoGPT — model.py, CausalSelfAttention.forward, manual (non-flash) path (karpathy/nanoGPT)
def causal_self_attention(
    x: TensorF32Cpu3D,
    c_attn_weight: TensorF32Cpu2D,
    c_attn_bias: TensorF32Cpu1D,
    c_proj_weight: TensorF32Cpu2D,
    c_proj_bias: TensorF32Cpu1D,
    bias: TensorF32Cpu4D,
    n_head: int,
    n_embd: int,
    dropout: float = 0.0,
) -> TensorF32Cpu3D:
    B, T, C = x.size() # batch size, sequence length, embedding dimensionality (n_embd)

    # calculate query, key, values for all heads in batch and move head forward to be the batch dim
    q, k, v  = F.linear(x, c_attn_weight, c_attn_bias).split(n_embd, dim=2)
    k = k.view(B, T, n_head, C // n_head).transpose(1, 2) # (B, nh, T, hs)
    q = q.view(B, T, n_head, C // n_head).transpose(1, 2) # (B, nh, T, hs)
    v = v.view(B, T, n_head, C // n_head).transpose(1, 2) # (B, nh, T, hs)

    # manual implementation of attention
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = att.masked_fill(bias[:,:,:T,:T] == 0, float('-inf'))
    att = F.softmax(att, dim=-1)
    att = F.dropout(att, dropout, training=False)  # self.attn_dropout(att)
    y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
    y = y.transpose(1, 2).contiguous().view(B, T, C) # re-assemble all head outputs side by side

    # output projection
    y = F.dropout(F.linear(y, c_proj_weight, c_proj_bias), dropout, training=False)  # self.resid_dropout(self.c_proj(y))
    return y


# nanoGPT — model.py, MLP.forward (karpathy/nanoGPT)
def mlp(
    x: TensorF32Cpu3D,
    c_fc_weight: TensorF32Cpu2D,
    c_fc_bias: TensorF32Cpu1D,
    c_proj_weight: TensorF32Cpu2D,
    c_proj_bias: TensorF32Cpu1D,
    dropout: float = 0.0,
) -> TensorF32Cpu3D:
    x = F.linear(x, c_fc_weight, c_fc_bias)
    x = F.gelu(x)
    x = F.linear(x, c_proj_weight, c_proj_bias)
    x = F.dropout(x, dropout, training=False)  # self.dropout(x)
    return x


# nanoGPT — model.py, Block.forward (karpathy/nanoGPT)
def block(
    x: TensorF32Cpu3D,
    ln_1_weight: TensorF32Cpu1D,
    ln_1_bias: TensorF32Cpu1D,
    c_attn_weight: TensorF32Cpu2D,
    c_attn_bias: TensorF32Cpu1D,
    attn_c_proj_weight: TensorF32Cpu2D,
    attn_c_proj_bias: TensorF32Cpu1D,
    bias: TensorF32Cpu4D,
    ln_2_weight: TensorF32Cpu1D,
    ln_2_bias: TensorF32Cpu1D,
    c_fc_weight: TensorF32Cpu2D,
    c_fc_bias: TensorF32Cpu1D,
    mlp_c_proj_weight: TensorF32Cpu2D,
    mlp_c_proj_bias: TensorF32Cpu1D,
    n_head: int,
    n_embd: int,
) -> TensorF32Cpu3D:
    x = x + causal_self_attention(
        layer_norm(x, ln_1_weight, ln_1_bias),
        c_attn_weight, c_attn_bias, attn_c_proj_weight, attn_c_proj_bias, bias, n_head, n_embd,
    )
    x = x + mlp(layer_norm(x, ln_2_weight, ln_2_bias), c_fc_weight, c_fc_bias, mlp_c_proj_weight, mlp_c_proj_bias)
    return x


# nanoGPT — model.py, GPT.forward, token + position embedding stem (karpathy/nanoGPT)
def gpt_embed(idx: TensorI64Cpu2D, wte: TensorF32Cpu2D, wpe: TensorF32Cpu2D, block_size: int) -> TensorF32Cpu3D:
    device = idx.device
    b, t = idx.size()
    assert t <= block_size, f"Cannot forward sequence of length {t}, block size is only {block_size}"
    pos = torch.arange(0, t, dtype=torch.long, device=device) # shape (t)

    # forward the GPT model itself
    tok_emb = F.embedding(idx, wte) # token embeddings of shape (b, t, n_embd)
    pos_emb = F.embedding(pos, wpe) # position embeddings of shape (t, n_embd)
    x = tok_emb + pos_emb
    return x


# nanoGPT — model.py, GPT.forward, final LayerNorm + inference-time lm_head (targets is None) (karpathy/nanoGPT)
def gpt_lm_head_last(
    x: TensorF32Cpu3D, ln_f_weight: TensorF32Cpu1D, ln_f_bias: TensorF32Cpu1D, lm_head_weight: TensorF32Cpu2D
) -> TensorF32Cpu3D:
    x = layer_norm(x, ln_f_weight, ln_f_bias)
    # inference-time mini-optimization: only forward the lm_head on the very last position
    logits = F.linear(x[:, [-1], :], lm_head_weight) # note: using list [-1] to preserve the time dim
    return logits


# nanoGPT — model.py, GPT.generate, one step up to the sampling distribution (karpathy/nanoGPT)
def next_token_probs(logits: TensorF32Cpu3D, temperature: float, top_k: int) -> TensorF32Cpu2D:
    # pluck the logits at the final step and scale by desired temperature
    logits = logits[:, -1, :] / temperature
    # optionally crop the logits to only the top k options
    if top_k is not None:
        v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
        logits[logits < v[:, [-1]]] = -float('Inf')
    # apply softmax to convert logits to (normalized) probabilities
    probs = F.softmax(logits, dim=-1)
    return probs


INPUTS = {
    "layer_norm": lambda: (torch.randn(2, 5, 16), torch.randn(16), torch.randn(16)),
    "causal_self_attention": lambda: (
        torch.randn(2, 5, 16), torch.randn(48, 16), torch.randn(48), torch.randn(16, 16), torch.randn(16),
        torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8), 2, 16,
    ),
    "mlp": lambda: (torch.randn(2, 5, 16), torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16)),
    "block": lambda: (
        torch.randn(2, 5, 16),
        torch.randn(16), torch.randn(16),
        torch.randn(48, 16), torch.randn(48), torch.randn(16, 16), torch.randn(16),
        torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8),
        torch.randn(16), torch.randn(16),
        torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16),
        2, 16,
    ),
    "gpt_embed": lambda: (torch.randint(0, 50, (2, 5)), torch.randn(50, 16), torch.randn(8, 16), 8),
    "gpt_lm_head_last": lambda: (torch.randn(2, 5, 16), torch.randn(16), torch.randn(16), torch.randn(50, 16)),
    "next_token_probs": lambda: (torch.randn(2, 1, 50), 0.8, 10),
}
