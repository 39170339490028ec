from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D
import torch.nn.functional as F


def bias_keyword(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:    return F.linear(x, w, bias=b)