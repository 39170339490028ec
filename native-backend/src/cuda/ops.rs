//! `tl::cuda::ops`: the same functions and signatures as `tl::ops`, for float32 rank-1/2
//! tensors already on `cuda:0`, computed by our generated kernels.
//!
//! Each op: loads the driver and its kernel (first call only; without a driver every op
//! returns the loader error naming every path searched), checks its inputs (no implicit
//! transfer: a tensor elsewhere is an error), derives the kernel's plan from sizes and
//! strides (strided inputs are read in place), allocates the output with PyTorch's caching
//! allocator on `cuda:0`, and launches on PyTorch's current stream, so ordering with
//! PyTorch's own work is the stream's and no synchronisation is needed. Outputs are fresh
//! contiguous tensors; inputs are never written.

use pyo3::prelude::*;
use tch::{Device, Kind, Tensor};

use super::kernels::args;
use super::kernels::math::{Binary, Unary};
use super::kernels::plan::{ElementwisePlan, MatmulPlan, ReducePlan};
use super::kernels::Kernel;
use super::launch::{Arg, LaunchConfig};
use super::result::CudaError;
use super::runtime::{self, LoadedKernel};
use super::safe::StreamHandle;
use crate::{Error, Result};

/// The stream PyTorch is currently using on device 0 (`torch.cuda.current_stream()`), so
/// our kernels are ordered with PyTorch's work; PyTorch's default (legacy) stream if it
/// cannot be asked.
fn current_stream() -> StreamHandle {
    let raw = Python::with_gil(|py| -> PyResult<usize> {
        py.import("torch")?.getattr("cuda")?.call_method1("current_stream", (0,))?.getattr("cuda_stream")?.extract()
    });
    match raw {
        // SAFETY: PyTorch's current stream belongs to the primary context of device 0 and
        // outlives the kernels queued on it.
        Ok(raw) if raw != 0 => unsafe { StreamHandle::from_raw(raw) },
        _ => StreamHandle::LEGACY,
    }
}

/// Checks that `t` is a float32 rank-1/2 tensor on cuda:0.
fn check_input(op: &str, t: &Tensor) -> Result<()> {
    let device = t.device();
    if device != Device::Cuda(0) {
        return Err(unsupported(format!(
            "torchlower: CUDA {op} expects tensors on cuda:0, got {}",
            device_name(device)
        )));
    }
    if t.kind() != Kind::Float {
        return Err(unsupported(format!("torchlower: CUDA {op} expects float32 tensors, got {:?}", t.kind())));
    }
    let rank = t.dim();
    if !(1..=2).contains(&rank) {
        return Err(unsupported(format!("torchlower: CUDA {op} supports rank-1 and rank-2 tensors, got rank {rank}")));
    }
    Ok(())
}

fn device_name(device: Device) -> String {
    match device {
        Device::Cpu => "cpu".to_string(),
        Device::Cuda(i) => format!("cuda:{i}"),
        other => format!("{other:?}"),
    }
}

fn unsupported(message: String) -> Error {
    Error::Cuda(CudaError::Unsupported(message))
}

/// A size mismatch found by the kernel's plan, with the message libtorch raises for it:
/// `RuntimeError`, as eager (a `Torch` error, because it stands for libtorch's own).
fn shape_error(message: String) -> Error {
    Error::Torch(tch::TchError::Torch(message))
}

fn empty(shape: &[i64], kind: Kind) -> Result<Tensor> {
    Ok(Tensor::f_empty(shape, (kind, Device::Cuda(0)))?)
}

/// The device address of a tensor's first element.
fn addr(t: &Tensor) -> u64 {
    t.data_ptr() as u64
}

