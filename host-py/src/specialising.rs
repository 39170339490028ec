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
    /// the native function the Python side used last (tried first), and what the last full
    /// check of the guards saw
    fast: Mutex<Fast>,
    /// whether this interpreter renews a dict's `ma_version_tag` on every change (3.11–3.13)
    versioned_dicts: bool,
}

#[derive(Default)]
struct Fast {
    native: Option<PyObject>,
    checked: Option<Checked>,
}

/// What the last full check of the guards saw. CPython gives a dict a new `ma_version_tag`
/// whenever it changes, so while every guarded dict (hook dicts, each module's `__dict__` and
/// `_modules`, each tensor's owner dict) keeps its tag, every guard on them still holds and the
/// tensors are the same objects: a comparison of integers instead of a lookup per module and
/// per tensor (most of the module path's cost on a model with many submodules).
struct Checked {
    tags: Vec<u64>,
    tensors: Vec<PyObject>,
}

#[pymethods]
impl Specialising {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (slow, arity, environ, mode_key, autocast_enabled, grad_enabled, hook_dicts, module_dicts, children, tensors, calls, torch_lib = None))]
    fn new(
        py: Python<'_>,
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
            fast: Mutex::new(Fast::default()),
            versioned_dicts: versioned_dicts(py),
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
        lock(&self.fast).native = native;
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

/// The native call's arguments: the call's own, then the instance's tensors (on the stack up
/// to 24 of them; see Cargo.toml for why no heap).
type Values<'py> = smallvec::SmallVec<[Bound<'py, PyAny>; 24]>;

/// `native(*values)` through CPython's vectorcall: the arguments passed as an array, no tuple.
fn vectorcall(py: Python<'_>, native: &PyObject, values: &[Bound<'_, PyAny>]) -> PyResult<PyObject> {
    // SAFETY: `Bound` is a transparent object pointer, so `values` is the array of pointers
    // vectorcall takes; each is a live object held by `values` for the call; we hold the GIL;
    // the result is a new reference or NULL with an error set.
    unsafe {
        let pointers = values.as_ptr() as *const *mut pyo3::ffi::PyObject;
        let result = pyo3::ffi::PyObject_Vectorcall(native.as_ptr(), pointers, values.len(), std::ptr::null_mut());
        PyObject::from_owned_ptr_or_err(py, result)
    }
}

impl Specialising {
    /// The native function and its arguments when every guard holds; None sends the call to
    /// the Python router.
    fn fast_values<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Option<(PyObject, Values<'py>)>> {
        if !self.mode_takes_native(py)? || self.autocast(py)? {
            return Ok(None);
        }
        let mut values = Values::new();
        values.extend(args.iter());
        let (native, cached) = {
            let fast = lock(&self.fast);
            let Some(native) = &fast.native else { return Ok(None) };
            let checked = fast.checked.as_ref().filter(|checked| self.tags_match(py, &checked.tags));
            if let Some(checked) = checked {
                values.extend(checked.tensors.iter().map(|tensor| tensor.bind(py).clone()));
            }
            (native.clone_ref(py), checked.is_some())
        };
        if !cached {
            let Some(tensors) = self.check_guards(py)? else {
                lock(&self.fast).checked = None; // nor keep tensors the instance may have dropped
                return Ok(None);
            };
            if self.versioned_dicts {
                let tags = self.tags(py).collect();
                lock(&self.fast).checked = Some(Checked { tags, tensors: tensors.iter().map(|tensor| tensor.clone().unbind()).collect() });
            }
            values.extend(tensors);
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

    /// The guards on the module tree (no hooks, every module in eval mode, the same children)
    /// and the instance's tensors read from their owners; None when a guard fails or a tensor
    /// was deleted.
    fn check_guards<'py>(&self, py: Python<'py>) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
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
        let mut tensors = Vec::with_capacity(self.tensors.len());
        for (owner, name) in &self.tensors {
            match owner.bind(py).get_item(name.bind(py))? {
                Some(tensor) => tensors.push(tensor),
                None => return Ok(None), // deleted from the instance
            }
        }
        Ok(Some(tensors))
    }

    /// The version tag of every dict the guards read, in a fixed order.
    fn tags<'a>(&'a self, py: Python<'a>) -> impl Iterator<Item = u64> + 'a {
        let dicts = self.hook_dicts.iter().chain(&self.module_dicts).chain(self.children.iter().map(|(modules, _)| modules)).chain(self.tensors.iter().map(|(owner, _)| owner));
        dicts.map(move |dict| version_tag(dict.bind(py)))
    }

    fn tags_match(&self, py: Python<'_>, tags: &[u64]) -> bool {
        self.tags(py).eq(tags.iter().copied())
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

/// The mutex's value; a panic while it was held (none is expected) leaves nothing half-written.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `dict.ma_version_tag`: renewed by CPython 3.11–3.13 on every change of the dict (PEP 509; a
/// dict subclass such as `OrderedDict` starts with the same header).
fn version_tag(dict: &Bound<'_, PyDict>) -> u64 {
    // SAFETY: a live dict object (or subclass), read under the GIL.
    #[allow(deprecated)]
    unsafe {
        (*(dict.as_ptr() as *mut pyo3::ffi::PyDictObject)).ma_version_tag
    }
}

/// Whether this interpreter keeps `ma_version_tag` (3.11 to 3.13; 3.14 replaced it).
fn versioned_dicts(py: Python<'_>) -> bool {
    let version = py.version_info();
    version >= (3, 11) && version < (3, 14)
}

/// The native errors after which the Python side decides again (see `_compile._RERUN_IN_PYTHON`).
fn refused(py: Python<'_>, error: &PyErr) -> bool {
    error.is_instance_of::<PyTypeError>(py) || error.is_instance_of::<PyValueError>(py) || error.is_instance_of::<PyOverflowError>(py)
}
