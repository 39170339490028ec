"""Import-free annotation markers for torchlower.

Each class names a tensor contract (dtype, device, rank) that the analyzer reads from the
source text. At run time the values are ordinary ``torch.Tensor`` objects; these classes are
never instantiated and importing this module imports neither torch nor anything else.
The analyzer also accepts the seed spelling ``rextio_torch.types.<Name>``.
"""


class _TensorMarker:
    """Base of the markers; carries the contract for introspection only."""

    dtype: str = ""
    device: str = ""
    rank: int = 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)

    def __new__(cls, *args, **kwargs):  # pragma: no cover - guard against misuse
        raise TypeError(f"{cls.__name__} is an annotation marker, not a tensor constructor")


class TensorF32Cpu0D(_TensorMarker):
    dtype, device, rank = "float32", "cpu", 0


class TensorF32Cpu1D(_TensorMarker):
    dtype, device, rank = "float32", "cpu", 1


class TensorF32Cpu2D(_TensorMarker):
    dtype, device, rank = "float32", "cpu", 2


class TensorI64Cpu0D(_TensorMarker):
    dtype, device, rank = "int64", "cpu", 0


class TensorBoolCpu0D(_TensorMarker):
    dtype, device, rank = "bool", "cpu", 0


class TensorI64Cpu1D(_TensorMarker):
    dtype, device, rank = "int64", "cpu", 1


class TensorF32Cuda0_1D(_TensorMarker):
    dtype, device, rank = "float32", "cuda:0", 1


class TensorF32Cuda0_2D(_TensorMarker):
    dtype, device, rank = "float32", "cuda:0", 2


class TensorF32Cpu3D(_TensorMarker):
    dtype, device, rank = "float32", "cpu", 3


class TensorF32Cpu4D(_TensorMarker):
    dtype, device, rank = "float32", "cpu", 4


class TensorF32Cpu5D(_TensorMarker):
    dtype, device, rank = "float32", "cpu", 5


class TensorF32Cpu6D(_TensorMarker):
    dtype, device, rank = "float32", "cpu", 6


class TensorI64Cpu2D(_TensorMarker):
    dtype, device, rank = "int64", "cpu", 2


class TensorI64Cpu3D(_TensorMarker):
    dtype, device, rank = "int64", "cpu", 3


class TensorI64Cpu4D(_TensorMarker):
    dtype, device, rank = "int64", "cpu", 4


class TensorI32Cpu1D(_TensorMarker):
    dtype, device, rank = "int32", "cpu", 1


class TensorI32Cpu2D(_TensorMarker):
    dtype, device, rank = "int32", "cpu", 2


class TensorI32Cpu3D(_TensorMarker):
    dtype, device, rank = "int32", "cpu", 3


class TensorI32Cpu4D(_TensorMarker):
    dtype, device, rank = "int32", "cpu", 4


class TensorBoolCpu1D(_TensorMarker):
    dtype, device, rank = "bool", "cpu", 1


class TensorBoolCpu2D(_TensorMarker):
    dtype, device, rank = "bool", "cpu", 2


class TensorBoolCpu3D(_TensorMarker):
    dtype, device, rank = "bool", "cpu", 3


class TensorBoolCpu4D(_TensorMarker):
    dtype, device, rank = "bool", "cpu", 4


class TensorF32Cuda0_3D(_TensorMarker):
    dtype, device, rank = "float32", "cuda:0", 3


class TensorF32Cuda0_4D(_TensorMarker):
    dtype, device, rank = "float32", "cuda:0", 4


__all__ = [
    "TensorF32Cpu0D",
    "TensorF32Cpu1D",
    "TensorF32Cpu2D",
    "TensorF32Cpu3D",
    "TensorF32Cpu4D",
    "TensorF32Cpu5D",
    "TensorF32Cpu6D",
    "TensorI64Cpu0D",
    "TensorI64Cpu1D",
    "TensorI64Cpu2D",
    "TensorI64Cpu3D",
    "TensorI64Cpu4D",
    "TensorI32Cpu1D",
    "TensorI32Cpu2D",
    "TensorI32Cpu3D",
    "TensorI32Cpu4D",
    "TensorBoolCpu0D",
    "TensorBoolCpu1D",
    "TensorBoolCpu2D",
    "TensorBoolCpu3D",
    "TensorBoolCpu4D",
    "TensorF32Cuda0_1D",
    "TensorF32Cuda0_2D",
    "TensorF32Cuda0_3D",
    "TensorF32Cuda0_4D",
]
