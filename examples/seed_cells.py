"""The seed's two benchmark functions and its 12 cells, timed native vs eager.

    python examples/seed_cells.py [--samples 7] [--sample-ms 20]

Per cell: the boundary-inclusive time of one call through ``torchlower.compile`` (native) and
of the plain Python function (eager), median of interleaved samples of at least 20 ms each,
in one process with one torch thread. (``torchlower bench`` is the full harness with
TorchScript and torch.compile lanes; this script is the quick paired check.)
"""

import argparse

import torch
import torch.nn.functional as F

from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


def linear_relu_mean(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, weight, bias).relu().mean(dim=1)


def alternating(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D, depth: int, phase: int) -> TensorF32Cpu1D:
    hidden = x
    for layer in range(depth):
        if (layer + phase) % 2 == 0:
            even = hidden @ weight + bias
            hidden = even.relu()
        else:
            odd = hidden @ weight + bias
            hidden = odd.sigmoid()
    return hidden.mean(dim=1, keepdim=False)


# (batch, in, out) and (batch, width, depth, phase), from the seed's protocol
CELLS_A = [(1, 32, 32), (1, 128, 64), (8, 64, 64), (16, 128, 64), (64, 128, 64), (256, 256, 128)]
CELLS_B = [(1, 16, 4, 0), (1, 32, 8, 1), (4, 32, 16, 0), (8, 64, 16, 1), (32, 128, 8, 0), (64, 128, 16, 1)]


def main() -> None:
    import math

    import torchlower
    from torchlower._cli_build import format_table
    from torchlower._cli_run import time_pair

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--sample-ms", type=float, default=20.0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)

    native_a, native_b = torchlower.compile(linear_relu_mean), torchlower.compile(alternating)
    assert native_a.route == native_b.route == "native", (native_a.reason, native_b.reason)
    rows, ratios = [], []
    cells = [("A", native_a, linear_relu_mean, c) for c in CELLS_A] + [("B", native_b, alternating, c) for c in CELLS_B]
    for family, native, eager, cell in cells:
        if family == "A":
            batch, fan_in, fan_out = cell
            inputs = [torch.randn(batch, fan_in, generator=generator), torch.randn(fan_out, fan_in, generator=generator),
                      torch.randn(fan_out, generator=generator)]
        else:
            batch, width, depth, phase = cell
            inputs = [torch.randn(batch, width, generator=generator), torch.randn(width, width, generator=generator) / width**0.5,
                      torch.randn(width, generator=generator), depth, phase]
        torch.testing.assert_close(native(*inputs), eager(*inputs), rtol=1e-5, atol=1e-6)
        native_us, eager_us = time_pair(native, eager, inputs, args.samples, args.sample_ms)
        ratios.append(eager_us / native_us)
        rows.append([family, str(cell), f"{native_us:.2f}", f"{eager_us:.2f}", f"{eager_us / native_us:.2f}x"])
    print(format_table(["cell", "shape", "native µs", "eager µs", "speed-up"], rows))
    print(f"geometric mean speed-up: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x")


if __name__ == "__main__":
    main()
