//! What a crate written by `torchlower export` calls: the boundary of a native function
//! called from Rust rather than from Python.
//!
//! The checks are the Python boundary's ([`crate::boundary`]), in the same order (device,
//! dtype, rank) and with the same messages, but they return [`Error::Argument`] instead of
//! raising. [`call`] runs a body once under a no-grad guard (an input that requires grad
//! must not make an output record a graph, as under the Python path) and turns a panic into
//! [`Error::Internal`]: no panic leaves an exported function.

use std::panic::{catch_unwind, AssertUnwindSafe};

use tch::{Kind, Tensor};

use crate::error::{Error, Result};
use crate::spec::TensorSpec;

/// Checks that `tensor` (the argument of parameter `param`) has the device, dtype and rank
/// `spec` names.
pub fn tensor_arg(tensor: &Tensor, param: &'static str, spec: TensorSpec) -> Result<()> {
    let refused = |expected: String, found: String| Err(Error::Argument { param, expected, found });
    // libtorch throws only for an undefined tensor (`Tensor::new()`), which no caller means
    let Some(facts) = crate::facts::Facts::of(tensor) else {
        return refused(format!("a {} tensor", spec.device.name()), "an undefined tensor".to_string());
    };
    if facts.device != spec.device.device() {
        return refused(format!("a {} tensor", spec.device.name()), device_name(facts.device));
    }
    if !facts.is_kind(spec.dtype.kind()) {
        return refused(format!("dtype {}", spec.dtype.name()), tensor.f_kind().map_or_else(|e| e.to_string(), kind_name));
    }
    if facts.rank != spec.rank {
        return refused(format!("a rank-{} tensor", spec.rank), format!("rank {}", facts.rank));
    }
    Ok(())
}

/// Runs `body` under a no-grad guard, a panic caught as [`Error::Internal`].
pub fn call<T>(body: impl FnOnce() -> Result<T>) -> Result<T> {
    crate::vml::warm_up();
    let _guard = tch::no_grad_guard();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(panic) => {
            let text = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            Err(Error::Internal(text))
        }
    }
}

/// PyTorch's name of a device (`cpu`, `cuda:0`), as the Python boundary prints it.
fn device_name(device: tch::Device) -> String {
    match device {
        tch::Device::Cpu => "cpu".to_string(),
        tch::Device::Cuda(index) => format!("cuda:{index}"),
        tch::Device::Mps => "mps".to_string(),
        tch::Device::Vulkan => "vulkan".to_string(),
    }
}

/// PyTorch's name of a dtype (`torch.float64`), as the Python boundary prints it.
fn kind_name(kind: Kind) -> String {
    let name = match kind {
        Kind::Uint8 => "uint8",
        Kind::Int8 => "int8",
        Kind::Int16 => "int16",
        Kind::Int => "int32",
        Kind::Int64 => "int64",
        Kind::Half => "float16",
        Kind::Float => "float32",
        Kind::Double => "float64",
        Kind::ComplexHalf => "complex32",
        Kind::ComplexFloat => "complex64",
        Kind::ComplexDouble => "complex128",
        Kind::Bool => "bool",
        Kind::BFloat16 => "bfloat16",
        other => return format!("{other:?}"),
    };
    format!("torch.{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_of_another_device_dtype_or_rank_are_typed_errors_with_the_boundary_s_messages() {
        let x = Tensor::zeros([2, 3], (Kind::Float, tch::Device::Cpu));
        assert!(tensor_arg(&x, "x", TensorSpec::F32_CPU_2D).is_ok());
        let message = |r: Result<()>| r.map_err(|e| e.to_string()).expect_err("refused");
        assert_eq!(message(tensor_arg(&x, "x", TensorSpec::F32_CPU_1D)), "torchlower: parameter 'x' expects a rank-1 tensor, got rank 2");
        let d = x.to_kind(Kind::Double);
        assert_eq!(message(tensor_arg(&d, "w", TensorSpec::F32_CPU_2D)), "torchlower: parameter 'w' expects dtype float32, got torch.float64");
        assert!(matches!(tensor_arg(&d, "w", TensorSpec::F32_CPU_2D), Err(Error::Argument { param: "w", .. })));
        let ids = x.to_kind(Kind::Int);
        assert!(tensor_arg(&ids, "ids", TensorSpec::I32_CPU_2D).is_ok());
        assert_eq!(message(tensor_arg(&ids, "ids", TensorSpec::I64_CPU_2D)), "torchlower: parameter 'ids' expects dtype int64, got torch.int32");
        assert_eq!(message(tensor_arg(&x, "x", TensorSpec::F32_CUDA0_2D)), "torchlower: parameter 'x' expects a cuda:0 tensor, got cpu");
        assert_eq!(message(tensor_arg(&Tensor::new(), "u", TensorSpec::F32_CPU_2D)), "torchlower: parameter 'u' expects a cpu tensor, got an undefined tensor");
    }

    #[test]
    fn a_call_runs_without_grad_and_a_panic_is_an_error() {
        let w = Tensor::ones([2], (Kind::Float, tch::Device::Cpu)).set_requires_grad(true);
        let out = call(|| Ok(&w * 2.0)).expect("runs");
        assert!(!out.requires_grad(), "no graph is recorded");
        let error = call::<()>(|| panic!("boom")).expect_err("caught");
        assert!(matches!(&error, Error::Internal(text) if text == "boom"), "{error}");
    }
}