/// Launches `loaded` with `args`.
fn launch(loaded: &LoadedKernel, config: LaunchConfig, args: &[Arg]) -> Result<()> {
    let stream = current_stream();
    // SAFETY: every pointer argument is the data pointer of a live cuda:0 tensor, and the
    // plan the other arguments come from was derived from those tensors' sizes and strides,
    // so every offset the kernel computes lies inside them; the tensors are kept alive by
    // the caller (inputs) and returned (outputs), and PyTorch's allocator orders reuse of
    // their memory after the work on this stream.
    unsafe { loaded.function().launch(config, stream, args)? };
    Ok(())
}

fn unary(op: Unary, t: &Tensor) -> Result<Tensor> {
    let loaded = runtime::kernel(Kernel::Unary(op))?;
    check_input(op.name(), t)?;
    let plan = ElementwisePlan::unary(&t.size(), &t.stride());
    let out = empty(&plan.out_shape, Kind::Float)?;
    if plan.numel() == 0 {
        return Ok(out);
    }
    launch(loaded, args::elementwise_config(&plan)?, &args::unary_args(&plan, addr(&out), addr(t)))?;
    Ok(out)
}

fn binary(op: Binary, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let loaded = runtime::kernel(Kernel::Binary(op))?;
    check_input(op.name(), a)?;
    check_input(op.name(), b)?;
    let plan = ElementwisePlan::broadcast(&a.size(), &a.stride(), &b.size(), &b.stride()).map_err(shape_error)?;
    let out = empty(&plan.out_shape, Kind::Float)?;
    if plan.numel() == 0 {
        return Ok(out);
    }
    launch(loaded, args::elementwise_config(&plan)?, &args::binary_args(&plan, addr(&out), addr(a), addr(b)))?;
    Ok(out)
}

fn run_matmul(plan: MatmulPlan, a: &Tensor, b: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    let loaded = runtime::kernel(Kernel::Matmul)?;
    let out = empty(&plan.out_shape, Kind::Float)?;
    if plan.m == 0 || plan.n == 0 {
        return Ok(out);
    }
    let bias = bias.map_or(0, addr);
    launch(loaded, args::matmul_config(&plan)?, &args::matmul_args(&plan, addr(&out), addr(a), addr(b), bias))?;
    Ok(out)
}

/// `F.linear(x, w, b)` on cuda:0.
pub fn linear(x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<Tensor> {
    runtime::kernel(Kernel::Matmul)?;
    check_input("linear", x)?;
    check_input("linear", w)?;
    if let Some(bias) = b {
        check_input("linear", bias)?;
    }
    let bias_layout = b.map(|t| (t.size(), t.stride()));
    let plan = MatmulPlan::linear(
        &x.size(),
        &x.stride(),
        &w.size(),
        &w.stride(),
        bias_layout.as_ref().map(|(s, t)| (s.as_slice(), t.as_slice())),
    )
    .map_err(shape_error)?;
    run_matmul(plan, x, w, b)
}

/// `torch.matmul(a, b)` on cuda:0 for ranks 2/2, 2/1 and 1/2.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    runtime::kernel(Kernel::Matmul)?;
    check_input("matmul", a)?;
    check_input("matmul", b)?;
    let plan = MatmulPlan::matmul(&a.size(), &a.stride(), &b.size(), &b.stride()).map_err(shape_error)?;
    run_matmul(plan, a, b, None)
}

