//! Checked driver calls: one thin function per driver entry point, grouped in modules named
//! after the driver API family (`device::get`, `ctx::primary_retain`, `memory::alloc`, ...).
//! Each turns the `CUresult` into a `Result` carrying the code and its name, and a symbol the
//! loaded driver lacks into [`CudaError::MissingSymbol`] instead of a crash.
//!
//! These functions still take raw handles; the RAII types in [`super::safe`] are what the
//! rest of the crate uses. Each documents the driver call it wraps and what the caller must
//! guarantee.
//!
//! Errors: a call fails with a [`DriverError`] (from [`super::error`], the bottom layer) or
//! a missing entry point; [`CudaError`], defined here, is what every CUDA operation returns
//! from this layer up (see [`super::error`] for the whole chain).

use std::ffi::{c_char, c_int, c_void, CStr};

use super::error::DriverError;
use super::loader::{Driver, LoadError};
use super::sys;

/// Everything a CUDA operation can fail with, from this layer up.
///
/// The lower layers' errors convert into it with `From` ([`DriverError`] → `Driver`,
/// [`LoadError`] → `Load`); this layer adds `MissingSymbol`; the layers above raise the
/// rest: `Jit` ([`super::safe::Module::load_ptx`]), `LaunchArguments`
/// ([`super::launch::KernelSignature::check`]) and `Unsupported` (inputs the CUDA path cannot
/// take: the launch and safe layers, `kernels::args`, `ops`). Those variants live here rather
/// than in error types of their own because every layer from here up, `kernels::args` and the
/// GPU check return this one `Result`, and a type defined above this module could not be
/// named here without an import cycle. It becomes [`crate::Error::Cuda`].
#[derive(Debug, Clone, thiserror::Error)]
pub enum CudaError {
    /// No driver could be loaded or initialised; lists every path tried. (Boxed, like the
    /// JIT error, to keep `Result<_, CudaError>` small on the launch path.)
    #[error("{0}")]
    Load(Box<LoadError>),
    /// A driver call returned an error code.
    #[error("torchlower: CUDA driver call failed: {0}")]
    Driver(#[from] DriverError),
    /// The loaded driver does not export an entry point we need (it is too old).
    #[error("torchlower: the loaded CUDA driver does not export {0} (driver too old?)")]
    MissingSymbol(&'static str),
    /// The driver's JIT rejected a generated PTX module.
    #[error("torchlower: CUDA JIT failed for kernel {kernel}: {error}\n{log}")]
    Jit { kernel: String, error: Box<DriverError>, log: String },
    /// A launch whose arguments do not match the kernel's parameter list.
    #[error("torchlower: launch of {kernel}: {message}")]
    LaunchArguments { kernel: &'static str, message: String },
    /// An input the CUDA path cannot take (wrong device, dtype, rank or size).
    #[error("{0}")]
    Unsupported(String),
}

impl From<LoadError> for CudaError {
    fn from(error: LoadError) -> CudaError {
        CudaError::Load(Box::new(error))
    }
}

pub type Result<T> = std::result::Result<T, CudaError>;

/// Fetches an optional entry point or reports that the driver lacks it.
macro_rules! entry {
    ($driver:expr, $symbol:ident) => {
        $driver.api().$symbol.ok_or(CudaError::MissingSymbol(stringify!($symbol)))?
    };
}

/// Turns a `CUresult` into `Ok(())` or a named [`DriverError`].
fn check(driver: &Driver, call: &'static str, code: sys::CUresult) -> Result<()> {
    if code == sys::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::Driver(DriverError::new(driver.api().error_tables(), call, code)))
    }
}

/// Driver-wide queries.
pub mod driver {
    use super::*;

    /// `cuDriverGetVersion`: the CUDA version the driver supports, e.g. 12040 for 12.4.
    pub fn version(driver: &Driver) -> Result<i32> {
        let f = entry!(driver, cuDriverGetVersion);
        let mut version: c_int = 0;
        // SAFETY: writes one int.
        check(driver, "cuDriverGetVersion", unsafe { f(&mut version) })?;
        Ok(version)
    }
}

/// Devices: `cuDeviceGet*`.
pub mod device {
    use super::*;

    /// `cuDeviceGetCount`.
    pub fn count(driver: &Driver) -> Result<i32> {
        let f = entry!(driver, cuDeviceGetCount);
        let mut count: c_int = 0;
        // SAFETY: writes one int.
        check(driver, "cuDeviceGetCount", unsafe { f(&mut count) })?;
        Ok(count)
    }

