//! Arguments crossing from Python into a native function.
//!
//! Each check runs before any work, in parameter order, and fails with a stable message that
//! names the parameter, what its annotation expects and what was passed (tests compare the
//! messages exactly). The happy path only asks libtorch (no Python attribute lookups); the
//! error path asks Python for the names it shows (`str(t.device)`, `str(t.dtype)`), so the
//! message uses PyTorch's own spelling of whatever device or dtype came in.

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

use crate::spec::TensorSpec;

/// A tensor argument for the length of one call: the `torch.Tensor` object's own tensor
/// handle, borrowed, for a plain `torch.Tensor` or `nn.Parameter` (what almost every call
/// passes: no allocation, no reference count traffic), or a new handle to the same storage
/// for a subclass. Bodies take `&tch::Tensor`, so neither is ever moved or written through.
pub struct TensorArg {
    tensor: ManuallyDrop<tch::Tensor>,
    /// a handle of our own (freed on drop), not the Python object's
    owned: bool,
    /// `requires_grad`, read with the other facts the checks need
    requires_grad: bool,
}

impl Deref for TensorArg {
    type Target = tch::Tensor;
    fn deref(&self) -> &tch::Tensor {
        &self.tensor
    }
}

impl Drop for TensorArg {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: an owned handle is dropped exactly once, here.
            unsafe { ManuallyDrop::drop(&mut self.tensor) }
        }
    }
}

/// A `torch.Tensor` argument sharing its storage (no copy), after checking, in this order:
/// it is a tensor (`TypeError`), then its device, dtype and rank against `spec`
/// (`ValueError`). The caller holds `obj` (the call's argument tuple does) for as long as
/// the returned handle lives.
pub fn tensor_arg(obj: &Bound<'_, PyAny>, param: &str, spec: TensorSpec) -> PyResult<TensorArg> {
    // SAFETY: `obj` is live for the whole call and we hold the GIL (see `borrow_exact`).
    let borrowed = unsafe { crate::facts::borrow_exact(obj) };
    let mut tensor = match borrowed {
        Some(tensor) => TensorArg { tensor, owned: false, requires_grad: false },
        None => match unpack_tensor(obj)? {
            Some(tensor) => TensorArg { tensor: ManuallyDrop::new(tensor), owned: true, requires_grad: false },
            None => {
                return Err(PyTypeError::new_err(format!(
                    "torchlower: parameter '{param}' expects a torch.Tensor, got {}",
                    type_name(obj)
                )))
            }
        },
    };
    let (device, kind_matches, rank, requires_grad) = match crate::facts::Facts::of(&tensor) {
        Some(facts) => (facts.device, facts.is_kind(spec.dtype.kind()), facts.rank, facts.requires_grad),
        None => guarded(|| (tensor.device(), tensor.f_kind().ok() == Some(spec.dtype.kind()), tensor.dim(), tensor.requires_grad()))?,
    };
    tensor.requires_grad = requires_grad;
    if device != spec.device.device() {
        return Err(PyValueError::new_err(format!(
            "torchlower: parameter '{param}' expects a {} tensor, got {}",
            spec.device.name(),
            torch_attribute_name(obj, "device")
        )));
    }
    if !kind_matches {
        return Err(PyValueError::new_err(format!(
            "torchlower: parameter '{param}' expects dtype {}, got {}",
            spec.dtype.name(),
            torch_attribute_name(obj, "dtype")
        )));
    }
    if rank != spec.rank {
        return Err(PyValueError::new_err(format!(
            "torchlower: parameter '{param}' expects a rank-{} tensor, got rank {rank}",
            spec.rank
        )));
    }
    Ok(tensor)
}

/// Whether any of a function's tensor arguments requires grad (for [`crate::run_for`]).
pub fn any_requires_grad(tensors: &[&TensorArg]) -> bool {
    tensors.iter().any(|t| t.requires_grad)
}

/// An `Optional[<marker>]` argument: `None` for Python's None, else the tensor, checked as
/// [`tensor_arg`] checks it (the entry then runs the copy of the function for that case).
pub fn optional_tensor_arg(obj: &Bound<'_, PyAny>, param: &str, spec: TensorSpec) -> PyResult<Option<TensorArg>> {
    if obj.is_none() {
        return Ok(None);
    }
    tensor_arg(obj, param, spec).map(Some)
}

/// An `Optional[int]` / `Optional[float]` / `Optional[bool]` argument: None, or the value
/// `read` checks (its `TypeError` for anything else).
pub fn optional<'py, T>(obj: &Bound<'py, PyAny>, read: impl FnOnce(&Bound<'py, PyAny>) -> PyResult<T>) -> PyResult<Option<T>> {
    if obj.is_none() {
        return Ok(None);
    }
    read(obj).map(Some)
}

/// Whether any of the optional tensor arguments given requires grad.
pub fn any_optional_requires_grad(tensors: &[Option<&TensorArg>]) -> bool {
    tensors.iter().flatten().any(|t| t.requires_grad)
}

/// A function that writes into its tensor arguments (TL212) refuses arguments that require
/// grad before any work: eager's in-place rules on autograd (a leaf that requires grad cannot
/// be written) are eager's to apply, so auto mode runs the Python function.
pub fn refuse_grad_for_writes(grad_inputs: bool) -> PyResult<()> {
    if grad_inputs {
        return Err(PyValueError::new_err(
            "torchlower: this function writes into its tensor arguments, and native code refuses arguments that require grad (auto mode runs it in Python)",
        ));
    }
    Ok(())
}

