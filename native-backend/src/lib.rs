//! torchlower-backend: everything the analyzer's generated `lib.rs` calls.
//!
//! The contract (names, signatures, error messages) is `API.md` beside this crate; the
//! generated code imports this crate as `use torchlower_backend as tl;` and reaches `tch`
//! and `pyo3` through the re-exports below, so a generated crate pins only this crate and the
//! same exact versions of those two.
//!
//! - [`boundary`]: torch.Tensor / int / bool arguments → Rust values, with the checks in order
//!   (type, device, dtype, rank) and stable messages; no storage copy.
//! - [`route`]: the `torchlower.NativeFunction` router: mode, autocast and refusals decided in
//!   C, so a positional call reaches the boundary without a Python frame.
//! - [`run`]: one call of a native function: a no-grad guard when an input requires grad, panic catching, and the
//!   mapping of [`Error`] to Python exceptions.
//! - [`ops`]: one fallible helper per claimed op family, eager PyTorch semantics.
//! - [`scalar`]: Python `int` arithmetic and `range` with Python semantics on `i64`.
//! - [`fused`]: the fused CPU kernels the analyzer's fusion pass emits in place of a chain of
//!   `tl::ops` calls (matmul/linear with an epilogue and reduction, weight-tied layer loops,
//!   elementwise chains), each with exactly the chain's semantics.
//! - [`export`]: what a crate written by `torchlower export` calls instead of the Python
//!   boundary: argument checks returning [`Error::Argument`], one no-grad guard per call.
//! - [`cuda`]: the CUDA path (`tl::cuda::ops`, the same ops for tensors on `cuda:0`): the
//!   driver loaded at run time, layered as cudarc is, and kernels generated as PTX.
//!
//! Errors: every fallible helper returns [`Result`]; [`Error`] has one variant per kind of
//! failure (libtorch, the CUDA path, an index check, Python `int` overflow and division by
//! zero, invalid values), and [`run`] raises each as the Python exception eager PyTorch or
//! CPython raises for it.

#[cfg(feature = "python")]
pub use pyo3;
pub use tch;

#[cfg(feature = "python")]
pub mod boundary;
pub mod fused;
pub mod index;
pub mod cuda;
mod error;
pub mod export;
mod facts;
mod multi_head_attention;
pub mod ops;
mod parallel;
#[cfg(feature = "python")]
pub mod route;
#[cfg(feature = "python")]
mod run;
pub mod scalar;
mod scalar_call;
pub mod shape;
mod spec;
pub mod vml;
mod writes;

pub use error::{Error, Result};
pub use scalar_call::Number;
#[cfg(feature = "python")]
pub use run::{run, run_for, AsList, IntoPyValue, ReturnRecord};
pub use writes::wrote_arguments;
pub use spec::{DeviceSpec, DtypeSpec, TensorSpec};
