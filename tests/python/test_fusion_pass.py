"""The analyzer's fusion pass (analyzer-wasm/src/fuse.rs) end to end.

``tests/corpus/accepted/fusion.py`` is compiled with ``torchlower.compile`` (the analyzer's own
output, not hand-written Rust) and every function is compared with eager PyTorch at the
benchmark sizes, at degenerate and non-square sizes, on the special values, on
non-contiguous inputs (the fused kernels' fallback), and on shapes that make eager raise:
native must raise the same exception type with the same message. The report is checked
too: fused groups keep every site claimed, all pointing at the one fused call.
"""

from __future__ import annotations

import pytest
import torch

import torchlower
from test_native_cpu import CORPUS, assert_matches_eager, corpus_module, run_both, special_tensor

FUSION = CORPUS / "fusion.py"

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def fused():
    """(python module, report, {name: compiled}) of the fusion corpus file."""
    module, build = corpus_module(FUSION)
    assert build.error is None, str(build.error)
    compiled = {}
    for entry in build.report["functions"]:
        fn = getattr(module, entry["name"])
        compiled[entry["name"]] = torchlower.compile(getattr(fn, "__wrapped__", fn))
        assert compiled[entry["name"]].route == "native", compiled[entry["name"]].reason
    return module, build.report, compiled


def _entry(report, name):
    return next(f for f in report["functions"] if f["name"] == name)


def _rust_of(report, name):
    start, end = _entry(report, name)["rust_range"]
    return report["rust"][start:end]


@pytest.mark.parametrize(
    "name,call",
    [
        ("linear_relu_mean", "tl::fused::linear_epilogue("),
        ("linear_no_bias_gelu_tanh_sum", "tl::fused::linear_epilogue("),
        ("matmul_bias_sigmoid", "tl::fused::matmul_epilogue("),
        ("nested_epilogues", "tl::fused::linear_epilogue("),
        ("alternating", "tl::fused::iterate_matmul_reduce("),
        ("loop_then_sum", "tl::fused::iterate_matmul_reduce("),
        ("one_statement_loop", "tl::fused::iterate_matmul_epilogue("),
        ("loop_result_live_after_sum", "tl::fused::iterate_matmul_epilogue("),
        ("lone_sum", "tl::fused::reduce("),
        ("elementwise_chain", "tl::fused::elementwise("),
        ("unary_chain", "tl::fused::elementwise("),
        ("rms_norm_weighted", "tl::fused::rms_norm("),
        ("rms_norm_weight_first", "tl::fused::rms_norm("),
        ("rms_norm_two_statements", "tl::fused::rms_norm("),
        ("swiglu", "tl::fused::elementwise(&[&tl::fused::linear_epilogue("),
        ("residual", "tl::fused::elementwise(&[v_x_t, &tl::fused::linear_epilogue("),
        ("residual_layer_scale", "tl::fused::elementwise("),
        ("gated_feature_map", "tl::fused::elementwise("),
        ("gate_times_map", "tl::fused::elementwise("),
        ("map_minus_gate", "tl::fused::elementwise("),
        ("gate_over_rows", "tl::fused::elementwise("),
        ("rows_plus_gate", "tl::fused::elementwise("),
        ("number_times_linear", "tl::fused::scale(tl::fused::linear_epilogue("),
        ("linear_times_int", "tl::fused::scale(tl::fused::linear_epilogue("),
    ],
)
def test_fused_forms_are_emitted_with_sites_linked(fused, name, call):
    _, report, _ = fused
    rust = _rust_of(report, name)
    assert call in rust
    if name == "loop_result_live_after_sum":  # the loop is fused, its sum is not (h is read again)
        assert "iterate_matmul_reduce" not in rust and "tl::fused::reduce(" in rust, rust
    # after the loop, these two also use an op the fusion pass leaves alone (relu, +)
    plain_after_loop = name in ("loop_then_sum", "loop_result_live_after_sum")
    assert "tl::ops::" not in rust or plain_after_loop, rust
    for site in _entry(report, name)["sites"]:
        assert site["outcome"] == "claimed" and site["rule"], site
        start, end = site["rust_range"]
        text = report["rust"][start:end]
        assert text.startswith("tl::fused::") or (plain_after_loop and text.startswith("tl::ops::")), site


