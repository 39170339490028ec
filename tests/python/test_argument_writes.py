"""Functions that write into their tensor arguments as eager does (TL212): native code writes
into the same tensors, auto mode never reruns Python after a write, and arguments that require
grad are left to eager's autograd rules. Every case against eager on copies of its inputs."""

from __future__ import annotations

import pytest
import torch

from test_native_cpu import CORPUS, compiled_native, native_corpus_module, run_writing

ARGUMENT_WRITES = CORPUS / "argument_writes.py"


@pytest.fixture(scope="module")
def module():
    return native_corpus_module(ARGUMENT_WRITES)


@pytest.mark.parametrize("mode", ["auto", "native"])
def test_the_caller_sees_the_writes_and_the_same_tensor_comes_back(module, monkeypatch, mode):
    monkeypatch.setenv("TORCHLOWER_MODE", mode)
    boxes = torch.tensor([[-3.0, 4.0, 1.0], [9.0, -1.0, 2.0]])
    out = compiled_native(module, "clamp_columns")(boxes, 2, 5)
    assert out is boxes
    assert torch.equal(boxes, torch.tensor([[0.0, 4.0, 2.0], [10.0, 0.0, 4.0]]))


def test_kv_cache_write_is_read_back_as_eager(module):
    g = torch.Generator().manual_seed(3)
    xq, xk = torch.randn(2, 3, 4, 8, generator=g), torch.randn(2, 3, 4, 8, generator=g)
    cache = torch.zeros(4, 16, 4, 8)
    for start_pos in (0, 3, 13, 14):  # 14: the slice runs past the cache (eager's error)
        run_writing(compiled_native(module, "cached_scores"), module.cached_scores, [xq, xk, cache, start_pos])


@pytest.mark.parametrize("mode", ["auto", "native"])
def test_an_error_after_a_write_is_raised_not_rerun(module, monkeypatch, mode):
    monkeypatch.setenv("TORCHLOWER_MODE", mode)
    native_x, eager_x = torch.ones(3, 2), torch.ones(3, 2)
    with pytest.raises(ValueError, match="too many rows") as native_error:
        compiled_native(module, "scale_then_check")(native_x, 2)
    with pytest.raises(ValueError, match="too many rows"):
        module.scale_then_check(eager_x, 2)
    assert native_error.value.torchlower_after_writes is True
    # written once, as eager writes it (a rerun in Python would have doubled it again)
    assert torch.equal(native_x, eager_x) and torch.equal(native_x, torch.full((3, 2), 2.0))


def test_arguments_that_require_grad_are_eagers_to_write(module, monkeypatch):
    x = torch.ones(2, 2, requires_grad=True)
    compiled = compiled_native(module, "relu_")
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    with pytest.raises(ValueError, match="refuses arguments that require grad"):
        compiled(x)
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    with pytest.raises(RuntimeError) as rerun_error:  # eager's own error, from the rerun
        compiled(x)
    with pytest.raises(RuntimeError) as eager_error:
        module.relu_(x)
    assert str(rerun_error.value) == str(eager_error.value)
    assert torch.equal(x.detach(), torch.ones(2, 2))


def test_a_boundary_refusal_before_any_write_still_reruns(module, monkeypatch):
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    x = torch.ones(2, 2, dtype=torch.float64)  # not the annotated float32: Python runs
    out = compiled_native(module, "relu_")(x)
    assert out is x and out.dtype == torch.float64
