"""F.embedding_bag as recommender models call it: bags given by offsets (DLRM's `mode="sum"`),
bags of fixed length as the rows of rank-2 indices, `mean` and `max`, weights per index.

The offsets are built inside the functions: the corpus test draws random int64 arguments, and
unsorted offsets are undefined behaviour in libtorch's kernel (eager itself returns garbage).
Offsets as a parameter are tested with real inputs in tests/realworld/dlrm.py."""

import torch
import torch.nn.functional as F

from torchlower.types import TensorF32Cpu2D, TensorI64Cpu1D, TensorI64Cpu2D


def bags_by_offsets(ids: TensorI64Cpu1D, table: TensorF32Cpu2D) -> TensorF32Cpu2D:
    offsets = torch.arange(0, ids.shape[0], 3)
    return F.embedding_bag(ids, table, offsets, mode="sum")


def bags_of_pairs(ids: TensorI64Cpu1D, table: TensorF32Cpu2D) -> TensorF32Cpu2D:
    offsets = torch.arange(0, ids.shape[0], 2)
    return F.embedding_bag(ids, table, offsets, mode="mean")


def bags_as_rows(ids: TensorI64Cpu2D, table: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.embedding_bag(ids, table, mode="max")


def weighted_rows(ids: TensorI64Cpu2D, table: TensorF32Cpu2D, weights: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.embedding_bag(ids, table, None, mode="sum", per_sample_weights=weights)


def last_offset_included(ids: TensorI64Cpu1D, table: TensorF32Cpu2D) -> TensorF32Cpu2D:
    ends = torch.arange(0, ids.shape[0] + 1, 3)
    return F.embedding_bag(ids, table, ends, mode="sum", include_last_offset=True)
