//! The driver's error: a `CUresult` other than `CUDA_SUCCESS`, with the call that returned
//! it and its name. The bottom of the CUDA errors (like cudarc's `DriverError(CUresult)`):
//! it depends only on [`super::sys`], so the loader (whose `cuInit` can fail) and the checked
//! calls of [`super::result`] both build on it without depending on each other.
//!
//! The errors by layer, each converting into the one above with `From`:
//! - here, [`DriverError`]: one driver call returned an error code;
//! - [`super::loader::LoadError`]: no driver could be loaded or initialised (every path tried,
//!   and the `cuInit` failure as a `DriverError`);
//! - [`super::result::CudaError`]: what a CUDA operation can fail with — the two above, an
//!   entry point the loaded driver lacks, and what the layers above add: a JIT failure with
//!   its log ([`super::safe`]), a launch whose arguments do not match the kernel
//!   ([`super::launch`]), an input the CUDA path cannot take;
//! - [`crate::Error::Cuda`]: the backend's error, raised in Python as `RuntimeError` with the
//!   full text.

use std::ffi::{c_char, CStr};
use std::fmt;

use super::sys;

/// A driver call that returned an error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverError {
    /// The driver entry point, e.g. `cuMemAlloc_v2`.
    pub call: &'static str,
    /// The raw `CUresult`.
    pub code: u32,
    /// `CUDA_ERROR_...`: from `cuGetErrorName` when the driver has it, else [`error_name`].
    pub name: String,
    /// The driver's one-line description (`cuGetErrorString`), when available.
    pub description: Option<String>,
}

/// A driver's `cuGetErrorName` / `cuGetErrorString` entry points, each `None` when the loaded
/// library lacks it (both have the same C signature).
#[derive(Debug, Clone, Copy)]
pub struct ErrorTables {
    pub name: Option<sys::cuGetErrorName>,
    pub description: Option<sys::cuGetErrorString>,
}

impl DriverError {
    /// `code`, returned by `call`, named by the driver's own tables where it exports them and
    /// by [`error_name`] otherwise.
    pub fn new(tables: ErrorTables, call: &'static str, code: sys::CUresult) -> DriverError {
        let name = lookup(tables.name, code)
            .unwrap_or_else(|| error_name(code).map_or_else(|| format!("CUDA_ERROR_{code}"), str::to_string));
        let description = lookup(tables.description, code);
        DriverError { call, code, name, description }
    }
}

/// The text `table` (`cuGetErrorName` or `cuGetErrorString`) gives for `code`, if any.
fn lookup(table: Option<sys::cuGetErrorName>, code: sys::CUresult) -> Option<String> {
    let table = table?;
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: both functions write a pointer to a static NUL-terminated string, or return an
    // error for an unknown code (then `text` stays null).
    let status = unsafe { table(code, &mut text) };
    if status != sys::CUDA_SUCCESS || text.is_null() {
        return None;
    }
    // SAFETY: non-null, static and NUL-terminated per the driver's contract.
    Some(unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} returned {} ({})", self.call, self.name, self.code)?;
        if let Some(description) = &self.description {
            write!(f, ": {description}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DriverError {}

/// The name of a driver error code from the CUDA 12/13 `cudaError_enum`, for drivers that
/// lack `cuGetErrorName`.
pub fn error_name(code: u32) -> Option<&'static str> {
    Some(match code {
        0 => "CUDA_SUCCESS",
        1 => "CUDA_ERROR_INVALID_VALUE",
        2 => "CUDA_ERROR_OUT_OF_MEMORY",
        3 => "CUDA_ERROR_NOT_INITIALIZED",
        4 => "CUDA_ERROR_DEINITIALIZED",
        5 => "CUDA_ERROR_PROFILER_DISABLED",
        34 => "CUDA_ERROR_STUB_LIBRARY",
        46 => "CUDA_ERROR_DEVICE_UNAVAILABLE",
        100 => "CUDA_ERROR_NO_DEVICE",
        101 => "CUDA_ERROR_INVALID_DEVICE",
        102 => "CUDA_ERROR_DEVICE_NOT_LICENSED",
        200 => "CUDA_ERROR_INVALID_IMAGE",
        201 => "CUDA_ERROR_INVALID_CONTEXT",
        202 => "CUDA_ERROR_CONTEXT_ALREADY_CURRENT",
        205 => "CUDA_ERROR_MAP_FAILED",
        206 => "CUDA_ERROR_UNMAP_FAILED",
        209 => "CUDA_ERROR_NO_BINARY_FOR_GPU",
        214 => "CUDA_ERROR_ECC_UNCORRECTABLE",
        216 => "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
        218 => "CUDA_ERROR_INVALID_PTX",
        221 => "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
        222 => "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        223 => "CUDA_ERROR_JIT_COMPILATION_DISABLED",
        300 => "CUDA_ERROR_INVALID_SOURCE",
        301 => "CUDA_ERROR_FILE_NOT_FOUND",
        302 => "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND",
        303 => "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
        304 => "CUDA_ERROR_OPERATING_SYSTEM",
        400 => "CUDA_ERROR_INVALID_HANDLE",
        401 => "CUDA_ERROR_ILLEGAL_STATE",
        500 => "CUDA_ERROR_NOT_FOUND",
        600 => "CUDA_ERROR_NOT_READY",
        700 => "CUDA_ERROR_ILLEGAL_ADDRESS",
        701 => "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        702 => "CUDA_ERROR_LAUNCH_TIMEOUT",
        708 => "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
        709 => "CUDA_ERROR_CONTEXT_IS_DESTROYED",
        710 => "CUDA_ERROR_ASSERT",
        714 => "CUDA_ERROR_HARDWARE_STACK_ERROR",
        715 => "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        716 => "CUDA_ERROR_MISALIGNED_ADDRESS",
        717 => "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        718 => "CUDA_ERROR_INVALID_PC",
        719 => "CUDA_ERROR_LAUNCH_FAILED",
        720 => "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
        800 => "CUDA_ERROR_NOT_PERMITTED",
        801 => "CUDA_ERROR_NOT_SUPPORTED",
        802 => "CUDA_ERROR_SYSTEM_NOT_READY",
        803 => "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        804 => "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        999 => "CUDA_ERROR_UNKNOWN",
        _ => return None,
    })
}
