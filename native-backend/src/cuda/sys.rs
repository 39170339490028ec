//! Raw CUDA driver API types: the handles, enums and function-pointer types of the symbols we
//! resolve from `libcuda` at run time. Written by hand from the driver API reference (no
//! `cuda.h`, no bindgen), for x86_64/aarch64 Linux where `CUdeviceptr` is 64 bits.
//!
//! Nothing here is safe to call directly: [`super::result`] wraps every call.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `CUresult`: 0 is `CUDA_SUCCESS`, anything else an error code (see [`super::result`]).
pub type CUresult = c_uint;
pub const CUDA_SUCCESS: CUresult = 0;

/// A device ordinal handle (`CUdevice`).
pub type CUdevice = c_int;
/// A device address (`CUdeviceptr`, 64-bit in the `_v2` API).
pub type CUdeviceptr = u64;

/// Opaque driver objects; only ever handled through pointers.
#[repr(C)]
pub struct CUctx_st {
    _private: [u8; 0],
}
#[repr(C)]
pub struct CUmod_st {
    _private: [u8; 0],
}
#[repr(C)]
pub struct CUfunc_st {
    _private: [u8; 0],
}
#[repr(C)]
pub struct CUstream_st {
    _private: [u8; 0],
}
#[repr(C)]
pub struct CUevent_st {
    _private: [u8; 0],
}
pub type CUcontext = *mut CUctx_st;
pub type CUmodule = *mut CUmod_st;
pub type CUfunction = *mut CUfunc_st;
pub type CUstream = *mut CUstream_st;
pub type CUevent = *mut CUevent_st;

/// `CU_STREAM_LEGACY`: the legacy default stream, which is PyTorch's default stream.
pub const CU_STREAM_LEGACY: CUstream = 0x1 as CUstream;
/// `CU_STREAM_NON_BLOCKING` flag of `cuStreamCreate`.
pub const CU_STREAM_NON_BLOCKING: c_uint = 0x1;
/// `CU_EVENT_DEFAULT` flag of `cuEventCreate`.
pub const CU_EVENT_DEFAULT: c_uint = 0x0;

/// `CUdevice_attribute` values we query.
pub type CUdevice_attribute = c_int;
pub const CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: CUdevice_attribute = 1;
pub const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: CUdevice_attribute = 16;
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: CUdevice_attribute = 75;
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: CUdevice_attribute = 76;

/// `CUjit_option` values used by `cuModuleLoadDataEx` to collect the JIT logs.
pub type CUjit_option = c_uint;
pub const CU_JIT_INFO_LOG_BUFFER: CUjit_option = 3;
pub const CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: CUjit_option = 4;
pub const CU_JIT_ERROR_LOG_BUFFER: CUjit_option = 5;
pub const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: CUjit_option = 6;

// Function-pointer types, one per driver entry point, named after the symbol.
pub type cuInit = unsafe extern "C" fn(flags: c_uint) -> CUresult;
pub type cuDriverGetVersion = unsafe extern "C" fn(version: *mut c_int) -> CUresult;
pub type cuGetErrorName = unsafe extern "C" fn(error: CUresult, name: *mut *const c_char) -> CUresult;
pub type cuGetErrorString = unsafe extern "C" fn(error: CUresult, text: *mut *const c_char) -> CUresult;
pub type cuDeviceGetCount = unsafe extern "C" fn(count: *mut c_int) -> CUresult;
pub type cuDeviceGet = unsafe extern "C" fn(device: *mut CUdevice, ordinal: c_int) -> CUresult;
pub type cuDeviceGetName = unsafe extern "C" fn(name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult;
pub type cuDeviceGetAttribute =
    unsafe extern "C" fn(value: *mut c_int, attribute: CUdevice_attribute, dev: CUdevice) -> CUresult;
pub type cuDeviceTotalMem_v2 = unsafe extern "C" fn(bytes: *mut usize, dev: CUdevice) -> CUresult;
pub type cuDevicePrimaryCtxRetain = unsafe extern "C" fn(ctx: *mut CUcontext, dev: CUdevice) -> CUresult;
pub type cuDevicePrimaryCtxRelease_v2 = unsafe extern "C" fn(dev: CUdevice) -> CUresult;
pub type cuCtxGetCurrent = unsafe extern "C" fn(ctx: *mut CUcontext) -> CUresult;
pub type cuCtxSetCurrent = unsafe extern "C" fn(ctx: CUcontext) -> CUresult;
pub type cuCtxPushCurrent_v2 = unsafe extern "C" fn(ctx: CUcontext) -> CUresult;
pub type cuCtxPopCurrent_v2 = unsafe extern "C" fn(ctx: *mut CUcontext) -> CUresult;
pub type cuCtxSynchronize = unsafe extern "C" fn() -> CUresult;
pub type cuStreamCreate = unsafe extern "C" fn(stream: *mut CUstream, flags: c_uint) -> CUresult;
pub type cuStreamDestroy_v2 = unsafe extern "C" fn(stream: CUstream) -> CUresult;
pub type cuStreamSynchronize = unsafe extern "C" fn(stream: CUstream) -> CUresult;
pub type cuModuleLoadDataEx = unsafe extern "C" fn(
    module: *mut CUmodule,
    image: *const c_void,
    num_options: c_uint,
    options: *mut CUjit_option,
    option_values: *mut *mut c_void,
) -> CUresult;
pub type cuModuleUnload = unsafe extern "C" fn(module: CUmodule) -> CUresult;
pub type cuModuleGetFunction =
    unsafe extern "C" fn(function: *mut CUfunction, module: CUmodule, name: *const c_char) -> CUresult;
pub type cuMemAlloc_v2 = unsafe extern "C" fn(dptr: *mut CUdeviceptr, bytes: usize) -> CUresult;
pub type cuMemFree_v2 = unsafe extern "C" fn(dptr: CUdeviceptr) -> CUresult;
pub type cuMemcpyHtoD_v2 =
    unsafe extern "C" fn(dst: CUdeviceptr, src: *const c_void, bytes: usize) -> CUresult;
pub type cuMemcpyDtoH_v2 =
    unsafe extern "C" fn(dst: *mut c_void, src: CUdeviceptr, bytes: usize) -> CUresult;
pub type cuLaunchKernel = unsafe extern "C" fn(
    function: CUfunction,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_bytes: c_uint,
    stream: CUstream,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult;
pub type cuEventCreate = unsafe extern "C" fn(event: *mut CUevent, flags: c_uint) -> CUresult;
pub type cuEventDestroy_v2 = unsafe extern "C" fn(event: CUevent) -> CUresult;
pub type cuEventRecord = unsafe extern "C" fn(event: CUevent, stream: CUstream) -> CUresult;
pub type cuEventSynchronize = unsafe extern "C" fn(event: CUevent) -> CUresult;
pub type cuEventElapsedTime =
    unsafe extern "C" fn(ms: *mut f32, start: CUevent, end: CUevent) -> CUresult;
