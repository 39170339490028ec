"""A small inference model, annotated for torchlower.

    torchlower run examples/model.py     # analyze, build, run natively, compare with eager

Every function is ordinary PyTorch: without torchlower it runs as is. The annotations
(`TensorF32Cpu2D`: float32, CPU, rank 2 …) are what lets the analyzer prove each operation
and lower the function to native code. `# torchlower: inputs …` comments give the demo the
shapes to try each function with.
"""

import torch
import torch.nn.functional as F

from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


# torchlower: inputs x=(16, 128) weight=(64, 128) bias=(64,)
def pooled_head(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu1D:
    """A linear layer, ReLU, and the mean over features: one score per row."""
    return F.linear(x, weight, bias).relu().mean(dim=1)


# torchlower: inputs x=(8, 64) weight=(64, 64) bias=(64,) depth=16 phase=1
def alternating_stack(
    x: TensorF32Cpu2D,
    weight: TensorF32Cpu2D,
    bias: TensorF32Cpu1D,
    depth: int,
    phase: int,
) -> TensorF32Cpu1D:
    """A weight-tied stack whose activation alternates by layer parity."""
    hidden = x
    for layer in range(depth):
        if (layer + phase) % 2 == 0:
            even = hidden @ weight + bias
            hidden = even.relu()
        else:
            odd = hidden @ weight + bias
            hidden = odd.sigmoid()
    return hidden.mean(dim=1, keepdim=False)


# torchlower: inputs features=(32, 128) proj=(128, 64) classes=(10, 64) class_bias=(10,)
def classify(
    features: TensorF32Cpu2D,
    proj: TensorF32Cpu2D,
    classes: TensorF32Cpu2D,
    class_bias: TensorF32Cpu1D,
) -> TensorI64Cpu1D:
    """Project, GELU, score against class prototypes, softmax, and pick the best class."""
    embedded = F.gelu(features @ proj)
    logits = F.linear(embedded, classes, class_bias)
    probabilities = torch.softmax(logits, dim=1)
    return probabilities.argmax(dim=1)


# torchlower: inputs a=(16, 32) b=(16, 32)
def normalized_difference(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """tanh((a - b) / sqrt(a² + b²)): elementwise arithmetic and unary math."""
    spread = torch.sqrt(a.square() + b.square())
    return torch.tanh((a - b) / spread)


# torchlower: inputs x=(16, 32)
def column_stats(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """Falls back to Python: `torch.cumprod` is not part of the claimed surface (the analyzer's
    diagnostic says so, and the function still runs, as plain PyTorch)."""
    return torch.cumprod(x, dim=0).relu()