    /// `cuDeviceGet`: the handle of device `ordinal`.
    pub fn get(driver: &Driver, ordinal: i32) -> Result<sys::CUdevice> {
        let f = entry!(driver, cuDeviceGet);
        let mut device: sys::CUdevice = 0;
        // SAFETY: writes one device handle; an invalid ordinal is reported as an error code.
        check(driver, "cuDeviceGet", unsafe { f(&mut device, ordinal) })?;
        Ok(device)
    }

    /// `cuDeviceGetName`.
    pub fn name(driver: &Driver, device: sys::CUdevice) -> Result<String> {
        let f = entry!(driver, cuDeviceGetName);
        let mut buffer = [0 as c_char; 256];
        // SAFETY: the driver writes at most `len` bytes including the terminating NUL.
        check(driver, "cuDeviceGetName", unsafe { f(buffer.as_mut_ptr(), buffer.len() as c_int, device) })?;
        let last = buffer.len() - 1;
        buffer[last] = 0;
        // SAFETY: NUL-terminated by the driver, and by us at the end in any case.
        Ok(unsafe { CStr::from_ptr(buffer.as_ptr()) }.to_string_lossy().into_owned())
    }

    /// `cuDeviceGetAttribute`.
    pub fn attribute(driver: &Driver, device: sys::CUdevice, attribute: sys::CUdevice_attribute) -> Result<i32> {
        let f = entry!(driver, cuDeviceGetAttribute);
        let mut value: c_int = 0;
        // SAFETY: writes one int; an unknown attribute is an error code.
        check(driver, "cuDeviceGetAttribute", unsafe { f(&mut value, attribute, device) })?;
        Ok(value)
    }

    /// `cuDeviceTotalMem_v2`: bytes of device memory.
    pub fn total_memory(driver: &Driver, device: sys::CUdevice) -> Result<usize> {
        let f = entry!(driver, cuDeviceTotalMem_v2);
        let mut bytes = 0usize;
        // SAFETY: writes one size_t.
        check(driver, "cuDeviceTotalMem_v2", unsafe { f(&mut bytes, device) })?;
        Ok(bytes)
    }
}

/// Contexts: the device's primary context (the one the CUDA runtime, and so PyTorch, uses)
/// and the thread's current context.
pub mod ctx {
    use super::*;

    /// `cuDevicePrimaryCtxRetain`: takes one reference on the device's primary context.
    /// Each successful call must be balanced by one [`primary_release`].
    pub fn primary_retain(driver: &Driver, device: sys::CUdevice) -> Result<sys::CUcontext> {
        let f = entry!(driver, cuDevicePrimaryCtxRetain);
        let mut context: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one context handle.
        check(driver, "cuDevicePrimaryCtxRetain", unsafe { f(&mut context, device) })?;
        Ok(context)
    }

    /// `cuDevicePrimaryCtxRelease_v2`: drops one reference taken by [`primary_retain`].
    ///
    /// # Safety
    /// The caller must own one retained reference and must not use the context through it
    /// afterwards.
    pub unsafe fn primary_release(driver: &Driver, device: sys::CUdevice) -> Result<()> {
        let f = entry!(driver, cuDevicePrimaryCtxRelease_v2);
        // SAFETY: per this function's contract.
        check(driver, "cuDevicePrimaryCtxRelease_v2", unsafe { f(device) })
    }

    /// `cuCtxGetCurrent`: the calling thread's current context (null if none).
    pub fn get_current(driver: &Driver) -> Result<sys::CUcontext> {
        let f = entry!(driver, cuCtxGetCurrent);
        let mut context: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle.
        check(driver, "cuCtxGetCurrent", unsafe { f(&mut context) })?;
        Ok(context)
    }

    /// `cuCtxPushCurrent_v2`: makes `context` current on this thread, above the previous one.
    ///
    /// # Safety
    /// `context` must be a live context for as long as it stays current.
    pub unsafe fn push_current(driver: &Driver, context: sys::CUcontext) -> Result<()> {
        let f = entry!(driver, cuCtxPushCurrent_v2);
        // SAFETY: per this function's contract.
        check(driver, "cuCtxPushCurrent_v2", unsafe { f(context) })
    }

    /// `cuCtxPopCurrent_v2`: undoes [`push_current`] on this thread.
    pub fn pop_current(driver: &Driver) -> Result<sys::CUcontext> {
        let f = entry!(driver, cuCtxPopCurrent_v2);
        let mut context: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle.
        check(driver, "cuCtxPopCurrent_v2", unsafe { f(&mut context) })?;
        Ok(context)
    }

    /// `cuCtxSynchronize`: waits for all work of the current context.
    pub fn synchronize(driver: &Driver) -> Result<()> {
        let f = entry!(driver, cuCtxSynchronize);
        // SAFETY: no arguments; an error if no context is current.
        check(driver, "cuCtxSynchronize", unsafe { f() })
    }
}

/// Streams.
pub mod stream {
    use super::*;

