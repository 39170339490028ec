"""`F.dropout(x, p, training=False)` (torchlower/dropout-eval): the input itself, as eager
returns it, and eager's errors for `p` (compared with real eager PyTorch, message and type).
Values and special values are checked with the corpus (`tests/corpus/accepted/dropout.py`)."""

from __future__ import annotations

import math

import pytest
import torch

import torchlower
from test_native_cpu import REPO, import_path


@pytest.fixture(scope="module")
def dropout():
    module = import_path(REPO / "tests" / "corpus" / "accepted" / "dropout.py")
    compiled = torchlower.compile(module.attention_probs)
    assert compiled.route == "native", compiled.reason
    return module, compiled


def test_the_result_is_eagers_the_input_itself(dropout):
    module, compiled = dropout
    scores = torch.randn(2, 3, 4, 4)
    native, eager = compiled(scores, 0.3), module.attention_probs(scores, 0.3)
    assert torch.equal(native, eager)
    # eager's dropout outside training returns its input: here softmax's result, a new tensor
    assert native.data_ptr() != scores.data_ptr()


def test_dropout_returns_the_argument_object_as_eager(dropout):
    module, _ = dropout
    compiled = torchlower.compile(module.identity)
    assert compiled.route == "native", compiled.reason
    x = torch.randn(3, 5)
    assert module.identity(x, 0.5) is x
    assert compiled(x, 0.5) is x


@pytest.mark.parametrize("p", [1.5, -0.1, 1e16, -1e-05, 2.0, 1.0000000000000002, math.inf, -math.inf, math.nan, 123456.789])
def test_p_outside_0_and_1_raises_eagers_error(dropout, native_mode, p):
    module, compiled = dropout
    scores = torch.randn(1, 1, 2, 2)
    with pytest.raises(Exception) as eager:
        module.attention_probs(scores, p)
    with pytest.raises(type(eager.value)) as native:
        compiled(scores, p)
    assert str(native.value) == str(eager.value)


@pytest.mark.parametrize("p", [0.0, 1.0, 1e-300, 0.5])
def test_p_at_and_inside_the_bounds_returns_the_input(dropout, p):
    module, compiled = dropout
    scores = torch.randn(2, 1, 3, 3)
    assert torch.equal(compiled(scores, p), module.attention_probs(scores, p))


@pytest.fixture(scope="module")
def flag():
    return import_path(REPO / "tests" / "python" / "native_cases" / "dropout_flag.py")


def test_a_training_flag_known_at_run_time_runs_native_when_false(flag, monkeypatch):
    module = flag
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    compiled = torchlower.compile(module.with_flag)
    assert compiled.route == "native", compiled.reason
    x = torch.randn(6, 7)
    assert compiled(x, 0.25, False) is x
    # training: native code refuses, auto mode reruns Python, which draws eager's masks
    torch.manual_seed(3)
    native = compiled(x, 0.25, True)
    torch.manual_seed(3)
    eager = module.with_flag(x, 0.25, True)
    assert torch.equal(native, eager) and not torch.equal(native, x)


def test_a_training_flag_in_native_mode_raises_a_clear_error(flag, native_mode):
    module = flag
    compiled = torchlower.compile(module.with_flag)
    with pytest.raises(ValueError, match="refuses F.dropout with training=True"):
        compiled(torch.randn(2, 3), 0.25, True)
