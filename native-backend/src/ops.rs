//! One fallible helper per claimed op family, each the exact eager PyTorch operation
//! (same libtorch kernel, so NaN/±Inf/signed-zero behaviour is eager's by construction).
//!
//! All are out-of-place and never mutate an input. Size mismatches (matmul inner sizes,
//! broadcasting) come back as [`crate::Error::Torch`] → `RuntimeError`, as in eager.
//! No helper opens its own no-grad guard: [`crate::run`] holds one for the whole call.

use tch::Tensor;

use crate::error::Result;
use crate::scalar_call::{self, Number};

/// `F.linear(x, w, b)` / `F.linear(x, w)`.
#[inline]
pub fn linear(x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<Tensor> {
    Ok(x.f_linear(w, b)?)
}

/// `t.relu()`, `torch.relu(t)`, `F.relu(t)`.
#[inline]
pub fn relu(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_relu()?)
}

/// `t.sigmoid()`, `torch.sigmoid(t)`.
#[inline]
pub fn sigmoid(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_sigmoid()?)
}

/// `t.tanh()`, `torch.tanh(t)`.
#[inline]
pub fn tanh(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_tanh()?)
}

/// `torch.abs(t)`.
#[inline]
pub fn abs(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_abs()?)
}

/// `torch.neg(t)` and `torch.negative(t)` (an alias of the same kernel).
#[inline]
pub fn neg(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_neg()?)
}

/// `torch.square(t)`.
#[inline]
pub fn square(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_square()?)
}

/// `torch.exp(t)`.
#[inline]
pub fn exp(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_exp()?)
}

/// `torch.log(t)`.
#[inline]
pub fn log(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_log()?)
}

/// `torch.sqrt(t)`.
#[inline]
pub fn sqrt(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_sqrt()?)
}

/// `F.gelu(t)` with `approximate="none"` (the exact erf form); the mode is fixed here and
/// never comes from the source.
#[inline]
pub fn gelu(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_gelu("none")?)
}

/// `a + b` with broadcasting.
#[inline]
pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_add(b)?)
}

/// `a - b` with broadcasting.
#[inline]
pub fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_sub(b)?)
}

/// `a * b` with broadcasting.
#[inline]
pub fn mul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_mul(b)?)
}

/// `a / b`: true division with broadcasting.
#[inline]
pub fn div(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_div(b)?)
}

/// `t + s` with a Python number `s` (int or float, wrapped by eager as a scalar of its own
/// kind: `tch::Scalar` keeps that distinction).
#[inline]
pub fn add_scalar<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    Ok(t.f_add_scalar(s)?)
}

/// `t - s`.
#[inline]
pub fn sub_scalar<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    Ok(t.f_sub_scalar(s)?)
}

/// `t * s`.
#[inline]
pub fn mul_scalar<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    Ok(t.f_mul_scalar(s)?)
}

/// `t / s`.
#[inline]
pub fn div_scalar<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    Ok(t.f_div_scalar(s)?)
}

/// `s + t`: Python calls `t.__radd__(s)`, which is `t + s`.
#[inline]
pub fn scalar_add<S: Into<tch::Scalar>>(s: S, t: &Tensor) -> Result<Tensor> {
    Ok(t.f_add_scalar(s)?)
}

/// `s - t`: `t.__rsub__(s)` is `torch.rsub(t, s)`.
#[inline]
pub fn scalar_sub<S: Into<tch::Scalar>>(s: S, t: &Tensor) -> Result<Tensor> {
    Ok(t.f_rsub_scalar(s)?)
}

/// `s * t`: `t.__rmul__(s)`, which is `t * s`.
#[inline]
pub fn scalar_mul<S: Into<tch::Scalar>>(s: S, t: &Tensor) -> Result<Tensor> {
    Ok(t.f_mul_scalar(s)?)
}

/// `s / t`: `t.__rtruediv__(s)` is `t.reciprocal() * s` in eager (not `s / t` elementwise,
/// which rounds differently).
#[inline]
pub fn scalar_div<S: Into<tch::Scalar>>(s: S, t: &Tensor) -> Result<Tensor> {
    Ok(t.f_reciprocal()?.f_mul_scalar(s)?)
}

/// `t.view(*shape)`: eager's errors where the strides allow no view.
#[inline]
pub fn view(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    Ok(t.f_view_(shape)?)
}

/// `t.reshape(*shape)` / `torch.reshape(t, shape)`.
#[inline]
pub fn reshape(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    Ok(t.f_reshape(shape)?)
}

/// `t.expand(*sizes)`.
#[inline]
pub fn expand(t: &Tensor, sizes: &[i64]) -> Result<Tensor> {
    Ok(t.f_expand(sizes, false)?)
}

/// `t.expand_as(other)`.
#[inline]
pub fn expand_as(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    Ok(t.f_expand_as(other)?)
}

/// `t.view_as(other)`: the view of `t` with `other`'s shape (eager's error when the sizes do
/// not fit).
#[inline]
pub fn view_as(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    Ok(t.f_view_as(other)?)
}

/// `t.reshape_as(other)`.
#[inline]
pub fn reshape_as(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    Ok(t.f_reshape_as(other)?)
}

/// `t.permute(*dims)` / `torch.permute(t, dims)`.
#[inline]
pub fn permute(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    Ok(t.f_permute(dims)?)
}

/// `t.transpose(d0, d1)` / `torch.transpose(t, d0, d1)`.
#[inline]
pub fn transpose(t: &Tensor, dim0: i64, dim1: i64) -> Result<Tensor> {
    Ok(t.f_transpose(dim0, dim1)?)
}

/// `t.t()` / `torch.t(t)`: libtorch's `t` checks the rank and returns `transpose(0, 1)`
/// (`transpose(0, 0)` below rank 2) through a second trip down the dispatcher; calling
/// `transpose` directly gives the same view about 50 ns sooner, a tenth of a lone `x.t()`.
#[inline]
pub fn t(t: &Tensor) -> Result<Tensor> {
    match t.dim() {
        2 => Ok(t.f_transpose(0, 1)?),
        0 | 1 => Ok(t.f_transpose(0, 0)?),
        _ => Ok(t.f_tr()?), // eager's error
    }
}

/// `t.unsqueeze(dim)` / `torch.unsqueeze(t, dim)`.
#[inline]
pub fn unsqueeze(t: &Tensor, dim: i64) -> Result<Tensor> {
    Ok(t.f_unsqueeze(dim)?)
}

/// `t.flatten(start, end)` / `torch.flatten(t, start, end)`.
#[inline]
pub fn flatten(t: &Tensor, start_dim: i64, end_dim: i64) -> Result<Tensor> {
    Ok(t.f_flatten(start_dim, end_dim)?)
}

/// `t.contiguous()`: the tensor itself (a new handle) when already contiguous.
#[inline]
pub fn contiguous(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_contiguous()?)
}

// --- in place, on tensors the analyzer proved are not a caller's (see `Expr::InPlace`) ---------

/// `t.relu_()` / `F.relu(t, inplace=True)`: `t` itself, changed.
#[inline]
pub fn relu_(t: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_relu_()?)
}

/// `F.silu(t, inplace=True)`, and the other activations written into their input (eager's
/// in-place kernels).
#[inline]
pub fn silu_(t: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_silu_()?)
}

/// `F.relu6(t, inplace=True)`.
#[inline]
pub fn relu6_(t: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_relu6_()?)
}

/// `F.hardswish(t, inplace=True)`.
#[inline]
pub fn hardswish_(t: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_hardswish_()?)
}

/// `F.hardsigmoid(t, inplace=True)`.
#[inline]
pub fn hardsigmoid_(t: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_hardsigmoid_()?)
}

/// `F.mish(t, inplace=True)`.
#[inline]
pub fn mish_(t: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_mish_()?)
}

/// `F.selu(t, inplace=True)`.
#[inline]
pub fn selu_(t: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_selu_()?)
}

/// `t += other` / `t.add_(other)`.
#[inline]
pub fn add_(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_add_(other)?)
}

/// `t -= other` / `t.sub_(other)`.
#[inline]
pub fn sub_(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_sub_(other)?)
}

/// `t *= other` / `t.mul_(other)`.
#[inline]
pub fn mul_(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_mul_(other)?)
}

/// `torch.tensor(items)` of a list of Python ints a comprehension made: int64, rank 1. An
/// empty list is eager's float32 tensor, which the claimed type cannot hold: refused.
pub fn tensor_of_ints(items: &[i64]) -> Result<Tensor> {
    if items.is_empty() {
        return Err(crate::Error::Value(
            "torchlower: native code refuses this call: torch.tensor of an empty list is float32 in eager, not int64 (auto mode runs this call as Python)".into(),
        ));
    }
    Ok(Tensor::f_from_slice(items)?)
}

/// `t |= other` of bool tensors (eager's `__ior__`: `bitwise_or_`).
#[inline]
pub fn logical_or_(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_bitwise_or_tensor_(other)?)
}

/// `t &= other` of bool tensors (`bitwise_and_`).
#[inline]
pub fn logical_and_(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_bitwise_and_tensor_(other)?)
}

/// `t ^= other` of bool tensors (`bitwise_xor_`).
#[inline]
pub fn logical_xor_(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_bitwise_xor_tensor_(other)?)
}

/// `t /= other` / `t.div_(other)`.
#[inline]
pub fn div_(t: &Tensor, other: &Tensor) -> Result<Tensor> {
    Ok(t.shallow_clone().f_div_(other)?)
}

