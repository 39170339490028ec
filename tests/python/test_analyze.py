"""The analyzer wasm run through wasmtime (``torchlower.analyze``): parity with the native
analyzer on the whole corpus, every sandbox limit, the compiled-module cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import torchlower
from torchlower import AnalyzerError, _analyze, _native

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted((REPO / "tests" / "corpus").rglob("*.py"))

SMALL_MODULE = textwrap.dedent(
    """
    import torch
    import torch.nn.functional as F
    from torchlower.types import TensorF32Cpu2D, TensorF32Cpu1D

    def mlp(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
        return F.linear(x, w, b).relu()
    """
)


def assert_still_works() -> None:
    """After any failure, the same process's next analysis succeeds."""
    report = torchlower.analyze(SMALL_MODULE, "after.py")
    assert report["filename"] == "after.py"
    assert [f["name"] for f in report["functions"]] == ["mlp"]


@pytest.fixture(scope="session")
def native_analyzer() -> Path:
    """The native `torchlower-analyze` binary (built here if needed: cargo is a no-op when it
    is up to date)."""
    subprocess.run(
        ["cargo", "build", "--quiet", "--release", "-p", "torchlower-analyzer", "--bin", "torchlower-analyze"],
        cwd=REPO,
        check=True,
    )
    binary = REPO / "target" / "release" / "torchlower-analyze"
    assert binary.is_file()
    return binary


# --- parity -----------------------------------------------------------------------------------


def test_corpus_is_not_empty():
    assert len(CORPUS) >= 10


@pytest.mark.parametrize("path", CORPUS, ids=[str(p.relative_to(REPO / "tests" / "corpus")) for p in CORPUS])
def test_wasm_report_matches_native_byte_for_byte(path: Path, native_analyzer: Path):
    """The native CLI prints the report indented (serde_json's pretty printer) while the ABI
    returns it compact; the wasm's report, indented the same way (two spaces, `": "`, no
    ASCII escaping), must equal the native output byte for byte."""
    name = str(path.relative_to(REPO))
    native = subprocess.run([str(native_analyzer), name], cwd=REPO, capture_output=True, check=True).stdout
    wasm = _analyze.analyze_json(path.read_bytes(), name)
    assert "\n" not in wasm  # compact, as the ABI promises
    reindented = json.dumps(json.loads(wasm), indent=2, ensure_ascii=False) + "\n"
    assert reindented.encode() == native
    assert torchlower.analyze(path.read_text(encoding="utf-8"), name) == json.loads(native)


def test_report_shape():
    report = torchlower.analyze(SMALL_MODULE)
    assert report["schema"] == 1
    assert report["filename"] == "<string>"
    (function,) = report["functions"]
    assert function["route"] == "native"
    assert {site["outcome"] for site in function["sites"]} == {"claimed"}


# --- limits: each ends in AnalyzerError with its reason, and the next call works -------------


def nested_expression(depth: int) -> str:
    return "def f(x):\n    return " + "(" * depth + "x" + ")" * depth + "\n"


def test_50000_deep_nesting_is_a_clean_outcome():
    """A 50,000-deep parenthesised expression. The analyzer bounds its own nesting (TL002
    diagnostic); if a future analyzer recursed instead, the sandbox's stack limit must stop
    it. Either way: no crash, and the process keeps working."""
    try:
        report = torchlower.analyze(nested_expression(50_000), "deep.py")
    except AnalyzerError as exc:
        assert exc.kind == "stack_overflow", exc
    else:
        codes = {d["code"] for f in report["functions"] for d in f["diagnostics"]}
        codes |= {d["code"] for d in report["diagnostics"]}
        assert "TL002" in codes, codes
    assert_still_works()


def test_deep_recursion_hits_the_stack_limit():
    """200,000 nested `lambda:` is recursed into by the analyzer (its nesting guard counts
    brackets), so the default 4 MiB wasm stack runs out: a stack_overflow AnalyzerError."""
    source = "f = " + "lambda: " * 200_000 + "1\n"
    try:
        report = torchlower.analyze(source, "lambdas.py")
    except AnalyzerError as exc:
        assert exc.kind == "stack_overflow", exc
        assert "stack overflow" in str(exc)
    else:  # an analyzer that bounds this nesting too must say so in a diagnostic
        codes = {d["code"] for d in report["diagnostics"]}
        assert "TL002" in codes, f"a 200,000-deep lambda must be refused as too deep, got {codes}"
    assert_still_works()


def test_stack_limit_on_a_small_stack():
    """The stack limit itself, independent of what the analyzer bounds: 3,000 nested
    `lambda:` analyze within the default 4 MiB wasm stack but not within 64 KiB, where the
    call fails cleanly and the same engine then analyzes the next source."""
    source = ("f = " + "lambda: " * 3_000 + "1\n").encode()
    assert json.loads(_analyze.analyze_json(source, "lambdas.py"))["filename"] == "lambdas.py"
    small = _native.Analyzer(str(_analyze.WASM_PATH), None, max_wasm_stack=64 << 10)
    with pytest.raises(_native.AnalyzerSandboxError) as info:
        small.analyze(source, "lambdas.py")
    assert info.value.args[0] == "stack_overflow"
    assert json.loads(small.analyze(b"x = 1\n", "after.py"))["filename"] == "after.py"
    assert_still_works()


def test_stack_limit_is_not_a_crash_in_a_child_process():
    """Nesting far past every limit, in a child process so that a crash (rather than an
    AnalyzerError or a report) shows up as a failure instead of killing the test run."""
    code = textwrap.dedent(
        """
        import torchlower
        for source in ("x = " + "[" * 2_000_000 + "]" * 2_000_000 + "\\n",
                       "f = " + "lambda: " * 1_000_000 + "1\\n"):
            try:
                torchlower.analyze(source, "very_deep.py")
                print("report")
            except torchlower.AnalyzerError as exc:
                print(exc.kind)
        print(len(torchlower.analyze("def f(x):\\n    return x\\n")["functions"]))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    *outcomes, functions = done.stdout.split()
    assert set(outcomes) <= {"report", "stack_overflow", "memory_limit", "time_limit"}
    assert functions == "1"


def test_20_mb_file_is_refused_before_running():
    source = "x = 1\n" * (20 * 1024 * 1024 // 6 + 1)
    assert len(source) > 20 * 1024 * 1024
    with pytest.raises(AnalyzerError) as info:
        torchlower.analyze(source, "big.py")
    assert info.value.kind == "input_too_large"
    assert f"input too large ({len(source)} bytes, limit 16 MiB)" in str(info.value)
    assert_still_works()


def test_invalid_utf8_names_the_byte():
    source = b"def f(x):\n    return x  # caf\xe9\n"
    with pytest.raises(AnalyzerError) as info:
        torchlower.analyze(source, "latin1.py")
    assert info.value.kind == "invalid_utf8"
    assert f"invalid UTF-8 at byte {source.index(0xE9)}" in str(info.value)
    assert_still_works()


def test_lone_surrogate_in_str_is_invalid_utf8():
    with pytest.raises(AnalyzerError) as info:
        torchlower.analyze("x = '\udcff'\n")
    assert info.value.kind == "invalid_utf8"
    assert "at byte 5" in str(info.value)


def test_time_limit():
    """A limit far below what the analysis needs (a millisecond, so the first tick of the
    engine's 10 ms clock, for an analysis of some 50 ms): the instance is stopped mid-run."""
    source = generated_module(8000)
    with pytest.raises(AnalyzerError) as info:
        _analyze.analyze_json(source, "slow.py", time_limit=0.001)
    assert info.value.kind == "time_limit"
    assert "time limit: the analysis took more than 0.001 s" in str(info.value)
    assert_still_works()


@pytest.mark.parametrize("limit", [0, -1.0, float("nan"), float("inf")])
def test_time_limit_must_be_a_positive_number(limit: float):
    with pytest.raises(ValueError, match="time_limit must be a positive number of seconds"):
        _analyze.analyze_json("x = 1\n", "x.py", time_limit=limit)


def test_default_time_limit_is_generous_for_a_large_module():
    source = generated_module(2000)
    report = torchlower.analyze(source, "big_ok.py")
    assert len(report["functions"]) > 100


def test_memory_limit():
    """A 10,000-line module needs well over 4 MiB of linear memory (its report alone is
    several MB): under a 4 MiB cap it stops with memory_limit, under the default it works."""
    source = generated_module(10_000)
    with pytest.raises(AnalyzerError) as info:
        _analyze.analyze_json(source, "memory.py", memory_limit=4 << 20)
    assert info.value.kind == "memory_limit"
    assert "memory limit" in str(info.value)
    assert_still_works()
    assert len(json.loads(_analyze.analyze_json(source, "memory.py"))["functions"]) > 500


def test_errors_are_torchlower_analyzer_error():
    assert torchlower.AnalyzerError is AnalyzerError
    assert issubclass(AnalyzerError, Exception)


def test_gil_is_released_while_wasm_runs():
    """Two threads analysing at once both succeed (each gets its own store)."""
    import threading

    results: list[int] = []
    errors: list[BaseException] = []

    def work():
        try:
            results.append(len(torchlower.analyze(generated_module(300))["functions"]))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(set(results)) == 1 and len(results) == 4


# --- the compiled-module cache ----------------------------------------------------------------


def _fresh_process_outcome(cache_dir: Path) -> str:
    code = "from torchlower import _analyze; _analyze.analyze('x = 1\\n'); print(_analyze.cache_outcome())"
    env = dict(os.environ, TORCHLOWER_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_module_cache_miss_hit_and_corrupt_entry(tmp_path: Path):
    assert _fresh_process_outcome(tmp_path) == "miss"
    entries = list((tmp_path / "wasm").glob("*.cwasm"))
    assert len(entries) == 1
    assert _fresh_process_outcome(tmp_path) == "hit"
    entries[0].write_bytes(entries[0].read_bytes()[:1000])  # truncated: must not crash
    assert _fresh_process_outcome(tmp_path) == "replaced"
    assert _fresh_process_outcome(tmp_path) == "hit"


def test_unwritable_cache_still_analyzes(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert _fresh_process_outcome(blocker) == "disabled"


def test_wasm_ships_in_the_package_and_imports_nothing():
    data = _analyze.WASM_PATH.read_bytes()
    assert data[:4] == b"\0asm"
    analyzer = _native.Analyzer(str(_analyze.WASM_PATH), None)
    assert analyzer.cache_outcome == "disabled"
    assert json.loads(analyzer.analyze(b"x = 1\n", "m.py"))["filename"] == "m.py"


# --- helpers ----------------------------------------------------------------------------------


def generated_module(lines: int) -> str:
    """A realistic module of about `lines` lines: annotated functions using the claimed
    surface, some rejected forms, plain Python in between (shared with scripts/bench_analyze.py)."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from bench_analyze import generate_module
    finally:
        sys.path.pop(0)
    return generate_module(lines)


def test_generated_module_has_the_requested_size():
    assert abs(generated_module(2000).count("\n") - 2000) < 20
