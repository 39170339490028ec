//! The callable `torchlower.compile` returns for a native function: a Python object whose
//! common call (positional arguments) goes from CPython straight to the function's boundary
//! checks, with no Python frame in between.
//!
//! Why in Rust: a Python-level router (a generated `def` mirroring the signature) costs a
//! frame, a dict lookup and the call into the extension, about 0.1 µs per call, a tenth of a
//! one-op function. This object takes the same decisions in C: `TORCHLOWER_MODE` read from
//! `os.environ`'s own mapping (unset, or one of the three modes spelled exactly), the
//! autocast check (libtorch's thread state: plain functions run eager inside an enabled
//! `torch.autocast` region, as compiled modules do), the native call, and the rerun of the
//! original function when native code refuses the arguments in auto mode. Every other call
//! (keywords, defaults, another spelling of a mode, a wrong number of arguments) goes to the
//! Python router the host passes in (`slow`), which owns those rules.

use std::sync::OnceLock;

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};

/// A generated function's Python entry taking its positional arguments as a tuple of the
/// right length (the router checks the length).
pub type TupleEntry = for<'py> fn(Python<'py>, &Bound<'py, PyTuple>) -> PyResult<PyObject>;

/// One exported native function of the generated module.
pub struct Entry {
    /// the symbol of its `#[pyfunction]` (`tl_fn_N`)
    pub symbol: &'static str,
    pub arity: usize,
    pub call: TupleEntry,
}

/// The generated module's entries: each extension links its own copy of this crate, so this
/// static is per module.
static ENTRIES: OnceLock<&'static [Entry]> = OnceLock::new();

/// Called from the generated `#[pymodule]`: records the entries and adds `tl_router`.
pub fn install(module: &Bound<'_, PyModule>, entries: &'static [Entry]) -> PyResult<()> {
    let _ = ENTRIES.set(entries);
    module.add_function(wrap_pyfunction!(tl_router, module)?)?;
    module.add_class::<NativeFunction>()
}

/// `tl_router(symbol, python, slow, environ, key)`: the router of the native function
/// `symbol`. `python` is the original function, `slow` the host's Python router for every
/// call the fast path does not take, `environ`/`key` the mapping and key the mode is read
/// from (`None`: no fast path, every call goes to `slow`).
#[pyfunction]
#[pyo3(signature = (symbol, python, slow, environ, key))]
fn tl_router(
    symbol: &str,
    python: PyObject,
    slow: PyObject,
    environ: Option<Py<PyDict>>,
    key: PyObject,
) -> PyResult<NativeFunction> {
    let entry = ENTRIES
        .get()
        .and_then(|entries| entries.iter().find(|entry| entry.symbol == symbol))
        .ok_or_else(|| PyValueError::new_err(format!("torchlower: no native function {symbol} in this module")))?;
    Ok(NativeFunction { arity: entry.arity, call: entry.call, python, slow, environ, key })
}

/// A routed native function (`.route == "native"`). The host copies the original function's
/// name, docstring and `__wrapped__` into its `__dict__`, as `functools.wraps` does.
#[pyclass(frozen, dict, weakref, module = "torchlower", name = "NativeFunction")]
pub struct NativeFunction {
    arity: usize,
    call: TupleEntry,
    python: PyObject,
    slow: PyObject,
    environ: Option<Py<PyDict>>,
    key: PyObject,
}

#[pymethods]
impl NativeFunction {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        let positional = kwargs.is_none_or(|kwargs| kwargs.is_empty()) && args.len() == self.arity;
        let mode = if positional { self.mode(py)? } else { Mode::Other };
        match mode {
            Mode::Other => self.slow.call(py, args, kwargs),
            Mode::Fallback => self.python.call1(py, args),
            Mode::Native => (self.call)(py, args),
            // eager computes matmuls and convolutions in a lower precision inside autocast
            Mode::Auto if autocast_enabled() => self.python.call1(py, args),
            Mode::Auto => match (self.call)(py, args) {
                Err(error) if refused(py, &error) => self.python.call1(py, args),
                outcome => outcome,
            },
        }
    }

    /// Bound as a method when stored on a class, as a Python function is.
    fn __get__(slf: &Bound<'_, Self>, instance: &Bound<'_, PyAny>, _owner: Option<&Bound<'_, PyAny>>) -> PyResult<PyObject> {
        if instance.is_none() {
            return Ok(slf.clone().into_any().unbind());
        }
        let method_type = slf.py().import("types")?.getattr("MethodType")?;
        Ok(method_type.call1((slf, instance))?.unbind())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let name = slf.getattr("__qualname__")?;
        Ok(format!("<native function {}>", name.downcast::<PyString>()?.to_str()?))
    }

    /// Pickled by reference, as functions are (`module.qualname`).
    fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        Ok(slf.getattr("__qualname__")?.unbind())
    }
}

/// `TORCHLOWER_MODE` as the fast path reads it: the exact spellings of the three modes (unset
/// is `auto`); any other value goes to the Python router, which parses it or raises.
enum Mode {
    Auto,
    Native,
    Fallback,
    Other,
}

impl NativeFunction {
    fn mode(&self, py: Python<'_>) -> PyResult<Mode> {
        let Some(environ) = &self.environ else { return Ok(Mode::Other) };
        let Some(value) = environ.bind(py).get_item(self.key.bind(py))? else { return Ok(Mode::Auto) };
        Ok(match value.downcast::<PyBytes>().map(|bytes| bytes.as_bytes()) {
            Ok(b"auto") => Mode::Auto,
            Ok(b"native") => Mode::Native,
            Ok(b"fallback") => Mode::Fallback,
            _ => Mode::Other,
        })
    }
}

/// The boundary's refusals (and 64-bit overflow) that make auto mode rerun the Python
/// function; the same tuple as the host's `_RERUN_IN_PYTHON`.
fn refused(py: Python<'_>, error: &PyErr) -> bool {
    error.is_instance_of::<PyTypeError>(py) || error.is_instance_of::<PyValueError>(py) || error.is_instance_of::<PyOverflowError>(py)
}

extern "C" {
    /// `at::autocast::is_autocast_enabled(c10::DeviceType)` of libtorch (C++ linkage: one
    /// `int8_t` enum in, `bool` out; it reads the thread's dispatch-key set and cannot throw).
    #[link_name = "_ZN2at8autocast19is_autocast_enabledEN3c1010DeviceTypeE"]
    fn at_autocast_is_enabled_for(device_type: i8) -> bool;
}

/// Whether an autocast region is on for the CPU or CUDA (`c10::DeviceType` 0 and 1), the
/// devices native code runs on.
fn autocast_enabled() -> bool {
    // SAFETY: a read of thread-local state with no preconditions.
    unsafe { at_autocast_is_enabled_for(0) || at_autocast_is_enabled_for(1) }
}