/// `t += s` with a Python number (through [`scalar_call`]: eager's error for a tensor whose
/// elements share memory, an expanded view, or an int tensor plus a float, comes back as `Err`).
#[inline]
pub fn add_scalar_<S: Into<Number>>(t: &Tensor, s: S) -> Result<Tensor> {
    // SAFETY (and in the three below): a live tensor handle; the scalar lives for the call
    scalar_call::call([s.into()], |out, [s]| unsafe { torch_sys::c_generated::atg_add_scalar_(out, scalar_call::ptr(t), s) })
}

/// `t -= s`.
#[inline]
pub fn sub_scalar_<S: Into<Number>>(t: &Tensor, s: S) -> Result<Tensor> {
    scalar_call::call([s.into()], |out, [s]| unsafe { torch_sys::c_generated::atg_sub_scalar_(out, scalar_call::ptr(t), s) })
}

/// `t *= s`.
#[inline]
pub fn mul_scalar_<S: Into<Number>>(t: &Tensor, s: S) -> Result<Tensor> {
    scalar_call::call([s.into()], |out, [s]| unsafe { torch_sys::c_generated::atg_mul_scalar_(out, scalar_call::ptr(t), s) })
}

/// `t /= s`.
#[inline]
pub fn div_scalar_<S: Into<Number>>(t: &Tensor, s: S) -> Result<Tensor> {
    scalar_call::call([s.into()], |out, [s]| unsafe { torch_sys::c_generated::atg_div_scalar_(out, scalar_call::ptr(t), s) })
}

/// `torch.cat([a, b, …], dim)`.
#[inline]
pub fn cat(tensors: &[&Tensor], dim: i64) -> Result<Tensor> {
    Ok(Tensor::f_cat(tensors, dim)?)
}

/// `torch.stack([a, b, …], dim)`.
#[inline]
pub fn stack(tensors: &[&Tensor], dim: i64) -> Result<Tensor> {
    Ok(Tensor::f_stack(tensors, dim)?)
}

/// `t ** s`, `torch.pow(t, s)`, `t.pow(s)` with a Python number `s`.
#[inline]
pub fn pow<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    Ok(t.f_pow_tensor_scalar(s)?)
}

/// `torch.pow(input, exponent)` / `input ** exponent` with a tensor exponent: eager's
/// `pow.Tensor_Tensor` (its promotion and broadcasting) or, for a number base, `pow.Scalar`
/// (through [`scalar_call`]).
pub fn pow_tensor(input: Value, exponent: &Tensor) -> Result<Tensor> {
    match input {
        Value::Tensor(t) => Ok(t.f_pow(exponent)?),
        // SAFETY: a live tensor handle; the scalar lives for the call
        Value::Number(base) => scalar_call::call([base], |out, [base]| unsafe {
            torch_sys::c_generated::atg_pow_scalar(out, base, scalar_call::ptr(exponent))
        }),
    }
}

/// `torch.clamp(t, min, max)` with Python-number bounds, either optional (eager's `clamp`
/// with one bound is its `clamp_min` / `clamp_max`).
#[inline]
pub fn clamp(t: &Tensor, min: Option<tch::Scalar>, max: Option<tch::Scalar>) -> Result<Tensor> {
    Ok(match (min, max) {
        (Some(lo), Some(hi)) => t.f_clamp(lo, hi)?,
        (Some(lo), None) => t.f_clamp_min(lo)?,
        (None, Some(hi)) => t.f_clamp_max(hi)?,
        // eager raises "At least one of 'min' or 'max' must not be None"; the analyzer never
        // lowers that form
        (None, None) => t.shallow_clone(),
    })
}

/// `torch.clamp_min(t, lo)`.
#[inline]
pub fn clamp_min<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    Ok(t.f_clamp_min(s)?)
}

/// `torch.clamp_max(t, hi)`.
#[inline]
pub fn clamp_max<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
    Ok(t.f_clamp_max(s)?)
}

/// `F.layer_norm(x, normalized_shape, weight, bias, eps)` (libtorch's kernel, as eager).
#[inline]
pub fn layer_norm(x: &Tensor, normalized_shape: &[i64], weight: Option<&Tensor>, bias: Option<&Tensor>, eps: f64) -> Result<Tensor> {
    Ok(x.f_layer_norm(normalized_shape, weight, bias, eps, true)?)
}

/// `F.silu(t)`.
#[inline]
pub fn silu(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_silu()?)
}

/// `torch.rsqrt(t)`.
#[inline]
pub fn rsqrt(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_rsqrt()?)
}

/// `torch.erf(t)`.
#[inline]
pub fn erf(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_erf()?)
}

/// `F.softplus(t)` with `beta=1`, `threshold=20`.
#[inline]
pub fn softplus(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_softplus()?)
}

/// `torch.log1p(t)`.
#[inline]
pub fn log1p(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_log1p()?)
}

/// `torch.expm1(t)`.
#[inline]
pub fn expm1(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_expm1()?)
}

/// `torch.sin(t)`.
#[inline]
pub fn sin(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_sin()?)
}

/// `torch.atan(t)`.
#[inline]
pub fn atan(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_atan()?)
}

/// `torch.sign(t)`.
#[inline]
pub fn sign(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_sign()?)
}

/// `torch.floor(t)`.
#[inline]
pub fn floor(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_floor()?)
}

/// `torch.outer(a, b)` of two rank-1 tensors.
#[inline]
pub fn outer(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_outer(b)?)
}

/// `torch.cos(t)`.
#[inline]
pub fn cos(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_cos()?)
}

/// `F.relu6(t)`.
#[inline]
pub fn relu6(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_relu6()?)
}

/// `F.hardswish(t)`.
#[inline]
pub fn hardswish(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_hardswish()?)
}

/// `F.hardsigmoid(t)`.
#[inline]
pub fn hardsigmoid(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_hardsigmoid()?)
}

/// `F.mish(t)`.
#[inline]
pub fn mish(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_mish()?)
}

/// `F.selu(t)`.
#[inline]
pub fn selu(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_selu()?)
}

/// `F.elu(t)` with `alpha=1.0`.
#[inline]
pub fn elu(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_elu()?)
}

/// `F.leaky_relu(t, slope)`: `x > 0 ? x : x * slope` in float32 (the slope rounded to float32,
/// as eager's kernel rounds it). A dense float32 CPU tensor runs our loop (one pass, no
/// dispatcher; on one thread, or small enough that libtorch would not split it); anything
/// else runs libtorch's `prelu` with a one-element weight, the same formula (tch binds
/// `leaky_relu` with its default slope only).
pub fn leaky_relu(t: &Tensor, negative_slope: f64) -> Result<Tensor> {
    let slope = negative_slope as f32;
    let small = |x: &crate::fused::Dense| x.len() <= 32768 || crate::facts::num_threads() == 1;
    if let Some(x) = crate::fused::Dense::of(t).filter(small) {
        let (out, y) = crate::fused::empty_dense(&x.shape())?;
        // SAFETY: `x` views the live input, `y` the fresh output nothing else touches.
        let (src, dst) = unsafe { (x.values(), y.values_mut()) };
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = if v > 0.0 { v } else { v * slope };
        }
        return Ok(out);
    }
    Ok(t.f_prelu(&Tensor::f_from_slice(&[slope])?)?)
}

/// `F.hardtanh(t, min_val, max_val)`: eager checks the bounds in Python, then clamps.
pub fn hardtanh(t: &Tensor, min_val: f64, max_val: f64) -> Result<Tensor> {
    if min_val > max_val {
        return Err(crate::Error::Value("min_val cannot be greater than max_val".into()));
    }
    Ok(t.f_clamp(min_val, max_val)?)
}

/// `F.conv1d(x, w, b, stride, padding, dilation, groups)`.
#[inline]
pub fn conv1d(x: &Tensor, w: &Tensor, b: Option<&Tensor>, stride: &[i64], padding: &[i64], dilation: &[i64], groups: i64) -> Result<Tensor> {
    Ok(x.f_conv1d(w, b, stride, padding, dilation, groups)?)
}

/// `F.conv2d(x, w, b, stride, padding, dilation, groups)` (a chain of them: `fused::ConvChain`).
#[inline]
pub fn conv2d(x: &Tensor, w: &Tensor, b: Option<&Tensor>, stride: &[i64], padding: &[i64], dilation: &[i64], groups: i64) -> Result<Tensor> {
    Ok(x.f_conv2d(w, b, stride, padding, dilation, groups)?)
}

