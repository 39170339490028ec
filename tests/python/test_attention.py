"""`F.multi_head_attention_forward` natively: every form of native_cases/multi_head_attention.py
against eager, bit for bit (the native function runs eager's ATen ops in eager's order), on
random values and on special values, and eager's exception type and message for each of its
checks."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

import torchlower
from test_native_cpu import import_path

CASES = Path(__file__).resolve().parent / "native_cases" / "multi_head_attention.py"
NAMES = ["self_attention", "bool_mask", "causal", "cross_attention", "three_inputs", "separate_weights", "unbatched"]
L, N, E, HEADS = 5, 3, 8, 2


@pytest.fixture(scope="module")
def mha():
    module = import_path(CASES)
    compiled = {name: torchlower.compile(getattr(module, name)) for name in NAMES}
    for name, fn in compiled.items():
        assert fn.route == "native", f"{name}: {fn.reason}"
    return module, compiled


def _args(name: str, specials: bool = False, seq: int = L, embed: int = E, heads: int = HEADS):
    torch.manual_seed(1)
    scale = 1 / math.sqrt(embed)

    def randn(*shape):
        t = torch.randn(*shape)
        if specials:
            flat = t.view(-1)
            for i, v in enumerate([float("nan"), float("inf"), float("-inf"), -0.0, 0.0]):
                flat[(7 * i + 3) % flat.numel()] = v
        return t

    x = randn(seq, N, embed)
    w_in, b_in = torch.randn(3 * embed, embed) * scale, torch.randn(3 * embed)
    w_out, b_out = torch.randn(embed, embed) * scale, torch.randn(embed)
    causal_mask = torch.full((seq, seq), float("-inf")).triu(1)
    return {
        "self_attention": (x, causal_mask, w_in, b_in, w_out, b_out, embed, heads),
        "bool_mask": (x, torch.ones(seq, seq, dtype=torch.bool).triu(1), w_in, b_in, w_out, b_out, heads),
        "causal": (x, causal_mask, w_in, w_out, heads),
        "cross_attention": (x, randn(seq + 2, N, embed), w_in, b_in, w_out, b_out, heads),
        "three_inputs": (x, randn(seq + 1, N, embed), randn(seq + 1, N, embed), w_in, b_in, w_out, b_out, heads, torch.randn(N * heads, seq, seq + 1)),
        "separate_weights": (x, w_in[:embed], w_in[embed : 2 * embed], w_in[2 * embed :], b_in, w_out, b_out, heads),
        "unbatched": (x[:, 0], w_in, b_in, w_out, b_out, heads),
    }[name]


def _bits_equal(native: torch.Tensor, eager: torch.Tensor) -> None:
    assert native.dtype == eager.dtype and native.shape == eager.shape and native.stride() == eager.stride()
    assert not native.requires_grad
    assert torch.equal(native.view(torch.int32), eager.view(torch.int32)) or (
        torch.equal(native.isnan(), eager.isnan()) and torch.equal(native.nan_to_num(0.0).view(torch.int32), eager.nan_to_num(0.0).view(torch.int32))
    )


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("specials", [False, True])
def test_every_form_is_eagers_bit_for_bit(mha, name, specials):
    module, compiled = mha
    args = _args(name, specials)
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    eager = getattr(module, name)(*args)
    native = compiled[name](*args)
    _bits_equal(native, eager)
    for a, b in zip(args, before):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a.nan_to_num(7.0), b.nan_to_num(7.0)), f"{name}: input mutated"


@pytest.mark.parametrize("threads", [1, 2])
def test_longer_sequences_on_threads(mha, threads, torch_threads):
    module, compiled = mha
    torch_threads(threads)
    args = _args("self_attention", seq=64, embed=64, heads=4)
    _bits_equal(compiled["self_attention"](*args), module.self_attention(*args))


def _raises_like_eager(eager_fn, native_fn, args):
    with pytest.raises(Exception) as eager:
        eager_fn(*args)
    with pytest.raises(eager.type) as native:
        native_fn(*args)
    assert str(native.value) == str(eager.value)


@pytest.mark.parametrize(
    "name, change",
    [
        # the mask's shape, the embedding size to check, heads that do not divide it, no heads
        ("self_attention", lambda a: (a[0], a[1][:-1], *a[2:])),
        ("self_attention", lambda a: (*a[:6], a[6] + 1, a[7])),
        ("self_attention", lambda a: (*a[:7], 3)),
        ("self_attention", lambda a: (*a[:7], 0)),
        # a 3-D mask of the wrong shape, key and value of different shapes
        ("three_inputs", lambda a: (*a[:8], a[8][:, :-1])),
        ("three_inputs", lambda a: (a[0], a[1], a[2][:-1], *a[3:])),
        # separate weights of the wrong shape, a packed bias that is not three chunks
        ("separate_weights", lambda a: (a[0], a[1][:-1], *a[2:])),
        ("separate_weights", lambda a: (*a[:4], a[4][:2], *a[5:])),
        # packed weights that do not fit the input (libtorch's linear error)
        ("cross_attention", lambda a: (a[0], a[1], a[2][:, :-1], *a[3:])),
        # an unbatched query narrower than the weights (libtorch's linear error)
        ("unbatched", lambda a: (a[0][:, :-1], *a[1:])),
    ],
)
def test_errors_are_eagers(mha, name, change, native_mode):
    module, compiled = mha
    _raises_like_eager(getattr(module, name), compiled[name], change(_args(name)))
