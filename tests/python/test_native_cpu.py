"""The native CPU path end to end: real cargo builds, real loads, compared with eager PyTorch.

Two sources of native code:
- ``native_cases/handwritten_lib.rs``: a lib.rs written by hand against native-backend/API.md,
  built by the real pipeline (``torchlower._build``) independently of the analyzer; it checks
  the backend (boundary, scalar semantics, errors) and the routing of ``torchlower.compile``.
- the corpus ``tests/corpus/accepted/*.py``: every function the analyzer routes native is
  compiled with ``torchlower.compile`` and compared with eager PyTorch.

Comparison (docs/architecture.md, "Exactness"): dtype, shape, device, NaN and ±Inf positions, signed zeros,
values with rtol 1e-5 / atol 1e-6, native outputs never require grad (even when inputs do),
inputs unchanged bitwise. One build per module for the whole session; the very first build
of a machine compiles tch (minutes), later ones reuse it.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import re
import shutil
import sys
import types
import uuid
import warnings
from pathlib import Path

import pytest
import torch

import torchlower
from torchlower import _build, _compile

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CASES = HERE / "native_cases"
CORPUS = REPO / "tests" / "corpus" / "accepted"

SPECIAL = [-math.inf, -3.0, -1.0, -0.0, 0.0, 1.0, 3.0, math.inf, math.nan]

torch.set_num_threads(1)


# --- comparison with eager ------------------------------------------------------------------------


def assert_matches_eager(native, eager):
    """The parity of docs/architecture.md ("Exactness"): everything eager shows, except that native never requires grad."""
    if isinstance(eager, (tuple, list)):
        # a list stays a list, a tuple a tuple (`[a, b] == (a, b)` is False in Python), and a
        # returned `x.max(dim)` / `topk` / `sort` pair eager's `torch.return_types` record
        assert type(native) is type(eager) and len(native) == len(eager), f"native {native!r} != eager {eager!r}"
        for n, e in zip(native, eager):
            assert_matches_eager(n, e)
        return
    if isinstance(eager, float) and math.isnan(eager):
        assert type(native) is float and math.isnan(native)
        return
    if not isinstance(eager, torch.Tensor):
        assert type(native) is type(eager) and native == eager, f"native {native!r} != eager {eager!r}"
        return
    assert isinstance(native, torch.Tensor), f"native returned {type(native).__name__}"
    assert native.requires_grad is False
    assert native.dtype == eager.dtype
    assert native.shape == eager.shape
    assert native.device == eager.device
    n, e = native.detach(), eager.detach()
    if not e.is_floating_point():
        assert torch.equal(n, e)
        return
    assert torch.equal(torch.isnan(n), torch.isnan(e)), "NaN positions differ"
    assert torch.equal(torch.isposinf(n), torch.isposinf(e)), "+Inf positions differ"
    assert torch.equal(torch.isneginf(n), torch.isneginf(e)), "-Inf positions differ"
    finite = torch.isfinite(e)
    torch.testing.assert_close(n[finite], e[finite], rtol=1e-5, atol=1e-6)
    zeros = (e == 0) & (n == 0)
    assert torch.equal(torch.signbit(n[zeros]), torch.signbit(e[zeros])), "signs of zeros differ"


def bitwise_copy(values):
    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in values]


# The state of torch's default generator each side of a parity check starts from.
RNG_SEED = 20261201


def twin_copy(values):
    """Copies of `values` that keep `requires_grad` (for a call that may write into them)."""
    return [v.detach().clone().requires_grad_(v.requires_grad) if isinstance(v, torch.Tensor) else v for v in values]


def assert_unchanged(before, after):
    for old, new in zip(before, after):
        if isinstance(old, torch.Tensor):
            assert old.shape == new.shape and old.dtype == new.dtype
            assert torch.equal(old.reshape(-1).contiguous().view(torch.uint8), new.detach().reshape(-1).contiguous().view(torch.uint8)), "an input was mutated"


def run_both(compiled, python_fn, inputs):
    """Native then eager on the same inputs; checks parity and that the inputs survive. Both
    start from the same state of torch's default generator (`torch.multinomial` draws from
    it, natively as in eager)."""
    before = bitwise_copy(inputs)
    try:
        torch.manual_seed(RNG_SEED)
        native = compiled(*inputs)
    except (RuntimeError, IndexError, ValueError, AssertionError) as error:
        assert_unchanged(before, inputs)
        if isinstance(error, ValueError) and "native code refuses" in str(error):
            # a documented refusal (squeeze of a dim that is not 1, a write into an argument
            # on a branch): auto mode reruns Python. Rerun and eager each get their own copies,
            # since that Python may write into its arguments, and must write as eager does.
            rerun_inputs, eager_inputs = twin_copy(inputs), twin_copy(inputs)
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("TORCHLOWER_MODE", "auto")
                try:
                    torch.manual_seed(RNG_SEED)
                    rerun = compiled(*rerun_inputs)
                except Exception as rerun_error:  # noqa: BLE001 - eager's own error, from Python
                    with pytest.raises(type(rerun_error)) as eager_error:
                        python_fn(*eager_inputs)
                    assert str(eager_error.value) == str(rerun_error)
                    return None, None
            torch.manual_seed(RNG_SEED)
            assert_matches_eager(rerun, python_fn(*eager_inputs))
            assert_unchanged(eager_inputs, rerun_inputs)
            return None, None
        # native raised: eager must raise the same, with the same message (e.g. a view of
        # sizes that do not fit); nothing was changed on the way
        with pytest.raises(type(error)) as eager_error:
            python_fn(*inputs)
        assert str(eager_error.value) == str(error)
        return None, None
    assert_unchanged(before, inputs)
    torch.manual_seed(RNG_SEED)
    eager = python_fn(*inputs)
    assert_matches_eager(native, eager)
    return native, eager


def run_writing(compiled, python_fn, inputs):
    """For a function that writes into its arguments (TL212): native and eager each on their
    own copies of the same values, which must come out changed alike, with the same result (a
    returned argument is the argument itself on both sides) or the same error."""
    native_inputs, eager_inputs = twin_copy(inputs), twin_copy(inputs)
    try:
        torch.manual_seed(RNG_SEED)
        native = compiled(*native_inputs)
    except (RuntimeError, IndexError, ValueError, AssertionError) as error:
        with pytest.raises(type(error)) as eager_error:
            python_fn(*eager_inputs)
        assert str(eager_error.value) == str(error)
        assert_unchanged(eager_inputs, native_inputs)  # changed alike up to the error
        return
    torch.manual_seed(RNG_SEED)
    eager = python_fn(*eager_inputs)
    assert_matches_eager(native, eager)
    assert_unchanged(eager_inputs, native_inputs)
    for n, e in zip(native if isinstance(native, tuple) else (native,), eager if isinstance(eager, tuple) else (eager,)):
        assert [n is v for v in native_inputs] == [e is v for v in eager_inputs], "a returned argument is not the argument itself"


def special_tensor(shape, shift):
    """A tensor of the seed's special values (±inf, ±0.0, nan …), shifted per parameter so
    different operands meet different values."""
    count = math.prod(shape)
    flat = [SPECIAL[(i + shift * (1 + i // len(SPECIAL))) % len(SPECIAL)] for i in range(count)]
    return torch.tensor(flat, dtype=torch.float32).reshape(shape)


def import_path(path: Path, name: str | None = None):
    name = name or "_tl_case_" + re.sub(r"\W", "_", path.stem) + "_" + uuid.uuid4().hex[:8]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# --- the hand-written extension -------------------------------------------------------------------

HANDWRITTEN_SYMBOLS = {"head": "tl_fn_0", "alternating": "tl_fn_1", "classify": "tl_fn_2", "int_ops": "tl_fn_3", "range_sum": "tl_fn_4"}


def handwritten_report(module) -> dict:
    """The report the analyzer would give for native_cases/handwritten.py, written by hand:
    its functions, their symbols in handwritten_lib.rs, and that lib.rs."""
    functions = []
    for name, symbol in HANDWRITTEN_SYMBOLS.items():
        fn = getattr(module, name)
        functions.append({"name": name, "line": fn.__code__.co_firstlineno, "route": "native", "symbol": symbol,
                          "params": [{"name": p} for p in inspect.signature(fn).parameters], "sites": [], "diagnostics": []})
    return {"schema": 1, "functions": functions, "diagnostics": [], "rust": (CASES / "handwritten_lib.rs").read_text()}


@pytest.fixture(scope="session")
def handwritten():
    """native_cases/handwritten.py with its functions compiled against the hand-written lib.rs
    (a real cargo build and load). Returns (python module, {name: compiled callable})."""
    module = import_path(CASES / "handwritten.py", "_tl_handwritten_case")
    filename = inspect.getsourcefile(module.head)
    source = Path(filename).read_text()
    build = _compile.build_module(source, filename, handwritten_report(module))
    assert build.error is None, str(build.error)
    compiled = {name: torchlower.compile(getattr(module, name)) for name in HANDWRITTEN_SYMBOLS}
    assert all(c.route == "native" for c in compiled.values())
    return module, compiled


def test_head_matches_eager_on_random_and_special_inputs(handwritten):
    module, compiled = handwritten
    generator = torch.Generator().manual_seed(1)
    for batch, inp, out in [(1, 32, 32), (8, 64, 64), (64, 128, 64)]:
        x = torch.randn(batch, inp, generator=generator)
        w = torch.randn(out, inp, generator=generator)
        b = torch.randn(out, generator=generator)
        run_both(compiled["head"], module.head, [x, w, b])
    special = [special_tensor((9, 9), 0), special_tensor((9, 9), 1), special_tensor((9,), 2)]
    native, eager = run_both(compiled["head"], module.head, special)
    assert torch.isnan(eager).any(), "the special input should produce NaN somewhere"


def test_outputs_never_require_grad_and_inputs_are_untouched(handwritten):
    module, compiled = handwritten
    x, w, b = (torch.randn(4, 8, requires_grad=True), torch.randn(8, 8, requires_grad=True), torch.randn(8, requires_grad=True))
    native = compiled["head"](x, w, b)
    eager = module.head(x, w, b)
    assert eager.requires_grad and not native.requires_grad
    torch.testing.assert_close(native, eager.detach(), rtol=1e-5, atol=1e-6)
    assert torch.is_grad_enabled(), "the native call must restore grad mode"


@pytest.mark.parametrize("depth,phase", [(0, 0), (1, 0), (4, 1), (5, -3), (-2, 0), (16, 7)])
def test_alternating_loop_matches_eager(handwritten, depth, phase):
    module, compiled = handwritten
    generator = torch.Generator().manual_seed(depth * 31 + phase)
    x, weight, bias = torch.randn(4, 16, generator=generator), torch.randn(16, 16, generator=generator) / 4, torch.randn(16, generator=generator)
    run_both(compiled["alternating"], module.alternating, [x, weight, bias, depth, phase])
    run_both(compiled["alternating"], module.alternating, [special_tensor((9, 9), 0), special_tensor((9, 9), 3), special_tensor((9,), 5), depth, phase])


def test_classification_head_returns_int64_labels(handwritten):
    module, compiled = handwritten
    x, w = torch.randn(32, 16), torch.randn(16, 10)
    native, _ = run_both(compiled["classify"], module.classify, [x, w])
    assert native.dtype == torch.int64 and native.shape == (32,)
    run_both(compiled["classify"], module.classify, [special_tensor((9, 9), 0), special_tensor((9, 9), 4)])


# --- boundary: checks in order, exact messages ----------------------------------------------------


def test_boundary_errors_have_exact_messages(handwritten, native_mode):
    _, compiled = handwritten
    head = compiled["head"]
    x, w, b = torch.randn(2, 3), torch.randn(4, 3), torch.randn(4)
    cases = [
        ((x.double(), w, b), ValueError, "torchlower: parameter 'x' expects dtype float32, got float64"),
        ((x, w.unsqueeze(0), b), ValueError, "torchlower: parameter 'w' expects a rank-2 tensor, got rank 3"),
        ((x, w, b.unsqueeze(0)), ValueError, "torchlower: parameter 'b' expects a rank-1 tensor, got rank 2"),
        (([[1.0]], w, b), TypeError, "torchlower: parameter 'x' expects a torch.Tensor, got list"),
        ((x, w, 3.0), TypeError, "torchlower: parameter 'b' expects a torch.Tensor, got float"),
        ((x.to("meta"), w, b), ValueError, "torchlower: parameter 'x' expects a cpu tensor, got meta"),
        # device is checked before dtype, dtype before rank
        ((x.to("meta").double(), w, b), ValueError, "torchlower: parameter 'x' expects a cpu tensor, got meta"),
        ((x.double().unsqueeze(0), w, b), ValueError, "torchlower: parameter 'x' expects dtype float32, got float64"),
        # parameters are checked in order
        ((x, w.double(), b.double()), ValueError, "torchlower: parameter 'w' expects dtype float32, got float64"),
    ]
    for args, error, message in cases:
        with pytest.raises(error) as raised:
            head(*args)
        assert str(raised.value) == message


def test_int_and_bool_arguments_are_checked(handwritten, native_mode):
    _, compiled = handwritten
    x, weight, bias = torch.randn(2, 4), torch.randn(4, 4), torch.randn(4)
    with pytest.raises(TypeError) as raised:
        compiled["alternating"](x, weight, bias, True, 0)
    assert str(raised.value) == "torchlower: parameter 'depth' expects int, got bool"
    with pytest.raises(TypeError) as raised:
        compiled["alternating"](x, weight, bias, 2.0, 0)
    assert str(raised.value) == "torchlower: parameter 'depth' expects int, got float"
    with pytest.raises(OverflowError):
        compiled["int_ops"](2**63, 0, 0)


def test_size_mismatches_raise_runtime_error_like_eager(handwritten):
    module, compiled = handwritten
    x, w, b = torch.randn(2, 3), torch.randn(4, 5), torch.randn(4)
    with pytest.raises(RuntimeError) as eager_error:
        module.head(x, w, b)
    with pytest.raises(RuntimeError) as native_error:
        compiled["head"](x, w, b)
    assert str(native_error.value) == str(eager_error.value)
    w_ok, b_bad = torch.randn(4, 3), torch.randn(5)
    with pytest.raises(RuntimeError) as eager_error:
        module.head(x, w_ok, b_bad)
    with pytest.raises(RuntimeError) as native_error:
        compiled["head"](x, w_ok, b_bad)
    assert str(native_error.value) == str(eager_error.value)
    with pytest.raises(RuntimeError):
        compiled["alternating"](torch.randn(2, 3), torch.randn(4, 4), torch.randn(4), 2, 0)


def test_index_errors_of_libtorch_stay_index_errors(handwritten):
    """argmax over an empty dimension is a c10::IndexError: eager raises IndexError."""
    module, compiled = handwritten
    x, w = torch.randn(3, 4), torch.randn(4, 0)
    with pytest.raises(IndexError) as eager_error:
        module.classify(x, w)
    with pytest.raises(IndexError) as native_error:
        compiled["classify"](x, w)
    assert str(native_error.value) == str(eager_error.value)

# --- Python scalar semantics against CPython ------------------------------------------------------

EDGE_INTS = sorted({*range(-9, 10), 2**31, -(2**31), 2**32 + 7, 2**62, -(2**62), 2**63 - 1, -(2**63), 2**63 - 2, -(2**63) + 1})
INT64 = range(-(2**63), 2**63)


def test_int_arithmetic_matches_cpython_or_refuses(handwritten, native_mode):
    """Every result fits and equals CPython's, or native raises OverflowError: never a wrong
    (wrapped) value. Division by zero raises CPython's exception and message."""
    module, compiled = handwritten
    int_ops = compiled["int_ops"]
    for a in EDGE_INTS:
        for b in EDGE_INTS:
            for op in range(6):
                try:
                    expected = module.int_ops(a, b, op)
                except ZeroDivisionError as python_error:
                    with pytest.raises(ZeroDivisionError) as native_error:
                        int_ops(a, b, op)
                    assert str(native_error.value) == str(python_error)
                    continue
                if expected in INT64:
                    assert int_ops(a, b, op) == expected, (a, b, op)
                else:
                    with pytest.raises(OverflowError):
                        int_ops(a, b, op)


