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

from test_fusion_pass import FUSION
from test_native_cpu import compiled_native, native_corpus_module, run_both, special_tensor

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
    source = tmp_path_factory.mktemp("threads") / "gelu_alone.py"
    source.write_text(
        "import torch.nn.functional as F\n"
        "from torchlower.types import TensorF32Cpu2D\n\n\n"
        "def gelu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
        "    return F.gelu(x)\n"
    )
    return native_corpus_module(source)


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
