//! The callable `torchlower.compile` returns for a native function: a Python object whose
//! common call (positional arguments) goes from CPython straight to the function's boundary
//! checks, with no Python frame, no argument tuple and no keyword dict in between.
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
//!
//! Why vectorcall: a class with only `__call__` (`tp_call`) makes CPython pack every call's
//! arguments into a new tuple, and pyo3 unpack them again; with CPython's vectorcall protocol
//! (PEP 590) the object receives the caller's argument array as it is, and forwards it to
//! the Python function or router the same way. pyo3 0.24 does not offer vectorcall for a
//! `#[pyclass]`, so [`install`] declares it on the class itself once: the offset of the
//! `vectorcall` field every instance carries, and the flag that tells CPython to use it.

use std::sync::OnceLock;

use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use pyo3::Borrowed;

/// A generated function's Python entry taking its positional arguments (the router checked
/// their number).
pub type ArgsEntry = for<'a, 'py> fn(Python<'py>, Args<'a, 'py>) -> PyResult<PyObject>;

/// The positional arguments of one call, borrowed from the caller: CPython's vectorcall array,
/// or the items of the argument tuple when the call comes through `__call__`.
#[derive(Clone, Copy)]
pub struct Args<'a, 'py> {
    py: Python<'py>,
    items: &'a [*mut ffi::PyObject],
}

impl<'a, 'py> Args<'a, 'py> {
    /// Argument `index` (the router checked that there are as many as parameters).
    pub fn get(&self, index: usize) -> Borrowed<'a, 'py, PyAny> {
        // SAFETY: the caller holds a reference to every argument for the whole call.
        unsafe { Borrowed::from_ptr(self.py, self.items[index]) }
    }
}

/// One exported native function of the generated module.
pub struct Entry {
    /// the symbol of its `#[pyfunction]` (`tl_fn_N`)
    pub symbol: &'static str,
    pub arity: usize,
    pub call: ArgsEntry,
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
fn tl_router<'py>(
    py: Python<'py>,
    symbol: &str,
    python: PyObject,
    slow: PyObject,
    environ: Option<Py<PyDict>>,
    key: PyObject,
) -> PyResult<Bound<'py, NativeFunction>> {
    let entry = ENTRIES
        .get()
        .and_then(|entries| entries.iter().find(|entry| entry.symbol == symbol))
        .ok_or_else(|| PyValueError::new_err(format!("torchlower: no native function {symbol} in this module")))?;
    let routed = Bound::new(
        py,
        NativeFunction { vectorcall: native_vectorcall, arity: entry.arity, call: entry.call, python, slow, environ, key },
    )?;
    enable_vectorcall(&routed)?;
    Ok(routed)
}

/// A routed native function (`.route == "native"`). The host copies the original function's
/// name, docstring and `__wrapped__` into its `__dict__`, as `functools.wraps` does.
///
/// `repr(C)` keeps `vectorcall` where [`enable_vectorcall`] measured it.
#[pyclass(frozen, dict, weakref, module = "torchlower", name = "NativeFunction")]
#[repr(C)]
pub struct NativeFunction {
    /// CPython calls this with the caller's argument array (the class's vectorcall slot)
    vectorcall: ffi::vectorcallfunc,
    arity: usize,
    call: ArgsEntry,
    python: PyObject,
    slow: PyObject,
    environ: Option<Py<PyDict>>,
    key: PyObject,
}

/// Declares the `vectorcall` field of [`NativeFunction`] as its class's vectorcall slot, once
/// per process (and extension: each has its own class). The offset is measured on an instance,
/// as pyo3 does not publish its object layout; every instance has the same.
fn enable_vectorcall(instance: &Bound<'_, NativeFunction>) -> PyResult<()> {
    static ENABLED: OnceLock<Result<(), String>> = OnceLock::new();
    let outcome = ENABLED.get_or_init(|| {
        let object = instance.as_ptr() as usize;
        let field = &instance.get().vectorcall as *const ffi::vectorcallfunc as usize;
        let ty = instance.get_type();
        // SAFETY: we hold the GIL; `ty` is the heap type of `instance`, created by pyo3 and
        // not yet used for a call through vectorcall; CPython reads these two fields on each
        // call (`PyVectorcall_Function`), and `PyType_Modified` drops any cached lookups.
        unsafe {
            let raw = ty.as_ptr() as *mut ffi::PyTypeObject;
            let offset = field.checked_sub(object).filter(|offset| offset + std::mem::size_of::<usize>() <= (*raw).tp_basicsize as usize);
            let Some(offset) = offset else {
                return Err(format!("the vectorcall field lies outside the object ({field:#x} vs {object:#x})"));
            };
            (*raw).tp_vectorcall_offset = offset as ffi::Py_ssize_t;
            (*raw).tp_flags |= ffi::Py_TPFLAGS_HAVE_VECTORCALL;
            ffi::PyType_Modified(raw);
        }
        Ok(())
    });
    outcome.clone().map_err(|reason| PyRuntimeError::new_err(format!("torchlower: internal error: {reason}")))
}