/// `F.max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode)` (`stride` empty: the
/// kernel size, as eager's `None`), as [`max_pool2d`].
pub fn max_pool1d(x: &Tensor, kernel_size: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<Tensor> {
    if let Some(out) = crate::fused::max_pool_direct(x, 1, kernel_size, stride, padding, dilation, ceil_mode)? {
        return Ok(out);
    }
    Ok(x.f_max_pool1d(kernel_size, stride, padding, dilation, ceil_mode)?)
}

/// `F.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)`: our loop for
/// contiguous planes (bit-identical to eager, several times faster than its NCHW kernel),
/// libtorch's kernel otherwise.
pub fn max_pool2d(x: &Tensor, kernel_size: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<Tensor> {
    if let Some(out) = crate::fused::max_pool_direct(x, 2, kernel_size, stride, padding, dilation, ceil_mode)? {
        return Ok(out);
    }
    Ok(x.f_max_pool2d(kernel_size, stride, padding, dilation, ceil_mode)?)
}

/// `F.avg_pool1d(x, kernel_size, stride, padding, ceil_mode, count_include_pad)`.
#[inline]
pub fn avg_pool1d(x: &Tensor, kernel_size: &[i64], stride: &[i64], padding: &[i64], ceil_mode: bool, count_include_pad: bool) -> Result<Tensor> {
    Ok(x.f_avg_pool1d(kernel_size, stride, padding, ceil_mode, count_include_pad)?)
}

/// `F.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad)`.
#[inline]
pub fn avg_pool2d(x: &Tensor, kernel_size: &[i64], stride: &[i64], padding: &[i64], ceil_mode: bool, count_include_pad: bool) -> Result<Tensor> {
    Ok(x.f_avg_pool2d(kernel_size, stride, padding, ceil_mode, count_include_pad, None::<i64>)?)
}

/// `F.adaptive_avg_pool1d(x, output_size)`.
#[inline]
pub fn adaptive_avg_pool1d(x: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    Ok(x.f_adaptive_avg_pool1d(output_size)?)
}

/// `F.adaptive_avg_pool2d(x, output_size)`.
#[inline]
pub fn adaptive_avg_pool2d(x: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    Ok(x.f_adaptive_avg_pool2d(output_size)?)
}

/// `F.adaptive_max_pool2d(x, output_size)`: the values (eager drops the indices).
#[inline]
pub fn adaptive_max_pool2d(x: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    Ok(x.f_adaptive_max_pool2d(output_size)?.0)
}

/// `F.pad(x, pad, mode, value)`.
#[inline]
pub fn pad(x: &Tensor, pad: &[i64], mode: &str, value: Option<f64>) -> Result<Tensor> {
    Ok(x.f_pad(pad, mode, value)?)
}

/// `F.batch_norm(x, running_mean, running_var, weight, bias, training=False, momentum, eps)`:
/// the statistics are only read.
#[inline]
pub fn batch_norm(x: &Tensor, mean: &Tensor, var: &Tensor, weight: Option<&Tensor>, bias: Option<&Tensor>, momentum: f64, eps: f64) -> Result<Tensor> {
    Ok(x.f_batch_norm(weight, bias, Some(mean), Some(var), false, momentum, eps, true)?)
}

/// `F.group_norm(x, num_groups, weight, bias, eps)`, with the checks eager's Python wrapper
/// makes first (its `//` by `num_groups`, and at least two values per group).
pub fn group_norm(x: &Tensor, num_groups: i64, weight: Option<&Tensor>, bias: Option<&Tensor>, eps: f64) -> Result<Tensor> {
    group_norm_python_checks(x, num_groups)?;
    Ok(x.f_group_norm(num_groups, weight, bias, eps, true)?)
}

/// What `F.group_norm`'s Python wrapper checks before libtorch sees the call (also on cuda:0).
pub(crate) fn group_norm_python_checks(x: &Tensor, num_groups: i64) -> Result<()> {
    let size = x.size();
    let per_group = crate::scalar::floordiv(crate::scalar::mul(size[0], size[1])?, num_groups)?;
    let mut checked = vec![per_group, num_groups];
    checked.extend_from_slice(&size[2..]);
    let values = checked[2..].iter().try_fold(per_group, |n, d| crate::scalar::mul(n, *d))?;
    if values == 1 {
        let shown: Vec<String> = checked.iter().map(i64::to_string).collect();
        return Err(crate::Error::Value(format!("Expected more than 1 value per channel when training, got input size [{}]", shown.join(", "))));
    }
    Ok(())
}

/// `F.embedding(indices, weight)`: rows of `weight`.
#[inline]
pub fn embedding(indices: &Tensor, weight: &Tensor, _norm_type: f64) -> Result<Tensor> {
    Ok(Tensor::f_embedding(weight, indices, -1, false, false)?)
}

/// `F.embedding_bag(input, weight, offsets, mode=…, per_sample_weights=…,
/// include_last_offset=…)`: eager's Python steps around `torch.embedding_bag` (the analyzer
/// has checked the ranks, the offsets' presence and the mode of per-sample weights), then its
/// kernel. Rank-2 indices are bags of their row length: offsets `arange(0, numel, cols)`.
pub fn embedding_bag(
    input: &Tensor,
    weight: &Tensor,
    offsets: Option<&Tensor>,
    _norm_type: f64,
    mode: &str,
    per_sample_weights: Option<&Tensor>,
    include_last_offset: bool,
) -> Result<Tensor> {
    if let Some(weights) = per_sample_weights {
        if input.size() != weights.size() {
            return Err(crate::Error::Value(format!(
                "embedding_bag: If per_sample_weights ({}) is not None, then it must have the same shape as the input ({})",
                torch_size(&weights.size()),
                torch_size(&input.size())
            )));
        }
    }
    let mode_enum = match mode {
        "sum" => 0,
        "mean" => 1,
        _ => 2,
    };
    let (indices, offsets, include_last_offset, weights) = match offsets {
        Some(offsets) => (input.shallow_clone(), offsets.shallow_clone(), include_last_offset, per_sample_weights.map(Tensor::shallow_clone)),
        None => {
            let cols = input.size().get(1).copied().unwrap_or(0);
            let starts = Tensor::f_arange_start_step(0, input.numel() as i64, cols, (input.kind(), input.device()))?;
            let flat = |t: &Tensor| t.f_reshape([-1]);
            (flat(input)?, starts, false, per_sample_weights.map(flat).transpose()?)
        }
    };
    let (bags, _, _, _) = Tensor::f_embedding_bag(weight, &indices, &offsets, false, mode_enum, false, weights, include_last_offset)?;
    Ok(bags)
}

/// PyTorch's repr of a shape: `torch.Size([3, 4])`.
pub(crate) fn torch_size(sizes: &[i64]) -> String {
    let items: Vec<String> = sizes.iter().map(i64::to_string).collect();
    format!("torch.Size([{}])", items.join(", "))
}

/// `torch.maximum(a, b)`.
#[inline]
pub fn maximum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_maximum(b)?)
}

/// `torch.minimum(a, b)`.
#[inline]
pub fn minimum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_minimum(b)?)
}

/// `torch.bmm(a, b)`.
#[inline]
pub fn bmm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_bmm(b)?)
}

/// Parts of a split, checked against the number of names a statement unpacks them into,
/// with CPython's messages.
fn unpacked(parts: Vec<Tensor>, expected: usize) -> Result<Vec<Tensor>> {
    match parts.len() {
        got if got == expected => Ok(parts),
        got if got < expected => Err(crate::Error::Value(format!("not enough values to unpack (expected {expected}, got {got})"))),
        _ => Err(crate::Error::Value(format!("too many values to unpack (expected {expected})"))),
    }
}

/// `a, b, … = t.chunk(chunks, dim)` (`expected` names).
#[inline]
pub fn chunk(t: &Tensor, chunks: i64, dim: i64, expected: usize) -> Result<Vec<Tensor>> {
    unpacked(t.f_chunk(chunks, dim)?, expected)
}

/// `a, b, … = t.split(size, dim)`.
#[inline]
pub fn split(t: &Tensor, size: impl SplitSize, dim: i64, expected: usize) -> Result<Vec<Tensor>> {
    unpacked(size.split(t, dim)?, expected)
}

/// What `t.split(…)` takes: one part size (the last part shorter), or every part's size
/// (`t.split((2, 2, nc + 1), 4)`, eager's `split_with_sizes`).
pub trait SplitSize {
    fn split(self, t: &Tensor, dim: i64) -> std::result::Result<Vec<Tensor>, tch::TchError>;
}

impl SplitSize for i64 {
    fn split(self, t: &Tensor, dim: i64) -> std::result::Result<Vec<Tensor>, tch::TchError> {
        t.f_split(self, dim)
    }
}

impl SplitSize for &[i64] {
    fn split(self, t: &Tensor, dim: i64) -> std::result::Result<Vec<Tensor>, tch::TchError> {
        t.f_split_with_sizes(self, dim)
    }
}

impl<const N: usize> SplitSize for &[i64; N] {
    fn split(self, t: &Tensor, dim: i64) -> std::result::Result<Vec<Tensor>, tch::TchError> {
        t.f_split_with_sizes(self.as_slice(), dim)
    }
}

/// `a, b, … = t.unbind(dim)` (`_unused`: the signature's int argument, which unbind has not).
#[inline]
pub fn unbind(t: &Tensor, _unused: i64, dim: i64, expected: usize) -> Result<Vec<Tensor>> {
    unpacked(t.f_unbind(dim)?, expected)
}

/// `a @ b`, `torch.matmul(a, b)`, `a.matmul(b)`.
#[inline]
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_matmul(b)?)
}

/// `torch.mm(a, b)`: rank-2 operands (eager's error otherwise, as the types promise them).
#[inline]
pub fn mm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_mm(b)?)
}

/// `t.sum(dim=dim, keepdim=keepdim)` (result dtype: the input's, as for float32 in eager).
#[inline]
pub fn sum_dim(t: &Tensor, dim: i64, keepdim: bool) -> Result<Tensor> {
    Ok(t.f_sum_dim_intlist(Some(&[dim][..]), keepdim, None::<tch::Kind>)?)
}

