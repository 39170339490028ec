"""Vision ops on the layouts real CNN code feeds them: channels-last and non-contiguous
inputs give eager's values and eager's output layout (libtorch's own kernels), and eager's
errors for sizes that do not fit. Convolution stacks (`conv_chain`, kept in oneDNN's layout
between convolutions eager runs on oneDNN) give eager's bits over fixed and random
configurations."""

from __future__ import annotations

import random

import pytest
import torch

import torchlower
from test_native_cpu import CORPUS, assert_matches_eager, import_path


@pytest.fixture(scope="module")
def vision():
    module = import_path(CORPUS / "vision.py")
    names = ["conv_block", "pools", "upsample", "transposed", "same_padding"]
    compiled = {name: torchlower.compile(getattr(module, name)) for name in names}
    for name, fn in compiled.items():
        assert fn.route == "native", f"{name}: {fn.reason}"
    return module, compiled


def _args(name: str):
    torch.manual_seed(0)
    x = torch.randn(2, 4, 12, 12)
    return {
        "conv_block": (x, torch.randn(6, 4, 3, 3), torch.randn(6)),
        "pools": (x,),
        "upsample": (x, torch.randn(5, 4, 3, 3), torch.randn(5)),
        "transposed": (x, torch.randn(4, 3, 3, 3), torch.randn(3)),
        "same_padding": (x, torch.randn(6, 4, 3, 3)),
    }[name]


@pytest.mark.parametrize("name", ["conv_block", "pools", "upsample", "transposed", "same_padding"])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "strided"])
def test_layouts_give_eagers_values_and_layout(vision, name, layout):
    module, compiled = vision
    args = list(_args(name))
    if layout == "channels_last":
        args[0] = args[0].to(memory_format=torch.channels_last)
    elif layout == "strided":
        args[0] = args[0].transpose(2, 3).contiguous().transpose(2, 3)
    native, eager = compiled[name](*args), getattr(module, name)(*args)
    assert_matches_eager(native, eager)
    assert native.stride() == eager.stride(), f"{name} on {layout}: strides {native.stride()} vs {eager.stride()}"


def test_size_errors_are_eagers(vision, native_mode):
    module, compiled = vision
    x, w, b = torch.randn(2, 3, 8, 8), torch.randn(6, 4, 3, 3), torch.randn(6)  # 3 channels, weight wants 4
    with pytest.raises(RuntimeError) as eager:
        module.conv_block(x, w, b)
    with pytest.raises(RuntimeError) as native:
        compiled["conv_block"](x, w, b)
    assert str(native.value) == str(eager.value)


@pytest.fixture(scope="module")
def max_pools_fixture():
    module = import_path(CORPUS / "vision.py")
    compiled = torchlower.compile(module.max_pools)
    assert compiled.route == "native", compiled.reason
    return module.max_pools, compiled


def _pool_input(shape, specials: bool) -> torch.Tensor:
    """Random values, or (with `specials`) a palette of ties, signed zeros, infinities and
    NaNs with distinct payloads, so which element of a window is picked shows in the bits."""
    g = torch.Generator().manual_seed(1)
    if not specials:
        return torch.randn(*shape, generator=g)
    palette = torch.tensor([1.0, 1.0, 0.0, -0.0, float("inf"), float("-inf"), -1.0, 0.5])
    x = palette[torch.randint(0, len(palette), shape, generator=g)]
    bits = x.view(torch.int32).view(-1)
    nan = torch.randint(0, 9, bits.shape, generator=g) == 0
    bits[nan] = 0x7FC00000 + torch.arange(int(nan.sum()), dtype=torch.int32)
    return x


@pytest.mark.parametrize("shape", [(2, 3, 12, 13), (1, 64, 24, 24), (5, 1, 7, 9), (3, 2, 4, 4)])
@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "strided"])
def test_max_pools_are_eagers_bit_for_bit(max_pools_fixture, shape, specials, layout, native_mode):
    eager, native = max_pools_fixture
    x = _pool_input(shape, specials)
    if layout == "channels_last":
        x = x.to(memory_format=torch.channels_last)
    elif layout == "strided":
        x = x.transpose(2, 3).contiguous().transpose(2, 3)
    got, want = native(x), eager(x)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.stride() == w.stride()
        # the same element: equal bits, signed zeros and NaN payloads included
        assert torch.equal(g.view(torch.int32), w.view(torch.int32))


@pytest.mark.parametrize("threads", [1, 2])
def test_max_pools_on_threads(max_pools_fixture, threads, torch_threads):
    eager, native = max_pools_fixture
    torch_threads(threads)
    # planes large and small: 64 of 24×24, and 1,024 of 3×64 (and 1,536 rows of 64 for 1-D)
    for shape in [(64, 64, 24, 24), (2, 512, 3, 64)]:
        x = _pool_input(shape, False)
        for g, w in zip(native(x), eager(x)):
            assert torch.equal(g.view(torch.int32), w.view(torch.int32))


