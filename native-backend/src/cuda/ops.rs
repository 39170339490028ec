//! `tl::cuda::ops`: the same functions and signatures as `tl::ops`, for float32 tensors of
//! ranks 1–4 already on `cuda:0`, computed by our generated kernels. Views (`view`,
//! `permute`, `transpose`, `unsqueeze`, `narrow`, `select`, `chunk`, basic indexing, …) are
//! metadata only — the same libtorch view functions as on the CPU, which launch nothing —
//! and where eager copies (`contiguous`, `reshape`/`flatten` of a layout no view can
//! describe, `cat`, `stack`) our copy kernel does.
//!
//! Each op: loads the driver and its kernel (first call only; without a driver every op
//! returns the loader error naming every path searched), checks its inputs (no implicit
//! transfer: a tensor elsewhere is an error), derives the kernel's plan from sizes and
//! strides (strided inputs are read in place), allocates the output with PyTorch's caching
//! allocator on `cuda:0`, and launches on PyTorch's current stream, so ordering with
//! PyTorch's own work is the stream's and no synchronisation is needed. Outputs are fresh
//! contiguous tensors; inputs are never written.

use torchlower_ops::CUDA_POW_EXPONENTS;
use tch::{Device, Kind, Tensor};

use super::kernels::args;
use super::kernels::math::{Binary, NumberForm, Pointwise, Unary};
use super::kernels::plan::{contiguous_strides, norm_line_len, CopyPlan, DimsError, ReduceDims, ElementwisePlan, MatmulPlan, Norm, NormShapeError, ReducePlan, MAX_DIMS};
use super::kernels::conv::ConvPlan;
use super::kernels::pool::{PoolKind, PoolPlan};
use super::kernels::Kernel;
use super::launch::{Arg, LaunchConfig};
use super::result::CudaError;
use super::runtime::{self, LoadedKernel};
use super::safe::StreamHandle;
use crate::{Error, Result};

/// The stream PyTorch is currently using on device 0 (`torch.cuda.current_stream()`), so
/// our kernels are ordered with PyTorch's work; PyTorch's default (legacy) stream if it
/// cannot be asked (and always without the `python` feature, where no Python runs).
fn current_stream() -> StreamHandle {
    #[cfg(feature = "python")]
    let raw = pyo3::Python::with_gil(|py| -> pyo3::PyResult<usize> {
        use pyo3::prelude::*;
        py.import("torch")?.getattr("cuda")?.call_method1("current_stream", (0,))?.getattr("cuda_stream")?.extract()
    });
    #[cfg(not(feature = "python"))]
    let raw: std::result::Result<usize, ()> = Ok(0);
    match raw {
        // SAFETY: PyTorch's current stream belongs to the primary context of device 0 and
        // outlives the kernels queued on it.
        Ok(raw) if raw != 0 => unsafe { StreamHandle::from_raw(raw) },
        _ => StreamHandle::LEGACY,
    }
}

/// Checks that `t` is a float32 tensor of rank 1–4 on cuda:0.
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
    if !(1..=MAX_DIMS).contains(&rank) {
        return Err(unsupported(format!("torchlower: CUDA {op} supports tensors of rank 1 to {MAX_DIMS}, got rank {rank}")));
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

/// Launches an elementwise kernel over `plan` into a fresh contiguous output.
fn elementwise(kernel: Kernel, plan: ElementwisePlan, a: &Tensor, b: Option<&Tensor>, x: f32, y: f32) -> Result<Tensor> {
    let loaded = runtime::kernel(kernel)?;
    let out = empty(&plan.out_shape, Kind::Float)?;
    if plan.numel() == 0 {
        return Ok(out);
    }
    launch(loaded, args::elementwise_config(&plan)?, &args::elementwise_args(&plan, addr(&out), addr(a), b.map(addr), x, y))?;
    Ok(out)
}

fn one_tensor(kernel: Kernel, name: &str, t: &Tensor, x: f32, y: f32) -> Result<Tensor> {
    runtime::kernel(kernel)?;
    check_input(name, t)?;
    let plan = ElementwisePlan::unary(&t.size(), &t.stride()).map_err(unsupported)?;
    elementwise(kernel, plan, t, None, x, y)
}

fn two_tensors(kernel: Kernel, name: &str, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    runtime::kernel(kernel)?;
    check_input(name, a)?;
    check_input(name, b)?;
    let plan = ElementwisePlan::broadcast(&a.size(), &a.stride(), &b.size(), &b.stride()).map_err(shape_error)?;
    elementwise(kernel, plan, a, Some(b), 0.0, 0.0)
}

fn unary(op: Unary, t: &Tensor) -> Result<Tensor> {
    one_tensor(Kernel::Unary(op), op.name(), t, 0.0, 0.0)
}

fn binary(op: Binary, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    two_tensors(Kernel::Binary(op), op.name(), a, b)
}

/// A Python number as eager's CUDA kernels see it: float32 (`opmath` of float32 tensors).
fn number<S: Into<tch::Scalar>>(s: S) -> Result<f32> {
    Ok(s.into().to_float()? as f32)
}

fn with_number(op: Pointwise, name: &str, t: &Tensor, x: f32) -> Result<Tensor> {
    one_tensor(Kernel::Pointwise(op), name, t, x, 0.0)
}

/// `t` with one Python number in one of eager's forms.
fn number_form<S: Into<tch::Scalar>>(form: NumberForm, name: &str, t: &Tensor, s: S) -> Result<Tensor> {
    let (op, x) = form.kernel(s.into().to_float()?);
    with_number(op, name, t, x)
}

/// `t + s` on cuda:0.
pub fn add_scalar<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    number_form(NumberForm::Add, "add", t, s)
}

/// `t - s` on cuda:0: eager adds `-1 * s`.
pub fn sub_scalar<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    number_form(NumberForm::Sub, "sub", t, s)
}

/// `t * s` on cuda:0.
pub fn mul_scalar<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    number_form(NumberForm::Mul, "mul", t, s)
}

/// `t / s` on cuda:0: eager's CUDA kernel multiplies by the float32 reciprocal of `s`.
pub fn div_scalar<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    number_form(NumberForm::Div, "div", t, s)
}

