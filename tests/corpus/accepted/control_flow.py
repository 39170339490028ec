# Scalar control flow around claimed ops: if/elif/else, while, for over range with 1-3 args
# (negative step), early return, chained comparisons, and/or/not, floor division and modulo,
# int and bool parameters and returns.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D


def branches(x: TensorF32Cpu2D, mode: int, flag: bool) -> TensorF32Cpu2D:
    if mode == 0:
        return x.relu()
    elif 0 < mode <= 2 and not flag:
        h = x.sigmoid()
    elif flag or mode % 3 == 1:
        h = x.tanh()
    else:
        h = x
    return h


def loops(x: TensorF32Cpu2D, w: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x
    i = 0
    while i < n:
        h = (h @ w).relu()
        i += 1
    for j in range(n, 0, -2):
        h = h + x
    for k in range(1, n):
        if k // 2 == 1:
            h = h.tanh()
    return h


def count(n: int, m: int) -> int:
    total = 0
    for i in range(n):
        total = total + i * m - (i // 3) % 2
        total -= -1
    return total


def is_small(n: int) -> bool:
    if n:
        return n < 10
    return True


# `for t in [q, k, v]:` over a list or tuple display: unrolled, the elements evaluated once
# first (rtdl's multi-head attention checks each projection this way).
def unrolled_checks(q: TensorF32Cpu2D, k: TensorF32Cpu2D, n_heads: int) -> TensorF32Cpu2D:
    for tensor in [q, k.relu()]:
        assert tensor.shape[-1] % n_heads == 0
    total = q
    for dim in (0, 1):
        total = total + total.sum(dim=dim, keepdim=True)
    return total


# `raise` of a builtin exception class with a literal or an f-string of ints: native code
# raises the same exception with the same text (tests/python/test_native_cpu.py).
def checked_scale(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    if n > 100:
        raise NotImplementedError
    if n == 42:
        raise TypeError("forty-two")
    return x * n


def checked_pads(x: TensorF32Cpu2D, left: int, right: int) -> TensorF32Cpu2D:
    # EnCodec's pad1d checks: tuple messages, printed as Python prints the tuple
    assert left >= 0 and right >= 0, (left, right)
    assert left + right <= x.shape[-1], (left + right,)
    return x[:, left:] * float(right)


def checked_matmul(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    if x.shape[1] != w.shape[0]:
        raise RuntimeError(f"inner sizes differ: {x.shape[1]} and {w.shape[0]}")
    return x @ w


def float_condition(x: TensorF32Cpu2D, scale: float) -> TensorF32Cpu2D:
    # a float is true when nonzero (NaN too), as CPython's
    if scale:
        return x.relu() * scale
    if 0.5:
        return x
    return -x


def checked_weights(w: TensorF32Cpu3D, bsz: int, heads: int) -> TensorF32Cpu3D:
    # Wav2Vec2's size check: a tuple display and `t.size()` / `t.shape` in the message
    if w.size() != (bsz * heads, w.shape[1], w.shape[2]):
        raise ValueError(f"Attention weights should be of size {(bsz * heads, w.shape[1], w.shape[2])}, but is {w.size()} ({(bsz,)}, {w.shape})")
    return w * 2.0


def literal_loop_variable_rebound(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # an unrolled loop's literal variable rebound in a loop walked once: not a literal there
    for s in (1, 2):
        for _ in range(3):
            s = s + 1
            x = x * s
    for s in (8, 4):
        while s > 1:
            s = s // 2
            x = x + s
    for s in (8, 4):
        for _ in range(2):
            s += 1
            x = x - s
    return x


def iterated_sequence_rebound(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # Python iterates the objects the sequence held when the loop began
    ts = (x, y)
    out = y
    for i, t in enumerate(ts):
        out = out + t * (i + 1)
        ts = (out, out)
    b = y
    for w, s in [(x, 1.0), (b, 2.0)]:
        out = out + w * s
        b = out
    return out
