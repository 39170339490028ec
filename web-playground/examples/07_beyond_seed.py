# Beyond the seed (docs/architecture.md): method calls on bare binary-operation receivers and
# tensor-valued keyword operands, with exactly eager PyTorch semantics.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D
import torch.nn.functional as F


def fused_layer(
    x: TensorF32Cpu2D,
    weight: TensorF32Cpu2D,
    bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    return (x @ weight + bias).relu()


def keyword_bias(
    x: TensorF32Cpu2D,
    weight: TensorF32Cpu2D,
    bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    return F.linear(x, weight, bias=bias).sigmoid()
