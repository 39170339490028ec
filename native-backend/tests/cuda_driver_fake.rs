//! The driver layers against libraries that are not a working CUDA driver: a missing file,
//! a library without the symbols (libm), and a fake driver built here from
//! `tests/fake_driver/fake_cuda.c` that returns chosen error codes and records its calls.

use std::ffi::{c_char, CStr, CString};
use std::path::PathBuf;
use std::process::Command;

use libloading::Library;
use torchlower_backend::cuda::error::error_name;
use torchlower_backend::cuda::kernels::Kernel;
use torchlower_backend::cuda::launch::{Arg, LaunchConfig};
use torchlower_backend::cuda::loader::{Driver, DEFAULT_CANDIDATES};
use torchlower_backend::cuda::result::{self, CudaError};
use torchlower_backend::cuda::safe::{self, DeviceBuffer, Module, PrimaryContext, Stream, StreamHandle};

/// Builds the fake driver (with extra `cc` flags) under a name of its own, so each test
/// gets a separate copy with separate state.
fn build_fake(name: &str, flags: &[&str]) -> String {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fake_driver/fake_cuda.c");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("libfakecuda_{name}.so"));
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&out)
        .arg(&source)
        .args(flags)
        .status()
        .expect("run cc (gcc) to build the fake CUDA driver");
    assert!(status.success(), "cc failed to build {}", source.display());
    out.display().to_string()
}

/// The fake's test controls, reached through a second handle on the same library.
struct Controls(Library);

impl Controls {
    fn open(path: &str) -> Controls {
        // SAFETY: our own fake; its initialisers do nothing.
        Controls(unsafe { Library::new(path) }.expect("open fake driver"))
    }
    fn set_result(&self, call: &str, code: i32) {
        let call = CString::new(call).unwrap();
        // SAFETY: signature of fake_set_result in fake_cuda.c.
        unsafe { self.0.get::<unsafe extern "C" fn(*const c_char, i32)>(b"fake_set_result\0").unwrap()(call.as_ptr(), code) }
    }
    fn set_param_count(&self, n: i32) {
        // SAFETY: signature of fake_set_param_count in fake_cuda.c.
        unsafe { self.0.get::<unsafe extern "C" fn(i32)>(b"fake_set_param_count\0").unwrap()(n) }
    }
    fn log(&self) -> Vec<String> {
        // SAFETY: fake_log returns the fake's NUL-terminated log buffer.
        let text = unsafe { CStr::from_ptr(self.0.get::<unsafe extern "C" fn() -> *const c_char>(b"fake_log\0").unwrap()()) };
        text.to_string_lossy().lines().map(str::to_string).collect()
    }
    fn clear_log(&self) {
        // SAFETY: signature of fake_clear_log in fake_cuda.c.
        unsafe { self.0.get::<unsafe extern "C" fn()>(b"fake_clear_log\0").unwrap()() }
    }
}

fn load(path: &str) -> Driver {
    Driver::load_from(&[path.to_string()], path).expect("fake driver loads")
}

#[test]
fn a_missing_library_error_names_every_path_and_os_error() {
    let candidates = vec!["/nonexistent/dir/libcuda.so.1".to_string(), "libtorchlower-no-such-driver.so".to_string()];
    let error = Driver::load_from(&candidates, "test list").expect_err("nothing to load");
    assert_eq!(error.attempts.len(), 2);
    assert!(error.init_failure.is_none());
    let text = error.to_string();
    for path in &candidates {
        assert!(text.contains(&format!("tried {path}: ")), "{text}");
    }
    assert_eq!(text.matches("No such file or directory").count(), 2, "{text}");
    assert!(text.contains("TORCHLOWER_CUDA_DRIVER"), "{text}");
    println!("{text}");
}

#[test]
fn the_default_search_is_libcuda_so_1_then_libcuda_so() {
    assert_eq!(DEFAULT_CANDIDATES, ["libcuda.so.1", "libcuda.so"]);
}

#[test]
fn a_library_without_cu_init_is_rejected_with_its_path() {
    let error = Driver::load_from(&["libm.so.6".to_string()], "libm.so.6").expect_err("libm is no driver");
    let text = error.to_string();
    assert!(text.contains("tried libm.so.6: loaded, but it does not export cuInit"), "{text}");
}

