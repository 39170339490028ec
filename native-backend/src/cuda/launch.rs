//! Typed kernel parameters: every generated kernel has a [`KernelSignature`] (its name and
//! PTX parameter list). The PTX `.entry` line is written from the same signature, and every
//! launch checks its arguments against it before calling the driver, so a launch can never
//! hand the driver a parameter list of the wrong length or types.

use std::ffi::c_void;

use super::result::{CudaError, Result};

/// The most parameters any of our kernels takes; launches use a fixed array of this size.
pub const MAX_PARAMS: usize = 24;

/// The PTX type of one kernel parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A device address (`.u64`).
    Ptr,
    /// `.u32`, e.g. an element count.
    U32,
    /// `.s64`, e.g. a stride in elements.
    I64,
    /// `.f32`, e.g. a scale factor.
    F32,
}

impl ParamKind {
    /// The PTX type spelling used in the `.entry` parameter list.
    pub fn ptx_type(self) -> &'static str {
        match self {
            ParamKind::Ptr => ".u64",
            ParamKind::U32 => ".u32",
            ParamKind::I64 => ".s64",
            ParamKind::F32 => ".f32",
        }
    }
}

/// A kernel's name and parameter list.
#[derive(Debug, PartialEq, Eq)]
pub struct KernelSignature {
    pub name: &'static str,
    pub params: &'static [ParamKind],
}

/// One launch argument; its variant must match the parameter's [`ParamKind`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    Ptr(u64),
    U32(u32),
    I64(i64),
    F32(f32),
}

impl Arg {
    pub fn kind(&self) -> ParamKind {
        match self {
            Arg::Ptr(_) => ParamKind::Ptr,
            Arg::U32(_) => ParamKind::U32,
            Arg::I64(_) => ParamKind::I64,
            Arg::F32(_) => ParamKind::F32,
        }
    }

    /// The address of the value, as `cuLaunchKernel` wants it. Valid while `self` is.
    pub fn value_ptr(&self) -> *mut c_void {
        match self {
            Arg::Ptr(value) => value as *const u64 as *mut c_void,
            Arg::U32(value) => value as *const u32 as *mut c_void,
            Arg::I64(value) => value as *const i64 as *mut c_void,
            Arg::F32(value) => value as *const f32 as *mut c_void,
        }
    }
}

impl KernelSignature {
    /// Checks that `args` has one argument of the right kind per parameter.
    pub fn check(&self, args: &[Arg]) -> Result<()> {
        let error = |message: String| Err(CudaError::LaunchArguments { kernel: self.name, message });
        if self.params.len() > MAX_PARAMS {
            return error(format!("{} parameters exceed the limit of {MAX_PARAMS}", self.params.len()));
        }
        if args.len() != self.params.len() {
            return error(format!("expected {} arguments, got {}", self.params.len(), args.len()));
        }
        for (index, (param, arg)) in self.params.iter().zip(args).enumerate() {
            if *param != arg.kind() {
                return error(format!("argument {index} is {:?}, the kernel expects {:?}", arg.kind(), param));
            }
        }
        Ok(())
    }

    /// The PTX parameter declarations, `.param .u64 p0, ...`, for the `.entry` line.
    pub fn ptx_params(&self) -> String {
        self.params
            .iter()
            .enumerate()
            .map(|(index, kind)| format!(".param {} p{index}", kind.ptx_type()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Grid, block and dynamic shared memory of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: u32,
}

impl LaunchConfig {
    /// One thread per element in blocks of `block` threads (1-D), at least one block.
    pub fn for_elements(count: u64, block: u32) -> Result<LaunchConfig> {
        let blocks = count.div_ceil(block as u64).max(1);
        let blocks = u32::try_from(blocks)
            .map_err(|_| CudaError::Unsupported(format!("torchlower: {count} elements exceed one CUDA grid")))?;
        Ok(LaunchConfig { grid: (blocks, 1, 1), block: (block, 1, 1), shared_bytes: 0 })
    }
}
