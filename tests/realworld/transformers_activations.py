"""Hugging Face Transformers (huggingface/transformers, Apache License 2.0) — activation
functions of src/transformers/activations.py (the module-level functions of the early file;
the later NewGELUActivation / FastGELUActivation / QuickGELUActivation classes compute the
same expressions in their `forward`).

Copied as annotated top-level functions; nothing is simplified.
"""

import math

import torch

from torchlower.types import TensorF32Cpu2D, TensorF32Cpu3D


# Transformers — src/transformers/activations.py, swish (huggingface/transformers)
def swish(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x * torch.sigmoid(x)


# Transformers — src/transformers/activations.py, _gelu_python (huggingface/transformers)
def _gelu_python(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    """Original Implementation of the gelu activation function in Google Bert repo when initially created.
    For information: OpenAI GPT's gelu is slightly different (and gives slightly different results):
    0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))
    This is now written in C in torch.nn.functional
    Also see https://arxiv.org/abs/1606.08415
    """
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


# Transformers — src/transformers/activations.py, gelu_new (huggingface/transformers)
def gelu_new(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    """Implementation of the gelu activation function currently in Google Bert repo (identical to OpenAI GPT).
    Also see https://arxiv.org/abs/1606.08415
    """
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


# Transformers — src/transformers/activations.py, gelu_fast (huggingface/transformers)
def gelu_fast(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return 0.5 * x * (1.0 + torch.tanh(x * 0.7978845608 * (1.0 + 0.044715 * x * x)))


# Transformers — src/transformers/activations.py, mish (huggingface/transformers)
def mish(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x * torch.tanh(torch.nn.functional.softplus(x))


# Transformers — src/transformers/activations.py, QuickGELUActivation.forward (huggingface/transformers)
def quick_gelu(input: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return input * torch.sigmoid(1.702 * input)


INPUTS = {
    "swish": lambda: (torch.randn(2, 5, 16),),
    "_gelu_python": lambda: (torch.randn(2, 5, 16),),
    "gelu_new": lambda: (torch.randn(2, 5, 16),),
    "gelu_fast": lambda: (torch.randn(4, 16),),
    "mish": lambda: (torch.randn(4, 16),),
    "quick_gelu": lambda: (torch.randn(4, 16),),
}