def test_auto_mode_reruns_python_when_native_ints_overflow(handwritten, monkeypatch):
    module, compiled = handwritten
    monkeypatch.delenv("TORCHLOWER_MODE", raising=False)
    assert compiled["int_ops"](2**62, 4, 2) == 2**64  # Python's exact answer
    assert compiled["int_ops"](-(2**63), -1, 3) == 2**63
    assert compiled["int_ops"](-7, 2, op=3) == -4  # keywords and defaults are bound
    assert compiled["int_ops"](-7, 2) == -5


@pytest.mark.parametrize("start,stop,step", [(0, 10, 1), (10, 0, -1), (10, -7, -3), (-5, 5, 4), (5, 5, 1), (0, 10, -1), (3, -20, -7), (-(2**62), -(2**62) - 40, -9)])
def test_range_matches_python(handwritten, native_mode, start, stop, step):
    module, compiled = handwritten
    assert compiled["range_sum"](start, stop, step) == module.range_sum(start, stop, step)


def test_range_near_the_int64_bound_refuses_instead_of_wrapping(handwritten, monkeypatch):
    """range(2**63 - 5, 2**63 - 1, 2) itself is fine, but `total * 3 + i` leaves int64:
    native mode raises OverflowError, auto mode returns Python's exact answer."""
    module, compiled = handwritten
    args = (2**63 - 5, 2**63 - 1, 2)
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    with pytest.raises(OverflowError):
        compiled["range_sum"](*args)
    monkeypatch.delenv("TORCHLOWER_MODE")
    assert compiled["range_sum"](*args) == module.range_sum(*args)