#[test]
fn init_failure_names_the_code_from_the_builtin_table() {
    let path = build_fake("init_failure", &["-DFAKE_NO_ERROR_NAME"]);
    let controls = Controls::open(&path);
    controls.set_result("cuInit", 100);
    let error = Driver::load_from(std::slice::from_ref(&path), &path).expect_err("cuInit fails");
    let (failed_path, driver_error) = error.init_failure.clone().expect("init failure recorded");
    assert_eq!(failed_path, path);
    assert_eq!(driver_error.code, 100);
    assert_eq!(driver_error.name, "CUDA_ERROR_NO_DEVICE");
    let text = error.to_string();
    assert!(text.contains("cuInit returned CUDA_ERROR_NO_DEVICE (100)"), "{text}");
}

#[test]
fn error_names_come_from_the_driver_when_it_has_cu_get_error_name() {
    let path = build_fake("error_name", &[]);
    let controls = Controls::open(&path);
    let driver = load(&path);
    controls.set_result("cuMemAlloc_v2", 2);
    let context = PrimaryContext::retain(&driver, 0).unwrap();
    let error = DeviceBuffer::<f32>::alloc(&context, 16).err().expect("alloc fails");
    match &error {
        CudaError::Driver(e) => {
            assert_eq!((e.call, e.code, e.name.as_str()), ("cuMemAlloc_v2", 2, "FAKE_ERROR_2"));
            assert_eq!(e.description.as_deref(), Some("described by the fake driver"));
        }
        other => panic!("unexpected {other:?}"),
    }
    // And from the table when it does not.
    let path = build_fake("error_table", &["-DFAKE_NO_ERROR_NAME"]);
    let controls = Controls::open(&path);
    let driver = load(&path);
    controls.set_result("cuMemAlloc_v2", 2);
    let context = PrimaryContext::retain(&driver, 0).unwrap();
    let error = DeviceBuffer::<f32>::alloc(&context, 16).err().expect("alloc fails");
    assert!(error.to_string().contains("cuMemAlloc_v2 returned CUDA_ERROR_OUT_OF_MEMORY (2)"), "{error}");
    assert_eq!(error_name(719), Some("CUDA_ERROR_LAUNCH_FAILED"));
}

#[test]
fn an_older_driver_without_a_symbol_still_loads() {
    let path = build_fake("old_driver", &["-DFAKE_OLD_DRIVER"]);
    let driver = load(&path);
    assert_eq!(driver.api().missing_symbols(), vec!["cuMemAlloc_v2"]);
    let context = PrimaryContext::retain(&driver, 0).expect("other calls work");
    let error = DeviceBuffer::<f32>::alloc(&context, 4).err().expect("alloc is missing");
    assert!(matches!(error, CudaError::MissingSymbol("cuMemAlloc_v2")), "{error:?}");
    assert_eq!(result::driver::version(&driver).unwrap(), 12040);
}

#[test]
fn owners_are_released_in_reverse_order_of_dependency() {
    let path = build_fake("drop_order", &[]);
    let controls = Controls::open(&path);
    let driver = load(&path);
    {
        let context = PrimaryContext::retain(&driver, 0).unwrap();
        let module = Module::load_ptx(&context, "tl_sum", &Kernel::Sum.ptx()).unwrap();
        let function = module.function(Kernel::Sum.signature()).unwrap();
        let stream = Stream::create(&context).unwrap();
        let buffer = DeviceBuffer::from_host(&context, &[1.0f32, 2.0, 3.0]).unwrap();
        assert_eq!(buffer.to_host().unwrap(), vec![1.0, 2.0, 3.0]);
        let config = LaunchConfig { grid: (1, 1, 1), block: (256, 1, 1), shared_bytes: 0 };
        let args = [Arg::Ptr(buffer.device_ptr()), Arg::Ptr(buffer.device_ptr()), Arg::I64(3), Arg::I64(1), Arg::I64(0), Arg::I64(0), Arg::I64(1), Arg::F32(1.0)];
        // SAFETY: the fake driver runs no kernel.
        unsafe { function.launch(config, stream.handle(), &args).unwrap() };
        controls.clear_log();
        drop(buffer);
        drop(stream);
        drop(module);
        drop(context);
    }
    let releases: Vec<String> = controls.log().into_iter().filter(|l| !l.starts_with("cuCtx")).collect();
    assert_eq!(releases, ["cuMemFree_v2", "cuStreamDestroy_v2", "cuModuleUnload", "cuDevicePrimaryCtxRelease_v2"]);
}