/// `t.mean(dim=dim, keepdim=keepdim)`.
#[inline]
pub fn mean_dim(t: &Tensor, dim: i64, keepdim: bool) -> Result<Tensor> {
    Ok(t.f_mean_dim(Some(&[dim][..]), keepdim, None::<tch::Kind>)?)
}

/// `t.sum(dims, keepdim)` over a tuple of dims (libtorch raises eager's errors for a
/// repeated or out-of-range dim).
#[inline]
pub fn sum_dims(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    Ok(t.f_sum_dim_intlist(Some(dim), keepdim, None::<tch::Kind>)?)
}

/// `t.mean(dims, keepdim)` over a tuple of dims.
#[inline]
pub fn mean_dims(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    Ok(t.f_mean_dim(Some(dim), keepdim, None::<tch::Kind>)?)
}

/// `torch.softmax(t, dim)` with `dtype=None`.
#[inline]
pub fn softmax(t: &Tensor, dim: i64) -> Result<Tensor> {
    Ok(t.f_softmax(dim, None::<tch::Kind>)?)
}

/// `torch.argmax(t, dim, keepdim)` (int64 result).
#[inline]
pub fn argmax(t: &Tensor, dim: i64, keepdim: bool) -> Result<Tensor> {
    Ok(t.f_argmax(dim, keepdim)?)
}

#[cfg(test)]
mod tests {
    //! The helpers are thin, so these check the contract around them: errors come back as
    //! values (never panics), shapes/dtypes of the reductions, signed zeros kept.
    use super::*;
    use crate::error::Error;
    use tch::{Device, Kind};

    fn tensor(values: &[f32], shape: &[i64]) -> Tensor {
        Tensor::from_slice(values).reshape(shape)
    }

    #[test]
    fn size_mismatches_are_torch_errors_with_libtorch_messages() {
        let a = Tensor::zeros([2, 3], (Kind::Float, Device::Cpu));
        let b = Tensor::zeros([4, 5], (Kind::Float, Device::Cpu));
        match matmul(&a, &b) {
            Err(error @ Error::Torch(_)) => {
                assert_eq!(error.to_string(), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")
            }
            other => panic!("expected a torch error, got {other:?}"),
        }
        assert!(matches!(add(&a, &b), Err(Error::Torch(_))));
        assert!(matches!(linear(&a, &b, None), Err(Error::Torch(_))));
        assert!(matches!(sum_dim(&a, 5, false), Err(Error::Torch(_))));
    }

    #[test]
    fn reductions_and_classification_keep_eager_shapes_and_dtypes() {
        let t = tensor(&[1.0, 5.0, 3.0, 4.0, 2.0, 0.0], &[2, 3]);
        assert_eq!(sum_dim(&t, 1, false).map(|r| r.size()).ok(), Some(vec![2]));
        assert_eq!(mean_dim(&t, 0, true).map(|r| r.size()).ok(), Some(vec![1, 3]));
        let labels = argmax(&softmax(&t, 1).expect("softmax"), 1, false).expect("argmax");
        assert_eq!(labels.kind(), Kind::Int64);
        assert_eq!(Vec::<i64>::try_from(&labels).ok(), Some(vec![1, 0]));
    }

    #[test]
    fn signed_zeros_survive() {
        let zeros = tensor(&[0.0, -0.0], &[2]);
        let negated = Vec::<f32>::try_from(&neg(&zeros).expect("neg")).expect("f32");
        assert!(negated[0].is_sign_negative() && negated[1].is_sign_positive());
        let gelu_zeros = Vec::<f32>::try_from(&gelu(&zeros).expect("gelu")).expect("f32");
        let eager_gelu_zeros = Vec::<f32>::try_from(&zeros.f_gelu("none").expect("gelu")).expect("f32");
        assert_eq!(
            gelu_zeros.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            eager_gelu_zeros.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
}

/// A float32 tensor or a Python number, where an op takes either (`torch.where(c, x, 0.0)`);
/// the emitted code passes `Value::from(&v)` whatever `v` is.
pub enum Value<'a> {
    Tensor(&'a Tensor),
    Number(Number),
}

impl<'a> From<&'a Tensor> for Value<'a> {
    fn from(t: &'a Tensor) -> Self {
        Value::Tensor(t)
    }
}

impl From<&i64> for Value<'_> {
    fn from(n: &i64) -> Self {
        Value::Number(Number::Int(*n))
    }
}

impl From<&bool> for Value<'_> {
    fn from(b: &bool) -> Self {
        Value::Number(Number::Int(i64::from(*b)))
    }
}

impl From<&f64> for Value<'_> {
    fn from(n: &f64) -> Self {
        Value::Number(Number::Float(*n))
    }
}

/// `torch.where(condition, a, b)`: eager's overloads for a tensor or a number on either side
/// (numbers through [`scalar_call`], which returns eager's broadcast errors).
pub fn where_(condition: &Tensor, a: Value, b: Value) -> Result<Tensor> {
    use torch_sys::c_generated::{atg_where_scalar, atg_where_scalarother, atg_where_scalarself};
    let c = scalar_call::ptr(condition);
    match (a, b) {
        (Value::Tensor(a), Value::Tensor(b)) => match crate::fused::where_same_shape(condition, a, b) {
            Some(selected) => selected,
            None => Ok(a.f_where_self(condition, b)?),
        },
        // SAFETY (each arm): live tensor handles, scalars alive for the call (`scalar_call`)
        (Value::Tensor(a), Value::Number(b)) => {
            scalar_call::call([b], |out, [b]| unsafe { atg_where_scalarother(out, c, scalar_call::ptr(a), b) })
        }
        (Value::Number(a), Value::Tensor(b)) => {
            scalar_call::call([a], |out, [a]| unsafe { atg_where_scalarself(out, c, a, scalar_call::ptr(b)) })
        }
        (Value::Number(a), Value::Number(b)) => scalar_call::call([a, b], |out, [a, b]| unsafe { atg_where_scalar(out, c, a, b) }),
    }
}

/// `x.masked_fill(mask, value)` (through [`scalar_call`]: a mask that does not broadcast is
/// eager's error).
#[inline]
pub fn masked_fill(x: &Tensor, mask: &Tensor, value: f64) -> Result<Tensor> {
    if let Some(filled) = crate::fused::masked_fill_direct(x, mask, value) {
        return filled;
    }
    // SAFETY: live tensor handles; the scalar lives for the call
    scalar_call::call([Number::Float(value)], |out, [v]| unsafe {
        torch_sys::c_generated::atg_masked_fill(out, scalar_call::ptr(x), scalar_call::ptr(mask), v)
    })
}

/// `t.masked_fill_(mask, value)` on a tensor native code made: eager's in-place kernel (the mask
/// broadcasts to `t`'s shape, never the reverse, with eager's error otherwise); the result is
/// `t` (an alias).
pub fn masked_fill_(x: &Tensor, mask: &Tensor, value: f64) -> Result<Tensor> {
    // SAFETY: live tensor handles; the scalar lives for the call; `x` is a tensor native code
    // made (the analyzer claims this form on such locals only)
    scalar_call::call([Number::Float(value)], |out, [v]| unsafe {
        torch_sys::c_generated::atg_masked_fill_(out, scalar_call::ptr(x), scalar_call::ptr(mask), v)
    })
}

/// The comparisons: `name(a, b)` of two tensors, `name_scalar(t, s)` with a Python number on
/// the right, `scalar_name(s, t)` on the left (Python reflects `s < t` to `t > s`).
macro_rules! comparisons {
    ($($name:ident / $tensor:ident, $scalar:ident / $with_scalar:ident, $number_left:ident / $reflected:ident;)*) => {$(
        #[doc = concat!("`", stringify!($name), "(a, b)`: a bool tensor.")]
        #[inline]
        pub fn $name(a: &Tensor, b: &Tensor) -> Result<Tensor> {
            Ok(a.$tensor(b)?)
        }

        #[doc = concat!("`", stringify!($name), "(t, s)` with a Python number.")]
        #[inline]
        pub fn $scalar<S: Into<tch::Scalar>>(t: &Tensor, s: S) -> Result<Tensor> {
            Ok(t.$with_scalar(s)?)
        }

        #[doc = concat!("`s ", stringify!($name), " t` with a Python number on the left.")]
        #[inline]
        pub fn $number_left<S: Into<tch::Scalar>>(s: S, t: &Tensor) -> Result<Tensor> {
            Ok(t.$reflected(s)?)
        }
    )*};
}

comparisons! {
    eq / f_eq_tensor, eq_scalar / f_eq, scalar_eq / f_eq;
    ne / f_ne_tensor, ne_scalar / f_ne, scalar_ne / f_ne;
    lt / f_lt_tensor, lt_scalar / f_lt, scalar_lt / f_gt;
    le / f_le_tensor, le_scalar / f_le, scalar_le / f_ge;
    gt / f_gt_tensor, gt_scalar / f_gt, scalar_gt / f_lt;
    ge / f_ge_tensor, ge_scalar / f_ge, scalar_ge / f_le;
}

/// `torch.arange(start, end, step, dtype=…)` on the CPU (`dtype` as the analyzer names it).
pub fn arange(start: i64, end: i64, step: i64, dtype: &str) -> Result<Tensor> {
    Ok(Tensor::f_arange_start_step(start, end, step, (kind_of(dtype), tch::Device::Cpu))?)
}