def test_range_step_zero_raises_python_value_error(handwritten, native_mode):
    module, compiled = handwritten
    with pytest.raises(ValueError) as python_error:
        module.range_sum(0, 3, 0)
    with pytest.raises(ValueError) as native_error:
        compiled["range_sum"](0, 3, 0)
    assert str(native_error.value) == str(python_error.value)


# --- modes ------------------------------------------------------------------------------------------


def test_modes_are_read_at_call_time(handwritten, monkeypatch):
    module, compiled = handwritten
    x = torch.randn(3, 4, requires_grad=True)
    w, b = torch.randn(5, 4), torch.randn(5)
    monkeypatch.setenv("TORCHLOWER_MODE", "fallback")
    assert compiled["head"](x, w, b).requires_grad, "fallback runs the Python function (eager autograd)"
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    assert not compiled["head"](x, w, b).requires_grad
    monkeypatch.delenv("TORCHLOWER_MODE")
    assert not compiled["head"](x, w, b).requires_grad
    # auto: an argument native code refuses (float64) runs the Python function instead
    result = compiled["head"](x.double().detach(), w.double(), b.double())
    assert result.dtype == torch.float64
    torch.testing.assert_close(result, module.head(x.double().detach(), w.double(), b.double()))
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    with pytest.raises(ValueError):
        compiled["head"](x.double(), w.double(), b.double())


