"""The instance pool behind ``torchlower.analyze`` (host-py/src/engine.rs): slots are reused
between analyses without anything of one analysis reaching the next, callers beyond the pool's
size wait for a slot instead of failing, and the memory limit is capped at a slot's size."""

from __future__ import annotations

import json
import threading

import pytest

from torchlower import AnalyzerError, _analyze, _native

SOURCE = (
    "import torch\n"
    "from torchlower.types import TensorF32Cpu2D\n\n"
    "def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n"
    "    for k in range(n):\n"
    "        x = torch.sigmoid(x).relu()\n"
    "    return x\n"
)


def test_more_concurrent_analyses_than_slots_all_succeed():
    slots = _native.pool_slots()
    if slots == 0:
        pytest.skip("the shared engine allocates on demand here (no pool)")
    expected = _analyze.analyze_json(SOURCE, "pool.py")
    results: list[str] = []
    errors: list[BaseException] = []
    start = threading.Barrier(2 * slots + 1)

    def work():
        try:
            start.wait()
            results.append(_analyze.analyze_json(SOURCE, "pool.py"))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(2 * slots + 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[:3]
    assert results == [expected] * len(threads)


def test_a_reused_slot_starts_clean_after_a_large_analysis_and_after_traps():
    """The same report before and after analyses that filled memory, ran out of time or hit
    the memory limit in (very likely) the same slot: a slot is reset, never inherited."""
    first = _analyze.analyze_json(SOURCE, "pool.py")
    big = "\n".join(SOURCE.replace("def f(", f"def f{i}(") for i in range(400))
    assert len(json.loads(_analyze.analyze_json(big, "big.py"))["functions"]) == 400
    with pytest.raises(AnalyzerError) as slow:
        _analyze.analyze_json(big * 4, "big.py", time_limit=0.001)
    assert slow.value.kind == "time_limit"
    with pytest.raises(AnalyzerError) as memory:
        _analyze.analyze_json(big, "big.py", memory_limit=2 << 20)
    assert memory.value.kind == "memory_limit"
    assert _analyze.analyze_json(SOURCE, "pool.py") == first


def test_a_memory_limit_above_a_slot_is_capped():
    """Asking for more linear memory than a slot holds neither fails nor lifts the cap."""
    assert _native.MAX_MEMORY == _native.DEFAULT_MEMORY_LIMIT
    report = _analyze.analyze_json(SOURCE, "pool.py", memory_limit=4 * _native.MAX_MEMORY)
    assert report == _analyze.analyze_json(SOURCE, "pool.py")