macro_rules! unary_ops {
    ($($name:ident => $op:expr, $doc:literal;)*) => {
        $(#[doc = $doc] pub fn $name(t: &Tensor) -> Result<Tensor> { unary($op, t) })*
    };
}

unary_ops! {
    relu => Unary::Relu, "`t.relu()` on cuda:0 (NaN and -0.0 kept, as eager).";
    sigmoid => Unary::Sigmoid, "`t.sigmoid()` on cuda:0.";
    tanh => Unary::Tanh, "`t.tanh()` on cuda:0.";
    abs => Unary::Abs, "`t.abs()` on cuda:0.";
    neg => Unary::Neg, "`t.neg()` on cuda:0.";
    square => Unary::Square, "`t.square()` on cuda:0.";
    exp => Unary::Exp, "`t.exp()` on cuda:0.";
    log => Unary::Log, "`t.log()` on cuda:0.";
    sqrt => Unary::Sqrt, "`t.sqrt()` on cuda:0.";
    gelu => Unary::Gelu, "`F.gelu(t, approximate=\"none\")` on cuda:0.";
}

macro_rules! binary_ops {
    ($($name:ident => $op:expr, $doc:literal;)*) => {
        $(#[doc = $doc] pub fn $name(a: &Tensor, b: &Tensor) -> Result<Tensor> { binary($op, a, b) })*
    };
}

binary_ops! {
    add => Binary::Add, "`a + b` with broadcasting on cuda:0.";
    sub => Binary::Sub, "`a - b` with broadcasting on cuda:0.";
    mul => Binary::Mul, "`a * b` with broadcasting on cuda:0.";
    div => Binary::Div, "`a / b` (true division) with broadcasting on cuda:0.";
}

fn reduce_plan(op: &str, t: &Tensor, dim: i64, keepdim: bool) -> Result<ReducePlan> {
    check_input(op, t)?;
    ReducePlan::along(&t.size(), &t.stride(), dim, keepdim).map_err(Error::Value)
}

fn sum_like(t: &Tensor, dim: i64, keepdim: bool, mean: bool) -> Result<Tensor> {
    let loaded = runtime::kernel(Kernel::Sum)?;
    let plan = reduce_plan(if mean { "mean" } else { "sum" }, t, dim, keepdim)?;
    let out = empty(&plan.out_shape, Kind::Float)?;
    if plan.outer == 0 {
        return Ok(out);
    }
    // PyTorch's CUDA mean multiplies the sum by 1/len (inf for len 0, giving NaN as eager).
    let factor = if mean { 1.0f32 / plan.len as f32 } else { 1.0 };
    launch(loaded, args::line_config(&plan)?, &args::sum_args(&plan, addr(&out), addr(t), factor))?;
    Ok(out)
}

/// `t.sum(dim, keepdim)` on cuda:0.
pub fn sum_dim(t: &Tensor, dim: i64, keepdim: bool) -> Result<Tensor> {
    sum_like(t, dim, keepdim, false)
}

/// `t.mean(dim, keepdim)` on cuda:0.
pub fn mean_dim(t: &Tensor, dim: i64, keepdim: bool) -> Result<Tensor> {
    sum_like(t, dim, keepdim, true)
}

/// `torch.softmax(t, dim)` on cuda:0.
pub fn softmax(t: &Tensor, dim: i64) -> Result<Tensor> {
    let loaded = runtime::kernel(Kernel::Softmax)?;
    let plan = reduce_plan("softmax", t, dim, true)?;
    let out = empty(&t.size(), Kind::Float)?;
    if plan.outer == 0 || plan.len == 0 {
        return Ok(out);
    }
    launch(loaded, args::line_config(&plan)?, &args::softmax_args(&plan, addr(&out), addr(t)))?;
    Ok(out)
}

/// `torch.argmax(t, dim, keepdim)` on cuda:0 (int64 result, first index of the maximum,
/// NaN counting as the maximum).
pub fn argmax(t: &Tensor, dim: i64, keepdim: bool) -> Result<Tensor> {
    let loaded = runtime::kernel(Kernel::Argmax)?;
    let plan = reduce_plan("argmax", t, dim, keepdim)?;
    if plan.len == 0 {
        return Err(Error::Index(format!("argmax(): Expected reduction dim {dim} to have non-zero size.")));
    }
    let out = empty(&plan.out_shape, Kind::Int64)?;
    if plan.outer == 0 {
        return Ok(out);
    }
    launch(loaded, args::line_config(&plan)?, &args::argmax_args(&plan, addr(&out), addr(t)))?;
    Ok(out)
}