/// `torch.linspace(start, end, steps)`: float32 on the CPU (eager's error for negative steps).
pub fn linspace(start: f64, end: f64, steps: i64) -> Result<Tensor> {
    Ok(Tensor::f_linspace(start, end, steps, (tch::Kind::Float, tch::Device::Cpu))?)
}

/// `t.narrow(dim, start, length)`, a view.
#[inline]
pub fn narrow(t: &Tensor, dim: i64, start: i64, length: i64) -> Result<Tensor> {
    Ok(t.f_narrow(dim, start, length)?)
}

/// `t.select(dim, index)`, a view.
#[inline]
pub fn select(t: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
    Ok(t.f_select(dim, index)?)
}

/// `t.unflatten(dim, sizes)`, a view.
#[inline]
pub fn unflatten(t: &Tensor, dim: i64, sizes: &[i64]) -> Result<Tensor> {
    Ok(t.f_unflatten(dim, sizes)?)
}

/// An in-place write into an argument (`x.mul_(y)` on a branch taken only for some
/// arguments): native code never mutates its inputs, so it refuses with a `ValueError` and
/// auto mode reruns the call in Python, which writes as eager does.
pub fn defer_write(what: &str) -> Result<Tensor> {
    Err(crate::Error::Value(format!(
        "torchlower: {what} writes into an argument in place (native code refuses; auto mode reruns Python)"
    )))
}

/// `t.squeeze(dim)`, a view one rank lower. Eager returns `t` itself (same rank) when that
/// dim's size is not 1, a rank the annotated types cannot hold: native code refuses with a
/// `ValueError`, and auto mode reruns the call in Python.
pub fn squeeze(t: &Tensor, dim: i64) -> Result<Tensor> {
    let rank = t.dim() as i64;
    let d = if dim < 0 { dim + rank } else { dim };
    if let Some(size) = usize::try_from(d).ok().and_then(|d| t.size().get(d).copied()) {
        if size != 1 {
            return Err(crate::Error::Value(format!(
                "torchlower: squeeze({dim}) of a dim of size {size} keeps the rank, which the annotated types do not allow (native code refuses; auto mode reruns Python)"
            )));
        }
    }
    Ok(t.f_squeeze_dim(dim)?)
}

/// `t.clamp_(…)`, `t.zero_()` … on a tensor native code made: `value` (the op computed out of
/// place, of `target`'s dtype and shape) written into `target`'s storage, as eager's in-place
/// kernel leaves it; the result is `target` (an alias, as eager returns `self`).
pub fn write_into(target: &Tensor, value: Tensor) -> Result<Tensor> {
    let mut written = target.shallow_clone();
    written.f_copy_(&value)?;
    Ok(written)
}

/// `t.clone()`: a copy in eager's `preserve_format` — a dense input's strides (`empty_like`
/// keeps them, as `at::clone` does), else contiguous — so a later `.view()` succeeds or raises
/// exactly as on eager's clone.
#[inline]
pub fn clone(t: &Tensor) -> Result<Tensor> {
    let mut out = t.f_empty_like()?;
    out.f_copy_(t)?;
    Ok(out)
}

/// `a // b`, `torch.floor_divide(a, b)`, `torch.div(a, b, rounding_mode=…)`: libtorch's `div`
/// with a rounding mode (eager's `floor_divide` is `div(…, rounding_mode="floor")`); a number
/// divisor goes through [`scalar_call`] (an integer division by zero is eager's error).
pub fn div_mode(input: &Tensor, other: Value, rounding_mode: &str) -> Result<Tensor> {
    match other {
        Value::Tensor(o) => Ok(input.f_div_tensor_mode(o, rounding_mode)?),
        // SAFETY: a live tensor handle; the scalar and the mode's bytes live for the call
        Value::Number(n) => scalar_call::call([n], |out, [divisor]| unsafe {
            torch_sys::c_generated::atg_div_scalar_mode(out, scalar_call::ptr(input), divisor, rounding_mode.as_ptr(), rounding_mode.len() as std::ffi::c_int)
        }),
    }
}

/// `a % b` / `torch.remainder(a, b)`: Python's modulo (the divisor's sign), libtorch's kernel
/// with eager's ZeroDivisionError text for an integer divisor of zero.
pub fn remainder(input: &Tensor, other: Value) -> Result<Tensor> {
    match other {
        Value::Tensor(o) => Ok(input.f_remainder_tensor(o)?),
        // SAFETY: a live tensor handle; the scalar lives for the call
        Value::Number(n) => scalar_call::call([n], |out, [divisor]| unsafe { torch_sys::c_generated::atg_remainder(out, scalar_call::ptr(input), divisor) }),
    }
}

/// `bool(t.all())`, as a condition reads it (`assert (b >= a).all()`): true when every
/// element is nonzero (an empty tensor's too).
pub fn truth_all(t: &Tensor) -> Result<bool> {
    Ok(t.f_all()?.f_int64_value(&[])? != 0)
}

/// `bool(t.any())`: true when some element is nonzero.
pub fn truth_any(t: &Tensor) -> Result<bool> {
    Ok(t.f_any()?.f_int64_value(&[])? != 0)
}

/// The one element `t.item()` reads, or eager's RuntimeError for another count.
fn one_element(t: &Tensor) -> Result<()> {
    match t.numel() {
        1 => Ok(()),
        n => Err(crate::Error::Runtime(format!("a Tensor with {n} elements cannot be converted to Scalar"))),
    }
}

/// `t.item()` of a float32 tensor: the element widened to a Python float, as eager's.
pub fn item_f64(t: &Tensor) -> Result<f64> {
    one_element(t)?;
    Ok(t.f_reshape([1])?.f_double_value(&[0])?)
}

/// `t.item()` of an int64 / int32 tensor: a Python int.
pub fn item_i64(t: &Tensor) -> Result<i64> {
    one_element(t)?;
    Ok(t.f_reshape([1])?.f_int64_value(&[0])?)
}

/// `t.item()` of a bool tensor: a Python bool.
pub fn item_bool(t: &Tensor) -> Result<bool> {
    Ok(item_i64(t)? != 0)
}

/// `t.unfold(dimension, size, step)`: a view of `t`.
pub fn unfold(t: &Tensor, dimension: i64, size: i64, step: i64) -> Result<Tensor> {
    Ok(t.f_unfold(dimension, size, step)?)
}

/// `torch.flip(t, dims)`.
pub fn flip(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    Ok(t.f_flip(dims)?)
}

/// `torch.repeat_interleave(t, repeats, dim)` (no dim: the flattened tensor's elements).
pub fn repeat_interleave(t: &Tensor, repeats: i64, dim: Option<&[i64]>) -> Result<Tensor> {
    Ok(t.f_repeat_interleave_self_int(repeats, dim.and_then(|d| d.first().copied()), None)?)
}

/// `torch.tensordot(a, b, (dims_a, dims_b))`.
pub fn tensordot(a: &Tensor, b: &Tensor, dims_a: &[i64], dims_b: &[i64]) -> Result<Tensor> {
    Ok(a.f_tensordot(b, dims_a, dims_b)?)
}

/// `torch.roll(t, shifts, dims)` (no dims: the flattened tensor rolls).
#[inline]
pub fn roll(t: &Tensor, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
    Ok(t.f_roll(shifts, dims)?)
}

/// `t.detach()`: an alias of `t` without autograd history.
#[inline]
pub fn detach(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_detach()?)
}

/// `F.dropout(t, p, training)`: eager's Python check of `p` (`ValueError`), then libtorch's
/// `dropout`, which returns the input itself outside training (a NaN `p` passes Python's check
/// and meets libtorch's, as in eager). Training draws random masks: refused (`ValueError`, so
/// auto mode reruns Python, which draws them from torch's generator as eager does).
pub fn dropout(t: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    if p < 0.0 || p > 1.0 {
        return Err(crate::Error::Value(format!("dropout probability has to be between 0 and 1, but got {}", crate::scalar::float_repr(p))));
    }
    if training {
        return Err(crate::Error::Value("torchlower: native code refuses F.dropout with training=True (random masks); it runs only outside training".into()));
    }
    Ok(t.f_dropout(p, training)?)
}

/// `torch.norm(t, p, dim, keepdim)` / `t.norm(…)`: eager's `torch.norm` sends a strided CPU
/// or CUDA tensor to `linalg.vector_norm` (`p` None or `"fro"`: 2), which `norm.ScalarOpt_dim`
/// computes too.
#[inline]
pub fn norm(t: &Tensor, p: Option<f64>, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    Ok(t.f_norm_scalaropt_dim(p.unwrap_or(2.0), dim, keepdim)?)
}

/// `torch.linalg.vector_norm(x, ord, dim, keepdim)`.
#[inline]
pub fn vector_norm(x: &Tensor, ord: f64, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    Ok(x.f_norm_scalaropt_dim(ord, dim, keepdim)?)
}

/// `F.normalize(x, p, dim, eps)`: eager's steps, `x / x.norm(p, dim, keepdim=True)
/// .clamp_min(eps).expand_as(x)`.
pub fn normalize(x: &Tensor, p: f64, dim: i64, eps: f64) -> Result<Tensor> {
    let denom = x.f_norm_scalaropt_dim(p, [dim].as_slice(), true)?.f_clamp_min(eps)?.f_expand_as(x)?;
    Ok(x.f_div(&denom)?)
}

