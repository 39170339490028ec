"""Native kernels split over torch's threads give eager's bits.

Above libtorch's grain size (2^15 elements) and with more than one torch thread, the fused
elementwise pass is shared among torch's intra-op threads (`tl_parallel_for`, libtorch's own
`at::parallel_for`). Each element is computed as on one thread, so the result must equal
eager's bit for bit whatever the thread count: checked at 1, 2 and 3 threads, on shapes whose
segments do not divide evenly, with special values, a broadcast row and a strided (non-contiguous) operand.
"""

from __future__ import annotations

import pytest
import torch
import torchlower

from test_fusion_pass import FUSION
from test_native_cpu import compiled_native, native_corpus_module, run_both, special_tensor

def module_from_source(tmp_path_factory, name: str, source: str):
    """The module `name` written from `source` into a temporary folder, built natively (asserted)."""
    path = tmp_path_factory.mktemp("threads") / f"{name}.py"
    path.write_text(source)
    return native_corpus_module(path)


# rows × cols around and above the grain: uneven segment counts, a row longer than a segment
SHAPES = [(256, 129), (300, 1000), (3, 20000), (1024, 64)]


@pytest.fixture(params=[1, 2, 3], ids=lambda n: f"{n}t")
def threads(request):
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def fusion():
    return native_corpus_module(FUSION)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_elementwise_chain_with_a_broadcast_row(fusion, threads, shape):
    rows, cols = shape
    g = torch.Generator().manual_seed(rows * cols)
    a = torch.randn(rows, cols, generator=g)
    a[::7] = special_tensor((cols,), 1)
    b = torch.randn(cols, generator=g)
    run_both(compiled_native(fusion, "elementwise_chain"), fusion.elementwise_chain, [a, b])


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_unary_chain_on_a_strided_operand(fusion, threads, shape):
    rows, cols = shape
    # a view of every other row's first `cols` columns: rows do not follow each other in memory
    x = torch.randn(2 * rows, cols + 3, generator=torch.Generator().manual_seed(rows))[::2, :cols]
    x[::5] = special_tensor((cols,), 2)
    run_both(compiled_native(fusion, "unary_chain"), fusion.unary_chain, [x])


@pytest.fixture(scope="module")
def gelu_alone(tmp_path_factory):
    return module_from_source(tmp_path_factory, "gelu_alone", (
        "import torch.nn.functional as F\n"
        "from torchlower.types import TensorF32Cpu2D\n\n\n"
        "def gelu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
        "    return F.gelu(x)\n"
    ))


def test_gelu_alone_at_every_thread_count(gelu_alone, threads):
    x = torch.randn(512, 300, generator=torch.Generator().manual_seed(3)) * 4
    x[::9] = special_tensor((300,), 3)
    run_both(compiled_native(gelu_alone, "gelu"), gelu_alone.gelu, [x])


# Epilogues after a GEMM: bias and ops split by rows over the threads (sigmoid is ours on AVX2
# CPUs and libtorch's whole-buffer kernel on AVX-512 ones: both paths are covered somewhere).
@pytest.mark.parametrize("name", ["matmul_bias_sigmoid", "matmul_bias", "nested_epilogues"])
def test_square_weight_epilogues(fusion, threads, name):
    g = torch.Generator().manual_seed(len(name))
    x = torch.randn(300, 160, generator=g)
    x[::11] = special_tensor((160,), 4)
    w = torch.randn(160, 160, generator=g) / 8
    b = torch.randn(160, generator=g)
    run_both(compiled_native(fusion, name), getattr(fusion, name), [x, w, b])


def test_weight_tied_layer_loop(fusion, threads):
    g = torch.Generator().manual_seed(5)
    x, w, b = torch.randn(400, 128, generator=g), torch.randn(128, 128, generator=g) / 11, torch.randn(128, generator=g)
    run_both(compiled_native(fusion, "one_statement_loop"), fusion.one_statement_loop, [x, w, b, 3])


