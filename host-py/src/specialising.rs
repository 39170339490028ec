//! The callable of code specialised per call: `torchlower.compile(module)` (the guards of a
//! compiled `nn.Module`) and an unannotated function (no guards). Each call first tries, in C,
//! the native function of the specialisation used last.
//!
//! Why in Rust: the same steps in Python cost microseconds per call: a module's guards (mode,
//! autocast, hook dicts, `training` flags, the module tree, reading the instance's tensors,
//! autograd) 2–7 µs for the modules of the corpus, an unannotated function's binding and
//! argument types 3–5 µs. Here each guard is a C read of a dict or a flag, and the argument
//! types are not computed at all: the native function's boundary checks them (dtype, device
//! and rank of each tensor, the type of each scalar), which is exactly the specialisation key.
//!
//! The Python side (`torchlower._modules`, `torchlower._specialise`) keeps every rule: it builds
//! the lists checked here, specialises per argument types, and runs the Python code. This
//! object takes its fast path only when every guard holds and a native function was used
//! before (`use_native`, set by the Python side); otherwise, and whenever that function refuses
//! the arguments (a call with other types than its specialisation), it hands the call to the
//! Python router (`slow`), which decides again.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyTuple};

use crate::torch_state::TorchState;

/// Where a compiled module's guards look, read once when it is compiled (a module tree changed
/// since runs the module itself from then on, as the Python side decides); empty lists for an
/// unannotated function.
#[pyclass(frozen, dict, weakref, module = "torchlower", name = "Specialising")]
pub struct Specialising {
    /// the Python router: every call the fast path does not take
    slow: PyObject,
    /// number of parameters of `forward` when all are plain positional-or-keyword ones (None:
    /// the Python side binds every call)
    arity: Option<usize>,
    /// `os.environ`'s mapping and the mode's key in it (None: always `slow`)
    environ: Option<Py<PyDict>>,
    mode_key: PyObject,
    /// `torch._C._is_any_autocast_enabled` and `torch.is_grad_enabled`, asked when libtorch's
    /// own functions were not found (`state`)
    autocast_enabled: PyObject,
    grad_enabled: PyObject,
    state: Option<&'static TorchState>,
    /// every hook dict of the tree and the global ones: all must be empty
    hook_dicts: Vec<Py<PyDict>>,
    /// every module's `__dict__`: `training` must be False
    module_dicts: Vec<Py<PyDict>>,
    /// each module's `_modules` with the children it had: the tree must be unchanged
    children: Vec<(Py<PyDict>, Vec<PyObject>)>,
    /// where each tensor of the instance is read: its owner's `_parameters`/`_buffers` and name
    tensors: Vec<(Py<PyDict>, PyObject)>,
    /// a module's `{"native": n, "eager": n}` counters, kept by the Python side (None for a
    /// function, which has no `.calls`)
    counted: Option<Py<PyDict>>,
    /// native calls of the fast path (`.calls` adds them to the Python side's)
    fast_calls: AtomicU64,
    /// the native function the Python side used last (tried first)
    native: Mutex<Option<PyObject>>,
}

#[pymethods]
impl Specialising {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (slow, arity, environ, mode_key, autocast_enabled, grad_enabled, hook_dicts, module_dicts, children, tensors, calls, torch_lib = None))]
    fn new(
        slow: PyObject,
        arity: Option<usize>,
        environ: Option<Py<PyDict>>,
        mode_key: PyObject,
        autocast_enabled: PyObject,
        grad_enabled: PyObject,
        hook_dicts: Vec<Py<PyDict>>,
        module_dicts: Vec<Py<PyDict>>,
        children: Vec<(Py<PyDict>, Vec<PyObject>)>,
        tensors: Vec<(Py<PyDict>, PyObject)>,
        calls: Option<Py<PyDict>>,
        torch_lib: Option<&str>,
    ) -> Self {
        Specialising {
            slow,
            arity,
            environ,
            mode_key,
            autocast_enabled,
            grad_enabled,
            hook_dicts,
            module_dicts,
            children,
            tensors,
            counted: calls,
            fast_calls: AtomicU64::new(0),
            state: torch_lib.and_then(TorchState::get),
            native: Mutex::new(None),
        }
    }

    /// `{"native": n, "eager": n}`: calls that ran native code and calls that ran the module.
    #[getter]
    fn calls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let Some(counted) = &self.counted else {
            return Err(pyo3::exceptions::PyAttributeError::new_err("calls"));
        };
        let calls = counted.bind(py).copy()?;
        let key = pyo3::intern!(py, "native");
        let counted: u64 = calls.get_item(key)?.map(|n| n.extract()).transpose()?.unwrap_or(0);
        calls.set_item(key, counted + self.fast_calls.load(Ordering::Relaxed))?;
        Ok(calls)
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
        match slf.getattr("__qualname__") {
            Ok(name) => Ok(format!("<specialising function {}>", name.str()?)),
            Err(_) => Ok(format!("<compiled module {}>", slf.getattr("module")?.get_type().name()?)),
        }
    }

    /// The native function (of the instance's arguments then its tensors) to try first.
    fn use_native(&self, native: Option<PyObject>) {
        *self.native.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = native;
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<PyObject> {
        let positional = kwargs.is_none_or(|kwargs| kwargs.is_empty()) && Some(args.len()) == self.arity;
        let fast = if positional { self.fast_values(py, args)? } else { None };
        let Some((native, values)) = fast else {
            return self.slow.call(py, args, kwargs);
        };
        match vectorcall(py, &native, &values) {
            Ok(result) => {
                self.fast_calls.fetch_add(1, Ordering::Relaxed);
                Ok(result)
            }
            // other argument types than this specialisation (or a refusal the Python side
            // turns into eager or into the error, as the mode says)
            Err(error) if refused(py, &error) => self.slow.call(py, args, kwargs),
            Err(error) => Err(error),
        }
    }
}