# --- failing builds fall back -----------------------------------------------------------------------


@pytest.fixture
def broken_backend(tmp_path, monkeypatch):
    """A copy of the backend with a compile error injected, selected via TORCHLOWER_BACKEND_DIR."""
    from torchlower import _build_env

    source = _build_env.backend_dir()
    copy = tmp_path / "backend"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("target"))
    with open(copy / "src" / "lib.rs", "a") as handle:
        handle.write('\ncompile_error!("torchlower test: injected backend compile error");\n')
    monkeypatch.setenv("TORCHLOWER_BACKEND_DIR", str(copy))
    return copy


def fresh_handwritten_module(tmp_path):
    """A copy of native_cases/handwritten.py under a new name (its own module build)."""
    path = tmp_path / f"case_{uuid.uuid4().hex[:8]}.py"
    path.write_text((CASES / "handwritten.py").read_text())
    module = import_path(path)
    return module, str(path), path.read_text()


def test_failing_build_falls_back_with_cargo_error(handwritten, broken_backend, tmp_path, monkeypatch):
    monkeypatch.delenv("TORCHLOWER_MODE", raising=False)
    module, filename, source = fresh_handwritten_module(tmp_path)
    build = _compile.build_module(source, filename, handwritten_report(module))
    assert isinstance(build.error, torchlower.BuildError)
    assert "injected backend compile error" in build.error.details
    with pytest.warns(_compile.BuildWarning, match="injected backend compile error"):
        head = torchlower.compile(module.head)
    assert head.route == "fallback" and "injected backend compile error" in head.reason
    x, w, b = torch.randn(2, 3), torch.randn(4, 3), torch.randn(4)
    torch.testing.assert_close(head(x, w, b), module.head(x, w, b))
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    with pytest.raises(torchlower.BuildError, match="injected backend compile error"):
        torchlower.compile(module.head)
    with pytest.raises(torchlower.BuildError):
        head(x, w, b)  # a fallback function refuses to run in native mode


def test_missing_cargo_is_a_build_error(monkeypatch):
    monkeypatch.setenv("TORCHLOWER_CARGO", "/nonexistent/cargo")
    with pytest.raises(torchlower.BuildError, match="/nonexistent/cargo"):
        _build.build_extension((CASES / "handwritten_lib.rs").read_text() + f"\n// {uuid.uuid4()}\n")


def test_concurrent_builds_share_one_build_and_progress_goes_to_stderr(handwritten, monkeypatch, capfd):
    """Two threads asking for the same new module: one cargo build (file lock), one module.
    With TORCHLOWER_PROGRESS=1 the progress shows on a pipe too (stderr, never stdout)."""
    import threading

    monkeypatch.setenv("TORCHLOWER_PROGRESS", "1")
    rust = (CASES / "handwritten_lib.rs").read_text() + f"\n// concurrency test {uuid.uuid4()}\n"
    results, errors = [], []

    def build():
        try:
            results.append(_build.build_extension(rust, label="concurrent.py"))
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert len({r.name for r in results}) == 1 and results[0].module is results[1].module
    assert sorted(r.built for r in results) == [False, True]
    out, err = capfd.readouterr()
    assert out == ""
    assert len(re.findall(r"Built native extension of concurrent\.py in \d+s \(\d+ crates\)", err)) == 1
    x, w, b = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5)
    torch.testing.assert_close(results[0].module.tl_fn_0(x, w, b), handwritten[0].head(x, w, b))


def test_progress_is_silent_on_a_pipe(monkeypatch, capfd, broken_backend):
    monkeypatch.delenv("TORCHLOWER_PROGRESS", raising=False)
    with pytest.raises(torchlower.BuildError):
        _build.build_extension((CASES / "handwritten_lib.rs").read_text() + f"\n// {uuid.uuid4()}\n")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_error_excerpt_keeps_error_blocks_only():
    stderr = (
        "   Compiling tch v0.26.0\n"
        "warning: unused variable: `x`\n --> src/lib.rs:3:9\n\n"
        "error[E0425]: cannot find value `y` in this scope\n --> src/lib.rs:9:5\n  |\n9 |     y\n  |     ^ not found\n\n"
        "error: could not compile `tl_x` (lib) due to 1 previous error\n"
    )
    excerpt = _build.error_excerpt(stderr)
    assert excerpt.startswith("error[E0425]: cannot find value `y`")
    assert "could not compile" in excerpt and "warning" not in excerpt and "Compiling" not in excerpt


# --- the corpus: every native function against eager -------------------------------------------------


def corpus_files():
    return sorted(CORPUS.glob("*.py")) if CORPUS.is_dir() else []


def test_corpus_is_present():
    assert corpus_files(), f"no corpus files under {CORPUS}"


_corpus_modules: dict[Path, tuple] = {}


def native_corpus_module(path: Path):
    """The imported corpus file, built natively (asserted): for tests that compile its
    functions one by one with :func:`compiled_native`."""
    module, build = corpus_module(path)
    assert build.error is None, str(build.error)
    return module