#[test]
fn launches_pass_each_argument_and_reject_mismatched_lists() {
    let path = build_fake("launch", &[]);
    let controls = Controls::open(&path);
    let driver = load(&path);
    let context = PrimaryContext::retain(&driver, 0).unwrap();
    let module = Module::load_ptx(&context, "tl_sum", &Kernel::Sum.ptx()).unwrap();
    let function = module.function(Kernel::Sum.signature()).unwrap();
    controls.set_param_count(8);
    controls.clear_log();
    let config = LaunchConfig { grid: (7, 1, 1), block: (256, 1, 1), shared_bytes: 0 };
    let args = [Arg::Ptr(11), Arg::Ptr(22), Arg::I64(33), Arg::I64(44), Arg::I64(55), Arg::I64(66), Arg::I64(77), Arg::F32(1.5)];
    // SAFETY: the fake driver runs no kernel.
    unsafe { function.launch(config, StreamHandle::LEGACY, &args).unwrap() };
    let launches: Vec<String> = controls.log().into_iter().filter(|l| l.starts_with("cuLaunchKernel grid")).collect();
    let expected_params = format!("params=11,22,33,44,55,66,77,{}", 1.5f32.to_bits());
    assert_eq!(launches.len(), 1);
    assert!(launches[0].contains("grid=7,1,1 block=256,1,1 shared=0 stream=0x1"), "{}", launches[0]);
    assert!(launches[0].ends_with(&expected_params), "{} vs {expected_params}", launches[0]);

    controls.clear_log();
    // SAFETY: rejected before reaching the driver.
    let too_few = unsafe { function.launch(config, StreamHandle::LEGACY, &args[..7]) };
    assert!(matches!(too_few, Err(CudaError::LaunchArguments { kernel: "tl_sum", .. })), "{too_few:?}");
    let mut wrong_kind = args;
    wrong_kind[7] = Arg::I64(1);
    // SAFETY: rejected before reaching the driver.
    let error = unsafe { function.launch(config, StreamHandle::LEGACY, &wrong_kind) }.unwrap_err();
    assert!(error.to_string().contains("argument 7 is I64, the kernel expects F32"), "{error}");
    assert!(controls.log().iter().all(|l| !l.starts_with("cuLaunchKernel")), "mismatched launches reached the driver");
}

#[test]
fn a_jit_failure_carries_the_jit_log() {
    let path = build_fake("jit", &[]);
    let controls = Controls::open(&path);
    controls.set_result("cuModuleLoadDataEx tl_gelu", 218);
    let driver = load(&path);
    let context = PrimaryContext::retain(&driver, 0).unwrap();
    let gelu = Kernel::all().into_iter().find(|k| k.name() == "tl_gelu").unwrap();
    let error = Module::load_ptx(&context, gelu.name(), &gelu.ptx()).err().expect("JIT fails");
    let text = error.to_string();
    assert!(text.contains("CUDA JIT failed for kernel tl_gelu"), "{text}");
    assert!(text.contains("ptxas fake: rejected"), "{text}");
}

#[test]
fn drop_never_panics_when_the_driver_refuses_a_release() {
    let path = build_fake("refuse_release", &[]);
    let controls = Controls::open(&path);
    let driver = load(&path);
    let before = safe::release_failures();
    {
        let context = PrimaryContext::retain(&driver, 0).unwrap();
        let buffer = DeviceBuffer::from_host(&context, &[1.0f32; 4]).unwrap();
        controls.set_result("cuMemFree_v2", 709);
        controls.set_result("cuDevicePrimaryCtxRelease_v2", 4);
        drop(buffer);
        drop(context);
    }
    assert!(safe::release_failures() >= before + 2);
}
