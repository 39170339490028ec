"""The model the Rust service serves: a tabular classifier as scikit-style MLP heads write it
(two hidden layers with GELU, a softmax over classes), annotated for torchlower.

    torchlower export model.py --crate model-rs     # what examples/rust-service/run.sh does

Weights are parameters: the service loads them from a safetensors file once and passes them
on every call.
"""

import torch.nn.functional as F

from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


# torchlower: inputs x=(4, 16) w1=(64, 16) b1=(64,) w2=(64, 64) b2=(64,) w3=(3, 64) b3=(3,)
def classify(
    x: TensorF32Cpu2D,
    w1: TensorF32Cpu2D,
    b1: TensorF32Cpu1D,
    w2: TensorF32Cpu2D,
    b2: TensorF32Cpu1D,
    w3: TensorF32Cpu2D,
    b3: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    """Class probabilities for each row of features."""
    h = F.gelu(F.linear(x, w1, b1))
    h = F.gelu(F.linear(h, w2, b2))
    return F.softmax(F.linear(h, w3, b3), dim=-1)
