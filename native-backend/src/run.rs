//! One call of a native function body: the frame every generated function runs in.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::error::Result;

/// How a native function's return value becomes a Python object. `grad_inputs`: whether an
/// input required grad (only then can a returned tensor require it).
pub trait IntoPyValue {
    fn into_py_value(self, py: Python<'_>, grad_inputs: bool) -> PyResult<PyObject>;
}

impl IntoPyValue for tch::Tensor {
    /// Wraps the tensor as a `torch.Tensor` sharing its storage (no copy). Outputs never
    /// require grad: a view of an input that requires grad (which inherits the flag even under
    /// the no-grad guard) is returned detached — the same storage, strides and offset.
    fn into_py_value(self, py: Python<'_>, grad_inputs: bool) -> PyResult<PyObject> {
        let mut tensor = if grad_inputs && self.requires_grad() {
            self.f_detach().map_err(|error| PyRuntimeError::new_err(format!("torchlower: {error}")))?
        } else {
            self
        };
        // SAFETY: the handle is consumed by `tl_wrap_owned` (moved into the Python object and
        // freed), so tch must not free it again; it returns a new reference, or NULL with a
        // Python error set; we hold the GIL.
        unsafe {
            let handle = tensor.as_mut_ptr();
            std::mem::forget(tensor);
            PyObject::from_owned_ptr_or_err(py, tl_wrap_owned(handle))
        }
    }
}

extern "C" {
    /// src/shim.cpp: `THPVariable_Wrap(std::move(*handle))`, then frees the handle.
    fn tl_wrap_owned(handle: *mut torch_sys::C_tensor) -> *mut pyo3::ffi::PyObject;
}

impl IntoPyValue for i64 {
    fn into_py_value(self, py: Python<'_>, _grad_inputs: bool) -> PyResult<PyObject> {
        Ok(self.into_pyobject(py)?.into_any().unbind())
    }
}

impl IntoPyValue for f64 {
    fn into_py_value(self, py: Python<'_>, _grad_inputs: bool) -> PyResult<PyObject> {
        Ok(self.into_pyobject(py)?.into_any().unbind())
    }
}

impl IntoPyValue for bool {
    fn into_py_value(self, py: Python<'_>, _grad_inputs: bool) -> PyResult<PyObject> {
        Ok(self.into_pyobject(py)?.to_owned().into_any().unbind())
    }
}

/// A returned tuple (`return a, b`) becomes a Python tuple of its converted elements.
macro_rules! tuple_into_py_value {
    ($($name:ident),+) => {
        impl<$($name: IntoPyValue),+> IntoPyValue for ($($name,)+) {
            #[allow(non_snake_case)]
            fn into_py_value(self, py: Python<'_>, grad_inputs: bool) -> PyResult<PyObject> {
                let ($($name,)+) = self;
                let items = [$($name.into_py_value(py, grad_inputs)?),+];
                Ok(pyo3::types::PyTuple::new(py, items)?.into_any().unbind())
            }
        }
    };
}
tuple_into_py_value!(A);
tuple_into_py_value!(A, B);
tuple_into_py_value!(A, B, C);
tuple_into_py_value!(A, B, C, D);
tuple_into_py_value!(A, B, C, D, E);
tuple_into_py_value!(A, B, C, D, E, F);
tuple_into_py_value!(A, B, C, D, E, F, G);
tuple_into_py_value!(A, B, C, D, E, F, G, H);

/// A returned list (`return [a, b]`): the body returns the Rust tuple of its elements, and
/// Python gets a `list` of them, as eager returns (a list never equals a tuple in Python).
pub struct AsList<T>(pub T);

impl<T: IntoPyValue> IntoPyValue for AsList<T> {
    fn into_py_value(self, py: Python<'_>, grad_inputs: bool) -> PyResult<PyObject> {
        let items = self.0.into_py_value(py, grad_inputs)?;
        let items = items.downcast_bound::<pyo3::types::PyTuple>(py)?;
        Ok(pyo3::types::PyList::new(py, items.iter())?.into_any().unbind())
    }
}

/// A returned `x.max(dim)` / `topk` / `sort` pair as it came from the op: eager returns it as
/// `torch.return_types.<name>`, a tuple subclass with `.values` and `.indices`, so the entry
/// builds that record from the Rust pair (`torch.return_types.max((values, indices))`).
pub struct ReturnRecord<T>(pub T, pub &'static str);

impl<T: IntoPyValue> IntoPyValue for ReturnRecord<T> {
    fn into_py_value(self, py: Python<'_>, grad_inputs: bool) -> PyResult<PyObject> {
        let items = self.0.into_py_value(py, grad_inputs)?;
        let class = py.import("torch.return_types")?.getattr(self.1)?;
        Ok(class.call1((items,))?.unbind())
    }
}

impl IntoPyValue for () {
    fn into_py_value(self, py: Python<'_>, _grad_inputs: bool) -> PyResult<PyObject> {
        Ok(py.None())
    }
}

/// Runs `body` under one no-grad guard, turns its [`crate::Error`] into the matching Python
/// exception and a panic into `RuntimeError("torchlower: internal error: …")`, and wraps the
/// result for Python. Outputs computed under the guard never require grad.
///
/// `body` need not be `UnwindSafe`: after a panic nothing it captured is used again (the
/// closure and its tensors are dropped), so observing broken invariants is impossible.
#[inline]
pub fn run<T: IntoPyValue>(py: Python<'_>, body: impl FnOnce() -> Result<T>) -> PyResult<PyObject> {
    crate::vml::warm_up();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let _no_grad = tch::no_grad_guard();
        body()
    }));
    match outcome {
        Ok(Ok(value)) => value.into_py_value(py, true),
        Ok(Err(error)) => Err(body_error(py, error)),
        Err(panic) => Err(PyRuntimeError::new_err(format!(
            "torchlower: internal error: {}",
            panic_message(panic.as_ref())
        ))),
    }
}

/// The Python error of a body's `error`; after a write into the arguments it carries
/// `torchlower_after_writes = True` (auto mode raises it instead of rerunning the call).
fn body_error(py: Python<'_>, error: crate::Error) -> PyErr {
    let err = error.into_pyerr();
    if crate::writes::take() {
        let _ = err.value(py).setattr("torchlower_after_writes", true);
    }
    err
}

/// [`run`] for a generated function, told whether any of its tensor arguments requires grad
/// ([`crate::boundary::any_requires_grad`]). When none does, no op of the body can record
/// autograd history or return a tensor that requires grad (native code creates no tensor with
/// `requires_grad=True`), so the no-grad guard and the outputs' check are skipped: two
/// libtorch calls and a thread-state write each way, a visible share of a one-op call.
#[inline]
pub fn run_for<T: IntoPyValue>(py: Python<'_>, grad_inputs: bool, body: impl FnOnce() -> Result<T>) -> PyResult<PyObject> {
    crate::vml::warm_up();
    crate::writes::take(); // a mark an earlier call left is not this call's
    if grad_inputs {
        return run(py, body);
    }
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value.into_py_value(py, false),
        Ok(Err(error)) => Err(body_error(py, error)),
        Err(panic) => Err(PyRuntimeError::new_err(format!(
            "torchlower: internal error: {}",
            panic_message(panic.as_ref())
        ))),
    }
}

/// The text of a caught panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}
