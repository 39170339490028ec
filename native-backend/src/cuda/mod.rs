//! The CUDA path: the NVIDIA driver loaded at run time (no toolkit, no link-time
//! dependency), kernels generated as PTX in Rust, and `tl::cuda::ops`, the same ops as
//! `tl::ops` for tensors already on `cuda:0`.
//!
//! Layers, bottom up (modelled on cudarc):
//! - [`sys`]: raw driver types and function-pointer types.
//! - [`error`]: [`DriverError`], a driver call's error code with its name; depends only on
//!   `sys`, so both layers above it use it without depending on each other.
//! - [`loader`]: finds and opens `libcuda`, resolves every entry point (missing ones are
//!   allowed), calls `cuInit`; its error ([`loader::LoadError`]) lists every path tried.
//! - [`result`]: one checked function per driver call, grouped by API family; [`CudaError`],
//!   what every CUDA operation from there up returns (`From` the two errors below it).
//! - [`launch`]: typed kernel parameters, checked at every launch, no allocation per launch.
//! - [`safe`]: RAII owners (primary context, stream, module, function, device buffer, event).
//! - [`kernels`]: the PTX generators and the host models of what they compute.
//! - [`runtime`]: the process-wide driver, primary context of device 0, and per-kernel
//!   module cache (JIT once per process and kernel).
//! - [`ops`]: the tensor ops over tch tensors on `cuda:0`.
//!
//! Everything except [`ops`] is independent of tch and PyTorch, so the GPU check
//! (`native-backend/gpu-check`) compiles these files into a small binary that needs neither.
//!
//! A [`CudaError`] reaches Python through [`crate::Error::Cuda`], as `RuntimeError` with the
//! full text (for a missing driver: every path searched and each OS error).

pub mod error;
pub mod kernels;
pub mod launch;
pub mod loader;
pub mod ops;
pub mod result;
pub mod runtime;
pub mod safe;
pub mod sys;

pub use error::DriverError;
pub use result::CudaError;
