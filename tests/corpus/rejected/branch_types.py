# Where the rest of a block is not walked once per branch (accepted/branch_types.py), a local
# read with different types on the paths that reach it stays a fallback (TL303): inside a loop
# (the rest of the body flows back into the loop), and once a function has used its four
# splits (each doubles what follows it, and each branch's copy of a later `if` counts).
from torchlower.types import TensorF32Cpu2D


def in_a_loop(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    for i in range(n):
        if i % 2 == 0:
            scale = 2.0
        else:
            scale = x.abs()
        x = x * scale
    return x


def five_splits(x: TensorF32Cpu2D, a: bool, b: bool, c: bool, d: bool, e: bool) -> TensorF32Cpu2D:
    s1 = 1.0
    if a:
        s1 = x
    s2 = 1.0
    if b:
        s2 = x
    s3 = 1.0
    if c:
        s3 = x
    s4 = 1.0
    if d:
        s4 = x
    s5 = 1.0
    if e:
        s5 = x
    return x * s1 * s2 * s3 * s4 * s5