    /// `cuStreamCreate` with `flags` (e.g. [`sys::CU_STREAM_NON_BLOCKING`]) in the current
    /// context. Balance with [`destroy`].
    pub fn create(driver: &Driver, flags: u32) -> Result<sys::CUstream> {
        let f = entry!(driver, cuStreamCreate);
        let mut stream: sys::CUstream = std::ptr::null_mut();
        // SAFETY: writes one handle.
        check(driver, "cuStreamCreate", unsafe { f(&mut stream, flags) })?;
        Ok(stream)
    }

    /// `cuStreamDestroy_v2`.
    ///
    /// # Safety
    /// `stream` must come from [`create`] and not be used afterwards.
    pub unsafe fn destroy(driver: &Driver, stream: sys::CUstream) -> Result<()> {
        let f = entry!(driver, cuStreamDestroy_v2);
        // SAFETY: per this function's contract.
        check(driver, "cuStreamDestroy_v2", unsafe { f(stream) })
    }

    /// `cuStreamSynchronize`: waits for the work queued on `stream`.
    ///
    /// # Safety
    /// `stream` must be a live stream or one of the special handles (null, legacy).
    pub unsafe fn synchronize(driver: &Driver, stream: sys::CUstream) -> Result<()> {
        let f = entry!(driver, cuStreamSynchronize);
        // SAFETY: per this function's contract.
        check(driver, "cuStreamSynchronize", unsafe { f(stream) })
    }
}

/// Modules: loading PTX (the driver JIT-compiles it for the device) and finding kernels.
pub mod module {
    use super::*;

    /// `cuModuleLoadDataEx` of NUL-terminated PTX text, collecting the JIT error log: on
    /// failure returns the error with the log text. Balance with [`unload`].
    pub fn load_data(driver: &Driver, ptx: &CStr) -> std::result::Result<sys::CUmodule, (CudaError, String)> {
        let f = match driver.api().cuModuleLoadDataEx {
            Some(f) => f,
            None => return Err((CudaError::MissingSymbol("cuModuleLoadDataEx"), String::new())),
        };
        let mut error_log = vec![0u8; 16 * 1024];
        let mut options = [sys::CU_JIT_ERROR_LOG_BUFFER, sys::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut values = [error_log.as_mut_ptr() as *mut c_void, error_log.len() as *mut c_void];
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: the image is NUL-terminated PTX; the option arrays have equal length and the
        // log buffer outlives the call, its size passed by value as the API requires.
        let code = unsafe {
            f(&mut module, ptx.as_ptr() as *const c_void, options.len() as u32, options.as_mut_ptr(), values.as_mut_ptr())
        };
        if code == sys::CUDA_SUCCESS {
            return Ok(module);
        }
        let end = error_log.iter().position(|&b| b == 0).unwrap_or(error_log.len());
        let log = String::from_utf8_lossy(&error_log[..end]).into_owned();
        Err((CudaError::Driver(DriverError::new(driver.api().error_tables(), "cuModuleLoadDataEx", code)), log))
    }

    /// `cuModuleUnload`.
    ///
    /// # Safety
    /// `module` must come from [`load_data`]; its functions must not be used afterwards.
    pub unsafe fn unload(driver: &Driver, module: sys::CUmodule) -> Result<()> {
        let f = entry!(driver, cuModuleUnload);
        // SAFETY: per this function's contract.
        check(driver, "cuModuleUnload", unsafe { f(module) })
    }

    /// `cuModuleGetFunction`: the kernel `name` of `module`; valid while the module is loaded.
    ///
    /// # Safety
    /// `module` must be a live module.
    pub unsafe fn get_function(driver: &Driver, module: sys::CUmodule, name: &CStr) -> Result<sys::CUfunction> {
        let f = entry!(driver, cuModuleGetFunction);
        let mut function: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: per this function's contract; `name` is NUL-terminated.
        check(driver, "cuModuleGetFunction", unsafe { f(&mut function, module, name.as_ptr()) })?;
        Ok(function)
    }
}

/// Device memory.
pub mod memory {
    use super::*;

    /// `cuMemAlloc_v2` of `bytes` in the current context. Balance with [`free`].
    pub fn alloc(driver: &Driver, bytes: usize) -> Result<sys::CUdeviceptr> {
        let f = entry!(driver, cuMemAlloc_v2);
        let mut pointer: sys::CUdeviceptr = 0;
        // SAFETY: writes one device pointer.
        check(driver, "cuMemAlloc_v2", unsafe { f(&mut pointer, bytes) })?;
        Ok(pointer)
    }

