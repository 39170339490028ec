# Python numbers with tensors (issue: the language of real inference code): float and int
# literals, `float` / `int` parameters, module constants, `math.sqrt` / `math.pi`, float
# arithmetic, and tensor arithmetic with a number on either side (`1.0 - x` is eager's rsub,
# `2.0 / x` eager's `x.reciprocal() * 2.0`).
import math

import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D

EPS = 1e-6
SCALE: float = 0.5
HEADS = 4


def new_gelu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))))


def quick_gelu(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x * torch.sigmoid(1.702 * x)


def scaled_scores(q: TensorF32Cpu3D, k: TensorF32Cpu3D, d: int) -> TensorF32Cpu3D:
    return (q @ k) * (1.0 / math.sqrt(d))


def scaled_by_constant(q: TensorF32Cpu3D, k: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return (q @ k) / math.sqrt(HEADS)


def rms_norm(x: TensorF32Cpu2D, eps: float) -> TensorF32Cpu2D:
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)


def numbers_first(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return 2.0 / x - 1 + 3 * x - x / 3


def gate_complement(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return 1.0 - torch.sigmoid(x)


def int_operands(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return x * n + (n // 2) - x / (n ** 2)


def float_math(x: TensorF32Cpu1D, t: float) -> TensorF32Cpu1D:
    scale = t ** -0.5 * SCALE
    return x * scale + EPS


def function_forms(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.add(torch.mul(x, 0.25), 3)


def float_result(t: float, n: int) -> float:
    return math.sqrt(t) / n + float(n) ** 2 - -1e-3 * math.e


# math.log2 / floor / ceil and an int power whose exponent is known at run time (ALiBi's
# closest power of two; a negative exponent refuses natively: Python's result is a float)
def closest_power_of_two(x: TensorF32Cpu1D, num_heads: int) -> TensorF32Cpu1D:
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    padded = 2 ** math.ceil(math.log2(num_heads))
    return x * closest_power_of_2 + padded


def int_power(x: TensorF32Cpu1D, n: int, k: int) -> TensorF32Cpu1D:
    return x * (n ** k)


def rounded(x: TensorF32Cpu1D, v: float) -> TensorF32Cpu1D:
    return x * math.floor(v) - math.ceil(v * 2.5) + math.floor(3)


def folded_ints(x: TensorF32Cpu3D) -> tuple[int, int, int, int, int]:
    # ints known while analysing are folded as CPython computes them (floor division and
    # modulo take the divisor's sign); a fold beyond 64 bits is left to run time
    dims = tuple(range(1, x.ndim - 1))
    return -7 // 2 + x.ndim, -7 % 3, 7 % -3, (x.ndim - 5) // 2 * len(dims), tuple(range(x.ndim, 0, -2))[1]
