"""A local typed differently by the branches of an `if` and read after it: the rest of the
block runs natively in each branch's copy (`Walker::if_with_tail`). Every path against eager."""

from __future__ import annotations

import pytest
import torch

from test_native_cpu import CORPUS, compiled_native, native_corpus_module, run_both

BRANCH_TYPES = CORPUS / "branch_types.py"


@pytest.fixture(scope="module")
def module():
    return native_corpus_module(BRANCH_TYPES)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets", [8, 32, 3])
def test_relative_buckets_on_both_paths(module, bidirectional, num_buckets):
    positions = torch.arange(-20, 21)[None, :] - torch.arange(0, 7)[:, None]
    run_both(compiled_native(module, "relative_buckets"), module.relative_buckets, [positions, bidirectional, num_buckets])


@pytest.mark.parametrize("per_row,rows", [(True, 3), (False, 6), (False, 2)])
def test_number_or_tensor_scale_on_every_path(module, per_row, rows):
    x = torch.randn(rows, 5, generator=torch.Generator().manual_seed(rows))
    x[0, 0] = float("nan")
    run_both(compiled_native(module, "scale_or_tensor"), module.scale_or_tensor, [x, per_row])


def test_int64_sign_and_extrema_wrap_as_eager(module):
    big = torch.iinfo(torch.int64)
    a = torch.tensor([[big.min, -3, 0, 7], [big.max, 1, -1, 2]])
    b = torch.tensor([[1, big.min, -5, 7], [0, 2, big.max, -2]])
    run_both(compiled_native(module, "int64_sign_forms"), module.int64_sign_forms, [a, b])
