# Seed row "Functional activations": torch.relu/sigmoid/tanh(t); F.relu(t) with inplace omitted or False.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D
import torch
import torch.nn.functional as F


def functions_rank2(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    a = torch.relu(x)
    b = torch.sigmoid(a)
    return torch.tanh(b)


def functions_rank1(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    a = torch.relu(v)
    b = torch.sigmoid(a)
    return torch.tanh(b)


def functional_relu(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    h = F.relu(x)
    h2 = F.relu(h, inplace=False)
    return F.relu(v) + h2.sum(dim=0)