@pytest.fixture(scope="module")
def where_alone(tmp_path_factory):
    return module_from_source(tmp_path_factory, "where_alone", (
        "import torch\n"
        "from torchlower.types import TensorBoolCpu1D, TensorBoolCpu2D, TensorBoolCpu4D, TensorF32Cpu2D, TensorF32Cpu4D\n\n\n"
        "def select(m: TensorBoolCpu2D, x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
        "    return torch.where(m, x, y)\n\n\n"
        "def select_row(m: TensorBoolCpu1D, x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
        "    return torch.where(m, x, y)\n\n\n"
        "def fill_causal(x: TensorF32Cpu4D, m: TensorBoolCpu2D, value: float) -> TensorF32Cpu4D:\n"
        "    return x.masked_fill(m, value)\n\n\n"
        "def fill(x: TensorF32Cpu4D, m: TensorBoolCpu4D, value: float) -> TensorF32Cpu4D:\n"
        "    return torch.masked_fill(x, m, value)\n"
    ))


def assert_same_bits(native, eager):
    """A selection copies values: native and eager agree bit for bit, and in strides."""
    assert native.stride() == eager.stride()
    assert torch.equal(native.view(torch.int32), eager.view(torch.int32))


# `torch.where` of one shape is our select loop (split over threads above the grain); a
# broadcast or strided operand is libtorch's kernel: both give eager's bits, -0.0 and NaN included.
@pytest.mark.parametrize("shape", [(1, 64), *SHAPES], ids=lambda s: f"{s[0]}x{s[1]}")
def test_where_of_one_shape(where_alone, threads, shape):
    rows, cols = shape
    g = torch.Generator().manual_seed(rows + cols)
    x, y = torch.randn(rows, cols, generator=g), torch.randn(rows, cols, generator=g)
    x[::3], y[1::3] = special_tensor((cols,), 1), special_tensor((cols,), 2)
    m = torch.rand(rows, cols, generator=g) > 0.5
    select = compiled_native(where_alone, "select")
    run_both(select, where_alone.select, [m, x, y])
    assert_same_bits(select(m, x, y), where_alone.select(m, x, y))
    transposed_mask = (torch.rand(cols, rows, generator=g) > 0.5).t()
    run_both(select, where_alone.select, [transposed_mask, x, y])
    strided = torch.randn(2 * rows, cols + 3, generator=g)[::2, :cols]
    run_both(select, where_alone.select, [m, strided, y])
    run_both(compiled_native(where_alone, "select_row"), where_alone.select_row, [m[0].clone(), x, y])
    run_both(select, where_alone.select, [m[:, :2].contiguous(), x, y])  # does not broadcast: eager's error


# `masked_fill` with a mask over the trailing dims (a causal mask broadcast over batch and
# heads, or the whole shape) is our fill loop; a mask over leading dims, a strided operand or a
# value beyond float32 is libtorch's (eager's error for the last).
@pytest.mark.parametrize("shape", [(1, 1, 5, 5), (2, 3, 64, 64), (4, 4, 129, 129)], ids=lambda s: "x".join(map(str, s)))
def test_masked_fill_of_a_causal_or_full_mask(where_alone, threads, shape):
    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(shape, generator=g)
    x[..., ::4, :] = special_tensor(shape[-1:], 2)
    causal = torch.ones(shape[-2:], dtype=torch.bool).triu(1)
    fill_causal, fill = compiled_native(where_alone, "fill_causal"), compiled_native(where_alone, "fill")
    for value in (float("-inf"), -0.0, float("nan"), 0.1, 3.4e38):
        run_both(fill_causal, where_alone.fill_causal, [x, causal, value])
        assert_same_bits(fill_causal(x, causal, value), where_alone.fill_causal(x, causal, value))
    run_both(fill_causal, where_alone.fill_causal, [x, causal, 1e39])  # eager's overflow error
    run_both(fill_causal, where_alone.fill_causal, [x, causal.t(), -1.5])  # a strided mask
    run_both(fill_causal, where_alone.fill_causal, [x.transpose(-1, -2), causal, -1.5])  # a strided x
    run_both(fill_causal, where_alone.fill_causal, [x, causal[:, :1].contiguous(), -1.5])  # a column broadcast
    full = torch.rand(shape, generator=g) > 0.5
    run_both(fill, where_alone.fill, [x, full, float("-inf")])
    assert_same_bits(fill(x, full, -0.0), where_alone.fill(x, full, -0.0))
    run_both(fill, where_alone.fill, [x, full[:1].contiguous(), 2.0])  # a leading-dim broadcast
    run_both(fill, where_alone.fill, [x[:, :, :1], full, 2.0])  # eager's error: x would broadcast


