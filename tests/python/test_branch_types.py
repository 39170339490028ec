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


@pytest.mark.parametrize("out_dim", [3, 4])
def test_a_return_path_of_another_rank_is_refused_and_rerun(module, out_dim, monkeypatch):
    """TL404: the path returning rank 4 where the annotation says rank 3 raises the refusal
    natively (``native`` mode shows it) and returns eager's tensor in ``auto`` mode."""
    compiled = compiled_native(module, "head_to_batch_dim")
    assert [d["code"] for d in compiled.report["diagnostics"]] == ["TL404"]
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(out_dim))
    eager = module.head_to_batch_dim(x, 4, out_dim)
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    got = compiled(x, 4, out_dim)
    assert got.shape == eager.shape and torch.equal(got, eager)
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    if out_dim == 3:
        assert torch.equal(compiled(x, 4, out_dim), eager)
    else:
        with pytest.raises(ValueError, match="returns TensorF32Cpu4D on this path, where the annotation says TensorF32Cpu3D"):
            compiled(x, 4, out_dim)


@pytest.mark.parametrize("seqlen", [1, 4])
def test_a_tuple_path_holding_none_is_refused_and_rerun(module, seqlen, monkeypatch):
    """Llama's `mask = None` kept for one token: the `(h, None)` path is refused natively
    (TL404) and ``auto`` mode returns eager's tuple; longer inputs build the mask natively."""
    compiled = compiled_native(module, "causal_mask")
    tokens = torch.randint(0, 6, (2, seqlen), generator=torch.Generator().manual_seed(seqlen))
    emb = torch.randn(6, 8)
    eager = module.causal_mask(tokens, emb, 2)
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    got = compiled(tokens, emb, 2)
    assert type(got) is tuple and torch.equal(got[0], eager[0])
    assert (got[1] is None) == (eager[1] is None) == (seqlen == 1)
    if seqlen > 1:
        assert torch.equal(got[1], eager[1])
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    if seqlen == 1:
        with pytest.raises(ValueError, match=r"returns tuple\[TensorF32Cpu3D, None\] on this path"):
            compiled(tokens, emb, 2)


@pytest.mark.parametrize("use_bias", [True, False])
def test_a_local_that_is_none_on_one_path(module, use_bias):
    run_both(compiled_native(module, "optional_bias"), module.optional_bias, [torch.randn(3, 4), use_bias])