def compiled_native(module, name: str):
    """``torchlower.compile`` of ``module.name``, asserted to route native."""
    compiled = torchlower.compile(getattr(module, name))
    assert compiled.route == "native", compiled.reason
    return compiled


def corpus_module(path: Path):
    """(module, report, build) of one corpus file, built once per session."""
    if path not in _corpus_modules:
        module = import_path(path)
        source = path.read_text()
        # the file name compile() will see (co_filename of the module's functions)
        build = _compile.build_module(source, str(path))
        _corpus_modules[path] = (module, build)
    return _corpus_modules[path]


def tensor_kind(type_name):
    match = re.search(r"Tensor(F32|I64|I32|Bool)(Cpu|Cuda0_?)(\d)D", str(type_name))
    return (match.group(1), match.group(2), int(match.group(3))) if match else None


def corpus_inputs(entry: dict, size: int, special: bool, seed: int, requires_grad: bool = False):
    generator = torch.Generator().manual_seed(seed)
    values = []
    for index, param in enumerate(entry["params"]):
        kind = tensor_kind(param.get("type"))
        sequence = re.fullmatch(r"(list|tuple)\[(int(?:, int)*)\]", str(param.get("type")))
        if sequence:
            ints = [1 + i % 2 for i in range(sequence.group(2).count("int"))]
            values.append(ints if sequence.group(1) == "list" else tuple(ints))
            continue
        if kind is None:
            # `Optional[float]` and the like get a value of the type (the None copies are run by
            # the dispatch tests)
            number = re.sub(r"^Optional\[(.*)\]$", r"\1", str(param.get("type")))
            values.append({"bool": True, "float": 0.75}.get(number, 3))
            continue
        dtype, _, rank = kind
        shape = (size,) * rank
        if dtype in ("I64", "I32"):
            values.append(torch.randint(0, size, shape, generator=generator, dtype=torch.int64 if dtype == "I64" else torch.int32))
        elif dtype == "Bool":
            values.append(torch.rand(shape, generator=generator) > 0.5)
        else:
            tensor = special_tensor(shape, index) if special else torch.randn(shape, generator=generator)
            values.append(tensor.requires_grad_(requires_grad))
    return values


def corpus_cases():
    cases = []
    for path in corpus_files():
        for name in _function_names(path):
            cases.append(pytest.param(path, name, id=f"{path.stem}::{name}"))
    return cases


def _function_names(path: Path) -> list[str]:
    import ast

    tree = ast.parse(path.read_text())
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]


@pytest.mark.parametrize(
    "name,args",
    [
        ("checked_scale", (torch.ones(2, 3), -4)),
        ("checked_scale", (torch.ones(2, 3), 101)),
        ("checked_scale", (torch.ones(2, 3), 42)),
        ("checked_matmul", (torch.ones(2, 3), torch.ones(4, 2))),
        ("checked_pads", (torch.ones(2, 3), -1, 2)),
        ("checked_pads", (torch.ones(2, 3), 2, 2)),
    ],
)
def test_raise_raises_eagers_exception_natively(name, args, native_mode):
    """`raise E(message)` in native code: the same class and text as the Python function,
    in native mode (auto mode would rerun Python after a TypeError or ValueError)."""
    module, build = corpus_module(CORPUS / "control_flow.py")
    python_fn = getattr(module, name)
    compiled = torchlower.compile(python_fn)
    assert compiled.route == "native", compiled.reason
    with pytest.raises(Exception) as eager:
        python_fn(*args)
    with pytest.raises(type(eager.value)) as native:
        compiled(*args)
    assert type(native.value) is type(eager.value)
    if name == "checked_pads":
        # a tuple message: eager's AssertionError holds the tuple, native's its text
        assert str(native.value) == str(eager.value) and isinstance(eager.value.args[0], tuple)
    else:
        assert native.value.args == eager.value.args
    fitting = {"checked_scale": (torch.ones(2, 3), 3), "checked_pads": (torch.ones(2, 3), 1, 2)}.get(name, (torch.ones(2, 3), torch.ones(3, 4)))
    assert torch.equal(compiled(*fitting), python_fn(*fitting)), "the other path computes"


def test_raise_messages_format_tuples_and_sizes_as_python(native_mode):
    """f-string messages with a tuple display (`{(a, b)}`, a 1-tuple's comma) and a tensor's
    `size()` / `shape` (`torch.Size([…])`): eager's exact text natively."""
    module, _ = corpus_module(CORPUS / "control_flow.py")
    compiled = torchlower.compile(module.checked_weights)
    assert compiled.route == "native", compiled.reason
    w = torch.ones(4, 2, 3)
    with pytest.raises(ValueError) as eager:
        module.checked_weights(w, 3, 2)
    with pytest.raises(ValueError) as native:
        compiled(w, 3, 2)
    assert native.value.args == eager.value.args
    assert torch.equal(compiled(w, 2, 2), module.checked_weights(w, 2, 2))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_messages_made_to_break_out_of_rust_strings_arrive_intact(n, native_mode):
    """assert/raise messages with quotes, braces, raw-string and comment markers: the emitted
    Rust escapes them (it compiled), and native code raises eager's exact text."""
    module, _ = corpus_module(CORPUS / "hostile_names.py")
    compiled = torchlower.compile(module.messages)
    assert compiled.route == "native", compiled.reason
    x = torch.ones(2, 2)
    with pytest.raises((AssertionError, ValueError)) as eager:
        module.messages(x, n)
    with pytest.raises(type(eager.value)) as native:
        compiled(x, n)
    assert native.value.args == eager.value.args


