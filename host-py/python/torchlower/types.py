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


class TensorF32Cpu1D(_TensorMarker):
    dtype, device, rank = "float32", "cpu", 1


class TensorF32Cpu2D(_TensorMarker):
    dtype, device, rank = "float32", "cpu", 2


class TensorI64Cpu1D(_TensorMarker):
    dtype, device, rank = "int64", "cpu", 1


class TensorF32Cuda0_1D(_TensorMarker):
    dtype, device, rank = "float32", "cuda:0", 1


class TensorF32Cuda0_2D(_TensorMarker):
    dtype, device, rank = "float32", "cuda:0", 2


__all__ = [
    "TensorF32Cpu1D",
    "TensorF32Cpu2D",
    "TensorI64Cpu1D",
    "TensorF32Cuda0_1D",
    "TensorF32Cuda0_2D",
]