/// `s + t` on cuda:0.
pub fn scalar_add<S: Into<tch::Scalar>>(s: S, t: &Tensor) -> Result<Tensor> {
    number_form(NumberForm::Add, "add", t, s)
}

/// `s - t` on cuda:0 (`torch.rsub`).
pub fn scalar_sub<S: Into<tch::Scalar>>(s: S, t: &Tensor) -> Result<Tensor> {
    number_form(NumberForm::ReverseSub, "rsub", t, s)
}

/// `s * t` on cuda:0.
pub fn scalar_mul<S: Into<tch::Scalar>>(s: S, t: &Tensor) -> Result<Tensor> {
    number_form(NumberForm::Mul, "mul", t, s)
}

/// `s / t` on cuda:0: `reciprocal(t) * s`, as eager.
pub fn scalar_div<S: Into<tch::Scalar>>(s: S, t: &Tensor) -> Result<Tensor> {
    number_form(NumberForm::ReverseDiv, "div", t, s)
}

/// `t ** s` on cuda:0 for `s` in [`CUDA_POW_EXPONENTS`] (the analyzer claims no other).
pub fn pow<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    let exponent = s.into().to_float()?;
    match exponent {
        2.0 => unary(Unary::Square, t),
        0.5 => unary(Unary::Sqrt, t),
        3.0 => with_number(Pointwise::Cube, "pow", t, 0.0),
        -1.0 => with_number(Pointwise::Reciprocal, "pow", t, 0.0),
        -2.0 => with_number(Pointwise::ReciprocalSquare, "pow", t, 0.0),
        // eager copies the base
        1.0 => copy_contiguous(t),
        other => Err(unsupported(format!("torchlower: CUDA pow supports the exponents {CUDA_POW_EXPONENTS:?}, got {other}"))),
    }
}

/// `torch.clamp(t, min, max)` on cuda:0 with Python-number bounds, either optional.
pub fn clamp(t: &Tensor, min: Option<tch::Scalar>, max: Option<tch::Scalar>) -> Result<Tensor> {
    match (min, max) {
        (Some(lo), Some(hi)) => one_tensor(Kernel::Pointwise(Pointwise::Clamp), "clamp", t, number(lo)?, number(hi)?),
        (Some(lo), None) => clamp_min(t, lo),
        (None, Some(hi)) => clamp_max(t, hi),
        (None, None) => Err(Error::Torch(tch::TchError::Torch("torch.clamp: At least one of 'min' or 'max' must not be None".to_string()))),
    }
}

/// `torch.clamp_min(t, lo)` on cuda:0.
pub fn clamp_min<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    number_form(NumberForm::ClampMin, "clamp_min", t, s)
}

/// `torch.clamp_max(t, hi)` on cuda:0.
pub fn clamp_max<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    number_form(NumberForm::ClampMax, "clamp_max", t, s)
}

/// `torch.maximum(a, b)` on cuda:0 (NaN if either is NaN).
pub fn maximum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    two_tensors(Kernel::Pointwise(Pointwise::Maximum), "maximum", a, b)
}

/// `torch.minimum(a, b)` on cuda:0 (NaN if either is NaN).
pub fn minimum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    two_tensors(Kernel::Pointwise(Pointwise::Minimum), "minimum", a, b)
}

// --- activations and math ------------------------------------------------------------------