@pytest.fixture(scope="module")
def silu_blocks(tmp_path_factory):
    return module_from_source(tmp_path_factory, "silu_blocks", (
        "import torch.nn.functional as F\n"
        "from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D\n\n\n"
        "def linear_silu(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:\n"
        "    return F.silu(F.linear(x, w, b))\n\n\n"
        "def swiglu(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, w2: TensorF32Cpu2D, w3: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
        "    return F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2)\n"
    ))


# SiLU is an element function of the fused kernels: a GEMM epilogue (ours where our model
# agrees with this CPU's kernel, else libtorch's kernel on the whole GEMM buffer) and SwiGLU.
@pytest.mark.parametrize("rows", [1, 8, 300])
def test_silu_epilogue_and_swiglu(silu_blocks, threads, rows):
    g = torch.Generator().manual_seed(rows)
    x = torch.randn(rows, 96, generator=g) * 3
    x[::7] = special_tensor((96,), 5)
    w, b = torch.randn(160, 96, generator=g) / 8, torch.randn(160, generator=g)
    run_both(compiled_native(silu_blocks, "linear_silu"), silu_blocks.linear_silu, [x, w, b])
    w1, w3, w2 = torch.randn(256, 96, generator=g) / 8, torch.randn(256, 96, generator=g) / 8, torch.randn(96, 256, generator=g) / 16
    run_both(compiled_native(silu_blocks, "swiglu"), silu_blocks.swiglu, [x, w1, w2, w3])


@pytest.fixture(scope="module")
def conversions(tmp_path_factory):
    return module_from_source(tmp_path_factory, "conversions", (
        "from torchlower.types import TensorBoolCpu3D, TensorF32Cpu3D, TensorI64Cpu3D\n\n\n"
        "def from_float(x: TensorF32Cpu3D) -> tuple[TensorI64Cpu3D, TensorBoolCpu3D, TensorF32Cpu3D]:\n"
        "    return x.long(), x.bool(), x.float()\n\n\n"
        "def from_int64(i: TensorI64Cpu3D) -> tuple[TensorF32Cpu3D, TensorBoolCpu3D]:\n"
        "    return i.float(), i.bool()\n\n\n"
        "def from_bool(m: TensorBoolCpu3D) -> tuple[TensorF32Cpu3D, TensorI64Cpu3D, TensorBoolCpu3D]:\n"
        "    return m.float(), m.long(), ~m\n"
    ))


def assert_same_values_and_strides(native, eager):
    for n, e in zip(native, eager, strict=True):
        assert n.dtype == e.dtype and n.shape == e.shape and n.stride() == e.stride()
        assert torch.equal(n.flatten().view(torch.uint8), e.flatten().view(torch.uint8))


# Conversions and `~` of contiguous tensors are our loops (float → int64 only where this CPU's
# libtorch converts NaN, ±Inf and out-of-range values as x86's truncation does); the values,
# bit for bit, and the strides are eager's, at every thread count.
@pytest.mark.parametrize("shape", [(1, 1, 64), (3, 50, 700)], ids=lambda s: "x".join(map(str, s)))
def test_dtype_conversions_and_negation(conversions, threads, shape):
    g = torch.Generator().manual_seed(shape[-1])
    x = torch.randn(shape, generator=g) * 1e10
    x[..., :11] = torch.tensor([float("nan"), float("inf"), -float("inf"), 1e19, -1e19, -9.223372e18, 2.5, -2.5, -0.0, 0.999, 16777217.0])
    i = torch.randint(-(2**62), 2**62, shape, generator=g)
    i[..., :3] = torch.tensor([0, 2**53 + 1, -(2**63)])
    m = torch.rand(shape, generator=g) > 0.5
    for fn, arg in ((conversions.from_float, x), (conversions.from_int64, i), (conversions.from_bool, m)):
        compiled = compiled_native(conversions, fn.__name__)
        assert_same_values_and_strides(compiled(arg), fn(arg))
        strided = arg.transpose(0, 2)  # libtorch's kernel: eager's strides too
        assert_same_values_and_strides(compiled(strided), fn(strided))
        run_both(compiled, fn, [arg])


