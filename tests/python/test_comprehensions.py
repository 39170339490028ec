"""`torch.tensor` of an int list comprehension (torchlower/tensor-of-int-comprehension): the loops
run natively, the bounds of a later loop reading the earlier names as Python does; an empty
list (eager's float32 tensor) refuses and auto mode runs Python. Against eager."""

from __future__ import annotations

import pytest
import torch

from test_native_cpu import CORPUS, compiled_native, native_corpus_module, run_both

LISTS = CORPUS / "lists_and_buffers.py"


@pytest.fixture(scope="module")
def module():
    return native_corpus_module(LISTS)


@pytest.mark.parametrize("n", [1, 2, 4, 7, 12])
@pytest.mark.parametrize("itself", [True, False])
def test_dlrm_lower_triangle_on_every_size(module, n, itself):
    z = torch.randn(3, n, n, generator=torch.Generator().manual_seed(n))
    # n == 1 without `itself`: an empty index list, eager's float32 tensor and its IndexError
    run_both(compiled_native(module, "lower_triangle"), module.lower_triangle, [z, itself])


@pytest.mark.parametrize("n", [-3, 0, 1, 2, 3, 8, 11])
def test_negative_steps_and_empty_ranges_match_python(module, n):
    run_both(compiled_native(module, "squares_and_steps"), module.squares_and_steps, [n])


def test_an_empty_list_refuses_natively(module, monkeypatch):
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    with pytest.raises(ValueError, match="empty list is float32"):
        compiled_native(module, "squares_and_steps")(1)
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    out = compiled_native(module, "squares_and_steps")(1)
    assert out.dtype == torch.float32 and out.shape == (0,)  # eager's, from the rerun
