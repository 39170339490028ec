# Seed row "Other dtypes": annotations outside the vocabulary are not typed (float64, torch.Tensor,
# complex). `float` is a type now (Python floats are lowered as f64).
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def plain_tensor(x: torch.Tensor) -> torch.Tensor:
    return x.relu()


def complex_scalar(x: TensorF32Cpu2D, s: complex) -> TensorF32Cpu2D:
    return x.relu()


from torchlower.types import TensorF64Cpu2D


def float64_marker(x: TensorF64Cpu2D) -> TensorF32Cpu2D:
    return x.relu()


# torch.tensor: of a Python number only, not of a list display
def tensor_of_list(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return x * torch.tensor([1.0, 2.0])