ACTS_ON_FRESH = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "from torchlower.types import TensorF32Cpu1D, TensorF32Cpu3D, TensorF32Cpu4D\n\n\n"
    "def conv_relu(x: TensorF32Cpu4D, w: TensorF32Cpu4D, b: TensorF32Cpu1D) -> TensorF32Cpu4D:\n"
    "    return F.relu(F.conv2d(x, w, b, padding=1))\n\n\n"
    "def conv1d_gelu_neg(x: TensorF32Cpu3D, w: TensorF32Cpu3D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:\n"
    "    return -F.gelu(F.conv1d(x, w, b))\n\n\n"
    "def bn_silu(x: TensorF32Cpu4D, mean: TensorF32Cpu1D, var: TensorF32Cpu1D, g: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu4D:\n"
    "    return F.silu(F.batch_norm(x, mean, var, g, b, False, 0.1, 1e-5))\n\n\n"
    "def ln_tanh(x: TensorF32Cpu3D, w: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:\n"
    "    return torch.tanh(F.layer_norm(x, (x.shape[-1],), w, b))\n"
)


@pytest.fixture(scope="module")
def acts_on_fresh(tmp_path_factory):
    return module_from_source(tmp_path_factory, "acts_on_fresh", ACTS_ON_FRESH)


def test_activations_after_convolutions_and_norms_run_in_place():
    """The fusion pass turns `act(conv(…))` / `act(norm(…))` into one `acts_in_place` call,
    the convolution or norm staying its own site inside it."""
    report = torchlower.analyze(ACTS_ON_FRESH, "acts_on_fresh.py")
    for function in report["functions"]:
        assert function["route"] == "native", function["name"]
        fused = {site.get("fused_into") for site in function["sites"]}
        assert "acts_in_place" in fused, (function["name"], fused)


# In place on the fresh result: eager's bits and strides (channels-last too), at every thread
# count (the contiguous path splits rows over threads where every op is ours).
@pytest.mark.parametrize("batch", [1, 16])
def test_acts_in_place_match_eager(acts_on_fresh, threads, batch):
    g = torch.Generator().manual_seed(batch)
    x = torch.randn(batch, 8, 20, 24, generator=g) * 2
    x[:, :, ::5] = special_tensor((24,), 3)
    w, b = torch.randn(16, 8, 3, 3, generator=g) / 4, torch.randn(16, generator=g)
    conv_relu = compiled_native(acts_on_fresh, "conv_relu")
    for layout in (x, x.to(memory_format=torch.channels_last)):
        native, eager = conv_relu(layout, w, b), acts_on_fresh.conv_relu(layout, w, b)
        assert native.stride() == eager.stride()
        assert torch.equal(native.flatten().view(torch.int32), eager.flatten().view(torch.int32))
        run_both(conv_relu, acts_on_fresh.conv_relu, [layout, w, b])
    x1, w1 = torch.randn(batch, 8, 300, generator=g), torch.randn(12, 8, 5, generator=g) / 4
    run_both(compiled_native(acts_on_fresh, "conv1d_gelu_neg"), acts_on_fresh.conv1d_gelu_neg, [x1, w1, torch.randn(12, generator=g)])
    stats = [torch.randn(8, generator=g), torch.rand(8, generator=g) + 0.5, torch.randn(8, generator=g), torch.randn(8, generator=g)]
    run_both(compiled_native(acts_on_fresh, "bn_silu"), acts_on_fresh.bn_silu, [x, *stats])
    run_both(compiled_native(acts_on_fresh, "bn_silu"), acts_on_fresh.bn_silu, [x, stats[0][:3], *stats[1:]])  # eager's error
    x3 = torch.randn(batch, 40, 24, generator=g)
    run_both(compiled_native(acts_on_fresh, "ln_tanh"), acts_on_fresh.ln_tanh, [x3, torch.randn(24, generator=g), torch.randn(24, generator=g)])