@pytest.mark.parametrize(
    "name,absent",
    [
        # no epilogue: an elementwise `relu(b + product)` over the computed product
        ("bias_first_relu", "_epilogue("),
        # the bias's own `b.exp()` runs on the elementwise kernel; the product stays unfused
        ("computed_bias_relu", "_epilogue("),
        ("chain_over_product", "_epilogue("),
        ("loop_variable_live_after", "iterate_matmul_epilogue"),
        ("weight_reassigned", "iterate_matmul_epilogue"),
        ("rms_norm_variance_live", "rms_norm"),
        ("rms_norm_other_input", "rms_norm"),
        ("binary_before_product", "Binary(tl::fused::Binary::Mul)"),
        ("failing_number_first", "tl::fused::scale("),
    ],
)
def test_near_misses_are_not_fused(fused, name, absent):
    _, report, _ = fused
    rust = _rust_of(report, name)
    # a lone product is still the fused kernel (it skips the dispatcher), but nothing around
    # it is absorbed: what the near miss leaves out runs on its own
    rust = rust.replace("tl::fused::matmul_epilogue(v_x_t, v_w_t, None, &[], None)", "")
    assert "tl::ops::" in rust or "for it in" in rust or "tl::fused::elementwise(" in rust
    assert absent not in rust, rust


# (batch, in, out): the benchmark's cell A sizes plus degenerate and odd ones
LINEAR_SHAPES = [(1, 32, 32), (1, 128, 64), (8, 64, 64), (256, 256, 128), (1, 1, 1), (3, 7, 5), (0, 4, 3), (5, 0, 2)]


@pytest.mark.parametrize("batch,fan_in,fan_out", LINEAR_SHAPES)
def test_epilogues_match_eager_on_random_inputs(fused, batch, fan_in, fan_out):
    module, _, compiled = fused
    g = torch.Generator().manual_seed(batch * 1000 + fan_in * 10 + fan_out)
    x = torch.randn(batch, fan_in, generator=g)
    w_linear = torch.randn(fan_out, fan_in, generator=g)
    w_matmul = torch.randn(fan_in, fan_out, generator=g)
    b = torch.randn(fan_out, generator=g)
    v = torch.randn(fan_in, generator=g)
    run_both(compiled["linear_relu_mean"], module.linear_relu_mean, [x, w_linear, b])
    run_both(compiled["linear_no_bias_gelu_tanh_sum"], module.linear_no_bias_gelu_tanh_sum, [x, w_linear])
    run_both(compiled["matmul_bias_sigmoid"], module.matmul_bias_sigmoid, [x, w_matmul, b])
    run_both(compiled["matmul_bias"], module.matmul_bias, [x, w_matmul, b])
    run_both(compiled["matmul_exp_log_colsum"], module.matmul_exp_log_colsum, [x, w_matmul])
    run_both(compiled["matmul_vector_abs_mean"], module.matmul_vector_abs_mean, [x, v])
    run_both(compiled["lone_sum"], module.lone_sum, [x])
    if fan_in == fan_out:
        run_both(compiled["nested_epilogues"], module.nested_epilogues, [x, w_linear, b])


@pytest.mark.parametrize("size", [1, 4, 9, 33])
def test_epilogues_match_eager_on_special_values(fused, size):
    module, _, compiled = fused
    x, w, b = special_tensor((size, size), 0), special_tensor((size, size), 3), special_tensor((size,), 5)
    for name in ["linear_relu_mean", "matmul_bias_sigmoid", "matmul_bias", "matmul_exp_log_colsum", "nested_epilogues", "lone_sum"]:
        fn = getattr(module, name)
        args = [x, w, b][: fn.__code__.co_argcount]
        run_both(compiled[name], fn, args)
    run_both(compiled["linear_no_bias_gelu_tanh_sum"], module.linear_no_bias_gelu_tanh_sum, [x, w])
    run_both(compiled["alternating"], module.alternating, [x, w, b, 3, 1])


# (a's shape, b's shape): the elementwise program's broadcasting, on both sides of its chunk
# width (256 columns), and shapes eager refuses (the first failing op raises, as in eager)
CHAIN_SHAPES = [((3, 4), (4,)), ((1, 300), (300,)), ((64, 700), (700,)), ((5, 1), (1,)), ((2, 2), (2,))]