/// The element type an analyzer dtype name stands for (`"torch.float32"` and co.).
fn kind_of(dtype: &str) -> tch::Kind {
    match dtype {
        "torch.int64" => tch::Kind::Int64,
        "torch.int32" => tch::Kind::Int,
        "torch.bool" => tch::Kind::Bool,
        _ => tch::Kind::Float,
    }
}

/// `torch.zeros(*size, dtype=…)` on the CPU.
#[inline]
pub fn zeros(size: &[i64], dtype: &str) -> Result<Tensor> {
    Ok(Tensor::f_zeros(size, (kind_of(dtype), tch::Device::Cpu))?)
}

/// `torch.empty(*size, dtype=…)` on the CPU: uninitialised, as eager's.
#[inline]
pub fn empty(size: &[i64], dtype: &str) -> Result<Tensor> {
    Ok(Tensor::f_empty(size, (kind_of(dtype), tch::Device::Cpu))?)
}

/// `torch.ones(*size, dtype=…)` on the CPU.
#[inline]
pub fn ones(size: &[i64], dtype: &str) -> Result<Tensor> {
    Ok(Tensor::f_ones(size, (kind_of(dtype), tch::Device::Cpu))?)
}

/// `torch.full(size, fill_value, dtype=…)` on the CPU (the dtype already inferred).
pub fn full(size: &[i64], fill_value: Value, dtype: &str) -> Result<Tensor> {
    let Value::Number(fill) = fill_value else { return Err(crate::Error::Value("torch.full: fill_value must be a number".into())) };
    Ok(Tensor::f_full(size, fill.scalar(), (kind_of(dtype), tch::Device::Cpu))?)
}

/// `torch.tensor(number, dtype=…)`: the 0-dim tensor `torch.full((), number)` makes (eager
/// converts the number to the dtype the same way).
pub fn scalar_tensor(data: Value, dtype: &str) -> Result<Tensor> {
    full(&[], data, dtype)
}

/// `torch.zeros_like(t)`.
#[inline]
pub fn zeros_like(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_zeros_like()?)
}

/// `torch.ones_like(t)`.
#[inline]
pub fn ones_like(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_ones_like()?)
}

/// `torch.full_like(t, fill_value)`.
pub fn full_like(t: &Tensor, fill_value: Value) -> Result<Tensor> {
    let Value::Number(fill) = fill_value else { return Err(crate::Error::Value("torch.full_like: fill_value must be a number".into())) };
    Ok(t.f_full_like(fill.scalar())?)
}

/// `F.gelu(t, approximate="tanh")`, libtorch's kernel.
#[inline]
pub fn gelu_tanh(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_gelu("tanh")?)
}

/// `torch.amax(t, dim, keepdim)`.
#[inline]
pub fn amax(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    Ok(t.f_amax(dim, keepdim)?)
}

/// `torch.amin(t, dim, keepdim)`.
#[inline]
pub fn amin(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    Ok(t.f_amin(dim, keepdim)?)
}

/// `torch.logsumexp(t, dim, keepdim)`.
#[inline]
pub fn logsumexp(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    Ok(t.f_logsumexp(dim, keepdim)?)
}

/// The correction of `var`/`std`: `correction` when given, else 1 (`unbiased`) or 0.
pub(crate) fn correction(unbiased: bool, correction: Option<f64>) -> f64 {
    correction.unwrap_or(if unbiased { 1.0 } else { 0.0 })
}

/// `torch.var(t, dim, unbiased=…/correction=…, keepdim)`.
#[inline]
pub fn var(t: &Tensor, dim: &[i64], unbiased: bool, keepdim: bool, corr: Option<f64>) -> Result<Tensor> {
    Ok(t.f_var_correction(Some(dim), correction(unbiased, corr), keepdim)?)
}

/// `torch.std(t, dim, unbiased=…/correction=…, keepdim)`.
#[inline]
pub fn std(t: &Tensor, dim: &[i64], unbiased: bool, keepdim: bool, corr: Option<f64>) -> Result<Tensor> {
    Ok(t.f_std_correction(Some(dim), correction(unbiased, corr), keepdim)?)
}

/// `torch.prod(t, dim, keepdim)`.
#[inline]
pub fn prod(t: &Tensor, dim: i64, keepdim: bool) -> Result<Tensor> {
    Ok(t.f_prod_dim_int(dim, keepdim, None::<tch::Kind>)?)
}

/// `torch.argmin(t, dim, keepdim)`.
#[inline]
pub fn argmin(t: &Tensor, dim: i64, keepdim: bool) -> Result<Tensor> {
    Ok(t.f_argmin(dim, keepdim)?)
}

/// `torch.all(t, dim, keepdim)` (one dim or several).
#[inline]
pub fn all(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    Ok(t.f_all_dims(Some(dim), keepdim)?)
}

/// `torch.any(t, dim, keepdim)`.
#[inline]
pub fn any(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    Ok(t.f_any_dims(Some(dim), keepdim)?)
}

/// `t.sum()`: every element, rank 0 (libtorch's kernel: int64 for integer and bool inputs).
#[inline]
pub fn sum_all(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_sum(None::<tch::Kind>)?)
}

/// `t.mean()`: every element of a float32 tensor, rank 0.
#[inline]
pub fn mean_all(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_mean(None::<tch::Kind>)?)
}

/// `t.max()` / `torch.max(t)`: rank 0 of the input's dtype (eager's error on an empty tensor).
#[inline]
pub fn max_all(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_max()?)
}

/// `t.min()` / `torch.min(t)`: as [`max_all`].
#[inline]
pub fn min_all(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_min()?)
}

/// `t.argmax()`: the index into the flattened tensor, int64 rank 0.
#[inline]
pub fn argmax_all(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_argmax(None::<i64>, false)?)
}

/// `t.argmin()`: as [`argmax_all`].
#[inline]
pub fn argmin_all(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_argmin(None::<i64>, false)?)
}

/// `t.prod()`: every element, rank 0 (int64 for integer and bool inputs, as eager).
#[inline]
pub fn prod_all(t: &Tensor) -> Result<Tensor> {
    Ok(t.f_prod(None::<tch::Kind>)?)
}

/// `t.std(unbiased)`: every element of a float32 tensor, rank 0.
#[inline]
pub fn std_all(t: &Tensor, unbiased: bool) -> Result<Tensor> {
    Ok(t.f_std(unbiased)?)
}

/// `t.var(unbiased)`: as [`std_all`].
#[inline]
pub fn var_all(t: &Tensor, unbiased: bool) -> Result<Tensor> {
    Ok(t.f_var(unbiased)?)
}

/// `F.log_softmax(t, dim)` (eager's `_stacklevel` only words a warning).
#[inline]
pub fn log_softmax(t: &Tensor, dim: Option<i64>, _stacklevel: i64) -> Result<Tensor> {
    Ok(t.f_log_softmax(dim.unwrap_or_else(|| implicit_softmax_dim(t)), None::<tch::Kind>)?)
}

/// The dim `F.softmax` / `F.log_softmax` pick when given none (eager's `_get_softmax_dim`,
/// which also warns that the choice is deprecated): 0 for ranks 0, 1 and 3, else 1.
pub fn implicit_softmax_dim(t: &Tensor) -> i64 {
    match t.dim() {
        0 | 1 | 3 => 0,
        _ => 1,
    }
}

/// `F.glu(t, dim)`.
#[inline]
pub fn glu(t: &Tensor, dim: i64) -> Result<Tensor> {
    Ok(t.f_glu(dim)?)
}

/// `torch.tril(t, diagonal)`.
#[inline]
pub fn tril(t: &Tensor, diagonal: i64) -> Result<Tensor> {
    Ok(t.f_tril(diagonal)?)
}

/// `torch.triu(t, diagonal)`.
#[inline]
pub fn triu(t: &Tensor, diagonal: i64) -> Result<Tensor> {
    Ok(t.f_triu(diagonal)?)
}

/// `torch.gather(t, dim, index)`.
#[inline]
pub fn gather(t: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
    // gather's "index -1 is out of bounds for dimension 0" is a TORCH_CHECK (RuntimeError),
    // unlike index_select's and indexing's IndexError with the same words
    t.f_gather(dim, index, false).map_err(|e| runtime_unless_dim(crate::Error::Torch(e)))
}

/// `torch.index_select(t, dim, index)`.
#[inline]
pub fn index_select(t: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
    Ok(t.f_index_select(dim, index)?)
}

/// `t.scatter(dim, index, src)`: a copy of `t` with `src`'s values written at `index`.
#[inline]
pub fn scatter(t: &Tensor, dim: i64, index: &Tensor, src: Value) -> Result<Tensor> {
    // as gather: the index checks are TORCH_CHECKs (RuntimeError in eager)
    let scattered = match src {
        Value::Tensor(src) => t.f_scatter(dim, index, src),
        // eager's `scatter.value`: the number converted to `t`'s dtype (through `scalar_call`:
        // an index out of range is an error to return, not a panic in tch's Scalar drop)
        Value::Number(value) => {
            use torch_sys::c_generated::atg_scatter_value;
            let (t, index) = (scalar_call::ptr(t), scalar_call::ptr(index));
            // SAFETY: live tensor handles, the scalar alive for the call (`scalar_call`)
            return scalar_call::call([value], |out, [value]| unsafe { atg_scatter_value(out, t, dim, index, value) }).map_err(runtime_unless_dim);
        }
    };
    scattered.map_err(|e| runtime_unless_dim(crate::Error::Torch(e)))
}