@pytest.mark.parametrize("path,name", corpus_cases())
def test_corpus_function_matches_eager(path, name):
    if any(marker in str(path) for marker in ("cuda", "Cuda")):
        pytest.skip("CUDA cases run in the CUDA tests")
    module, build = corpus_module(path)
    assert build.report is not None, str(build.error)
    entry = next(f for f in build.report["functions"] if f["name"] == name)
    if any(tensor_kind(p.get("type")) and tensor_kind(p.get("type"))[1] != "Cpu" for p in entry["params"]):
        pytest.skip("CUDA function")
    assert entry["route"] == "native", f"accepted corpus function routes {entry['route']}: {_compile.fallback_reason(entry)}"
    assert build.error is None, str(build.error)
    python_fn = getattr(module, name)
    python_fn = getattr(python_fn, "__wrapped__", python_fn)
    compiled = torchlower.compile(python_fn)
    assert compiled.route == "native", compiled.reason
    # a function that writes into its arguments as eager does (TL212) is checked on copies
    run = run_writing if any(d["code"] == "TL212" for d in entry["diagnostics"]) else run_both
    run(compiled, python_fn, corpus_inputs(entry, 5, special=False, seed=7))
    run(compiled, python_fn, corpus_inputs(entry, 9, special=True, seed=0))
    grad_inputs = corpus_inputs(entry, 5, special=False, seed=3, requires_grad=True)
    try:
        torch.manual_seed(RNG_SEED)
        with torch.no_grad():
            eager = python_fn(*grad_inputs)
    except (RuntimeError, AssertionError, IndexError, ValueError):
        return  # these sizes do not fit the function (checked against native just above)
    try:
        torch.manual_seed(RNG_SEED)
        native = compiled(*grad_inputs)
    except ValueError as error:
        if "native code refuses" in str(error):
            return  # a documented refusal, checked by run_both above
        raise
    for item in native if isinstance(native, (tuple, list)) else (native,):
        if isinstance(item, torch.Tensor):
            assert item.requires_grad is False
    assert_matches_eager(native, eager)


@pytest.mark.parametrize("name", ["swish", "hard_sigmoid", "scale_maybe_in_place"])
def test_writes_into_arguments_on_a_branch_are_deferred_to_python(name, monkeypatch):
    """torchlower/in-place-argument-deferred: the branch without the write runs natively and
    leaves the arguments alone; the branch with it refuses in native mode and, in auto mode,
    reruns Python, which writes into the arguments exactly as eager does."""
    module, build = corpus_module(CORPUS / "in_place.py")
    python_fn = getattr(module, name)
    compiled = torchlower.compile(python_fn)
    assert compiled.route == "native", compiled.reason
    generator = torch.Generator().manual_seed(5)
    tensors = [torch.randn(4, 6, generator=generator) for _ in range(2 if name == "scale_maybe_in_place" else 1)]
    for inplace in (False, True):
        native_args, eager_args = twin_copy(tensors) + [inplace], twin_copy(tensors) + [inplace]
        monkeypatch.setenv("TORCHLOWER_MODE", "native")
        if inplace:
            with pytest.raises(ValueError, match="writes into an argument in place"):
                compiled(*native_args)
            assert_unchanged(tensors, native_args)
            monkeypatch.setenv("TORCHLOWER_MODE", "auto")
        result = compiled(*native_args)
        expected = python_fn(*eager_args)
        assert_matches_eager(result, expected)
        assert_unchanged(eager_args[:-1], native_args[:-1])
        if not inplace:
            assert_unchanged(tensors, native_args[:-1])
        else:
            assert not all(torch.equal(a, b) for a, b in zip(tensors, native_args)), "eager writes into x"


def test_multinomial_draws_and_advances_the_generator_as_eager():
    """torchlower/multinomial: the same draws as eager from the same seed, and the default
    generator left in the same state (the next draw of the caller agrees too)."""
    module, _ = corpus_module(CORPUS / "masking.py")
    compiled = torchlower.compile(module.sample_next)
    assert compiled.route == "native", compiled.reason
    logits, idx = torch.randn(64, 50), torch.randint(0, 50, (64, 3))
    torch.manual_seed(7)
    native, native_next = compiled(logits, idx), torch.rand(4)
    torch.manual_seed(7)
    eager, eager_next = module.sample_next(logits, idx), torch.rand(4)
    assert torch.equal(native, eager) and torch.equal(native_next, eager_next)
    torch.manual_seed(8)
    assert not torch.equal(compiled(logits, idx), native), "another seed draws other samples"


# --- the decorator on a real module, and the CLI ----------------------------------------------------


def test_native_decorator_on_an_imported_module(tmp_path, monkeypatch):
    monkeypatch.delenv("TORCHLOWER_MODE")  # auto: the fallback function must run its Python
    path = tmp_path / f"decorated_{uuid.uuid4().hex[:8]}.py"
    path.write_text(
        "import torch\n"
        "import torch.nn.functional as F\n"
        "import torchlower\n"
        "from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D\n\n"
        "@torchlower.native\n"
        "def head(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:\n"
        "    return F.linear(x, w, b).relu().mean(dim=1)\n\n"
        "@torchlower.native\n"
        "def not_native(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
        "    return torch.cumprod(x, dim=0)\n"
    )
    module = import_path(path)
    assert module.head.route == "native" and module.head.reason is None
    assert module.head.report["symbol"].startswith("tl_fn_")
    assert module.not_native.route == "fallback" and "cumprod" in module.not_native.reason
    x, w, b = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5)
    run_both(module.head, module.head.__wrapped__, [x, w, b])
    torch.testing.assert_close(module.not_native(x), torch.cumprod(x, dim=0))


