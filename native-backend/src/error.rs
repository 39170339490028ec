//! The one error type of native code, and how each variant becomes a Python exception.

use pyo3::exceptions::{
    PyIndexError, PyOverflowError, PyRuntimeError, PyValueError, PyZeroDivisionError,
};
use pyo3::PyErr;

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
    /// Python `int` arithmetic whose result does not fit in 64 bits → `OverflowError`.
    #[error("{0}")]
    Overflow(&'static str),
    /// Division or modulo by zero → `ZeroDivisionError` (CPython's message).
    #[error("{0}")]
    ZeroDivision(&'static str),
    /// An invalid value, e.g. `range()` with step 0 → `ValueError`.
    #[error("{0}")]
    Value(String),
}

impl Error {
    /// The Python exception for this error.
    pub fn into_pyerr(self) -> PyErr {
        let message = self.to_string();
        match self {
            Error::Torch(_) if is_index_error(&message) => PyIndexError::new_err(message),
            Error::Torch(_) => PyRuntimeError::new_err(message),
            Error::Overflow(_) => PyOverflowError::new_err(message),
            Error::ZeroDivision(_) => PyZeroDivisionError::new_err(message),
            Error::Value(_) => PyValueError::new_err(message),
        }
    }
}

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
            head.trim_end().to_string()
        }
        other => other.to_string(),
    }
}

/// Whether a libtorch message comes from a `TORCH_CHECK_INDEX` (a `c10::IndexError`, which
/// eager PyTorch raises as `IndexError`). tch keeps only the text, so the class is recognised
/// by the messages the claimed ops can produce at run time: a reduction over an empty
/// dimension (`argmax` of a `(3, 0)` tensor along dim 1) and an out-of-range dimension.
fn is_index_error(message: &str) -> bool {
    message.contains("Expected reduction dim") || message.starts_with("Dimension out of range")
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
    fn index_checks_of_libtorch_become_index_errors() {
        assert!(is_index_error("argmax(): Expected reduction dim 1 to have non-zero size."));
        assert!(is_index_error("Dimension out of range (expected to be in range of [-1, 0], but got 1)"));
        assert!(!is_index_error("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"));
    }
}