/// A Python `int` argument (a `bool` is refused, as the annotation says `int`).
/// An int outside the 64-bit range → `OverflowError`.
pub fn int_arg(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<i64> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "torchlower: parameter '{param}' expects int, got {}",
            type_name(obj)
        )));
    }
    obj.extract::<i64>().map_err(|_| {
        PyOverflowError::new_err(format!(
            "torchlower: parameter '{param}' is an int outside the 64-bit range that native code supports"
        ))
    })
}

/// A list (`list: true`) or tuple (a `torch.Size` too) of exactly `N` Python ints: the
/// parameter `list[int, int]` / `tuple[int, int]` that `torchlower.compile` writes for a
/// `List[int]` argument. The values are read here, once: the body never sees the caller's
/// list, so nothing it does can change it. Another kind or length → `TypeError` (auto mode
/// reruns Python, and a specialising function picks the copy for that length).
pub fn int_seq_arg<const N: usize>(obj: &Bound<'_, PyAny>, param: &str, list: bool) -> PyResult<[i64; N]> {
    let kind = if list { "list" } else { "tuple" };
    let items = if list {
        obj.downcast::<pyo3::types::PyList>().ok().map(|l| l.iter().collect::<Vec<_>>())
    } else {
        obj.downcast::<pyo3::types::PyTuple>().ok().map(|t| t.iter().collect::<Vec<_>>())
    };
    let expects = || format!("torchlower: parameter '{param}' expects a {kind} of {N} ints");
    let Some(items) = items.filter(|items| items.len() == N) else {
        return Err(PyTypeError::new_err(format!("{}, got {}", expects(), describe_sequence(obj))));
    };
    let mut values = [0i64; N];
    for (value, item) in values.iter_mut().zip(&items) {
        if item.is_instance_of::<PyBool>() || !item.is_instance_of::<PyInt>() {
            return Err(PyTypeError::new_err(format!("{}, got one holding {}", expects(), type_name(item))));
        }
        *value = item.extract::<i64>().map_err(|_| {
            PyOverflowError::new_err(format!(
                "torchlower: parameter '{param}' holds an int outside the 64-bit range that native code supports"
            ))
        })?;
    }
    Ok(values)
}

/// `list of 3` / `tuple of 2` / a type name, for a refused sequence argument.
fn describe_sequence(obj: &Bound<'_, PyAny>) -> String {
    match obj.len() {
        Ok(len) if obj.is_instance_of::<pyo3::types::PyList>() || obj.is_instance_of::<pyo3::types::PyTuple>() => {
            format!("{} of {len}", type_name(obj))
        }
        _ => type_name(obj),
    }
}

/// A Python `float` argument (or a subclass); an `int` is refused (`TypeError`, so auto mode
/// reruns Python): eager computes with an int operand differently (`x * 3` keeps an integer
/// scalar, `n ** 2` stays an int), so native code takes only what the annotation says.
pub fn float_arg(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<f64> {
    match obj.downcast::<PyFloat>() {
        Ok(value) => Ok(value.value()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "torchlower: parameter '{param}' expects float, got {}",
            type_name(obj)
        ))),
    }
}

/// A Python `bool` argument; anything else (including `int`) → `TypeError`.
pub fn bool_arg(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<bool> {
    match obj.downcast::<PyBool>() {
        Ok(value) => Ok(value.is_true()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "torchlower: parameter '{param}' expects bool, got {}",
            type_name(obj)
        ))),
    }
}

/// A parameter specialised on `None` (`mask=None`): the function was analyzed with the
/// parameter being None, so anything else → `TypeError` (auto mode reruns Python; a
/// specialising callable specialises again).
pub fn none_arg(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<()> {
    if obj.is_none() {
        return Ok(());
    }
    Err(PyTypeError::new_err(format!("torchlower: parameter '{param}' expects None, got {}", type_name(obj))))
}

/// `Some(tensor)` for a `torch.Tensor` (or subclass such as `nn.Parameter`), `None` otherwise.
fn unpack_tensor(obj: &Bound<'_, PyAny>) -> PyResult<Option<tch::Tensor>> {
    let pointer = obj.as_ptr() as *mut torch_sys::python::C_pyobject;
    // SAFETY: `obj` is a live Python object for the duration of the call and we hold the GIL.
    // The returned tch::Tensor is a new reference to the same TensorImpl (storage shared).
    let unpacked = guarded(|| unsafe { crate::facts::unpack(pointer) })?;
    unpacked.map_err(|error| PyRuntimeError::new_err(format!("torchlower: {error}")))
}

/// Runs a libtorch query, turning a (never expected) panic of tch into a `RuntimeError`
/// instead of letting it unwind into Python.
fn guarded<T>(query: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(query)).map_err(|panic| {
        PyRuntimeError::new_err(format!(
            "torchlower: internal error at the boundary: {}",
            crate::run::panic_message(panic.as_ref())
        ))
    })
}

/// `type(obj).__name__`, as CPython's own messages show types.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "<unknown type>".to_string())
}

/// PyTorch's name of `obj.device` / `obj.dtype` (`cuda:0`, `float64`), for error messages.
fn torch_attribute_name(obj: &Bound<'_, PyAny>, attribute: &str) -> String {
    obj.getattr(attribute)
        .and_then(|value| value.str().map(|text| text.to_string()))
        .map(|text| text.strip_prefix("torch.").map(str::to_string).unwrap_or(text))
        .unwrap_or_else(|_| format!("<unknown {attribute}>"))
}