@pytest.mark.parametrize("a_shape,b_shape", CHAIN_SHAPES)
def test_elementwise_chains_match_eager(fused, a_shape, b_shape):
    module, _, compiled = fused
    g = torch.Generator().manual_seed(a_shape[1])
    a, b = torch.randn(*a_shape, generator=g), torch.randn(*b_shape, generator=g)
    run_both(compiled["elementwise_chain"], module.elementwise_chain, [a, b])
    run_both(compiled["unary_chain"], module.unary_chain, [a])
    a, b = special_tensor(a_shape, 1), special_tensor(b_shape, 4)
    run_both(compiled["elementwise_chain"], module.elementwise_chain, [a, b])
    run_both(compiled["unary_chain"], module.unary_chain, [a])
    strided = a.t().contiguous().t()  # non-contiguous: the op-by-op fallback
    assert_matches_eager(compiled["elementwise_chain"](strided, b), module.elementwise_chain(strided, b))


# both sides of the lone binary op's switch from our loop to libtorch's kernel (2^11 elements)
LONE_BINARY_SHAPES = [(1, 16), (8, 256), (1, 2049), (64, 64), (256, 1024)]


@pytest.mark.parametrize("shape", LONE_BINARY_SHAPES)
def test_lone_binary_ops_match_eager_on_both_sides_of_the_switch(fused, shape):
    module, report, compiled = fused
    assert "tl::fused::elementwise(" in _rust_of(report, "lone_mul")
    for a, b, row in [(torch.randn(*shape), torch.randn(*shape), torch.randn(shape[1])),
                      (special_tensor(shape, 2), special_tensor(shape, 3), special_tensor((shape[1],), 5))]:
        run_both(compiled["lone_mul"], module.lone_mul, [a, b])
        run_both(compiled["lone_row_sub"], module.lone_row_sub, [a, row])
        strided = a.t().contiguous().t()  # non-contiguous
        assert_matches_eager(compiled["lone_mul"](strided, b), module.lone_mul(strided, b))


# rows of the RMSNorm kernel: one row (our sum, and libtorch's above 4096 elements), a few and
# many rows (libtorch's sum of the squares), rows split over threads, odd lengths
RMS_SHAPES = [(1, 1, 64), (1, 1, 5000), (2, 4, 64), (8, 1, 256), (4, 16, 333), (1, 64, 768), (3, 200, 97)]


@pytest.mark.parametrize("shape", RMS_SHAPES)
def test_rms_norms_match_eager(fused, shape):
    module, _, compiled = fused
    g = torch.Generator().manual_seed(shape[-1])
    x, w = torch.randn(*shape, generator=g) * 4, torch.randn(shape[-1], generator=g)
    specials = special_tensor(shape, 1)
    for eps in [1e-6, 1e-5, 0.0, 3.0]:
        run_both(compiled["rms_norm_weight_first"], module.rms_norm_weight_first, [x, w, eps])
        run_both(compiled["rms_norm_two_statements"], module.rms_norm_two_statements, [specials, w, eps])
    for rows in [x.reshape(-1, shape[-1]), specials.reshape(-1, shape[-1])]:
        run_both(compiled["rms_norm_weighted"], module.rms_norm_weighted, [rows, w])
    # odd layouts and weights take the op-by-op chain: a strided input, a weight of one
    # element, rows of one element under a longer weight (the result widens)
    run_both(compiled["rms_norm_weighted"], module.rms_norm_weighted, [x.reshape(-1, shape[-1]).t().contiguous().t(), w])
    run_both(compiled["rms_norm_weight_first"], module.rms_norm_weight_first, [x, torch.randn(1), 1e-6])
    run_both(compiled["rms_norm_two_statements"], module.rms_norm_two_statements, [x[..., :1], torch.randn(5), 1e-6])


def test_rms_norms_on_two_threads_match_eager(fused):
    module, _, compiled = fused
    g = torch.Generator().manual_seed(7)
    x, w = torch.randn(4, 64, 512, generator=g), torch.randn(512, generator=g)
    torch.set_num_threads(2)
    try:
        run_both(compiled["rms_norm_two_statements"], module.rms_norm_two_statements, [x, w, 1e-6])
    finally:
        torch.set_num_threads(1)


def test_rms_norm_weight_errors_are_eagers(fused, native_mode):
    module, _, compiled = fused
    x = torch.randn(2, 3, 4)
    for w in [torch.randn(3), torch.randn(5)]:
        _assert_same_error(lambda: compiled["rms_norm_weight_first"](x, w, 1e-6), lambda: module.rms_norm_weight_first(x, w, 1e-6))
        _assert_same_error(lambda: compiled["rms_norm_two_statements"](x, w, 1e-6), lambda: module.rms_norm_two_statements(x, w, 1e-6))


