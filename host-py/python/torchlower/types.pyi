"""What type checkers see of the markers: each is ``torch.Tensor`` (the value a native
function receives and returns); the contract (dtype, device, rank) is the analyzer's."""

from torch import Tensor

TensorF32Cpu0D = Tensor
TensorF32Cpu1D = Tensor
TensorF32Cpu2D = Tensor
TensorI64Cpu0D = Tensor
TensorBoolCpu0D = Tensor
TensorI64Cpu1D = Tensor
TensorF32Cuda0_1D = Tensor
TensorF32Cuda0_2D = Tensor
TensorF32Cpu3D = Tensor
TensorF32Cpu4D = Tensor
TensorF32Cpu5D = Tensor
TensorF32Cpu6D = Tensor
TensorI64Cpu2D = Tensor
TensorI64Cpu3D = Tensor
TensorI64Cpu4D = Tensor
TensorI32Cpu1D = Tensor
TensorI32Cpu2D = Tensor
TensorI32Cpu3D = Tensor
TensorI32Cpu4D = Tensor
TensorBoolCpu1D = Tensor
TensorBoolCpu2D = Tensor
TensorBoolCpu3D = Tensor
TensorBoolCpu4D = Tensor
TensorF32Cuda0_3D = Tensor
TensorF32Cuda0_4D = Tensor

__all__ = [
    "TensorF32Cpu0D",
    "TensorF32Cpu1D",
    "TensorF32Cpu2D",
    "TensorI64Cpu0D",
    "TensorBoolCpu0D",
    "TensorI64Cpu1D",
    "TensorF32Cuda0_1D",
    "TensorF32Cuda0_2D",
    "TensorF32Cpu3D",
    "TensorF32Cpu4D",
    "TensorF32Cpu5D",
    "TensorF32Cpu6D",
    "TensorI64Cpu2D",
    "TensorI64Cpu3D",
    "TensorI64Cpu4D",
    "TensorI32Cpu1D",
    "TensorI32Cpu2D",
    "TensorI32Cpu3D",
    "TensorI32Cpu4D",
    "TensorBoolCpu1D",
    "TensorBoolCpu2D",
    "TensorBoolCpu3D",
    "TensorBoolCpu4D",
    "TensorF32Cuda0_3D",
    "TensorF32Cuda0_4D",
]
