"""minGPT (karpathy/minGPT, MIT License) — mingpt/model.py.

Forward paths rewritten as annotated top-level functions: module weights (and the causal-mask
buffer `bias`) are explicit parameters, `nn.LayerNorm` calls are `F.layer_norm`, dropout is
dropped. Everything else is kept as the project writes it.
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


# minGPT — mingpt/model.py, NewGELU.forward (karpathy/minGPT)
def new_gelu(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


# minGPT — mingpt/model.py, CausalSelfAttention.forward (karpathy/minGPT)
def causal_self_attention(
    x: TensorF32Cpu3D,
    c_attn_weight: TensorF32Cpu2D,
    c_attn_bias: TensorF32Cpu1D,
    c_proj_weight: TensorF32Cpu2D,
    c_proj_bias: TensorF32Cpu1D,
    bias: TensorF32Cpu4D,
    n_head: int,
    n_embd: int,
) -> TensorF32Cpu3D:
    B, T, C = x.size() # batch size, sequence length, embedding dimensionality (n_embd)

    # calculate query, key, values for all heads in batch and move head forward to be the batch dim
    q, k ,v  = F.linear(x, c_attn_weight, c_attn_bias).split(n_embd, dim=2)
    k = k.view(B, T, n_head, C // n_head).transpose(1, 2) # (B, nh, T, hs)
    q = q.view(B, T, n_head, C // n_head).transpose(1, 2) # (B, nh, T, hs)
    v = v.view(B, T, n_head, C // n_head).transpose(1, 2) # (B, nh, T, hs)

    # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = att.masked_fill(bias[:,:,:T,:T] == 0, float('-inf'))
    att = F.softmax(att, dim=-1)
    y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
    y = y.transpose(1, 2).contiguous().view(B, T, C) # re-assemble all head outputs side by side

    # output projection
    y = F.linear(y, c_proj_weight, c_proj_bias)
    return y


# minGPT — mingpt/model.py, Block.mlpf (the `lambda x: m.dropout(m.c_proj(m.act(m.c_fc(x))))`) (karpathy/minGPT)
def mlpf(
    x: TensorF32Cpu3D,
    c_fc_weight: TensorF32Cpu2D,
    c_fc_bias: TensorF32Cpu1D,
    c_proj_weight: TensorF32Cpu2D,
    c_proj_bias: TensorF32Cpu1D,
) -> TensorF32Cpu3D:
    return F.linear(new_gelu(F.linear(x, c_fc_weight, c_fc_bias)), c_proj_weight, c_proj_bias)


# minGPT — mingpt/model.py, Block.forward (karpathy/minGPT)
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
        F.layer_norm(x, (n_embd,), ln_1_weight, ln_1_bias, 1e-5),
        c_attn_weight, c_attn_bias, attn_c_proj_weight, attn_c_proj_bias, bias, n_head, n_embd,
    )
    x = x + mlpf(
        F.layer_norm(x, (n_embd,), ln_2_weight, ln_2_bias, 1e-5),
        c_fc_weight, c_fc_bias, mlp_c_proj_weight, mlp_c_proj_bias,
    )
    return x


# minGPT — mingpt/model.py, GPT.forward, embedding stem (before the block loop) (karpathy/minGPT)
def gpt_embed(idx: TensorI64Cpu2D, wte: TensorF32Cpu2D, wpe: TensorF32Cpu2D, block_size: int) -> TensorF32Cpu3D:
    device = idx.device
    b, t = idx.size()
    assert t <= block_size, f"Cannot forward sequence of length {t}, block size is only {block_size}"
    pos = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0) # shape (1, t)

    # forward the GPT model itself
    tok_emb = F.embedding(idx, wte) # token embeddings of shape (b, t, n_embd)
    pos_emb = F.embedding(pos, wpe) # position embeddings of shape (1, t, n_embd)
    x = tok_emb + pos_emb
    return x


# minGPT — mingpt/model.py, GPT.forward, head (after the block loop, targets is None) (karpathy/minGPT)
def gpt_head(
    x: TensorF32Cpu3D, ln_f_weight: TensorF32Cpu1D, ln_f_bias: TensorF32Cpu1D, lm_head_weight: TensorF32Cpu2D, n_embd: int
) -> TensorF32Cpu3D:
    x = F.layer_norm(x, (n_embd,), ln_f_weight, ln_f_bias, 1e-5)
    logits = F.linear(x, lm_head_weight)
    return logits


# minGPT — mingpt/model.py, GPT.generate, one step of the loop given the model's logits (karpathy/minGPT)
def generate_step(
    idx: TensorI64Cpu2D, logits: TensorF32Cpu3D, temperature: float, do_sample: bool, top_k: int
) -> TensorI64Cpu2D:
    # pluck the logits at the final step and scale by desired temperature
    logits = logits[:, -1, :] / temperature
    # optionally crop the logits to only the top k options
    if top_k is not None:
        v, _ = torch.topk(logits, top_k)
        logits[logits < v[:, [-1]]] = -float('Inf')
    # apply softmax to convert logits to (normalized) probabilities
    probs = F.softmax(logits, dim=-1)
    # either sample from the distribution or take the most likely element
    if do_sample:
        idx_next = torch.multinomial(probs, num_samples=1)
    else:
        _, idx_next = torch.topk(probs, k=1, dim=-1)
    # append sampled index to the running sequence and continue
    idx = torch.cat((idx, idx_next), dim=1)
    return idx


INPUTS = {
    "new_gelu": lambda: (torch.randn(2, 5, 16),),
    "causal_self_attention": lambda: (
        torch.randn(2, 5, 16), torch.randn(48, 16), torch.randn(48), torch.randn(16, 16), torch.randn(16),
        torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8), 2, 16,
    ),
    "mlpf": lambda: (torch.randn(2, 5, 16), torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16)),
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
    "gpt_head": lambda: (torch.randn(2, 5, 16), torch.randn(16), torch.randn(16), torch.randn(50, 16), 16),
    "generate_step": lambda: (torch.randint(0, 50, (2, 5)), torch.randn(2, 5, 50), 1.0, False, 10),
}
