"""The CUDA path seen from Python on a machine without a GPU.

A hand-written lib.rs (following native-backend/API.md, like ``native_cases/handwritten_lib.rs``)
calls ``tl::cuda::ops`` and is built by the real pipeline (``torchlower._build``). Each call
runs in a fresh interpreter because the driver is loaded once per process, with
``TORCHLOWER_CUDA_DRIVER`` choosing what the loader finds: nothing, a library that is not a
driver, or the fake driver the Rust tests use (``native-backend/tests/fake_driver``). What
Python must see each time: a ``RuntimeError`` whose text says what was searched and why it
failed — never a crash, never a panic.
"""

from __future__ import annotations

import ctypes.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torchlower import _build

REPO = Path(__file__).resolve().parents[2]
FAKE_DRIVER_SOURCE = REPO / "native-backend" / "tests" / "fake_driver" / "fake_cuda.c"

LIB_RS = r"""
use torchlower_backend as tl;

// relu of a CPU tensor through the CUDA ops: the driver is loaded first, so without one the
// loader's error is what comes back; with one, the CPU tensor is refused (no transfers).
#[pyo3::pyfunction]
#[pyo3(signature = (p0))]
fn tl_fn_0<'py>(py: pyo3::Python<'py>, p0: &pyo3::Bound<'py, pyo3::PyAny>) -> pyo3::PyResult<pyo3::PyObject> {
    let v_x = tl::boundary::tensor_arg(p0, "x", tl::TensorSpec::F32_CPU_2D)?;
    tl::run(py, move || -> tl::Result<tl::tch::Tensor> { Ok(tl::cuda::ops::relu(&v_x)?) })
}

// linear + mean, to show every op reports the same way.
#[pyo3::pyfunction]
#[pyo3(signature = (p0, p1))]
fn tl_fn_1<'py>(
    py: pyo3::Python<'py>,
    p0: &pyo3::Bound<'py, pyo3::PyAny>,
    p1: &pyo3::Bound<'py, pyo3::PyAny>,
) -> pyo3::PyResult<pyo3::PyObject> {
    let v_x = tl::boundary::tensor_arg(p0, "x", tl::TensorSpec::F32_CPU_2D)?;
    let v_w = tl::boundary::tensor_arg(p1, "w", tl::TensorSpec::F32_CPU_2D)?;
    tl::run(py, move || -> tl::Result<tl::tch::Tensor> {
        Ok(tl::cuda::ops::mean_dim(&tl::cuda::ops::linear(&v_x, &v_w, None)?, 1, false)?)
    })
}

#[pyo3::pymodule]
fn __TORCHLOWER_MODULE__(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
    pyo3::types::PyModuleMethods::add_function(m, pyo3::wrap_pyfunction!(tl_fn_0, m)?)?;
    pyo3::types::PyModuleMethods::add_function(m, pyo3::wrap_pyfunction!(tl_fn_1, m)?)?;
    Ok(())
}
"""

CALL = r"""
import importlib.util, json, sys
import torch
name, path, function = sys.argv[1:4]
spec = importlib.util.spec_from_file_location(name, path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
x = torch.ones(2, 3)
args = (x,) if function == "tl_fn_0" else (x, torch.ones(4, 3))
try:
    getattr(module, function)(*args)
    print(json.dumps({"raised": None}))
except BaseException as error:
    print(json.dumps({"raised": type(error).__name__, "message": str(error)}))
"""


@pytest.fixture(scope="module")
def extension():
    """The hand-written CUDA lib.rs, built against this checkout's backend."""
    previous = os.environ.get("TORCHLOWER_BACKEND_DIR")
    os.environ["TORCHLOWER_BACKEND_DIR"] = str(REPO / "native-backend")
    try:
        yield _build.build_extension(LIB_RS, label="test_cuda")
    finally:
        if previous is None:
            os.environ.pop("TORCHLOWER_BACKEND_DIR", None)
        else:
            os.environ["TORCHLOWER_BACKEND_DIR"] = previous