@pytest.mark.parametrize("rows,width", [(1, 64), (8, 64), (3, 170), (64, 256)])
def test_chains_over_computed_tensors_match_eager(fused, rows, width):
    module, _, compiled = fused
    g = torch.Generator().manual_seed(rows * width)
    x, hidden = torch.randn(rows, width, generator=g), 8 * width // 3
    w1, w3 = torch.randn(hidden, width, generator=g) / width**0.5, torch.randn(hidden, width, generator=g) / width**0.5
    run_both(compiled["swiglu"], module.swiglu, [x, w1, w3])
    run_both(compiled["residual"], module.residual, [x, torch.randn(width, width, generator=g), torch.randn(width, generator=g)])
    run_both(compiled["binary_before_product"], module.binary_before_product, [x, x, x, torch.randn(width, 5, generator=g)])
    specials = special_tensor((rows, width), 2)
    run_both(compiled["swiglu"], module.swiglu, [specials, w1, w3])


def test_chains_over_computed_tensors_raise_eagers_first_error(fused, native_mode):
    module, _, compiled = fused
    x = torch.randn(2, 4)
    cases = [
        ("swiglu", [x, torch.randn(6, 4), torch.randn(6, 3)]),  # the second product
        ("swiglu", [x, torch.randn(6, 3), torch.randn(6, 3)]),  # the first product, before the second
        ("swiglu", [x, torch.randn(6, 4), torch.randn(5, 4)]),  # the product of the two
        ("residual", [x, torch.randn(3, 4), torch.randn(3)]),  # the sum with x
        ("binary_before_product", [x, torch.randn(2, 3), x, torch.randn(5, 5)]),  # a + b, before x @ w
        ("binary_before_product", [x, x, x, torch.randn(5, 5)]),  # x @ w
    ]
    for name, args in cases:
        _assert_same_error(lambda: compiled[name](*args), lambda: getattr(module, name)(*args))


def test_elementwise_chain_shape_errors_are_eagers(fused, native_mode):
    module, _, compiled = fused
    args = [torch.randn(3, 4), torch.randn(5)]
    _assert_same_error(lambda: compiled["elementwise_chain"](*args), lambda: module.elementwise_chain(*args))


def test_non_contiguous_inputs_take_the_fallback_with_eager_results(fused):
    module, _, compiled = fused
    g = torch.Generator().manual_seed(5)
    x, w, b = torch.randn(6, 8, generator=g).t(), torch.randn(6, 8, generator=g)[:, ::2], torch.randn(8, generator=g)[::2]
    cases = [
        ("matmul_bias_sigmoid", [x, w, b]),
        ("linear_relu_mean", [x, w.t(), b]),
        ("alternating", [torch.randn(4, 3, generator=g).t(), torch.randn(4, 4, generator=g).t(), b, 5, 0]),
    ]
    for name, args in cases:
        before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        native = compiled[name](*args)
        for old, new in zip(before, args):
            if isinstance(old, torch.Tensor):
                assert torch.equal(old, new), "an input was changed"
        assert_matches_eager(native, getattr(module, name)(*args))


# (batch, width, depth, phase): the benchmark's cell B sizes, no iteration, negative phase
LOOP_CELLS = [(1, 16, 4, 0), (1, 32, 8, 1), (4, 32, 16, 0), (8, 64, 16, 1), (64, 128, 16, 1), (3, 5, 0, 0), (2, 3, 7, -3), (2, 3, -2, 0)]


@pytest.mark.parametrize("batch,width,depth,phase", LOOP_CELLS)
def test_loops_match_eager(fused, batch, width, depth, phase):
    module, _, compiled = fused
    g = torch.Generator().manual_seed(depth * 100 + width)
    x = torch.randn(batch, width, generator=g)
    w = torch.randn(width, width, generator=g) / width**0.5
    b = torch.randn(width, generator=g)
    run_both(compiled["alternating"], module.alternating, [x, w, b, depth, phase])
    run_both(compiled["one_statement_loop"], module.one_statement_loop, [x, w, b, depth])
    if depth >= 0:
        run_both(compiled["loop_then_sum"], module.loop_then_sum, [x, w, b, depth])
        run_both(compiled["loop_result_live_after_sum"], module.loop_result_live_after_sum, [x, w, b, depth])
    native = compiled["one_statement_loop"](x, w, b, 0)
    assert torch.equal(native, x)  # no iteration: the input itself, as in eager


