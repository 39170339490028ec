//! The process-wide runtime with the fake driver (`TORCHLOWER_CUDA_DRIVER`): every kernel
//! is JIT-loaded once per process however often it is asked for, and ops reject tensors
//! that are not on cuda:0 instead of moving them.

use std::path::PathBuf;
use std::process::Command;

use tch::{Device, Kind, Tensor};
use torchlower_backend::cuda::kernels::Kernel;
use torchlower_backend::cuda::{ops, runtime};

#[test]
fn kernels_load_once_and_cpu_tensors_are_rejected() {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fake_driver/fake_cuda.c");
    let library = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("libfakecuda_runtime.so");
    let status = Command::new("cc").args(["-shared", "-fPIC", "-O1", "-o"]).arg(&library).arg(&source).status().unwrap();
    assert!(status.success());
    std::env::set_var("TORCHLOWER_CUDA_DRIVER", &library);

    for _ in 0..3 {
        for kernel in Kernel::all() {
            let loaded = runtime::kernel(kernel).unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
            assert_eq!(loaded.function().signature().name, kernel.name());
        }
    }
    // SAFETY: the fake's own log accessor.
    let log = unsafe {
        let lib = libloading::Library::new(&library).unwrap();
        let f = lib.get::<unsafe extern "C" fn() -> *const std::ffi::c_char>(b"fake_log\0").unwrap();
        std::ffi::CStr::from_ptr(f()).to_string_lossy().into_owned()
    };
    for kernel in Kernel::all() {
        let loads = log.lines().filter(|l| *l == format!("cuModuleLoadDataEx {}", kernel.name())).count();
        assert_eq!(loads, 1, "{} JIT-loaded {loads} times", kernel.name());
    }
    assert_eq!(log.lines().filter(|l| *l == "cuDevicePrimaryCtxRetain").count(), 1);

    let t = Tensor::ones([2, 3], (Kind::Float, Device::Cpu));
    let error = ops::relu(&t).unwrap_err().to_string();
    assert_eq!(error, "torchlower: CUDA relu expects tensors on cuda:0, got cpu");
    let error = ops::matmul(&t, &t).unwrap_err().to_string();
    assert_eq!(error, "torchlower: CUDA matmul expects tensors on cuda:0, got cpu");
}