/// `torch.meshgrid(a, b, indexing=…)`: the pair of grids (views of the inputs, as eager's).
#[inline]
pub fn meshgrid(a: &Tensor, b: &Tensor, indexing: &str) -> Result<(Tensor, Tensor)> {
    let grids = Tensor::f_meshgrid_indexing(&[a, b], indexing)?;
    let [x, y]: [Tensor; 2] = grids.try_into().map_err(|_| crate::Error::Value("torch.meshgrid: not two grids".into()))?;
    Ok((x, y))
}

/// `torch.isin(elements, test_elements, assume_unique=…, invert=…)`.
#[inline]
pub fn isin(elements: &Tensor, test_elements: &Tensor, assume_unique: bool, invert: bool) -> Result<Tensor> {
    // a few test elements (ids): one pass, eager's values; `assume_unique` changes no result
    if let Some(members) = crate::fused::isin_few(elements, test_elements, invert) {
        return members;
    }
    Ok(Tensor::f_isin(elements, test_elements, assume_unique, invert)?)
}

/// `F.one_hot(t, num_classes)`.
#[inline]
pub fn one_hot(t: &Tensor, num_classes: i64) -> Result<Tensor> {
    Ok(t.f_one_hot(num_classes)?)
}

/// `F.cross_entropy(scores, targets, ignore_index=…, reduction=…, label_smoothing=…)`,
/// libtorch's kernel (the one eager's Python function calls).
#[inline]
pub fn cross_entropy(scores: &Tensor, targets: &Tensor, ignore_index: i64, reduction: &str, label_smoothing: f64) -> Result<Tensor> {
    let reduction = match reduction {
        "none" => tch::Reduction::None,
        "sum" => tch::Reduction::Sum,
        _ => tch::Reduction::Mean,
    };
    Ok(scores.f_cross_entropy_loss::<Tensor>(targets, None, reduction, ignore_index, label_smoothing)?)
}

/// `F.rms_norm(x, normalized_shape, weight, eps)`, libtorch's kernel.
#[inline]
pub fn rms_norm(x: &Tensor, normalized_shape: &[i64], weight: Option<&Tensor>, eps: Option<f64>) -> Result<Tensor> {
    Ok(x.f_rms_norm(normalized_shape, weight, eps)?)
}

/// `F.scaled_dot_product_attention(q, k, v, attn_mask, 0.0, is_causal, scale, enable_gqa)`.
#[inline]
pub fn scaled_dot_product_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    attn_mask: Option<&Tensor>,
    is_causal: bool,
    scale: Option<f64>,
    enable_gqa: bool,
) -> Result<Tensor> {
    Ok(Tensor::f_scaled_dot_product_attention(q, k, v, attn_mask, 0.0, is_causal, scale, enable_gqa)?)
}

pub use crate::multi_head_attention::multi_head_attention_forward;

/// `F.conv1d(x, w, b, stride, padding="same"|"valid", dilation, groups)`.
#[inline]
pub fn conv1d_padding(x: &Tensor, w: &Tensor, b: Option<&Tensor>, stride: &[i64], padding: &str, dilation: &[i64], groups: i64) -> Result<Tensor> {
    Ok(x.f_conv1d_padding(w, b, stride, padding, dilation, groups)?)
}

/// `F.conv2d(x, w, b, stride, padding="same"|"valid", dilation, groups)`.
#[inline]
pub fn conv2d_padding(x: &Tensor, w: &Tensor, b: Option<&Tensor>, stride: &[i64], padding: &str, dilation: &[i64], groups: i64) -> Result<Tensor> {
    Ok(x.f_conv2d_padding(w, b, stride, padding, dilation, groups)?)
}

/// `F.conv_transpose1d(x, w, b, stride, padding, output_padding, groups, dilation)`.
#[inline]
pub fn conv_transpose1d(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    output_padding: &[i64],
    groups: i64,
    dilation: &[i64],
) -> Result<Tensor> {
    Ok(x.f_conv_transpose1d(w, b, stride, padding, output_padding, groups, dilation)?)
}

/// `F.conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation)`.
#[inline]
pub fn conv_transpose2d(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    output_padding: &[i64],
    groups: i64,
    dilation: &[i64],
) -> Result<Tensor> {
    Ok(x.f_conv_transpose2d(w, b, stride, padding, output_padding, groups, dilation)?)
}

/// `F.interpolate(x, size, scale_factor, mode, align_corners)` as eager's Python computes the
/// output size (`int(size * scale)` per spatial dim; one int stands for every spatial dim) and
/// the scale it hands to the kernel: nearest of rank 3 or 4, linear of rank 3, bilinear and
/// bicubic of rank 4 (the analyzer checks the pairs).
pub fn interpolate(x: &Tensor, size: Option<&[i64]>, scale_factor: Option<f64>, mode: &str, align_corners: Option<bool>) -> Result<Tensor> {
    let input = x.size();
    let spatial = input.len().saturating_sub(2);
    let (output, scale) = match (size, scale_factor) {
        (Some(&[one]), None) => (vec![one; spatial], None),
        (Some(size), None) => (size.to_vec(), None),
        (None, Some(s)) => {
            let mut sizes = Vec::with_capacity(spatial);
            for &d in &input[2..] {
                let size = (d as f64 * s).trunc();
                // eager's conversion error (Rust's `as` would saturate instead)
                if !(size.is_finite() && size.abs() < 9.2e18) {
                    return Err(crate::Error::Runtime("value cannot be converted to type int64_t without overflow".into()));
                }
                sizes.push(size as i64);
            }
            (sizes, Some(s))
        }
        _ => return Err(crate::Error::Value("either size or scale_factor should be defined".into())),
    };
    let corners = align_corners.unwrap_or(false);
    Ok(match (mode, spatial) {
        ("bilinear", _) => x.f_upsample_bilinear2d(output.as_slice(), corners, scale, scale)?,
        ("bicubic", _) => x.f_upsample_bicubic2d(output.as_slice(), corners, scale, scale)?,
        ("linear", _) => x.f_upsample_linear1d(output.as_slice(), corners, scale)?,
        (_, 1) => x.f_upsample_nearest1d(output.as_slice(), scale)?,
        _ => x.f_upsample_nearest2d(output.as_slice(), scale, scale)?,
    })
}

/// `torch.addmm(input, mat1, mat2)` (`beta` and `alpha` at 1).
#[inline]
pub fn addmm(input: &Tensor, mat1: &Tensor, mat2: &Tensor) -> Result<Tensor> {
    Ok(input.f_addmm(mat1, mat2)?)
}

/// `torch.baddbmm(input, batch1, batch2, beta=…, alpha=…)` (`beta=0` ignores `input`, NaN
/// included, as eager).
#[inline]
pub fn baddbmm(input: &Tensor, batch1: &Tensor, batch2: &Tensor, beta: f64, alpha: f64) -> Result<Tensor> {
    // through `scalar_call`: batches of other sizes are eager's error
    // SAFETY: live tensor handles; the scalars live for the call
    scalar_call::call([Number::Float(beta), Number::Float(alpha)], |out, [beta, alpha]| unsafe {
        torch_sys::c_generated::atg_baddbmm(out, scalar_call::ptr(input), scalar_call::ptr(batch1), scalar_call::ptr(batch2), beta, alpha)
    })
}

// ---- torch.distributions: Categorical and Normal, as eager computes them ------------------------

/// Native code refuses a call whose arguments eager's distribution checks reject
/// (`validate_args`, on by default): `auto` mode reruns the Python, which raises eager's own
/// `ValueError` with its message (a tensor's printout), or computes when the user turned the
/// checks off.
fn refuse_distribution(what: &str) -> crate::Error {
    crate::Error::Value(format!("torchlower: {what} fails eager's distribution check (native code refuses; auto mode reruns Python)"))
}

fn any_true(mask: &Tensor) -> Result<bool> {
    Ok(mask.f_any()?.int64_value(&[]) != 0)
}

/// Eager's `_validate_sample` broadcast rule: from the right, sizes equal or one of them 1.
fn broadcastable(value: &[i64], batch: &[i64]) -> bool {
    value.iter().rev().zip(batch.iter().rev()).all(|(&a, &b)| a == 1 || b == 1 || a == b)
}

/// `Categorical(logits=l)`: `l - l.logsumexp(-1, keepdim=True)`, which eager then checks
/// for NaN (from a NaN or an infinite logit).
pub fn categorical(logits: &Tensor) -> Result<Tensor> {
    let normalized = logits.f_sub(&logits.f_logsumexp([-1i64].as_slice(), true)?)?;
    if any_true(&normalized.f_isnan()?)? {
        return Err(refuse_distribution("Categorical(logits=…) with logits that normalize to NaN"));
    }
    Ok(normalized)
}

/// `Categorical.probs`: `softmax(logits, -1)`.
#[inline]
pub fn categorical_probs(logits: &Tensor) -> Result<Tensor> {
    Ok(logits.f_softmax(-1, None::<tch::Kind>)?)
}

