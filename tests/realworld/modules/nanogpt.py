"""nanoGPT's modules as karpathy/nanoGPT's model.py writes them (dropout kept: identity in
eval), for torchlower.compile(module)."""

import math

import torch
import torch.nn as nn
from torch.nn import functional as F


# nanoGPT — model.py, LayerNorm (karpathy/nanoGPT)
class LayerNorm(nn.Module):
    """ LayerNorm but with an optional bias. PyTorch doesn't support simply bias=False """

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


# nanoGPT — model.py, CausalSelfAttention (flash=False path) (karpathy/nanoGPT)
class CausalSelfAttention(nn.Module):

    def __init__(self, n_embd, n_head, block_size, bias=True, dropout=0.0):
        super().__init__()
        assert n_embd % n_head == 0
        # key, query, value projections for all heads, but in a batch
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=bias)
        # output projection
        self.c_proj = nn.Linear(n_embd, n_embd, bias=bias)
        # regularization
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head = n_head
        self.n_embd = n_embd
        self.dropout = dropout
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                    .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size() # batch size, sequence length, embedding dimensionality (n_embd)

        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        q, k, v  = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)

        # manual implementation of attention
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C) # re-assemble all head outputs side by side

        # output projection
        y = self.resid_dropout(self.c_proj(y))
        return y


# nanoGPT — model.py, MLP (karpathy/nanoGPT)
class MLP(nn.Module):

    def __init__(self, n_embd, bias=True, dropout=0.0):
        super().__init__()
        self.c_fc    = nn.Linear(n_embd, 4 * n_embd, bias=bias)
        self.gelu    = nn.GELU()
        self.c_proj  = nn.Linear(4 * n_embd, n_embd, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        x = self.dropout(x)
        return x


# nanoGPT — model.py, Block (karpathy/nanoGPT)
class Block(nn.Module):

    def __init__(self, n_embd, n_head, block_size, bias=True):
        super().__init__()
        self.ln_1 = LayerNorm(n_embd, bias=bias)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, bias=bias)
        self.ln_2 = LayerNorm(n_embd, bias=bias)
        self.mlp = MLP(n_embd, bias=bias)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


EXAMPLES = {
    "LayerNorm": (lambda: LayerNorm(16, bias=True), lambda: (torch.randn(2, 5, 16),)),
    "LayerNorm_nobias": (lambda: LayerNorm(16, bias=False), lambda: (torch.randn(2, 5, 16),)),
    "CausalSelfAttention": (lambda: CausalSelfAttention(16, 2, 8), lambda: (torch.randn(2, 5, 16),)),
    "MLP": (lambda: MLP(16), lambda: (torch.randn(2, 5, 16),)),
    "Block": (lambda: Block(16, 2, 8), lambda: (torch.randn(2, 5, 16),)),
}