def test_grad_mode_decorated_functions_compile_through_their_wrapper(tmp_path, monkeypatch):
    """`@torch.no_grad()` functions (DETR's PostProcess): compiled through torch's wrapper,
    native, with eager's values and no grad. `@torch.inference_mode()` (inference tensors), a
    `functools.wraps` decorator the analyzer does not know, and a grad-mode wrapper applied by a
    call to a function whose source does not show it, stay on the Python route, wrapper and all."""
    monkeypatch.delenv("TORCHLOWER_MODE")
    path = tmp_path / f"grad_mode_{uuid.uuid4().hex[:8]}.py"
    path.write_text(
        "import functools\n"
        "import torch\n"
        "from torchlower.types import TensorF32Cpu2D\n\n"
        "calls = []\n\n"
        "@torch.no_grad()\n"
        "def scores(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
        "    return x.softmax(-1)[:, :-1]\n\n"
        "@torch.inference_mode()\n"
        "def doubled(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
        "    return x * 2.0\n\n"
        "def counted(fn):\n"
        "    @functools.wraps(fn)\n"
        "    def wrapper(*args):\n"
        "        calls.append(1)\n"
        "        return fn(*args)\n"
        "    return wrapper\n\n"
        "@counted\n"
        "def tracked(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
        "    return x + 1.0\n"
    )
    module = import_path(path)
    x = torch.randn(4, 5, requires_grad=True)
    fn = torchlower.compile(module.scores)
    assert fn.route == "native", fn.reason
    native, eager = fn(x), module.scores(x)
    assert torch.equal(native, eager) and not native.requires_grad
    doubled = torchlower.compile(module.doubled)
    assert doubled.route == "fallback" and "TL107" in doubled.reason
    assert doubled(x).is_inference(), "the fallback runs under inference mode, as eager"
    autocast = torchlower.compile(torch.autocast("cpu", dtype=torch.bfloat16)(module.tracked.__wrapped__))
    assert autocast.route == "fallback", "autocast's wrapper is not looked through"
    tracked = torchlower.compile(module.tracked)
    assert tracked.route == "fallback" and "TL107" in tracked.reason
    tracked(x)
    assert module.calls == [1], "the fallback runs the decorated function, wrapper included"


def run_cli(*args: str):
    import subprocess

    return subprocess.run([sys.executable, "-m", "torchlower.cli", *args], capture_output=True, text=True, cwd=REPO, timeout=900)


def test_cli_build_prints_routes_and_reasons():
    done = run_cli("build", "examples/model.py")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line and not line.startswith(("-", "function"))}
    for name in ("pooled_head", "alternating_stack", "classify", "normalized_difference"):
        assert rows[name].split()[2] == "native", rows[name]
    assert rows["column_stats"].split()[2] == "fallback" and "cumprod" in rows["column_stats"]
    assert done.stderr == "", "no progress output on a pipe"