def _assert_same_error(native_call, eager_call):
    with pytest.raises(Exception) as eager_error:
        eager_call()
    with pytest.raises(Exception) as native_error:
        native_call()
    assert type(native_error.value) is type(eager_error.value)
    assert str(native_error.value) == str(eager_error.value)


def test_size_mismatches_raise_eagers_errors(fused, native_mode):
    module, _, compiled = fused
    x, b4, b5 = torch.randn(2, 3), torch.randn(4), torch.randn(5)
    cases = [
        ("linear_relu_mean", [x, torch.randn(4, 5), b4]),  # product mismatch
        ("linear_relu_mean", [x, torch.randn(4, 3), b5]),  # bias mismatch
        ("matmul_bias_sigmoid", [x, torch.randn(4, 4), b4]),  # product mismatch
        ("matmul_bias_sigmoid", [x, torch.randn(3, 4), b5]),  # bias broadcast mismatch
        ("matmul_bias", [x, torch.randn(3, 4), b5]),
        ("matmul_vector_abs_mean", [x, b4]),
        ("bias_first_relu", [x, torch.randn(3, 4), b5]),
        ("alternating", [x, torch.randn(4, 4), b4, 2, 0]),  # first layer's product
        ("alternating", [torch.randn(2, 4), torch.randn(4, 4), b5, 2, 0]),  # first layer's bias
        ("alternating", [torch.randn(2, 3), torch.randn(3, 4), b4, 3, 0]),  # second layer's product
        ("one_statement_loop", [x, torch.randn(4, 4), b4, 1]),
        ("loop_then_sum", [x, torch.randn(4, 4), b4, 1]),  # the loop's error before the sum's
        ("loop_then_sum", [x, torch.randn(3, 3), b4, 2]),  # the loop's bias error
    ]
    for name, args in cases:
        _assert_same_error(lambda: compiled[name](*args), lambda: getattr(module, name)(*args))
    # no iteration: nothing is multiplied, so nothing raises, as in eager
    run_both(compiled["alternating"], module.alternating, [x, torch.randn(4, 4), b4, 0, 0])


def test_loop_condition_overflow_is_checked(fused, native_mode, monkeypatch):
    """`(layer + phase) % 2` overflows int64: native refuses (never a wrapped activation
    choice), and auto mode reruns Python, which gets the exact answer."""
    module, _, compiled = fused
    x, w, b = torch.randn(2, 4), torch.randn(4, 4) / 2, torch.randn(4)
    with pytest.raises(OverflowError):
        compiled["alternating"](x, w, b, 3, 2**63 - 2)
    monkeypatch.delenv("TORCHLOWER_MODE")
    assert_matches_eager(compiled["alternating"](x, w, b, 3, 2**63 - 2), module.alternating(x, w, b, 3, 2**63 - 2))


def test_inputs_that_require_grad(fused):
    module, _, compiled = fused
    g = torch.Generator().manual_seed(11)
    x, w, b = (torch.randn(*shape, generator=g).requires_grad_() for shape in [(3, 3), (3, 3), (3,)])
    for name, args in [("alternating", [x, w, b, 4, 1]), ("linear_relu_mean", [x, w, b])]:
        native = compiled[name](*args)
        assert native.requires_grad is False
        with torch.no_grad():
            assert_matches_eager(native, getattr(module, name)(*args))


def _same_bits(native, eager):
    assert native.dtype == eager.dtype and native.shape == eager.shape and not native.requires_grad
    assert torch.equal(native.isnan(), eager.isnan()), "NaN positions differ"
    assert torch.equal(native.nan_to_num(0.0).view(torch.int32), eager.nan_to_num(0.0).view(torch.int32)), "bits differ"


# numbers as Python gives them: zeros of both signs, infinities, NaN, ones that round to
# float32's extremes or past them, ints beyond float32's 24-bit mantissa
SCALE_NUMBERS = [0.125, -0.0, 0.0, float("inf"), float("-inf"), float("nan"), 1e-45, 3.4e38, 1e300, -2.5, 1.0 / 3.0]
SCALE_INTS = [0, 3, -7, 2**40 + 1, 2**62 - 1]


