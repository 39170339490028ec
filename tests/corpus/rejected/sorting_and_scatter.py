# The forms of sort / scatter / cumsum / isin / clone that stay Python: options that change
# what the op computes or returns, and dtypes outside the claimed ones.
import torch
from torchlower.types import TensorBoolCpu2D, TensorF32Cpu2D, TensorI64Cpu1D, TensorI64Cpu2D


def scatter_a_number_by_keyword(x: TensorF32Cpu2D, i: TensorI64Cpu2D) -> TensorF32Cpu2D:
    # the `value` overload by its keyword (positional numbers are claimed)
    return x.scatter(1, i, value=0.0)


def scatter_a_number_as_src(x: TensorF32Cpu2D, i: TensorI64Cpu2D) -> TensorF32Cpu2D:
    # a number by the tensor overload's keyword: eager's TypeError
    return x.scatter(1, i, src=1.0)


def scatter_a_number_into_ids(i: TensorI64Cpu2D) -> TensorI64Cpu2D:
    # in place on an int64 local: the index could be the local itself (eager checks overlap)
    ids = i.clone()
    ids.scatter_(1, i, 1)
    return ids


def scatter_reduce(x: TensorF32Cpu2D, i: TensorI64Cpu2D) -> TensorF32Cpu2D:
    return x.scatter(1, i, x, reduce="add")


def scatter_other_dtype(x: TensorF32Cpu2D, i: TensorI64Cpu2D, m: TensorBoolCpu2D) -> TensorF32Cpu2D:
    # eager raises: src must have the input's dtype
    return x.scatter(1, i, m)


def stable_sort(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sort(x, stable=True)[0]


def sort_bools(m: TensorBoolCpu2D) -> TensorBoolCpu2D:
    return torch.sort(m, dim=1)[0]


def cumsum_as_double(i: TensorI64Cpu2D) -> TensorF32Cpu2D:
    return torch.cumsum(i, dim=1, dtype=torch.float64).float()


def isin_mixed(i: TensorI64Cpu1D, x: TensorF32Cpu2D) -> TensorBoolCpu2D:
    return torch.isin(x, i)


def clone_contiguous(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.t().clone(memory_format=torch.contiguous_format)


def nansum_everything(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # rank 0
    return x.nansum() * x


def einsum_of_a_variable(x: TensorF32Cpu2D, equation: int) -> TensorF32Cpu2D:
    # the equation must be a string literal (its subscripts decide the result's rank)
    return torch.einsum(equation, x)


def einsum_wrong_rank(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # eager raises: the term names three dims of a matrix
    return torch.einsum("ijk->ij", x)


def einsum_mixed_dtypes(x: TensorF32Cpu2D, i: TensorI64Cpu2D) -> TensorF32Cpu2D:
    return torch.einsum("ij,jk->ik", x, i)
