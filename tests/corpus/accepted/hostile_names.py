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


def more_keywords(Self: TensorF32Cpu2D, super: TensorF32Cpu2D, dyn: int, union: float) -> TensorF32Cpu2D:
    r = Self + super
    unsafe = r * union
    match = unsafe
    mod, move = match, dyn
    return mod * move


# Messages chosen to break out of a Rust string or format string: quotes, raw-string
# terminators, braces, comment markers, backslashes, a newline, non-ASCII.
def messages(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    assert n != 1, "quote \" brace {} {0} */ /* \\ \"# r#\"x\"# ñ 名 \n end"
    assert n != 2, f"n={n} {{braces}} \" */ \\ {n}}}"
    if n == 3:
        raise ValueError("}\"); panic!(\"{}\"); // \u202e")
    return x * n