@pytest.mark.parametrize("batch,seq,width", [(1, 1, 8), (1, 16, 64), (4, 16, 32), (2, 128, 64), (3, 7, 5)])
def test_scaled_products_are_eagers_bits(fused, batch, seq, width):
    """`(q @ kᵀ) * s`, `/ s`, `s * relu(F.linear(x, w))` and `F.linear(x, w, b) * n`: the
    product's bits scaled in place are eager's `mul`/`div` bit for bit, on random and
    special values, for every kind of number."""
    module, _, compiled = fused
    g = torch.Generator().manual_seed(batch * seq * width)
    q, k = torch.randn(batch, seq, width, generator=g), torch.randn(batch, seq, width, generator=g)
    specials = special_tensor((batch, seq, width), 1)
    for a in (q, specials):
        before = a.clone()
        _same_bits(compiled["scaled_scores"](a, k), module.scaled_scores(a, k))
        for head_dim in [1, 3, 64, 10**6]:
            _same_bits(compiled["scores_over_sqrt"](a, k, head_dim), module.scores_over_sqrt(a, k, head_dim))
        assert torch.equal(a.nan_to_num(0.0), before.nan_to_num(0.0)), "input written"
    x, w, b = q.reshape(-1, width), torch.randn(seq, width, generator=g), torch.randn(seq, generator=g)
    for number in SCALE_NUMBERS:
        _same_bits(compiled["number_times_linear"](x, w, number), module.number_times_linear(x, w, number))
    for n in SCALE_INTS:
        _same_bits(compiled["linear_times_int"](x, w, b, n), module.linear_times_int(x, w, b, n))
    torch.set_num_threads(2)  # a large product's scaling splits over threads, same bits
    try:
        big = torch.randn(8, 256, 64, generator=g)
        _same_bits(compiled["scaled_scores"](big, big), module.scaled_scores(big, big))
    finally:
        torch.set_num_threads(1)


def test_scaled_products_raise_eagers_first_error(fused, native_mode):
    """The product is computed before the number, as in Python: a product that fails wins
    over a number that fails; a number that fails after a good product raises Python's
    error; a number on the left that may fail keeps its own place (not fused)."""
    module, _, compiled = fused
    q, k, empty = torch.randn(2, 4, 3), torch.randn(2, 4, 5), torch.randn(2, 4, 0)
    cases = [
        ("scaled_scores", [q, k]),  # the product
        ("scaled_scores", [q, empty]),  # the product, before 1.0 / sqrt(0)
        ("scaled_scores", [empty, empty]),  # 1.0 / sqrt(0) after an empty product
        ("scores_over_sqrt", [q, k, -1]),  # the product, before sqrt(-1)
        ("scores_over_sqrt", [q, q, -1]),  # sqrt(-1)
        ("failing_number_first", [torch.randn(2, 3), torch.randn(4, 2), 0]),  # 1.0 / 0 first
        ("linear_times_int", [torch.randn(2, 3), torch.randn(4, 2), torch.randn(4), 2]),  # the product
    ]
    for name, args in cases:
        _assert_same_error(lambda: compiled[name](*args), lambda: getattr(module, name)(*args))


@pytest.mark.parametrize(
    "x_shape,h_shape,gamma_shape,raises",
    [((1, 16, 64), (1, 16, 64), (64,), False), ((8, 16, 64), (8, 16, 64), (1,), False), ((2, 5, 7), (1, 5, 7), (7,), False),
     ((4, 64, 300), (4, 64, 300), (300,), False),
     # no 2-D merge (h broadcast over the middle dim), and a mismatch: libtorch's chain and error
     ((2, 3, 4), (2, 1, 4), (4,), False), ((2, 3, 4), (2, 5, 4), (4,), True)],
)
def test_rank_3_and_4_chains_match_eager(fused, native_mode, x_shape, h_shape, gamma_shape, raises):
    """Chains over rank-3/4 operands run one pass where the broadcast merges into 2-D, and
    are eager's element for element (special values too) with eager's errors otherwise."""
    module, _, compiled = fused
    g = torch.Generator().manual_seed(sum(x_shape))
    for special in (False, True):
        x = special_tensor(x_shape, 0) if special else torch.randn(*x_shape, generator=g)
        h, gamma = torch.randn(*h_shape, generator=g), torch.randn(*gamma_shape, generator=g)
        if raises:
            _assert_same_error(lambda: compiled["residual_layer_scale"](x, h, gamma), lambda: module.residual_layer_scale(x, h, gamma))
            continue
        run_both(compiled["residual_layer_scale"], module.residual_layer_scale, [x, h, gamma])
    for batch, channels, side in [(1, 96, 14), (8, 96, 14), (2, 3, 1), (1, 16, 64)]:
        fmap = torch.randn(batch, channels, side, side, generator=g)
        scale = special_tensor((batch, channels, 1, 1), 1)
        run_both(compiled["gated_feature_map"], module.gated_feature_map, [fmap, scale])
        run_both(compiled["gated_feature_map"], module.gated_feature_map, [special_tensor((batch, channels, side, side), 2), scale])