/// `native(*values)` through CPython's vectorcall: the arguments passed as an array, no tuple.
fn vectorcall(py: Python<'_>, native: &PyObject, values: &[Bound<'_, PyAny>]) -> PyResult<PyObject> {
    let pointers: Vec<*mut pyo3::ffi::PyObject> = values.iter().map(Bound::as_ptr).collect();
    // SAFETY: every pointer is a live object held by `values` for the call; we hold the GIL;
    // the result is a new reference or NULL with an error set.
    unsafe {
        let result = pyo3::ffi::PyObject_Vectorcall(native.as_ptr(), pointers.as_ptr(), pointers.len(), std::ptr::null_mut());
        PyObject::from_owned_ptr_or_err(py, result)
    }
}

impl Specialising {
    /// The native function and its arguments when every guard holds; None sends the call to
    /// the Python router.
    fn fast_values<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Option<(PyObject, Vec<Bound<'py, PyAny>>)>> {
        let native = match &*self.native.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) {
            Some(native) => native.clone_ref(py),
            None => return Ok(None),
        };
        if !self.mode_takes_native(py)? || self.autocast(py)? {
            return Ok(None);
        }
        if self.hook_dicts.iter().any(|hooks| !hooks.bind(py).is_empty()) {
            return Ok(None);
        }
        let training = pyo3::intern!(py, "training");
        for dict in &self.module_dicts {
            match dict.bind(py).get_item(training)? {
                Some(flag) if flag.is(&*PyBool::new(py, false)) => {}
                _ => return Ok(None),
            }
        }
        for (modules, had) in &self.children {
            let modules = modules.bind(py);
            if modules.len() != had.len() || modules.iter().zip(had).any(|((_, now), was)| !now.is(was)) {
                return Ok(None);
            }
        }
        let mut values: Vec<Bound<'py, PyAny>> = Vec::with_capacity(args.len() + self.tensors.len());
        values.extend(args.iter());
        for (owner, name) in &self.tensors {
            match owner.bind(py).get_item(name.bind(py))? {
                Some(tensor) => values.push(tensor),
                None => return Ok(None), // deleted from the instance
            }
        }
        if !self.tensors.is_empty() && self.grad(py)? {
            let requires_grad = pyo3::intern!(py, "requires_grad");
            for tensor in &values[args.len()..] {
                if tensor.getattr(requires_grad)?.is_truthy()? {
                    return Ok(None); // autograd records eager's graph
                }
            }
        }
        Ok(Some((native, values)))
    }

    /// Whether `TORCHLOWER_MODE` is unset, `auto` or `native` (exact spellings; any other value
    /// is parsed, or refused, by the Python side).
    fn mode_takes_native(&self, py: Python<'_>) -> PyResult<bool> {
        let Some(environ) = &self.environ else { return Ok(false) };
        Ok(match environ.bind(py).get_item(self.mode_key.bind(py))? {
            None => true,
            Some(value) => matches!(value.downcast::<PyBytes>().map(|b| b.as_bytes()), Ok(b"auto" | b"native")),
        })
    }

    fn autocast(&self, py: Python<'_>) -> PyResult<bool> {
        match self.state {
            Some(state) => Ok(state.autocast_enabled()),
            None => self.autocast_enabled.call0(py)?.is_truthy(py),
        }
    }

    fn grad(&self, py: Python<'_>) -> PyResult<bool> {
        match self.state {
            Some(state) => Ok(state.grad_enabled()),
            None => self.grad_enabled.call0(py)?.is_truthy(py),
        }
    }
}

/// The native errors after which the Python side decides again (see `_compile._RERUN_IN_PYTHON`).
fn refused(py: Python<'_>, error: &PyErr) -> bool {
    error.is_instance_of::<PyTypeError>(py) || error.is_instance_of::<PyValueError>(py) || error.is_instance_of::<PyOverflowError>(py)
}
