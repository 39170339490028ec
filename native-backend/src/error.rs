//! The one error type of native code, and (with the `python` feature) how each variant becomes
//! a Python exception.

#[cfg(feature = "python")]
use pyo3::exceptions::{
    PyAssertionError, PyIndexError, PyNotImplementedError, PyOverflowError, PyRuntimeError, PyTypeError, PyValueError,
    PyZeroDivisionError,
};
#[cfg(feature = "python")]
use pyo3::PyErr;

use crate::cuda::CudaError;

/// `Result` of every fallible backend helper.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong inside a native function body.
///
/// Each variant maps to the Python exception eager PyTorch / CPython would raise for the
/// same failure (see [`Error::into_pyerr`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A libtorch error (e.g. matmul or broadcast size mismatch) → `RuntimeError`, or
    /// `IndexError` where libtorch raised a `c10::IndexError` (see [`is_index_error`]).
    #[error("{}", torch_message(.0))]
    Torch(#[from] tch::TchError),
    /// A failure of the CUDA path (no driver, a driver call, the JIT, an input it cannot
    /// take) → `RuntimeError` with the full text (see [`crate::cuda::error`] for its layers).
    #[error("{}", cuda_message(.0))]
    Cuda(#[from] CudaError),
    /// An error eager PyTorch raises as `IndexError`, found by our own checks rather than by
    /// libtorch (the CUDA `argmax` of an empty dimension), with eager's message.
    #[error("{0}")]
    Index(String),
    /// Python `int` arithmetic whose result does not fit in 64 bits → `OverflowError`.
    #[error("{0}")]
    Overflow(&'static str),
    /// Division or modulo by zero → `ZeroDivisionError` (CPython's message).
    #[error("{0}")]
    ZeroDivision(&'static str),
    /// An invalid value, e.g. `range()` with step 0 → `ValueError`.
    #[error("{0}")]
    Value(String),
    /// A failed `assert` → `AssertionError` with its message (empty without one).
    #[error("{0}")]
    Assertion(String),
    /// `raise TypeError(…)` in the source → `TypeError`.
    #[error("{0}")]
    Type(String),
    /// `raise RuntimeError(…)` in the source → `RuntimeError`.
    #[error("{0}")]
    Runtime(String),
    /// `raise NotImplementedError(…)` in the source → `NotImplementedError`.
    #[error("{0}")]
    NotImplemented(String),
    /// An argument of an exported function (`torchlower export`, [`crate::export`]) that is
    /// not of its annotated dtype, device or rank, with the Python boundary's message
    /// (`ValueError` there). The Python path checks arguments before any body runs.
    #[error("torchlower: parameter '{param}' expects {expected}, got {found}")]
    Argument { param: &'static str, expected: String, found: String },
    /// A panic inside a native body, caught so that it never crosses into the caller
    /// (`RuntimeError` in Python).
    #[error("torchlower: internal error in native code: {0}")]
    Internal(String),
}

#[cfg(feature = "python")]
impl Error {
    /// The Python exception for this error.
    pub fn into_pyerr(self) -> PyErr {
        let message = self.to_string();
        match self {
            Error::Torch(_) if is_index_error(&message) => PyIndexError::new_err(message),
            Error::Torch(_) => PyRuntimeError::new_err(message),
            Error::Cuda(_) => PyRuntimeError::new_err(message),
            Error::Index(_) => raised::<PyIndexError>(message),
            Error::Overflow(_) => PyOverflowError::new_err(message),
            Error::ZeroDivision(_) => PyZeroDivisionError::new_err(message),
            Error::Value(_) => raised::<PyValueError>(message),
            Error::Assertion(_) => raised::<PyAssertionError>(message),
            Error::Type(_) => raised::<PyTypeError>(message),
            Error::Runtime(_) => raised::<PyRuntimeError>(message),
            Error::NotImplemented(_) => raised::<PyNotImplementedError>(message),
            Error::Argument { .. } => PyValueError::new_err(message),
            Error::Internal(_) => PyRuntimeError::new_err(message),
        }
    }
}

/// `E(message)`, or `E()` for an empty message, as Python's `raise E` / a bare `assert` give.
#[cfg(feature = "python")]
fn raised<E: pyo3::PyTypeInfo>(message: String) -> PyErr {
    if message.is_empty() {
        PyErr::new::<E, _>(())
    } else {
        PyErr::new::<E, _>(message)
    }
}

#[cfg(feature = "python")]
impl From<Error> for PyErr {
    fn from(error: Error) -> PyErr {
        error.into_pyerr()
    }
}

/// The message eager PyTorch shows for a libtorch error: libtorch's `what()` without the
/// C++ stack trace that follows it (and without tch's "Internal torch error:" prefix).
fn torch_message(error: &tch::TchError) -> String {
    match error {
        tch::TchError::Torch(what) => {
            let head = what.split("\nException raised from").next().unwrap_or(what);
            python_type_names(head.trim_end())
        }
        other => other.to_string(),
    }
}

/// A libtorch message with ATen's type names as PyTorch's Python layer shows them
/// (`CPULongType` → `torch.LongTensor`, `CUDAFloatType` → `torch.cuda.FloatTensor`): eager's
/// errors pass through `torch::processErrorMsg` on their way to Python, which renames the
/// eight legacy scalar types of each backend; tch's pass through nothing. (A 0-dim tensor in a
/// message prints as `[ CPULongType{} ]`, e.g. `embedding_bag`'s offsets check.)
fn python_type_names(message: &str) -> String {
    const SCALARS: [&str; 8] = ["Byte", "Char", "Double", "Float", "Int", "Long", "Short", "Half"];
    if !message.contains("Type") {
        return message.to_string();
    }
    let mut text = message.to_string();
    for (backend, module) in [("CUDA", "torch.cuda."), ("CPU", "torch.")] {
        for scalar in SCALARS {
            text = text.replace(&format!("{backend}{scalar}Type"), &format!("{module}{scalar}Tensor"));
        }
    }
    text
}

/// A CUDA error's text without trailing whitespace (a JIT failure whose log is empty ends in
/// a newline), as libtorch's messages are shown.
fn cuda_message(error: &CudaError) -> String {
    let mut text = error.to_string();
    text.truncate(text.trim_end().len());
    text
}

#[cfg_attr(not(feature = "python"), allow(dead_code))]
/// Whether a libtorch message comes from a `TORCH_CHECK_INDEX` (a `c10::IndexError`, which
/// eager PyTorch raises as `IndexError`).
///
/// Chosen by the text because no typed condition survives to Rust: tch 0.26's C wrapper
/// (torch-sys `libtch/torch_api.h`, macro `PROTECT`) catches every libtorch exception as
/// `const std::exception&` and keeps only `e.what()`, and tch turns that into
/// `TchError::Torch(String)`; the C++ class (`c10::IndexError` vs `c10::Error`) is gone. So
/// the class is recognised by the messages of the index checks the claimed ops can hit at
/// run time: a reduction over an empty dimension (`argmax` of a `(3, 0)` tensor along its
/// dim 1), an out-of-range dimension (`c10::maybe_wrap_dim`), and advanced indexing's checks
/// (`at::index`: an index out of bounds, index tensors that do not broadcast, a mask of
/// another shape). Where our own code finds such a condition it says so with [`Error::Index`]
/// instead.
fn is_index_error(message: &str) -> bool {
    // `max()` / `min()` of an empty tensor over every element: a plain TORCH_CHECK that shares
    // the words of argmax's TORCH_CHECK_INDEX ("Expected reduction dim to be specified")
    if message.contains("Specify the reduction dim with the 'dim' argument") {
        return false;
    }
    // libtorch's TORCH_CHECK_INDEX messages: a dim or an index out of range (`select`,
    // `embedding`'s "index out of range in self"), a reduction dim, `at::index`'s
    ["Expected reduction dim", "out of range", "is out of bounds for dimension", "indexing tensors could not be broadcast together", "The shape of the mask"]
        .iter()
        .any(|pattern| message.contains(pattern))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_message_drops_the_cpp_trace() {
        let what = "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)\nException raised from \
                    meta at aten/src/ATen/native/LinearAlgebra.cpp:191 (most recent call first):\n\
                    frame #0: c10::Error::Error";
        let error = Error::Torch(tch::TchError::Torch(what.to_string()));
        assert_eq!(error.to_string(), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
    }

    #[test]
    fn aten_type_names_become_pythons() {
        let what = "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got 4\n[ CPULongType{} ]";
        let error = Error::Torch(tch::TchError::Torch(what.to_string()));
        assert!(error.to_string().ends_with("However, got 4\n[ torch.LongTensor{} ]"));
        assert_eq!(python_type_names("[ CUDAFloatType{} ] and CPUBoolType"), "[ torch.cuda.FloatTensor{} ] and CPUBoolType");
    }

    #[test]
    fn cuda_errors_keep_their_text_without_trailing_whitespace() {
        let unsupported = CudaError::Unsupported("torchlower: CUDA relu expects tensors on cuda:0, got cpu".into());
        assert_eq!(Error::from(unsupported).to_string(), "torchlower: CUDA relu expects tensors on cuda:0, got cpu");
        let driver = crate::cuda::DriverError {
            call: "cuModuleLoadDataEx",
            code: 218,
            name: "CUDA_ERROR_INVALID_PTX".into(),
            description: None,
        };
        let jit = CudaError::Jit { kernel: "tl_relu".into(), error: Box::new(driver), log: String::new() };
        assert_eq!(
            Error::from(jit).to_string(),
            "torchlower: CUDA JIT failed for kernel tl_relu: cuModuleLoadDataEx returned CUDA_ERROR_INVALID_PTX (218)"
        );
    }

    #[test]
    #[cfg(feature = "python")]
    fn each_variant_becomes_its_python_exception() {
        use pyo3::Python;
        pyo3::prepare_freethreaded_python();
        Python::with_gil(|py| {
            let cuda = Error::from(CudaError::Unsupported("torchlower: CUDA argmax expects float32 tensors".into()));
            assert!(cuda.into_pyerr().is_instance_of::<PyRuntimeError>(py));
            let index = Error::Index("argmax(): Expected reduction dim 1 to have non-zero size.".into());
            assert!(index.into_pyerr().is_instance_of::<PyIndexError>(py));
            let torch = Error::Torch(tch::TchError::Torch("Dimension out of range (expected to be in range of [-1, 0], but got 1)".into()));
            assert!(torch.into_pyerr().is_instance_of::<PyIndexError>(py));
            let torch = Error::Torch(tch::TchError::Torch("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)".into()));
            assert!(torch.into_pyerr().is_instance_of::<PyRuntimeError>(py));
            assert!(Error::Overflow("x").into_pyerr().is_instance_of::<PyOverflowError>(py));
            assert!(Error::ZeroDivision("x").into_pyerr().is_instance_of::<PyZeroDivisionError>(py));
            assert!(Error::Value("x".into()).into_pyerr().is_instance_of::<PyValueError>(py));
        });
    }

    #[test]
    fn index_checks_of_libtorch_become_index_errors() {
        assert!(is_index_error("argmax(): Expected reduction dim 1 to have non-zero size."));
        assert!(is_index_error("Dimension out of range (expected to be in range of [-1, 0], but got 1)"));
        assert!(is_index_error("index 5 is out of bounds for dimension 0 with size 3"));
        assert!(is_index_error("The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [4, 3] at index 0"));
        assert!(!is_index_error("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"));
        // max() / min() of an empty tensor: a RuntimeError in eager (argmax's is an IndexError)
        assert!(!is_index_error("max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."));
        assert!(is_index_error("argmax(): Expected reduction dim to be specified for input.numel() == 0."));
    }
}