/// `Categorical.log_prob(value)`: the value broadcastable with the batch shape and in
/// `[0, n)`, then eager's `broadcast_tensors(value.unsqueeze(-1), logits)`, `[..., :1]`,
/// `gather(-1, …).squeeze(-1)`.
pub fn categorical_log_prob(logits: &Tensor, value: &Tensor) -> Result<Tensor> {
    let shape = logits.size();
    let n = *shape.last().unwrap_or(&0);
    if !broadcastable(&value.size(), &shape[..shape.len().saturating_sub(1)]) {
        return Err(refuse_distribution("Categorical.log_prob of a value whose shape"));
    }
    if any_true(&value.f_lt(0)?.f_logical_or(&value.f_gt(n - 1)?)?)? {
        return Err(refuse_distribution("Categorical.log_prob of an index out of range"));
    }
    let value = value.f_unsqueeze(-1)?;
    let both = Tensor::f_broadcast_tensors(&[&value, logits])?;
    let (value, log_pmf) = (&both[0], &both[1]);
    let value = value.f_narrow(-1, 0, 1)?;
    Ok(log_pmf.f_gather(-1, &value, false)?.f_squeeze_dim(-1)?)
}

/// `Categorical.entropy()`: `-(logits.clamp(min=finfo.min) * probs).sum(-1)`.
pub fn categorical_entropy(logits: &Tensor) -> Result<Tensor> {
    let clamped = logits.f_clamp_min(f64::from(f32::MIN))?;
    let p_log_p = clamped.f_mul(&categorical_probs(logits)?)?;
    Ok(p_log_p.f_sum_dim_intlist([-1i64].as_slice(), false, None::<tch::Kind>)?.f_neg()?)
}

/// `Categorical.mode`: `probs.argmax(-1)`.
#[inline]
pub fn categorical_mode(logits: &Tensor) -> Result<Tensor> {
    Ok(categorical_probs(logits)?.f_argmax(-1, false)?)
}

/// `Normal(loc, scale)`: no NaN in `loc`, `scale > 0` everywhere, then the broadcast `loc`.
pub fn normal(loc: &Tensor, scale: &Tensor) -> Result<Tensor> {
    if any_true(&loc.f_isnan()?)? || any_true(&scale.f_gt(0.0)?.f_logical_not()?)? {
        return Err(refuse_distribution("Normal(loc, scale) with a NaN loc or a scale that is not positive"));
    }
    let both = Tensor::f_broadcast_tensors(&[loc, scale])?;
    Ok(both[0].shallow_clone())
}

/// `Normal.stddev`: the broadcast scale.
pub fn normal_stddev(loc: &Tensor, scale: &Tensor) -> Result<Tensor> {
    Ok(Tensor::f_broadcast_tensors(&[loc, scale])?[1].shallow_clone())
}

/// `Normal.log_prob(value)`: the value free of NaN and broadcastable, then eager's formula
/// `-((value - loc) ** 2) / (2 * var) - log(scale) - log(sqrt(2 * pi))`, `var = scale ** 2`.
pub fn normal_log_prob(loc: &Tensor, scale: &Tensor, value: &Tensor) -> Result<Tensor> {
    let scale = normal_stddev(loc, scale)?;
    if !broadcastable(&value.size(), &scale.size()) || any_true(&value.f_isnan()?)? {
        return Err(refuse_distribution("Normal.log_prob of a NaN or unbroadcastable value"));
    }
    let var = scale.f_pow_tensor_scalar(2)?;
    let log_scale = scale.f_log()?;
    let centred = value.f_sub(loc)?.f_pow_tensor_scalar(2)?.f_neg()?;
    let log_sqrt_two_pi = (2.0 * std::f64::consts::PI).sqrt().ln();
    Ok(centred.f_div(&var.f_mul_scalar(2)?)?.f_sub(&log_scale)?.f_sub_scalar(log_sqrt_two_pi)?)
}

/// `Normal.entropy()`: `0.5 + 0.5 * log(2 * pi) + log(scale)` over the broadcast scale.
pub fn normal_entropy(loc: &Tensor, scale: &Tensor) -> Result<Tensor> {
    let constant = 0.5 + 0.5 * (2.0 * std::f64::consts::PI).ln();
    Ok(normal_stddev(loc, scale)?.f_log()?.f_add_scalar(constant)?)
}

/// `t.repeat(*repeats)` (a copy).
#[inline]
pub fn repeat(t: &Tensor, repeats: &[i64]) -> Result<Tensor> {
    Ok(t.f_repeat(repeats)?)
}

/// `t.to(dtype)`, `.float()`, `.long()`, `.bool()` to another dtype (a copy, as eager's).
#[inline]
pub fn to_dtype(t: &Tensor, dtype: &str) -> Result<Tensor> {
    if let Some(converted) = crate::fused::to_kind_direct(t, kind_of(dtype)) {
        return converted;
    }
    Ok(t.f_to_kind(kind_of(dtype))?)
}

/// `torch.clamp(t, min=lo, max=hi)` with tensor bounds (broadcast as eager; NaN propagates).
#[inline]
pub fn clamp_tensor(t: &Tensor, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
    Ok(t.f_clamp_tensor(min, max)?)
}

/// `torch.max(t, dim, keepdim)`: the (values, indices) pair.
#[inline]
pub fn max_dim(t: &Tensor, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
    Ok(t.f_max_dim(dim, keepdim)?)
}

/// `torch.einsum(equation, *operands)` (libtorch's kernel, which checks the sizes).
#[inline]
pub fn einsum(equation: &str, operands: &[&Tensor]) -> Result<Tensor> {
    Ok(Tensor::f_einsum(equation, operands, None::<&[i64]>)?)
}

/// `torch.sort(t, dim, descending)`: the (values, indices) pair (libtorch's kernel).
#[inline]
pub fn sort(t: &Tensor, dim: i64, descending: bool) -> Result<(Tensor, Tensor)> {
    Ok(t.f_sort(dim, descending)?)
}

/// `torch.argsort(t, dim, descending)`: sort's indices.
#[inline]
pub fn argsort(t: &Tensor, dim: i64, descending: bool) -> Result<Tensor> {
    Ok(t.f_argsort(dim, descending)?)
}

/// `torch.cumsum(t, dim, dtype=…)`: int64 for int64 and bool inputs, as eager's dtype rule, unless `dtype` (`"None"` or a dtype name) says otherwise.
#[inline]
pub fn cumsum(t: &Tensor, dim: i64, dtype: &str) -> Result<Tensor> {
    let dtype = match dtype {
        "torch.float32" => Some(tch::Kind::Float),
        "torch.int64" => Some(tch::Kind::Int64),
        _ => None,
    };
    Ok(t.f_cumsum(dim, dtype)?)
}

/// `torch.nansum(t, dims, keepdim)`.
#[inline]
pub fn nansum(t: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    Ok(t.f_nansum(Some(dim), keepdim, None::<tch::Kind>)?)
}

/// `torch.topk(t, k, dim, largest, sorted)`: the (values, indices) pair (libtorch's kernel).
#[inline]
pub fn topk(t: &Tensor, k: i64, dim: i64, largest: bool, sorted: bool) -> Result<(Tensor, Tensor)> {
    // "selected index k out of range" is a RuntimeError in eager (a TORCH_CHECK, not an
    // index check); a dim out of range stays IndexError
    t.f_topk(k, dim, largest, sorted).map_err(|e| runtime_unless_dim(crate::Error::Torch(e)))
}

/// A libtorch error of an op whose own checks are `TORCH_CHECK`s (RuntimeError in eager),
/// except a dim out of range (`maybe_wrap_dim`'s IndexError).
fn runtime_unless_dim(error: crate::Error) -> crate::Error {
    let message = error.to_string();
    if message.starts_with("Dimension out of range") {
        error
    } else {
        crate::Error::Runtime(message)
    }
}

/// `torch.where(cond)` of a rank-1 tensor: the 1-tuple of its nonzero indices (int64).
#[inline]
pub fn where_nonzero(cond: &Tensor) -> Result<(Tensor,)> {
    let [indices]: [Tensor; 1] = cond
        .f_nonzero_numpy()?
        .try_into()
        .map_err(|_| crate::Error::Value("torch.where(cond): the condition is not rank 1 (native code refuses)".into()))?;
    Ok((indices,))
}

/// `torch.multinomial(probs, num_samples, replacement)`, from torch's default CPU generator.
#[inline]
pub fn multinomial(probs: &Tensor, num_samples: i64, replacement: bool) -> Result<Tensor> {
    Ok(probs.f_multinomial(num_samples, replacement)?)
}

/// `torch.min(t, dim, keepdim)`: the (values, indices) pair.
#[inline]
pub fn min_dim(t: &Tensor, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
    Ok(t.f_min_dim(dim, keepdim)?)
}

/// `a & b` of bool or int64 tensors, `torch.logical_and` of bool tensors: eager's operator is
/// `bitwise_and`, which on bools is the logical and (the analyzer claims `torch.logical_and`
/// on bools only).
#[inline]
pub fn logical_and(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_bitwise_and_tensor(b)?)
}

/// `a | b` (see [`logical_and`]).
#[inline]
pub fn logical_or(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_bitwise_or_tensor(b)?)
}

/// `a ^ b` (see [`logical_and`]).
#[inline]
pub fn logical_xor(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.f_bitwise_xor_tensor(b)?)
}

/// `~m` of a bool tensor, `torch.logical_not(t)`.
#[inline]
pub fn logical_not(t: &Tensor) -> Result<Tensor> {
    if let Some(negated) = crate::fused::logical_not_direct(t) {
        return negated;
    }
    Ok(t.f_logical_not()?)
}