    /// `cuMemFree_v2`.
    ///
    /// # Safety
    /// `pointer` must come from [`alloc`], with no kernel still using it.
    pub unsafe fn free(driver: &Driver, pointer: sys::CUdeviceptr) -> Result<()> {
        let f = entry!(driver, cuMemFree_v2);
        // SAFETY: per this function's contract.
        check(driver, "cuMemFree_v2", unsafe { f(pointer) })
    }

    /// `cuMemcpyHtoD_v2` (synchronous with respect to the host).
    ///
    /// # Safety
    /// `dst` must point to at least `src.len()` bytes of device memory.
    pub unsafe fn copy_h_to_d(driver: &Driver, dst: sys::CUdeviceptr, src: &[u8]) -> Result<()> {
        let f = entry!(driver, cuMemcpyHtoD_v2);
        // SAFETY: per this function's contract; `src` is a valid host slice.
        check(driver, "cuMemcpyHtoD_v2", unsafe { f(dst, src.as_ptr() as *const c_void, src.len()) })
    }

    /// `cuMemcpyDtoH_v2` (waits for the copy).
    ///
    /// # Safety
    /// `src` must point to at least `dst.len()` bytes of device memory.
    pub unsafe fn copy_d_to_h(driver: &Driver, dst: &mut [u8], src: sys::CUdeviceptr) -> Result<()> {
        let f = entry!(driver, cuMemcpyDtoH_v2);
        // SAFETY: per this function's contract; `dst` is a valid host slice.
        check(driver, "cuMemcpyDtoH_v2", unsafe { f(dst.as_mut_ptr() as *mut c_void, src, dst.len()) })
    }
}

/// Kernel launches.
pub mod launch {
    use super::*;

    /// `cuLaunchKernel` with parameters given as `params` (one pointer per kernel parameter,
    /// each pointing to that parameter's value) and no `extra`.
    ///
    /// # Safety
    /// `function` must be live; `params` must have exactly one pointer per parameter of the
    /// kernel, each to a value of that parameter's PTX type; device pointers among the values
    /// must be valid for what the kernel accesses; `stream` must be live or special.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn kernel(
        driver: &Driver,
        function: sys::CUfunction,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_bytes: u32,
        stream: sys::CUstream,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let f = entry!(driver, cuLaunchKernel);
        // SAFETY: per this function's contract; the driver copies the parameter values
        // before returning.
        let code = unsafe {
            f(function, grid.0, grid.1, grid.2, block.0, block.1, block.2, shared_bytes, stream,
              params.as_mut_ptr(), std::ptr::null_mut())
        };
        check(driver, "cuLaunchKernel", code)
    }
}

/// Events, for timing on the device.
pub mod event {
    use super::*;

    /// `cuEventCreate`. Balance with [`destroy`].
    pub fn create(driver: &Driver) -> Result<sys::CUevent> {
        let f = entry!(driver, cuEventCreate);
        let mut event: sys::CUevent = std::ptr::null_mut();
        // SAFETY: writes one handle.
        check(driver, "cuEventCreate", unsafe { f(&mut event, sys::CU_EVENT_DEFAULT) })?;
        Ok(event)
    }

    /// `cuEventDestroy_v2`.
    ///
    /// # Safety
    /// `event` must come from [`create`] and not be used afterwards.
    pub unsafe fn destroy(driver: &Driver, event: sys::CUevent) -> Result<()> {
        let f = entry!(driver, cuEventDestroy_v2);
        // SAFETY: per this function's contract.
        check(driver, "cuEventDestroy_v2", unsafe { f(event) })
    }

    /// `cuEventRecord` on `stream`.
    ///
    /// # Safety
    /// `event` and `stream` must be live (or `stream` special).
    pub unsafe fn record(driver: &Driver, event: sys::CUevent, stream: sys::CUstream) -> Result<()> {
        let f = entry!(driver, cuEventRecord);
        // SAFETY: per this function's contract.
        check(driver, "cuEventRecord", unsafe { f(event, stream) })
    }

    /// `cuEventSynchronize`.
    ///
    /// # Safety
    /// `event` must be live.
    pub unsafe fn synchronize(driver: &Driver, event: sys::CUevent) -> Result<()> {
        let f = entry!(driver, cuEventSynchronize);
        // SAFETY: per this function's contract.
        check(driver, "cuEventSynchronize", unsafe { f(event) })
    }

    /// `cuEventElapsedTime`: milliseconds between two completed events.
    ///
    /// # Safety
    /// Both events must be live.
    pub unsafe fn elapsed_ms(driver: &Driver, start: sys::CUevent, end: sys::CUevent) -> Result<f32> {
        let f = entry!(driver, cuEventElapsedTime);
        let mut ms = 0f32;
        // SAFETY: per this function's contract.
        check(driver, "cuEventElapsedTime", unsafe { f(&mut ms, start, end) })?;
        Ok(ms)
    }
}