def test_cli_run_shows_parity_and_timing():
    done = run_cli("run", "examples/model.py", "--samples", "3", "--sample-ms", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stdout.split("== run")[1]
    native_rows = [row for row in map(str.split, table.splitlines()) if len(row) > 1 and row[1] == "native"]
    assert len(native_rows) == 4
    for row in native_rows:
        assert row[2] == "OK" and row[5].endswith("x"), row
        assert float(row[3]) > 0 and float(row[4]) > 0


def test_router_binds_keywords_defaults_and_modes(monkeypatch):
    """The routing wrapper alone (a Python stand-in takes the native function's place):
    Python binds keywords and defaults, the native side gets every value positionally."""
    monkeypatch.delenv("TORCHLOWER_MODE", raising=False)
    seen = []

    def native_stand_in(*values):
        seen.append(values)
        if values[0] == "refuse":
            raise ValueError("torchlower: parameter 'a' expects …")
        return "native"

    def fn(a, b=2, /, c=3, *, d=4):
        return ("python", a, b, c, d)

    routed = _compile._native_callable(fn, types.SimpleNamespace(tl_fn_0=native_stand_in), {"name": "fn", "symbol": "tl_fn_0"})
    assert routed(1) == "native" and seen[-1] == (1, 2, 3, 4)
    assert routed(1, 5, c=6, d=7) == "native" and seen[-1] == (1, 5, 6, 7)
    assert routed("refuse", d=0) == ("python", "refuse", 2, 3, 0)  # auto: refused → Python
    with pytest.raises(TypeError):
        routed()  # Python's own binding error
    monkeypatch.setenv("TORCHLOWER_MODE", "fallback")
    assert routed(1, d=9) == ("python", 1, 2, 3, 9)
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    with pytest.raises(ValueError):
        routed("refuse")
    monkeypatch.setenv("TORCHLOWER_MODE", "sometimes")
    with pytest.raises(ValueError, match="TORCHLOWER_MODE"):
        routed(1)


def test_int32_arguments_are_their_own_dtype(native_mode):
    """int32 markers check the dtype at the boundary (an int64 tensor is refused, and an int32
    one for an int64 parameter), and GPT-2's int32 pooling picks eager's rows with padding."""
    module = native_corpus_module(CORPUS / "int32.py")
    index = compiled_native(module, "int32_index")
    x, idx = torch.randn(4, 3), torch.tensor([3, 0, 3, 1], dtype=torch.int32)
    assert_matches_eager(index(x, idx), module.int32_index(x, idx))
    with pytest.raises(ValueError) as raised:
        index(x, idx.long())
    assert str(raised.value) == "torchlower: parameter 'idx' expects dtype int32, got int64"
    upcast = compiled_native(module, "upcast_ints")
    with pytest.raises(ValueError) as raised:
        upcast(idx.view(2, 2))
    assert str(raised.value) == "torchlower: parameter 't' expects dtype int64, got int32"
    pooled = compiled_native(module, "last_non_pad_logits")
    logits = torch.randn(3, 5, 4)
    ids = torch.tensor([[5, 6, 0, 0, 0], [0, 0, 7, 8, 9], [0, 0, 0, 0, 0]])
    native = pooled(logits, ids, 0)
    eager = module.last_non_pad_logits(logits, ids, 0)
    assert native.dtype == torch.float32 and torch.equal(native, eager)


def run_dispatching(module, cases: dict) -> None:
    """Each function of `cases` is native as written (a dispatch over its copies, not
    specialised per call) and matches eager on each of its argument tuples."""
    for name, calls in cases.items():
        compiled = compiled_native(module, name)
        assert getattr(compiled, "specialisations", None) is None, f"{name} specialised instead of dispatching"
        for args in calls:
            run_both(compiled, getattr(module, name), list(args))


def test_optional_number_parameters_run_the_copy_for_the_arguments(native_mode):
    """`Optional[int]` / `Optional[float]` / `Optional[bool]` parameters dispatch as optional
    tensors do: the copy for None fills in the default as the body says (DeepCTR's
    `maxlen = lengths.max()`, a rank-0 int64 bound of `arange`), the copy for a number uses it;
    each matches eager, and the boundary refuses another type (TypeError)."""
    module = native_corpus_module(CORPUS / "optional_numbers.py")
    generator = torch.Generator().manual_seed(5)
    lengths = torch.tensor([[3], [0], [5], [1]])
    q, k = torch.randn(2, 4, 8, generator=generator), torch.randn(2, 4, 8, generator=generator)
    x = torch.randn(3, 3, generator=generator)
    cases = {
        "sequence_mask": [(lengths, None), (lengths, 7), (lengths, 2), (lengths,)],
        "scaled_scores": [(q, k), (q, k, None, None), (q, k, 0.25, True), (q, k, None, False), (q, k, 2.0, None)],
        "discarded_values": [(x, None), (x, 3), (x,)],
    }
    run_dispatching(module, cases)
    with pytest.raises(TypeError) as raised:
        compiled_native(module, "sequence_mask")(lengths, 2.5)
    assert str(raised.value) == "torchlower: parameter 'maxlen' expects int, got float"
    with pytest.raises(TypeError) as raised:
        compiled_native(module, "scaled_scores")(q, k, 1, None)
    assert str(raised.value) == "torchlower: parameter 'scale' expects float, got int"
    # a maxlen shorter than a length: the mask as eager computes it; the rank-0 bound of an
    # empty batch is eager's error
    with pytest.raises(RuntimeError) as eager:
        module.sequence_mask(torch.zeros(0, 1, dtype=torch.int64))
    with pytest.raises(RuntimeError) as native:
        compiled_native(module, "sequence_mask")(torch.zeros(0, 1, dtype=torch.int64))
    assert str(native.value) == str(eager.value)


def test_optional_tensor_parameters_run_the_copy_for_the_arguments(native_mode):
    """A function with `Optional[<marker>]` parameters is native as written: its entry runs the
    copy walked for the call's None / tensor combination, each matching eager, and checks a
    given tensor against the marker."""
    module = native_corpus_module(CORPUS / "optional_tensors.py")
    generator = torch.Generator().manual_seed(11)
    q, k, mask = (torch.randn(2, 4, 8, generator=generator) for _ in range(3))
    scale = torch.rand(2, 1, 1, generator=generator) * 8
    x, w, bias, gain = torch.randn(3, 5, generator=generator), torch.randn(4, 5, generator=generator), torch.randn(4, generator=generator), torch.randn(4, generator=generator)
    cases = {
        "masked_scores": [(q, k, mask), (q, k, None), (q, k)],
        "cosine_or_dot": [(q, k, scale), (q, k, None)],
        "linear_parts": [(x, w, bias, gain), (x, w, bias, None), (x, w, None, gain), (x, w, None, None), (x, w)],
        "optional_passed_on": [(x, w, bias), (x, w, None)],
    }
    run_dispatching(module, cases)
    with pytest.raises(ValueError) as raised:
        compiled_native(module, "masked_scores")(q, k, mask.double())
    assert str(raised.value) == "torchlower: parameter 'mask' expects dtype float32, got float64"
    with pytest.raises(TypeError) as raised:
        compiled_native(module, "masked_scores")(q, k, 0.5)
    assert str(raised.value) == "torchlower: parameter 'mask' expects a torch.Tensor, got float"


@pytest.mark.parametrize("dim", [-2, 1, 3, 4, 5, 6, 7])
def test_softmax_over_a_run_time_dim_matches_eager(dim, native_mode):
    """fairseq's softmax helper: the dim a Python int read at run time (`dim - 4` and
    `dim - 3` in the corpus form), eager's values, and eager's IndexError (same text) when it
    falls outside the rank."""
    module = native_corpus_module(CORPUS / "classification.py")
    softmax = compiled_native(module, "softmax_run_time_dim")
    x = special_tensor((3, 4), 1)
    run_both(softmax, module.softmax_run_time_dim, [x, dim])
    run_both(softmax, module.softmax_run_time_dim, [x.t(), dim])


def test_scatter_of_a_number_matches_eager(native_mode):
    """TD-MPC2's one-hot (`scatter_` of a number into new zeros), and the `value` overload of
    `scatter` on float32 (-0.0, NaN) and int64: eager's values, and eager's RuntimeError for
    an index out of range."""
    module = native_corpus_module(CORPUS / "sorting_and_scatter.py")
    one_hot = compiled_native(module, "one_hot_in_place")
    ids = torch.tensor([[0, 2, 1], [3, 3, 0]])
    native, eager = run_both(one_hot, module.one_hot_in_place, [ids, 4])
    assert native.dtype == torch.float32 and native.shape == (2, 3, 4)
    assert run_both(one_hot, module.one_hot_in_place, [ids, 3]) == (None, None), "an index of 3 among 3 classes raises"
    numbers = compiled_native(module, "scatter_numbers")
    x = special_tensor((3, 3), 2)
    i = torch.tensor([[0, 1, 2], [2, 2, 0], [1, 0, 1]])
    (native_x, native_ids), _ = run_both(numbers, module.scatter_numbers, [x, i, i * 5])
    assert native_ids.dtype == torch.int64


def test_a_returned_pair_on_a_run_time_branch_is_refused_natively_and_rerun_in_auto_mode(monkeypatch):
    """Mamba's `return out if not prenorm else (out, x)` under `-> Tensor`: the tensor path
    runs natively; the pair path raises the documented refusal in native mode, and auto mode
    reruns Python, which returns eager's pair."""
    module = native_corpus_module(CORPUS / "branch_types.py")
    x, residual = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    with monkeypatch.context() as patch:
        patch.setenv("TORCHLOWER_MODE", "native")
        norm = compiled_native(module, "norm_or_pair")
        assert_matches_eager(norm(x, residual), module.norm_or_pair(x, residual))
        with pytest.raises(ValueError, match="native code refuses this path"):
            norm(x, residual, False)
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    out, summed = norm(x, residual, False)
    eager_out, eager_summed = module.norm_or_pair(x, residual, False)
    assert_matches_eager(out, eager_out)
    assert_matches_eager(summed, eager_summed)
