# Rejected (seed: illustrative rejected forms): each function uses a recognized torch form
# with the wrong static shape or a semantic-changing option, so the site is rejected with a
# diagnostic and the function stays on the Python fallback. Never a false native claim.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D
import torch
import torch.nn.functional as F


def linear_wrong_ranks(
    x_1d: TensorF32Cpu1D, weight_2d: TensorF32Cpu2D, bias_1d: TensorF32Cpu1D
) -> TensorF32Cpu1D:
    # linear needs a rank-2 input
    return F.linear(x_1d, weight_2d, bias_1d)


def rank0_reduction(vector: TensorF32Cpu1D) -> TensorF32Cpu1D:
    # a rank-1 reduction would produce an unregistered rank-0 tensor
    return vector.mean(dim=0)


def positional_keepdim(t: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # positional keepdim is deliberately not represented
    return t.mean(0, True)


def duplicate_dim(t: TensorF32Cpu2D) -> TensorF32Cpu1D:
    # dim given both positionally and by keyword
    return t.sum(0, dim=1)


def vector_dot(a_1d: TensorF32Cpu1D, b_1d: TensorF32Cpu1D) -> TensorF32Cpu1D:
    # rank-1 x rank-1 matmul would produce an unregistered rank-0 tensor
    return a_1d @ b_1d


def gather_with_float_index(matrix: TensorF32Cpu2D, rows: TensorF32Cpu1D) -> TensorF32Cpu2D:
    # an index tensor must be int64 (or a bool mask); eager raises for a float one
    return matrix[rows]


def scaled_sum(a: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    # semantic-changing functional option
    return torch.add(a, b, alpha=2)


def unknown_gelu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # the GELU approximations are "none" and "tanh"; another string is eager's error
    return torch.nn.functional.gelu(x, approximate="erf")
