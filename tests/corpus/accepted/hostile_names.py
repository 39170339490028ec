# Python names that are Rust keywords, reserved or non-ASCII must still compile.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


def keywords(self: TensorF32Cpu2D, crate: TensorF32Cpu2D, fn: TensorF32Cpu1D) -> TensorF32Cpu2D:
    type = self @ crate
    impl = type + fn
    return impl.relu()


def unicode(ñame: TensorF32Cpu2D, 名前: int) -> TensorF32Cpu2D:
    _ = ñame
    __x = 名前
    for _ in range(__x):
        ñame = ñame.sigmoid()
    return ñame