def _with_nan_payloads(t, seed):
    """`t` with special values and NaNs of distinct payloads and signs at seeded positions."""
    g = torch.Generator().manual_seed(seed)
    flat = t.clone().reshape(-1)
    # quiet NaNs with payloads 1 and 2 (the second negative), a signalling NaN, +inf, -inf, -0.0
    words = [0x7FC00001, 0xFFC00002, 0x7FA00003, 0x7F800000, 0xFF800000, 0x80000000]
    specials = torch.tensor([w - 2**32 if w >= 2**31 else w for w in words], dtype=torch.int32).view(torch.float32)
    where = torch.randint(0, flat.numel(), (max(1, flat.numel() // 7),), generator=g)
    flat[where] = specials[torch.arange(where.numel()) % specials.numel()]
    return flat.reshape(t.shape)


@pytest.mark.parametrize("threads", [1, 2])
def test_lone_gate_ops_are_eagers_bits(fused, native_mode, threads, torch_threads):
    """`scale * x` with one value per row of x, on either side, all four ops: below and above
    the size where a lone op goes to libtorch (the one-pass kernel takes it then), bits equal to
    eager's wherever eager's value is a number, NaN where eager's is, on 1 and 2 threads; gates
    that do not merge into one value per row take libtorch's op. NaN payloads are not compared
    (docs/architecture.md, "Exactness"): with two NaN operands eager itself returns the first's
    in its vector body and the second's in the tail its compiler wrote as `b * a`."""
    module, _, compiled = fused
    torch_threads(threads)
    g = torch.Generator().manual_seed(threads)
    rank4 = [((8, 96, 14, 14), (8, 96, 1, 1)), ((1, 96, 14, 14), (1, 96, 1, 1)), ((2, 3, 5, 5), (2, 3, 1, 1)),
             ((3, 2, 20, 200), (3, 2, 20, 1)), ((64, 40, 7, 7), (64, 40, 1, 1)),
             ((8, 96, 14, 14), (1, 96, 1, 1)), ((4, 3, 40, 40), (4, 3, 1, 40)), ((2, 3, 1, 50), (2, 3, 1, 1))]
    rank2 = [((700, 9), (700, 1)), ((5000, 3), (5000, 1)), ((3, 4), (3, 1)), ((2000, 300), (1, 300))]
    for name, gate_first, shapes in [("gate_times_map", True, rank4), ("map_minus_gate", False, rank4),
                                     ("gate_over_rows", True, rank2), ("rows_plus_gate", False, rank2)]:
        for i, (x_shape, scale_shape) in enumerate(shapes):
            x = _with_nan_payloads(torch.randn(*x_shape, generator=g), i)
            scale = _with_nan_payloads(torch.randn(*scale_shape, generator=g), i + 100)
            args = [scale, x] if gate_first else [x, scale]
            before = [a.clone() for a in args]
            native, eager = compiled[name](*args), getattr(module, name)(*args)
            assert native.shape == eager.shape and native.stride() == eager.stride(), (name, x_shape)
            nan = torch.isnan(eager)
            assert torch.equal(torch.isnan(native), nan), (name, x_shape, scale_shape)
            assert torch.equal(native[~nan].view(torch.int32), eager[~nan].view(torch.int32)), (name, x_shape, scale_shape)
            assert all(torch.equal(a.view(torch.int32), b.view(torch.int32)) for a, b in zip(args, before))
    _assert_same_error(lambda: compiled["gate_times_map"](torch.randn(2, 3, 1, 1), torch.randn(2, 4, 5, 5)),
                       lambda: module.gate_times_map(torch.randn(2, 3, 1, 1), torch.randn(2, 4, 5, 5)))