macro_rules! pointwise_ops {
    ($($name:ident => $op:expr, $doc:literal;)*) => {
        $(#[doc = $doc] pub fn $name(t: &Tensor) -> Result<Tensor> { one_tensor(Kernel::Pointwise($op), stringify!($name), t, 0.0, 0.0) })*
    };
}

pointwise_ops! {
    rsqrt => Pointwise::Rsqrt, "`torch.rsqrt(t)` on cuda:0: `1/sqrt(t)`, two IEEE roundings (eager's `rsqrtf` is within 2 ulp).";
    erf => Pointwise::Erf, "`torch.erf(t)` on cuda:0 (within 2 ulp, the bound of CUDA's `erff`).";
    log1p => Pointwise::Log1p, "`torch.log1p(t)` on cuda:0.";
    expm1 => Pointwise::Expm1, "`torch.expm1(t)` on cuda:0.";
    gelu_tanh => Pointwise::GeluTanh, "`F.gelu(t, approximate=\"tanh\")` on cuda:0, eager's CUDA formula.";
    hardsigmoid => Pointwise::Hardsigmoid, "`F.hardsigmoid(t)` on cuda:0 (NaN kept).";
    hardswish => Pointwise::Hardswish, "`F.hardswish(t)` on cuda:0 (NaN kept).";
    mish => Pointwise::Mish, "`F.mish(t)` on cuda:0: `t·tanh(log1p(exp(t)))`.";
}

/// `F.leaky_relu(t, negative_slope)` on cuda:0 (the slope rounded to float32, as eager).
pub fn leaky_relu(t: &Tensor, negative_slope: f64) -> Result<Tensor> {
    one_tensor(Kernel::Pointwise(Pointwise::LeakyRelu), "leaky_relu", t, negative_slope as f32, 0.0)
}

/// ELU's kernel with eager's coefficients: `negcoef = alpha·scale` rounded in float32.
fn elu_with(name: &str, t: &Tensor, alpha: f64, scale: f64) -> Result<Tensor> {
    let (negcoef, poscoef) = (alpha as f32 * scale as f32, scale as f32);
    one_tensor(Kernel::Pointwise(Pointwise::Elu), name, t, negcoef, poscoef)
}

/// `F.elu(t)` (`alpha=1.0`) on cuda:0.
pub fn elu(t: &Tensor) -> Result<Tensor> {
    elu_with("elu", t, 1.0, 1.0)
}

/// `F.selu(t)` on cuda:0: ELU with eager's SELU constants.
pub fn selu(t: &Tensor) -> Result<Tensor> {
    const ALPHA: f64 = 1.673_263_242_354_377_284_817_042_991_671_7;
    const SCALE: f64 = 1.050_700_987_355_480_493_419_334_985_294_6;
    elu_with("selu", t, ALPHA, SCALE)
}

/// `F.softplus(t)` (`beta=1`, `threshold=20`) on cuda:0.
pub fn softplus(t: &Tensor) -> Result<Tensor> {
    one_tensor(Kernel::Pointwise(Pointwise::Softplus), "softplus", t, 1.0, 20.0)
}

/// `F.relu6(t)` on cuda:0: eager's `hardtanh(t, 0, 6)`, which is its clamp.
pub fn relu6(t: &Tensor) -> Result<Tensor> {
    one_tensor(Kernel::Pointwise(Pointwise::Clamp), "relu6", t, 0.0, 6.0)
}

/// `F.hardtanh(t, min_val, max_val)` on cuda:0: eager checks the bounds in Python, then
/// clamps.
pub fn hardtanh(t: &Tensor, min_val: f64, max_val: f64) -> Result<Tensor> {
    if min_val > max_val {
        return Err(Error::Value("min_val cannot be greater than max_val".into()));
    }
    one_tensor(Kernel::Pointwise(Pointwise::Clamp), "hardtanh", t, min_val as f32, max_val as f32)
}

// --- pooling --------------------------------------------------------------------------------

/// Arguments our kernels do not take because eager refuses them: libtorch's own op, which
/// checks its arguments before it launches anything, raises eager's error; should it accept
/// them after all, the refusal is ours.
fn eager_refusal(op: &str, eager: std::result::Result<Tensor, tch::TchError>) -> Result<Tensor> {
    match eager {
        Err(error) => Err(error.into()),
        Ok(_) => Err(unsupported(format!("torchlower: CUDA {op}: arguments outside our kernels' plan"))),
    }
}

/// Runs a pooling plan into a fresh contiguous output; `None` (arguments eager refuses) lets
/// libtorch raise eager's error through `eager_error`.
fn pool(kernel: Kernel, op: &str, x: &Tensor, plan: Option<PoolPlan>, eager_error: impl FnOnce() -> std::result::Result<Tensor, tch::TchError>) -> Result<Tensor> {
    let loaded = runtime::kernel(kernel)?;
    check_input(op, x)?;
    let Some(plan) = plan else { return eager_refusal(op, eager_error()) };
    let out = empty(&plan.out_shape, Kind::Float)?;
    if plan.numel() > 0 {
        launch(loaded, args::pool_config(&plan)?, &args::pool_args(&plan, addr(&out), addr(x))?)?;
    }
    Ok(out)
}

/// `F.max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode)` on cuda:0.
pub fn max_pool1d(x: &Tensor, kernel_size: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<Tensor> {
    let plan = PoolPlan::window(PoolKind::Max, 1, &x.size(), &x.stride(), kernel_size, stride, padding, dilation, ceil_mode, false);
    pool(Kernel::Pool(PoolKind::Max), "max_pool1d", x, plan, || x.f_max_pool1d(kernel_size, stride, padding, dilation, ceil_mode))
}

/// `F.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)` on cuda:0.
pub fn max_pool2d(x: &Tensor, kernel_size: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<Tensor> {
    let plan = PoolPlan::window(PoolKind::Max, 2, &x.size(), &x.stride(), kernel_size, stride, padding, dilation, ceil_mode, false);
    pool(Kernel::Pool(PoolKind::Max), "max_pool2d", x, plan, || x.f_max_pool2d(kernel_size, stride, padding, dilation, ceil_mode))
}

/// `F.avg_pool1d(x, kernel_size, stride, padding, ceil_mode, count_include_pad)` on cuda:0.
pub fn avg_pool1d(x: &Tensor, kernel_size: &[i64], stride: &[i64], padding: &[i64], ceil_mode: bool, count_include_pad: bool) -> Result<Tensor> {
    let plan = PoolPlan::window(PoolKind::Avg, 1, &x.size(), &x.stride(), kernel_size, stride, padding, &[1], ceil_mode, count_include_pad);
    pool(Kernel::Pool(PoolKind::Avg), "avg_pool1d", x, plan, || x.f_avg_pool1d(kernel_size, stride, padding, ceil_mode, count_include_pad))
}

/// `F.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad)` on cuda:0.
pub fn avg_pool2d(x: &Tensor, kernel_size: &[i64], stride: &[i64], padding: &[i64], ceil_mode: bool, count_include_pad: bool) -> Result<Tensor> {
    let plan = PoolPlan::window(PoolKind::Avg, 2, &x.size(), &x.stride(), kernel_size, stride, padding, &[1], ceil_mode, count_include_pad);
    pool(Kernel::Pool(PoolKind::Avg), "avg_pool2d", x, plan, || x.f_avg_pool2d(kernel_size, stride, padding, ceil_mode, count_include_pad, None::<i64>))
}

/// Adaptive average pooling: an output of ones is eager's mean over the pooled dims (its
/// composite does that before any kernel), so our mean kernel; other sizes the pooling kernel.
fn adaptive_avg(op: &str, dims: usize, x: &Tensor, output_size: &[i64], eager_error: impl FnOnce() -> std::result::Result<Tensor, tch::TchError>) -> Result<Tensor> {
    runtime::kernel(Kernel::Pool(PoolKind::AdaptiveAvg))?;
    check_input(op, x)?;
    let plan = PoolPlan::adaptive(PoolKind::AdaptiveAvg, dims, &x.size(), &x.stride(), output_size);
    if plan.is_some() && output_size.iter().all(|&o| o == 1) {
        let pooled: Vec<i64> = (1..=dims as i64).map(|d| -d).collect();
        return mean_dims(x, &pooled, true);
    }
    pool(Kernel::Pool(PoolKind::AdaptiveAvg), op, x, plan, eager_error)
}

/// `F.adaptive_avg_pool1d(x, output_size)` on cuda:0.
pub fn adaptive_avg_pool1d(x: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    adaptive_avg("adaptive_avg_pool1d", 1, x, output_size, || x.f_adaptive_avg_pool1d(output_size))
}

/// `F.adaptive_avg_pool2d(x, output_size)` on cuda:0.
pub fn adaptive_avg_pool2d(x: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    adaptive_avg("adaptive_avg_pool2d", 2, x, output_size, || x.f_adaptive_avg_pool2d(output_size))
}

/// `F.adaptive_max_pool2d(x, output_size)` on cuda:0: the values (eager drops the indices).
pub fn adaptive_max_pool2d(x: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    let plan = PoolPlan::adaptive(PoolKind::AdaptiveMax, 2, &x.size(), &x.stride(), output_size);
    pool(Kernel::Pool(PoolKind::AdaptiveMax), "adaptive_max_pool2d", x, plan, || x.f_adaptive_max_pool2d(output_size).map(|(values, _)| values))
}

// --- convolution ----------------------------------------------------------------------------

/// Direct convolution of `x` (rank `dims + 1` or `dims + 2`) by a contiguous copy of `w`.
#[allow(clippy::too_many_arguments)]
fn conv(op: &str, dims: usize, x: &Tensor, w: &Tensor, b: Option<&Tensor>, stride: &[i64], padding: &[i64], dilation: &[i64], groups: i64, eager_error: impl FnOnce() -> std::result::Result<Tensor, tch::TchError>) -> Result<Tensor> {
    let loaded = runtime::kernel(Kernel::Conv)?;
    check_input(op, x)?;
    check_input(op, w)?;
    if let Some(bias) = b {
        check_input(op, bias)?;
    }
    // a bias that is not a vector has no length the plan accepts (eager refuses it)
    let bias_len = b.map(|t| if t.dim() == 1 { t.size()[0] } else { -1 });
    let plan = ConvPlan::new(dims, &x.size(), &x.stride(), &w.size(), bias_len, stride, padding, dilation, groups);
    let Some(plan) = plan else { return eager_refusal(op, eager_error()) };
    let w = contiguous(w)?;
    let bias = b.map(contiguous).transpose()?;
    let out = empty(&plan.out_shape, Kind::Float)?;
    if plan.numel() > 0 {
        let args = args::conv_args(&plan, addr(&out), addr(x), addr(&w), bias.as_ref().map_or(0, addr))?;
        launch(loaded, args::conv_config(&plan)?, &args)?;
    }
    Ok(out)
}

/// `F.conv1d(x, w, b, stride, padding, dilation, groups)` on cuda:0, by direct convolution.
pub fn conv1d(x: &Tensor, w: &Tensor, b: Option<&Tensor>, stride: &[i64], padding: &[i64], dilation: &[i64], groups: i64) -> Result<Tensor> {
    conv("conv1d", 1, x, w, b, stride, padding, dilation, groups, || x.f_conv1d(w, b, stride, padding, dilation, groups))
}

/// `F.conv2d(x, w, b, stride, padding, dilation, groups)` on cuda:0, by direct convolution.
pub fn conv2d(x: &Tensor, w: &Tensor, b: Option<&Tensor>, stride: &[i64], padding: &[i64], dilation: &[i64], groups: i64) -> Result<Tensor> {
    conv("conv2d", 2, x, w, b, stride, padding, dilation, groups, || x.f_conv2d(w, b, stride, padding, dilation, groups))
}

// --- copies ------------------------------------------------------------------------------

/// A fresh contiguous copy of `t` by the copy kernel.
fn copy_contiguous(t: &Tensor) -> Result<Tensor> {
    let loaded = runtime::kernel(Kernel::Copy)?;
    check_input("contiguous", t)?;
    let shape = t.size();
    let out = empty(&shape, Kind::Float)?;
    let plan = CopyPlan::new(&shape, &t.stride(), &contiguous_strides(&shape)).map_err(unsupported)?;
    if plan.numel() > 0 {
        launch(loaded, args::copy_config(&plan)?, &args::copy_args(&plan, addr(&out), addr(t)))?;
    }
    Ok(out)
}

/// `t.contiguous()` on cuda:0: `t` itself (a new handle) when already contiguous, as eager.
pub fn contiguous(t: &Tensor) -> Result<Tensor> {
    if t.is_contiguous() {
        return Ok(t.shallow_clone());
    }
    copy_contiguous(t)
}

/// `t.reshape(shape)` on cuda:0: a view when the strides allow one (as eager), else a
/// contiguous copy viewed.
pub fn reshape(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    match t.f_view_(shape) {
        Ok(view) => Ok(view),
        // an invalid shape fails again below with eager's message
        Err(_) => Ok(copy_contiguous(t)?.f_view_(shape)?),
    }
}

fn wrap_dim(dim: i64, rank: i64) -> Result<i64> {
    let d = if dim < 0 { dim + rank } else { dim };
    if (0..rank).contains(&d) {
        Ok(d)
    } else {
        Err(Error::Index(format!(
            "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
            -rank,
            rank - 1
        )))
    }
}

/// `t.flatten(start, end)` on cuda:0: `t` itself when `start == end`, else reshape.
pub fn flatten(t: &Tensor, start_dim: i64, end_dim: i64) -> Result<Tensor> {
    let shape = t.size();
    let rank = shape.len() as i64;
    let (start, end) = (wrap_dim(start_dim, rank)?, wrap_dim(end_dim, rank)?);
    if start > end {
        return Err(Error::Torch(tch::TchError::Torch("flatten() has invalid args: start_dim cannot come after end_dim".to_string())));
    }
    if start == end {
        return Ok(t.shallow_clone());
    }
    let (start, end) = (start as usize, end as usize);
    let mut target = shape[..start].to_vec();
    target.push(shape[start..=end].iter().product());
    target.extend_from_slice(&shape[end + 1..]);
    reshape(t, &target)
}

/// Checks the inputs of `cat`/`stack` and returns the output shape, with eager's messages.
fn joined_shape(op: &str, tensors: &[&Tensor], dim: i64, stacked: bool) -> Result<(Vec<i64>, usize)> {
    let Some(first) = tensors.first() else {
        return Err(Error::Value(format!("torch.{op}(): expected a non-empty list of Tensors")));
    };
    for t in tensors {
        check_input(op, t)?;
    }
    let base = first.size();
    let rank = base.len() as i64 + i64::from(stacked);
    let d = wrap_dim(dim, rank)? as usize;
    let mut shape = base.clone();
    if stacked {
        for (i, t) in tensors.iter().enumerate() {
            if t.size() != base {
                return Err(shape_error(format!("stack expects each tensor to be equal size, but got {base:?} at entry 0 and {:?} at entry {i}", t.size())));
            }
        }
        shape.insert(d, tensors.len() as i64);
        return Ok((shape, d));
    }
    let mut total = 0;
    for (i, t) in tensors.iter().enumerate() {
        let size = t.size();
        if size.len() != base.len() {
            return Err(shape_error(format!("Tensors must have same number of dimensions: got {} and {}", base.len(), size.len())));
        }
        for k in 0..size.len() {
            if k != d && size[k] != base[k] {
                return Err(shape_error(format!(
                    "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                    base[k], size[k]
                )));
            }
        }
        total += size[d];
    }
    shape[d] = total;
    Ok((shape, d))
}

/// Copies each input into its slice of a fresh contiguous output along `d`.
fn join(op: &str, tensors: &[&Tensor], dim: i64, stacked: bool) -> Result<Tensor> {
    let loaded = runtime::kernel(Kernel::Copy)?;
    let (shape, d) = joined_shape(op, tensors, dim, stacked)?;
    let out = empty(&shape, Kind::Float)?;
    let out_strides = contiguous_strides(&shape);
    let mut start = 0i64;
    for t in tensors {
        // a stacked input is a size-1 slice of the output: its strides with the new dim
        let (mut sizes, mut strides) = (t.size(), t.stride());
        if stacked {
            sizes.insert(d, 1);
            strides.insert(d, 0);
        }
        let plan = CopyPlan::new(&sizes, &strides, &out_strides).map_err(unsupported)?;
        if plan.numel() > 0 {
            let offset = (start * out_strides[d]) as u64 * 4;
            launch(loaded, args::copy_config(&plan)?, &args::copy_args(&plan, addr(&out) + offset, addr(t)))?;
        }
        start += sizes[d];
    }
    Ok(out)
}

/// `torch.cat(tensors, dim)` on cuda:0.
pub fn cat(tensors: &[&Tensor], dim: i64) -> Result<Tensor> {
    join("cat", tensors, dim, false)
}

/// `torch.stack(tensors, dim)` on cuda:0.
pub fn stack(tensors: &[&Tensor], dim: i64) -> Result<Tensor> {
    join("stack", tensors, dim, true)
}

/// Views: metadata only, the libtorch functions the CPU path calls (they launch no kernel).
pub use crate::ops::{chunk, detach, dropout, expand, expand_as, narrow, permute, select, split, squeeze, t, transpose, unbind, unflatten, unsqueeze, view, view_as};

fn run_matmul(plan: MatmulPlan, a: &Tensor, b: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    let loaded = runtime::kernel(Kernel::Matmul)?;
    let out = empty(&plan.out_shape, Kind::Float)?;
    if plan.m == 0 || plan.n == 0 || plan.batches() == 0 {
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

/// `torch.matmul(a, b)` on cuda:0 for ranks 1–4 (batched, broadcasting the batch dims).
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    runtime::kernel(Kernel::Matmul)?;
    check_input("matmul", a)?;
    check_input("matmul", b)?;
    let plan = MatmulPlan::matmul(&a.size(), &a.stride(), &b.size(), &b.stride()).map_err(shape_error)?;
    run_matmul(plan, a, b, None)
}

/// `torch.mm(a, b)` on cuda:0: `matmul` of two rank-2 tensors (their types say so).
pub fn mm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    matmul(a, b)
}

/// `torch.bmm(a, b)` on cuda:0.
pub fn bmm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    runtime::kernel(Kernel::Matmul)?;
    check_input("bmm", a)?;
    check_input("bmm", b)?;
    let plan = MatmulPlan::bmm(&a.size(), &a.stride(), &b.size(), &b.stride()).map_err(shape_error)?;
    run_matmul(plan, a, b, None)
}

macro_rules! unary_ops {
    ($($name:ident => $op:expr, $doc:literal;)*) => {
        $(#[doc = $doc] pub fn $name(t: &Tensor) -> Result<Tensor> { unary($op, t) })*
    };
}

unary_ops! {
    relu => Unary::Relu, "`t.relu()` on cuda:0 (NaN kept, -0.0 gives +0.0, as eager's CUDA kernel).";
    sigmoid => Unary::Sigmoid, "`t.sigmoid()` on cuda:0.";
    tanh => Unary::Tanh, "`t.tanh()` on cuda:0.";
    abs => Unary::Abs, "`t.abs()` on cuda:0.";
    neg => Unary::Neg, "`t.neg()` on cuda:0.";
    square => Unary::Square, "`t.square()` on cuda:0.";
    exp => Unary::Exp, "`t.exp()` on cuda:0.";
    log => Unary::Log, "`t.log()` on cuda:0.";
    sqrt => Unary::Sqrt, "`t.sqrt()` on cuda:0.";
    gelu => Unary::Gelu, "`F.gelu(t, approximate=\"none\")` on cuda:0.";
    silu => Unary::Silu, "`F.silu(t)` on cuda:0.";
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

/// The reduction plan of `t`, and the tensor it reads: `t` itself, or a contiguous copy
/// when its kept dimensions do not merge into the kernels' two groups.
fn reduce_plan(op: &str, t: &Tensor, dim: i64, keepdim: bool) -> Result<(ReducePlan, Tensor)> {
    check_input(op, t)?;
    let plan = |t: &Tensor| ReducePlan::along(&t.size(), &t.stride(), dim, keepdim).map_err(Error::Index);
    if let Some(p) = plan(t)? {
        return Ok((p, t.shallow_clone()));
    }
    let copy = copy_contiguous(t)?;
    match plan(&copy)? {
        Some(p) => Ok((p, copy)),
        None => Err(unsupported(format!("torchlower: CUDA {op}: no reduction plan for a contiguous tensor of shape {:?}", t.size()))),
    }
}

fn sum_like(t: &Tensor, dim: i64, keepdim: bool, mean: bool) -> Result<Tensor> {
    let loaded = runtime::kernel(Kernel::Sum)?;
    let (plan, t) = reduce_plan(if mean { "mean" } else { "sum" }, t, dim, keepdim)?;
    let t = &t;
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
    softmax_like(Kernel::Softmax, "softmax", t, dim)
}

/// `F.log_softmax(t, dim)` on cuda:0: `(t - max) - log(Σ exp(t - max))` along `dim` (eager's
/// implicit dim when None).
pub fn log_softmax(t: &Tensor, dim: Option<i64>, _stacklevel: i64) -> Result<Tensor> {
    let dim = dim.unwrap_or_else(|| crate::ops::implicit_softmax_dim(t));
    softmax_like(Kernel::LogSoftmax, "log_softmax", t, dim)
}

fn softmax_like(kernel: Kernel, op: &str, t: &Tensor, dim: i64) -> Result<Tensor> {
    let loaded = runtime::kernel(kernel)?;
    let (plan, t) = reduce_plan(op, t, dim, true)?;
    let t = &t;
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
    let (plan, t) = reduce_plan("argmax", t, dim, keepdim)?;
    let t = &t;
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

/// `normalized_shape` checked against `x`'s trailing dims and the affine vectors' shapes
/// ([`norm_line_len`], eager's errors); the number of elements each line normalizes.
fn check_norm_shapes(op: &str, x: &Tensor, normalized_shape: &[i64], affine: &[(&str, Option<&Tensor>)]) -> Result<i64> {
    check_input(op, x)?;
    for (_, t) in affine {
        if let Some(t) = t {
            check_input(op, t)?;
        }
    }
    let norm = if op == "rms_norm" { Norm::Rms } else { Norm::Layer };
    let shapes: Vec<(&str, Option<Vec<i64>>)> = affine.iter().map(|(name, t)| (*name, t.map(Tensor::size))).collect();
    norm_line_len(norm, &x.size(), normalized_shape, &shapes).map_err(|e| match e {
        NormShapeError::Value(message) => Error::Value(message),
        NormShapeError::Runtime(message) => shape_error(message),
    })
}

/// Layer or RMS norm of `x`'s lines of `len` trailing elements into a fresh contiguous
/// tensor. The lines are read in place when one normalized dim is given (any strides the
/// reduction plan takes), from a contiguous copy otherwise; the affine vectors contiguous.
fn normalize_lines(kernel: Kernel, op: &str, x: &Tensor, len: i64, dims: usize, weight: Option<&Tensor>, bias: Option<&Tensor>, eps: f32) -> Result<Tensor> {
    let loaded = runtime::kernel(kernel)?;
    let out = empty(&x.size(), Kind::Float)?;
    if x.numel() == 0 {
        return Ok(out);
    }
    let lines = if dims == 1 || x.is_contiguous() { x.shallow_clone() } else { copy_contiguous(x)? };
    let lines = if dims == 1 { lines } else { lines.f_view([x.numel() as i64 / len, len])? };
    let (plan, lines) = reduce_plan(op, &lines, -1, true)?;
    let weight = weight.map(contiguous).transpose()?;
    let bias = bias.map(contiguous).transpose()?;
    let args = args::norm_args(&plan, addr(&out), addr(&lines), weight.as_ref().map(addr), bias.as_ref().map(addr), eps);
    launch(loaded, args::line_config(&plan)?, &args)?;
    Ok(out)
}

/// `F.layer_norm(x, normalized_shape, weight, bias, eps)` on cuda:0: the biased variance
/// of the mean's deviations (two passes), every step correctly rounded.
pub fn layer_norm(x: &Tensor, normalized_shape: &[i64], weight: Option<&Tensor>, bias: Option<&Tensor>, eps: f64) -> Result<Tensor> {
    runtime::kernel(Kernel::LayerNorm)?;
    let len = check_norm_shapes("layer_norm", x, normalized_shape, &[("weight", weight), ("bias", bias)])?;
    normalize_lines(Kernel::LayerNorm, "layer_norm", x, len, normalized_shape.len(), weight, bias, eps as f32)
}

/// `F.rms_norm(x, normalized_shape, weight, eps)` on cuda:0; `eps=None` is float32's
/// machine epsilon, as eager.
pub fn rms_norm(x: &Tensor, normalized_shape: &[i64], weight: Option<&Tensor>, eps: Option<f64>) -> Result<Tensor> {
    runtime::kernel(Kernel::RmsNorm)?;
    let len = check_norm_shapes("rms_norm", x, normalized_shape, &[("weight", weight)])?;
    let eps = eps.map_or(f32::EPSILON, |e| e as f32);
    normalize_lines(Kernel::RmsNorm, "rms_norm", x, len, normalized_shape.len(), weight, None, eps)
}

/// The order-1 or order-2 vector norm over `dims` on cuda:0, composed from our kernels:
/// `Σ|x|` (abs, sum) or `sqrt(Σx²)` (square, sum, sqrt); the analyzer claims no other order
/// on cuda:0 (TL209).
fn norm_of_order(op: &str, x: &Tensor, ord: f64, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    runtime::kernel(Kernel::Sum)?;
    check_input(op, x)?;
    match ord {
        1.0 => sum_dims(&abs(x)?, dims, keepdim),
        2.0 => sqrt(&sum_dims(&square(x)?, dims, keepdim)?),
        other => Err(unsupported(format!("torchlower: CUDA {op} takes the orders 1 and 2, got {other}"))),
    }
}

/// `torch.linalg.vector_norm(x, ord, dim, keepdim)` on cuda:0 (orders 1 and 2).
pub fn vector_norm(x: &Tensor, ord: f64, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    norm_of_order("vector_norm", x, ord, dim, keepdim)
}

/// `torch.norm(t, p, dim, keepdim)` on cuda:0 (`p` 1, 2 or None: 2).
pub fn norm(t: &Tensor, p: Option<f64>, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    norm_of_order("norm", t, p.unwrap_or(2.0), dim, keepdim)
}

/// `F.normalize(x, p, dim, eps)` on cuda:0: eager's steps, `x / norm(x, p, dim,
/// keepdim=True).clamp_min(eps)` (broadcast), by our kernels.
pub fn normalize(x: &Tensor, p: f64, dim: i64, eps: f64) -> Result<Tensor> {
    let denominator = clamp_min(&norm_of_order("normalize", x, p, &[dim], true)?, eps)?;
    div(x, &denominator)
}

/// `F.batch_norm(x, running_mean, running_var, weight, bias, training=False, momentum, eps)`
/// on cuda:0, composed from our elementwise kernels in the order of eager's CUDA inference
/// kernel: `rstd = 1/sqrt(var + eps)` per channel, then `(x - mean)·rstd·weight + bias`, the
/// channel vectors viewed as `(C, 1, …)` and broadcast. Statistics of another length than the
/// channels reach libtorch, which raises eager's error.
pub fn batch_norm(x: &Tensor, mean: &Tensor, var: &Tensor, weight: Option<&Tensor>, bias: Option<&Tensor>, momentum: f64, eps: f64) -> Result<Tensor> {
    runtime::kernel(Kernel::Binary(Binary::Sub))?;
    for t in [Some(x), Some(mean), Some(var), weight, bias].into_iter().flatten() {
        check_input("batch_norm", t)?;
    }
    let channels = if x.dim() >= 2 { Some(x.size()[1]) } else { None };
    let fits = |t: &Tensor| t.dim() == 1 && Some(t.size()[0]) == channels;
    if !([Some(mean), Some(var), weight, bias].into_iter().flatten().all(fits)) {
        return eager_refusal("batch_norm", x.f_batch_norm(weight, bias, Some(mean), Some(var), false, momentum, eps, true));
    }
    // (C,) viewed as (C, 1, …) against (N, C, …)
    let mut per_channel = vec![-1i64];
    per_channel.resize(x.dim() - 1, 1);
    let channel = |t: &Tensor| t.f_view(per_channel.as_slice());
    let rstd = rsqrt(&add_scalar(var, eps)?)?;
    let mut y = mul(&sub(x, &channel(mean)?)?, &channel(&rstd)?)?;
    if let Some(w) = weight {
        y = mul(&y, &channel(w)?)?;
    }
    if let Some(b) = bias {
        y = add(&y, &channel(b)?)?;
    }
    Ok(y)
}

/// `F.group_norm(x, num_groups, weight, bias, eps)` on cuda:0: eager's Python checks, then
/// each `(n, group)` normalized by our layer-norm kernel over the group's channels and
/// positions (no affine: the tree mean, the mean of the squared deviations, `rstd` by
/// `sqrt.rn`/`rcp.rn`), then `·weight + bias` per channel by the mul/add kernels. Channels not
/// divisible by the groups or affine vectors of another length reach libtorch, which raises
/// eager's error.
pub fn group_norm(x: &Tensor, num_groups: i64, weight: Option<&Tensor>, bias: Option<&Tensor>, eps: f64) -> Result<Tensor> {
    runtime::kernel(Kernel::LayerNorm)?;
    for t in [Some(x), weight, bias].into_iter().flatten() {
        check_input("group_norm", t)?;
    }
    if x.dim() >= 2 {
        crate::ops::group_norm_python_checks(x, num_groups)?;
    }
    let shape = x.size();
    let channels = *shape.get(1).unwrap_or(&0);
    let fits = |t: &Tensor| t.dim() == 1 && t.size()[0] == channels;
    if x.dim() < 2 || num_groups <= 0 || channels % num_groups != 0 || !([weight, bias].into_iter().flatten().all(fits)) {
        return eager_refusal("group_norm", x.f_group_norm(num_groups, weight, bias, eps, true));
    }
    let lines = reshape(x, &[shape[0], num_groups, -1])?;
    let len = *lines.size().last().unwrap_or(&1);
    let mut y = normalize_lines(Kernel::LayerNorm, "group_norm", &lines, len, 1, None, None, eps as f32)?.f_view(shape.as_slice())?;
    let mut per_channel = vec![-1i64];
    per_channel.resize(x.dim() - 1, 1);
    if let Some(w) = weight {
        y = mul(&y, &w.f_view(per_channel.as_slice())?)?;
    }
    if let Some(b) = bias {
        y = add(&y, &b.f_view(per_channel.as_slice())?)?;
    }
    Ok(y)
}

/// The lines of a reduction over `dims` (every dim when the list is empty, as eager): its
/// plan, the tensor it reads and the result's shape. One dim is read in place (or from a
/// contiguous copy, as [`reduce_plan`]); several are moved last by a permuted contiguous
/// copy, so each line is `prod(reduced sizes)` consecutive elements. Eager's errors for a dim
/// out of range (`IndexError`) or given twice.
fn lines_over(op: &str, t: &Tensor, dims: &[i64], keepdim: bool) -> Result<(ReducePlan, Tensor, Vec<i64>)> {
    check_input(op, t)?;
    let over = ReduceDims::new(&t.size(), dims, keepdim).map_err(|e| match e {
        DimsError::Index(message) => Error::Index(message),
        DimsError::Runtime(message) => shape_error(message),
    })?;
    if let [d] = over.reduced[..] {
        let (plan, t) = reduce_plan(op, t, d as i64, keepdim)?;
        return Ok((plan, t, over.out_shape));
    }
    let lines = copy_contiguous(&t.f_permute(over.order.as_slice())?)?.f_view([over.outer, over.len])?;
    let plan = over.plan().ok_or_else(|| unsupported(format!("torchlower: CUDA {op}: no reduction plan for lines of {}", over.len)))?;
    Ok((plan, lines, over.out_shape))
}

/// The reduced dims of `t` (all for an empty list) that have size 0, first in the list's order.
fn empty_reduced_dim(t: &Tensor, dims: &[i64]) -> Option<i64> {
    let shape = t.size();
    let rank = shape.len() as i64;
    let all: Vec<i64> = (0..rank).collect();
    let dims = if dims.is_empty() { &all[..] } else { dims };
    dims.iter().map(|&d| if d < 0 { d + rank } else { d }).find(|&d| shape.get(d as usize) == Some(&0))
}

/// Launches a line kernel with `args(plan, out, input)` into a fresh tensor of `out_shape`.
fn per_line(kernel: Kernel, op: &str, t: &Tensor, dims: &[i64], keepdim: bool, args: impl Fn(&ReducePlan, u64, u64) -> Vec<Arg>) -> Result<Tensor> {
    let loaded = runtime::kernel(kernel)?;
    let (plan, lines, out_shape) = lines_over(op, t, dims, keepdim)?;
    let out = empty(&out_shape, Kind::Float)?;
    if plan.outer == 0 {
        return Ok(out);
    }
    launch(loaded, args::line_config(&plan)?, &args(&plan, addr(&out), addr(&lines)))?;
    Ok(out)
}

/// `t.sum(dims, keepdim)` over a tuple of dims on cuda:0.
pub fn sum_dims(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    per_line(Kernel::Sum, "sum", t, dim, keepdim, |plan, out, input| args::sum_args(plan, out, input, 1.0))
}

/// `t.mean(dims, keepdim)` over a tuple of dims on cuda:0: the sum times `1/len`.
pub fn mean_dims(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    per_line(Kernel::Sum, "mean", t, dim, keepdim, |plan, out, input| args::sum_args(plan, out, input, 1.0f32 / plan.len as f32))
}

fn extremum(kernel: Kernel, op: &str, t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    runtime::kernel(kernel)?;
    check_input(op, t)?;
    if let Some(d) = empty_reduced_dim(t, dim) {
        return Err(Error::Index(format!("{op}(): Expected reduction dim {d} to have non-zero size.")));
    }
    per_line(kernel, op, t, dim, keepdim, |plan, out, input| args::sum_args(plan, out, input, 1.0))
}

/// `torch.amax(t, dim, keepdim)` on cuda:0 (NaN propagates; exact).
pub fn amax(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    extremum(Kernel::Amax, "amax", t, dim, keepdim)
}

/// `torch.amin(t, dim, keepdim)` on cuda:0 (NaN propagates; exact).
pub fn amin(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    extremum(Kernel::Amin, "amin", t, dim, keepdim)
}

/// `torch.prod(t, dim, keepdim)` on cuda:0: the product along the dim (the reduction's
/// order; an empty dim gives 1, as eager).
pub fn prod(t: &Tensor, dim: i64, keepdim: bool) -> Result<Tensor> {
    per_line(Kernel::Prod, "prod", t, &[dim], keepdim, |plan, out, input| args::sum_args(plan, out, input, 1.0))
}

/// `F.glu(t, dim)` on cuda:0: `a · sigmoid(b)` of the two halves along `dim` (views), eager's
/// CUDA formula; an odd size reaches libtorch, which raises eager's error.
pub fn glu(t: &Tensor, dim: i64) -> Result<Tensor> {
    runtime::kernel(Kernel::Unary(Unary::Sigmoid))?;
    check_input("glu", t)?;
    let d = wrap_dim(dim, t.dim() as i64)?;
    let size = t.size()[d as usize];
    if size % 2 != 0 {
        return eager_refusal("glu", t.f_glu(dim));
    }
    let half = size / 2;
    mul(&t.f_narrow(d, 0, half)?, &sigmoid(&t.f_narrow(d, half, half)?)?)
}

/// `t.reshape_as(other)` on cuda:0: [`reshape`] to `other`'s shape.
pub fn reshape_as(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    runtime::kernel(Kernel::Copy)?;
    check_input("reshape_as", t)?;
    check_input("reshape_as", other)?;
    reshape(t, &other.size())
}

/// `torch.logsumexp(t, dim, keepdim)` on cuda:0, eager's formula (the maximum, 0 where it
/// is ±inf, subtracted). An empty dim list, which eager's own kernel fails on, is refused.
pub fn logsumexp(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    if dim.is_empty() {
        return Err(unsupported("torchlower: CUDA logsumexp needs at least one dim (eager fails on an empty list too)".to_string()));
    }
    per_line(Kernel::Logsumexp, "logsumexp", t, dim, keepdim, |plan, out, input| args::sum_args(plan, out, input, 1.0))
}

fn moment(op: &str, t: &Tensor, dim: &[i64], unbiased: bool, keepdim: bool, corr: Option<f64>, take_sqrt: bool) -> Result<Tensor> {
    let correction = crate::ops::correction(unbiased, corr);
    per_line(Kernel::Var, op, t, dim, keepdim, |plan, out, input| {
        // eager's degrees of freedom: `max(0, N - correction)` (0 gives inf, or NaN for 0/0)
        let divisor = (plan.len as f64 - correction).max(0.0) as f32;
        args::var_args(plan, out, input, divisor, take_sqrt)
    })
}

/// `torch.var(t, dim, unbiased=…/correction=…, keepdim)` on cuda:0: two passes (the mean,
/// then the squared deviations), correctly rounded steps.
pub fn var(t: &Tensor, dim: &[i64], unbiased: bool, keepdim: bool, corr: Option<f64>) -> Result<Tensor> {
    moment("var", t, dim, unbiased, keepdim, corr, false)
}

/// `torch.std(t, dim, unbiased=…/correction=…, keepdim)` on cuda:0: the square root of
/// [`var`]'s result.
pub fn std(t: &Tensor, dim: &[i64], unbiased: bool, keepdim: bool, corr: Option<f64>) -> Result<Tensor> {
    moment("std", t, dim, unbiased, keepdim, corr, true)
}

/// `F.scaled_dot_product_attention(q, k, v, attn_mask, 0.0, False, scale, False)` on cuda:0,
/// composed from our kernels as eager's math path computes it: `softmax(q kᵀ · scale +
/// mask) v`, `scale` defaulting to `1/sqrt(E)`; the mask is added (a float mask). The causal
/// and grouped-head forms are rejected by the analyzer on cuda:0 (TL209) and refused here.
pub fn scaled_dot_product_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    attn_mask: Option<&Tensor>,
    is_causal: bool,
    scale: Option<f64>,
    enable_gqa: bool,
) -> Result<Tensor> {
    if is_causal || enable_gqa {
        return Err(unsupported("torchlower: CUDA scaled_dot_product_attention takes neither is_causal nor enable_gqa yet".to_string()));
    }
    runtime::kernel(Kernel::Matmul)?;
    check_input("scaled_dot_product_attention", q)?;
    let embedding = *q.size().last().unwrap_or(&1);
    let scale = scale.unwrap_or(1.0 / (embedding as f64).sqrt());
    let scores = mul_scalar(&matmul(q, &k.f_transpose(-2, -1)?)?, scale)?;
    let scores = match attn_mask {
        Some(mask) => {
            let masked = add(&scores, mask)?;
            // the mask broadcasts to the scores, never the scores to the mask
            if masked.size() != scores.size() {
                return Err(shape_error(format!(
                    "The expanded size of the attn_mask {:?} must match the attention scores {:?}",
                    mask.size(),
                    scores.size()
                )));
            }
            masked
        }
        None => scores,
    };
    matmul(&softmax(&scores, -1)?, v)
}
