//! libtorch calls with Python numbers (C++ `Scalar`s) as arguments, made through torch-sys.
//!
//! Why: tch 0.26 builds a call's `Scalar` as a temporary that is freed before tch reads
//! libtorch's error slot, and `Scalar`'s drop checks that slot and panics on the pending error.
//! So a failing `x.f_masked_fill(&mask, 0.5)` (a mask that does not broadcast) panics instead of
//! returning `Err`, and eager's error reached the caller as an internal error. Here the scalars
//! live until the error has been read; only ops that can fail on their tensors need it
//! (`masked_fill`, `where`, `baddbmm`, `pow(number, t)`, and the in-place `t += s` & co., which
//! eager refuses on a tensor whose elements share memory or of a dtype the result cannot be
//! cast to), the others keep tch's own functions.

use tch::Tensor;
use torch_sys::{C_scalar, C_tensor};

use crate::error::Result;

/// A Python number as libtorch takes it: an `int` (or `bool`) or a `float`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    /// A new C++ scalar the caller frees with `ats_free`.
    fn raw(self) -> *mut C_scalar {
        // SAFETY: plain constructors; they allocate and cannot fail.
        unsafe {
            match self {
                Number::Int(v) => torch_sys::ats_int(v),
                Number::Float(v) => torch_sys::ats_float(v),
            }
        }
    }

    /// As tch's `Scalar`, for the calls that cannot fail on it.
    pub fn scalar(self) -> tch::Scalar {
        match self {
            Number::Int(v) => tch::Scalar::int(v),
            Number::Float(v) => tch::Scalar::float(v),
        }
    }
}

impl From<i64> for Number {
    fn from(v: i64) -> Self {
        Number::Int(v)
    }
}

impl From<f64> for Number {
    fn from(v: f64) -> Self {
        Number::Float(v)
    }
}

/// Calls `call(out, scalars)` (an `atg_*` function writing one tensor to `out`), then reads
/// libtorch's error, then frees the scalars: the tensor, or libtorch's error as
/// [`crate::Error::Torch`].
pub(crate) fn call<const N: usize>(numbers: [Number; N], call: impl FnOnce(*mut *mut C_tensor, [*mut C_scalar; N])) -> Result<Tensor> {
    let scalars = numbers.map(Number::raw);
    let mut out = [std::ptr::null_mut::<C_tensor>(); 1];
    call(out.as_mut_ptr(), scalars);
    let error = crate::facts::take_error();
    for scalar in scalars {
        // SAFETY: made by `Number::raw` above, freed once.
        unsafe { torch_sys::ats_free(scalar) };
    }
    match error {
        Some(message) => Err(tch::TchError::Torch(message).into()),
        // SAFETY: on success the call wrote a new tensor handle that we now own.
        None => Ok(unsafe { Tensor::from_ptr(out[0]) }),
    }
}

/// The pointer tch's C API takes for `t` (only read by the calls here).
pub(crate) fn ptr(t: &Tensor) -> *mut C_tensor {
    t.as_ptr() as *mut C_tensor
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Device, Kind};

    #[test]
    fn a_failing_call_returns_libtorch_s_error_and_a_good_one_its_tensor() {
        let x = Tensor::zeros([9, 8], (Kind::Float, Device::Cpu));
        let mask = Tensor::ones([8, 8], (Kind::Bool, Device::Cpu));
        let error = crate::ops::masked_fill(&x, &mask, 0.5).expect_err("the mask does not broadcast");
        assert_eq!(error.to_string(), "The size of tensor a (8) must match the size of tensor b (9) at non-singleton dimension 0");
        let filled = crate::ops::masked_fill(&x.narrow(0, 0, 8), &mask, -0.0).expect("it broadcasts");
        assert_eq!(filled.size(), [8, 8]);
        assert!(f32::try_from(filled.get(0).get(0)).expect("a number").is_sign_negative());
    }
}