/// The class's vectorcall slot: `callable(*args[..nargs], **dict(zip(kwnames, args[nargs..])))`.
unsafe extern "C" fn native_vectorcall(
    callable: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: usize,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls this with the GIL held and a valid argument array; the trampoline
    // counts the GIL for pyo3, and turns an error or a panic into a raised Python exception.
    unsafe {
        let nargs = ffi::PyVectorcall_NARGS(nargsf);
        pyo3::impl_::trampoline::fastcall_with_keywords(callable, args, nargs, kwnames, vectorcall_body)
    }
}

unsafe fn vectorcall_body(
    py: Python<'_>,
    callable: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: CPython passes the object whose slot this is (a NativeFunction) and `nargs`
    // positional arguments followed by one value per name of `kwnames`, all alive for the call.
    unsafe {
        let object = Borrowed::from_ptr(py, callable);
        let this = object.downcast_unchecked::<NativeFunction>();
        let keywords = (!kwnames.is_null() && ffi::PyTuple_GET_SIZE(kwnames) > 0).then_some(kwnames);
        this.get().dispatch(py, CallArgs { array: args, positional: nargs as usize, keywords }).map(PyObject::into_ptr)
    }
}

/// One call's arguments as CPython passes them to vectorcall: `positional` values, then one
/// per name of `keywords`, in one array that stays alive for the call.
#[derive(Clone, Copy)]
struct CallArgs {
    array: *const *mut ffi::PyObject,
    positional: usize,
    keywords: Option<*mut ffi::PyObject>,
}

impl CallArgs {
    fn positional(&self) -> &[*mut ffi::PyObject] {
        if self.positional == 0 {
            return &[];
        }
        // SAFETY: the array holds at least `positional` live references for the call.
        unsafe { std::slice::from_raw_parts(self.array, self.positional) }
    }
}

#[pymethods]
impl NativeFunction {
    /// The same call for `tp_call` (`type(f).__call__(f, …)`); CPython itself calls through
    /// the vectorcall slot.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        if kwargs.is_some_and(|kwargs| !kwargs.is_empty()) {
            return self.slow.call(py, args, kwargs);
        }
        // SAFETY: a tuple's items are an array of its `len()` live references, held by it.
        let array = unsafe { (*(args.as_ptr() as *mut ffi::PyTupleObject)).ob_item.as_ptr() };
        self.dispatch(py, CallArgs { array, positional: args.len(), keywords: None })
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
    /// One call: the fast path for positional arguments, else the Python router.
    fn dispatch(&self, py: Python<'_>, args: CallArgs) -> PyResult<PyObject> {
        let mode = if args.keywords.is_none() && args.positional == self.arity { self.mode(py)? } else { Mode::Other };
        let native = || (self.call)(py, Args { py, items: args.positional() });
        match mode {
            Mode::Other => forward(py, &self.slow, args),
            Mode::Fallback => forward(py, &self.python, args),
            Mode::Native => native(),
            // eager computes matmuls and convolutions in a lower precision inside autocast
            Mode::Auto if autocast_enabled() => forward(py, &self.python, args),
            Mode::Auto => match native() {
                Err(error) if refused(py, &error) => forward(py, &self.python, args),
                outcome => outcome,
            },
        }
    }

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

/// Calls `target` with the same arguments, through vectorcall (no tuple is built).
fn forward(py: Python<'_>, target: &PyObject, args: CallArgs) -> PyResult<PyObject> {
    // SAFETY: `args` is the live argument array of the current call; the result is a new
    // reference or NULL with a Python error set.
    unsafe {
        let keywords = args.keywords.unwrap_or(std::ptr::null_mut());
        let result = ffi::PyObject_Vectorcall(target.as_ptr(), args.array, args.positional, keywords);
        Bound::from_owned_ptr_or_err(py, result).map(Bound::unbind)
    }
}

/// The boundary's refusals (and 64-bit overflow) that make auto mode rerun the Python
/// function; the same tuple as the host's `_RERUN_IN_PYTHON`. Not an error raised after the
/// function wrote into its arguments (`torchlower_after_writes`, the host's `_after_writes`):
/// Python must not run again on arguments this call changed.
fn refused(py: Python<'_>, error: &PyErr) -> bool {
    let class = error.is_instance_of::<PyTypeError>(py) || error.is_instance_of::<PyValueError>(py) || error.is_instance_of::<PyOverflowError>(py);
    class && !error.value(py).getattr("torchlower_after_writes").is_ok_and(|v| v.is_truthy().unwrap_or(false))
}

extern "C" {
    /// src/shim.cpp: `at::autocast::is_autocast_enabled` for the CPU or CUDA.
    fn tl_autocast_enabled() -> std::os::raw::c_int;
}

/// Whether an autocast region is on for the CPU or CUDA, the devices native code runs on.
fn autocast_enabled() -> bool {
    // SAFETY: a read of thread-local state with no preconditions.
    unsafe { tl_autocast_enabled() != 0 }
}