def call(extension, function: str, driver: str | None) -> dict:
    env = dict(os.environ)
    env.pop("TORCHLOWER_CUDA_DRIVER", None)
    if driver is not None:
        env["TORCHLOWER_CUDA_DRIVER"] = driver
    done = subprocess.run(
        [sys.executable, "-c", CALL, extension.name, str(extension.path), function],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, f"the interpreter died (exit {done.returncode}):\n{done.stderr}"
    assert "panicked" not in done.stderr, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("function", ["tl_fn_0", "tl_fn_1"])
def test_a_missing_driver_raises_runtime_error_naming_the_path(extension, function):
    missing = "/nonexistent/torchlower/libcuda.so.1"
    outcome = call(extension, function, missing)
    assert outcome["raised"] == "RuntimeError"
    message = outcome["message"]
    assert message.startswith("torchlower: no usable CUDA driver library found"), message
    assert f"searched TORCHLOWER_CUDA_DRIVER={missing}" in message
    assert f"tried {missing}: {missing}: cannot open shared object file: No such file or directory" in message


def test_the_default_search_lists_every_path_tried(extension):
    outcome = call(extension, "tl_fn_0", None)
    assert outcome["raised"] == "RuntimeError"
    message = outcome["message"]
    if ctypes.util.find_library("cuda") is None:
        # No driver on this machine: both default names tried, each with its OS error.
        assert "searched libcuda.so.1, libcuda.so" in message, message
        assert "tried libcuda.so.1: libcuda.so.1: cannot open shared object file" in message, message
        assert "tried libcuda.so: libcuda.so: cannot open shared object file" in message, message
    else:
        # A driver is installed: it either fails to initialise (no GPU) or loads and then
        # refuses the CPU tensor; both say so.
        assert "did not initialise" in message or "expects tensors on cuda:0, got cpu" in message, message


def test_a_library_that_is_not_a_driver_is_named(extension):
    outcome = call(extension, "tl_fn_0", "libm.so.6")
    assert outcome["raised"] == "RuntimeError"
    assert "tried libm.so.6: loaded, but it does not export cuInit, so it is not a CUDA driver" in outcome["message"]


def test_with_a_driver_cpu_tensors_are_refused_not_moved(extension, tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler, "a C compiler (cc/gcc) is needed to build the fake CUDA driver"
    fake = tmp_path / "libfakecuda.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", str(fake), str(FAKE_DRIVER_SOURCE)], check=True)
    outcome = call(extension, "tl_fn_0", str(fake))
    assert outcome == {"raised": "RuntimeError", "message": "torchlower: CUDA relu expects tensors on cuda:0, got cpu"}
    outcome = call(extension, "tl_fn_1", str(fake))
    assert outcome == {"raised": "RuntimeError", "message": "torchlower: CUDA linear expects tensors on cuda:0, got cpu"}


# --- the emitted code of the CUDA corpus: it compiles against tl::cuda::ops, and a call with
# CPU tensors is refused at the boundary (no transfers), never a crash --------------------------

CUDA_CORPUS = [REPO / "tests" / "corpus" / "accepted" / name for name in ("cuda.py", "cuda_language.py")]


@pytest.mark.parametrize("path", CUDA_CORPUS, ids=lambda p: p.stem)
def test_cuda_corpus_builds_and_refuses_cpu_tensors(path):
    import torch
    from torchlower import _compile

    build = _compile.build_module(path.read_text(), str(path))
    assert build.report is not None, str(build.error)
    native = [f for f in build.report["functions"] if f["route"] == "native"]
    assert native and all(f["route"] == "native" for f in build.report["functions"])
    assert build.error is None, str(build.error)
    module = build.extension
    for entry in native:
        function = getattr(module, entry["symbol"])
        args = [torch.ones((2,) * int(p["type"][-2])) if "Tensor" in str(p["type"]) else 0.5 for p in entry["params"]]
        with pytest.raises(ValueError, match="expects a cuda:0 tensor, got cpu"):
            function(*args)
