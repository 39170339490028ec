"""Gemma and Mixtral modules as huggingface/transformers writes them (configs become constructor
arguments; ACT2FN["gelu_pytorch_tanh"] is the class transformers defines), for
torchlower.compile(module)."""

import torch
from torch import Tensor, nn


# transformers — src/transformers/activations.py, PytorchGELUTanh (huggingface/transformers)
class PytorchGELUTanh(nn.Module):
    """
    A fast C implementation of the tanh approximation of the GeLU activation function. See
    https://huggingface.co/papers/1606.08415.

    This implementation is equivalent to NewGELU and FastGELU but much faster. However, it is not an exact numerical
    match due to rounding errors.
    """

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.gelu(input, approximate="tanh")


# transformers — models/gemma/modeling_gemma.py, GemmaRMSNorm (huggingface/transformers)
class GemmaRMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        # Llama does x.to(float16) * w whilst Gemma is (x * w).to(float16)
        # See https://github.com/huggingface/transformers/pull/29402
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


# transformers — models/gemma/modeling_gemma.py, GemmaMLP (huggingface/transformers)
class GemmaMLP(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.up_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.down_proj = nn.Linear(self.intermediate_size, self.hidden_size, bias=False)
        self.act_fn = PytorchGELUTanh()

    def forward(self, x):
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


# transformers — models/mixtral/modeling_mixtral.py, MixtralBlockSparseTop2MLP (huggingface/transformers)
class MixtralBlockSparseTop2MLP(nn.Module):
    def __init__(self, hidden_dim, ffn_dim):
        super().__init__()
        self.ffn_dim = ffn_dim
        self.hidden_dim = hidden_dim

        self.w1 = nn.Linear(self.hidden_dim, self.ffn_dim, bias=False)
        self.w2 = nn.Linear(self.ffn_dim, self.hidden_dim, bias=False)
        self.w3 = nn.Linear(self.hidden_dim, self.ffn_dim, bias=False)

        self.act_fn = nn.SiLU()

    def forward(self, hidden_states):
        current_hidden_states = self.act_fn(self.w1(hidden_states)) * self.w3(hidden_states)
        current_hidden_states = self.w2(current_hidden_states)
        return current_hidden_states


EXAMPLES = {
    "GemmaRMSNorm": (lambda: GemmaRMSNorm(16), lambda: (torch.randn(2, 5, 16),)),
    "GemmaMLP": (lambda: GemmaMLP(16, 48), lambda: (torch.randn(2, 5, 16),)),
    "MixtralBlockSparseTop2MLP": (lambda: MixtralBlockSparseTop2MLP(16, 48), lambda: (torch.randn(10, 16),)),
}
