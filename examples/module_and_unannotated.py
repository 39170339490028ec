"""torchlower on code as it is usually written: an nn.Module and an unannotated function.

    python examples/module_and_unannotated.py

Compiles nanoGPT's MLP block (an nn.Module) and an unannotated function, runs both natively
on a first call's types, checks them against eager PyTorch and prints the routes.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

import torchlower


class MLP(nn.Module):
    """nanoGPT's MLP (karpathy/nanoGPT, model.py)."""

    def __init__(self, n_embd, bias=True, dropout=0.0):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        x = self.dropout(x)
        return x


def scaled_softmax(scores, temperature=1.0):
    return F.softmax(scores / temperature, dim=-1)


def main() -> None:
    torch.manual_seed(0)
    model = MLP(64).eval()
    fast_model = torchlower.compile(model)
    fast_softmax = torchlower.compile(scaled_softmax)
    x = torch.randn(8, 16, 64)
    with torch.no_grad():
        assert torch.equal(fast_model(x), model(x))
        assert torch.equal(fast_softmax(x, 0.5), scaled_softmax(x, 0.5))
    print(f"MLP module: route {fast_model.route}, calls {fast_model.calls}")
    for key, routed in fast_softmax.specialisations.items():
        print(f"scaled_softmax{key}: {routed.route}")
    print("both equal to eager PyTorch")


if __name__ == "__main__":
    main()
