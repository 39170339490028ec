"""Native functions under load: many Python threads at once give the single-threaded results,
and a million calls leave the process's memory where it was (docs/reliability.md)."""

from __future__ import annotations

import os
import threading

import pytest
import torch

import torchlower
from test_native_cpu import CORPUS, corpus_module

THREADS, CALLS_PER_THREAD = 8, 2_000
MILLION = 1_000_000


def _rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture(scope="module")
def fused():
    """Two compiled functions of the fusion corpus: a linear epilogue and an elementwise chain."""
    module, build = corpus_module(CORPUS / "fusion.py")
    assert build.error is None, str(build.error)
    compiled = {name: torchlower.compile(getattr(module, name)) for name in ("linear_relu_mean", "elementwise_chain")}
    assert all(f.route == "native" for f in compiled.values())
    return compiled


def test_many_threads_get_the_single_threaded_results(fused):
    generator = torch.Generator().manual_seed(0)
    cases = [(torch.randn(4, 16, generator=generator), torch.randn(8, 16, generator=generator), torch.randn(8, generator=generator)) for _ in range(THREADS)]
    expected = [(fused["linear_relu_mean"](x, w, b), fused["elementwise_chain"](x, w[0, :16])) for x, w, b in cases]
    failures: list[str] = []
    start = threading.Barrier(THREADS)

    def worker(index: int) -> None:
        x, w, b = cases[index]
        start.wait()
        for call in range(CALLS_PER_THREAD):
            got = (fused["linear_relu_mean"](x, w, b), fused["elementwise_chain"](x, w[0, :16]))
            if not all(torch.equal(g, e) for g, e in zip(got, expected[index])):
                failures.append(f"thread {index}, call {call}")
                return

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:5]


def test_a_million_calls_keep_memory_steady(fused):
    chain = fused["elementwise_chain"]
    a, b = torch.randn(2, 8), torch.randn(8)
    for _ in range(20_000):  # allocator and caches warm
        chain(a, b)
    before = _rss_bytes()
    for _ in range(MILLION):
        chain(a, b)
    grown = _rss_bytes() - before
    # a leak of one tensor handle per call would be tens of megabytes
    assert grown < 8 << 20, f"RSS grew by {grown / 2**20:.1f} MiB over {MILLION:,} calls"