def test_max_pool_window_larger_than_input_is_eagers_error(max_pools_fixture, native_mode):
    eager, native = max_pools_fixture
    x = torch.randn(1, 1, 2, 2)
    with pytest.raises(RuntimeError) as want:
        eager(x)
    with pytest.raises(RuntimeError) as got:
        native(x)
    assert str(got.value) == str(want.value)



def _conv_input(shape, specials: bool, seed: int) -> torch.Tensor:
    """Random values, or (with `specials`) one in eight a signed zero, an infinity or a NaN."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g)
    if specials:
        palette = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan")])
        pick = torch.randint(0, 40, shape, generator=g)
        x = torch.where(pick < len(palette), palette[pick.clamp(max=len(palette) - 1)], x)
    return x


def _same_bits(got, want):
    got, want = (got,) if isinstance(got, torch.Tensor) else got, (want,) if isinstance(want, torch.Tensor) else want
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.stride() == w.stride()
        assert torch.equal(g.view(torch.int32), w.view(torch.int32))


@pytest.fixture(scope="module")
def chains():
    module = import_path(CORPUS / "conv_chains.py")
    names = ["mnist_features", "vgg_block", "lenet", "strided_stack", "conv_pool", "sequential_features", "feature_read_twice", "configurable_stack"]
    compiled = {name: torchlower.compile(getattr(module, name)) for name in names}
    for name, fn in compiled.items():
        assert fn.route == "native", f"{name}: {fn.reason}"
    return module, compiled


def _chain_args(name: str, batch: int, specials: bool):
    """Arguments at the sizes of the models the functions come from."""
    x = lambda *shape: _conv_input(shape, specials, seed=1)  # noqa: E731
    w = lambda *shape: torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape))) / (shape[1] * shape[2] * shape[3]) ** 0.5  # noqa: E731
    b = lambda n: torch.randn(n, generator=torch.Generator().manual_seed(n))  # noqa: E731
    return {
        "mnist_features": (x(batch, 1, 28, 28), w(32, 1, 3, 3), b(32), w(64, 32, 3, 3), b(64)),
        "vgg_block": (x(batch, 3, 32, 32), w(64, 3, 3, 3), b(64), w(64, 64, 3, 3), b(64)),
        "lenet": (x(batch, 1, 32, 32), w(6, 1, 5, 5), b(6), w(16, 6, 5, 5), b(16), w(10, 400, 1, 1).view(10, 400)),
        "strided_stack": (x(batch, 8, 33, 31), w(24, 8, 3, 3), w(24, 24, 3, 3), w(40, 24, 1, 1)),
        "conv_pool": (x(batch, 16, 14, 14), w(32, 16, 3, 3)),
        "sequential_features": (x(batch, 3, 20, 20), w(32, 3, 3, 3), b(32), w(32, 32, 3, 3), b(32)),
        "feature_read_twice": (x(batch, 16, 12, 12), w(16, 16, 3, 3), w(32, 16, 3, 3)),
    }[name]


@pytest.mark.parametrize("name", ["mnist_features", "vgg_block", "lenet", "strided_stack", "conv_pool", "sequential_features", "feature_read_twice"])
@pytest.mark.parametrize("batch", [1, 2, 16])
@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_convolution_chains_are_eagers_bits(chains, name, batch, specials, threads, torch_threads, native_mode):
    """`conv_chain` (the value kept in oneDNN's layout between convolutions eager runs on
    oneDNN, ReLU and the max pool on it): eager's bits, NaN payloads and signed zeros
    included, at batch sizes where eager runs oneDNN and where it does not, with channel
    counts on and off oneDNN's blocks of 16, and the special values that send the pool back
    to eager's kernel."""
    module, compiled = chains
    torch_threads(threads)
    args = _chain_args(name, batch, specials)
    _same_bits(compiled[name](*args), getattr(module, name)(*args))


def test_convolution_chains_run_on_onednn_where_eager_does():
    """The chains above are exercised on oneDNN's layout: eager picks oneDNN for the MNIST
    stack's convolutions at batch 16 (and not for the first one of a single image)."""
    x, w1, b1, w2, b2 = _chain_args("mnist_features", 16, False)
    backend = torch._C._select_conv_backend(x, w1, b1, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, None)
    assert backend == torch._C._ConvBackend.Mkldnn
    h = torch.empty(16, 32, 26, 26)
    assert torch._C._select_conv_backend(h, w2, b2, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, None) == torch._C._ConvBackend.Mkldnn


