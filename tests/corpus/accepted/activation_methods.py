# Seed rows "ReLU / Sigmoid / Tanh method": zero-arg methods on rank 1 and rank 2, same rank out.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D
import torch
import torch.nn.functional as F


def methods_rank2(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    a = x.relu()
    b = a.sigmoid()
    return b.tanh()


def methods_rank1(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    a = v.relu()
    b = a.sigmoid()
    return b.tanh()