@pytest.mark.parametrize("batch", [2, 16])
def test_pooled_infinities_are_eagers(chains, batch, torch_threads):
    """A window of `-inf` convolution results pools to `-inf` (oneDNN's pool would give the
    lowest finite float), next to windows of finite values and of zeros of both signs."""
    module, compiled = chains
    torch_threads(1)
    x = torch.randn(batch, 16, 14, 14)
    x[:, :, :6, :6] = float("-inf")  # every product of a positive weight: -inf
    x[:, :, 8:, 8:] = 0.0
    x[:, :3, 8:, 8:] = -0.0
    w = torch.rand(32, 16, 3, 3)  # positive
    got, want = compiled["conv_pool"](x, w), module.conv_pool(x, w)
    assert torch.isneginf(want).any() and (want == 0).any()
    _same_bits(got, want)


@pytest.mark.parametrize("layout", ["channels_last", "strided"])
def test_convolution_chains_on_other_layouts_are_eagers(chains, layout):
    module, compiled = chains
    args = list(_chain_args("vgg_block", 16, False))
    args[0] = args[0].to(memory_format=torch.channels_last) if layout == "channels_last" else args[0].transpose(2, 3).contiguous().transpose(2, 3)
    _same_bits(compiled["vgg_block"](*args), module.vgg_block(*args))


def test_convolution_chain_errors_are_eagers(chains, native_mode):
    """A second convolution whose weight does not fit the first one's result raises eager's
    error from the middle of the chain."""
    module, compiled = chains
    x, w1, b1, _, b2 = _chain_args("mnist_features", 16, False)
    w2 = torch.randn(64, 16, 3, 3)  # expects 16 channels, gets 32
    with pytest.raises(RuntimeError) as eager:
        module.mnist_features(x, w1, b1, w2, b2)
    with pytest.raises(RuntimeError) as native:
        compiled["mnist_features"](x, w1, b1, w2, b2)
    assert str(native.value) == str(eager.value)
    x = torch.randn(16, 1, 3, 3)  # the pool's window does not fit the 1×1 result
    with pytest.raises(RuntimeError) as eager:
        module.mnist_features(x, w1, b1, _chain_args("mnist_features", 16, False)[3], b2)
    with pytest.raises(RuntimeError) as native:
        compiled["mnist_features"](x, w1, b1, _chain_args("mnist_features", 16, False)[3], b2)
    assert str(native.value) == str(eager.value)


def _random_stack(rng: random.Random):
    """One random configuration of `configurable_stack`: channel counts on and off oneDNN's
    blocks, grouped first convolutions, kernels 1–5, strides, padding, dilation, pools; some
    do not fit (a kernel larger than its padded input, a pool window larger than the result)."""
    batch = rng.choice([1, 2, 3, 16, 20])
    c_in, g1 = rng.choice([(1, 1), (3, 1), (8, 1), (16, 1), (17, 1), (32, 1), (16, 4), (32, 32), (12, 3)])
    c_mid = g1 * rng.choice([1, 2, 3, 8, 16]) if g1 > 1 else rng.choice([6, 16, 24, 32, 48])
    c_out = rng.choice([8, 16, 20, 64])
    k1, k2 = rng.randint(1, 5), rng.randint(1, 3)
    s1, p1, d1 = rng.randint(1, 3), rng.randint(0, 2), rng.randint(1, 2)
    s2, p2, k = rng.randint(1, 2), rng.randint(0, 1), rng.randint(1, 3)
    h, w = rng.randint(6, 30), rng.randint(6, 30)
    g = torch.Generator().manual_seed(rng.randint(0, 2**31))
    return (
        torch.randn(batch, c_in, h, w, generator=g),
        torch.randn(c_mid, c_in // g1, k1, k1, generator=g) / (c_in // g1 * k1 * k1) ** 0.5,
        torch.randn(c_mid, generator=g),
        torch.randn(c_out, c_mid, k2, k2, generator=g) / (c_mid * k2 * k2) ** 0.5,
        torch.randn(c_out, generator=g),
        s1, p1, d1, g1, s2, p2, k,
    )


@pytest.mark.parametrize("threads", [1, 2])
def test_random_convolution_chains_are_eagers(chains, threads, torch_threads, native_mode):
    """120 random configurations: eager's bits where eager computes, eager's error text where it
    raises; and most of them run oneDNN for their first convolution (the chain's fast path)."""
    module, compiled = chains
    torch_threads(threads)
    rng = random.Random(threads)
    onednn = computed = 0
    for _ in range(120):
        args = _random_stack(rng)
        x, w1, b1, *_, s1, p1, d1, g1 = args[:9]
        try:
            want = module.configurable_stack(*args)
        except RuntimeError as eager:
            with pytest.raises(RuntimeError) as native:
                compiled["configurable_stack"](*args)
            assert str(native.value) == str(eager), [a.shape if isinstance(a, torch.Tensor) else a for a in args]
            continue
        computed += 1
        backend = torch._C._select_conv_backend(x, w1, b1, [s1] * 2, [p1] * 2, [d1] * 2, False, [0, 0], g1, None)
        onednn += backend == torch._C._ConvBackend.Mkldnn
        _same_bits(compiled["configurable_stack"](*args), want)
    assert computed >= 60 and onednn >= computed // 2, (computed, onednn)
