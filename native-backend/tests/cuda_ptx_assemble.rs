//! Every generated kernel assembled to a cubin for sm_80 and sm_90 by nvJitLink (the PTX
//! assembler that ships with the torch wheel's CUDA dependencies), with zero errors. This is
//! how the PTX is proven valid on a machine without a GPU. A missing nvJitLink is a test
//! failure, not a skip: CI installs torch, which brings it.

use std::ffi::{c_char, c_void, CString};
use std::path::PathBuf;

use libloading::Library;
use torchlower_backend::cuda::kernels::Kernel;

type Handle = *mut c_void;
type CreateFn = unsafe extern "C" fn(*mut Handle, u32, *const *const c_char) -> u32;
type AddDataFn = unsafe extern "C" fn(Handle, u32, *const c_void, usize, *const c_char) -> u32;
type HandleFn = unsafe extern "C" fn(Handle) -> u32;
type SizeFn = unsafe extern "C" fn(Handle, *mut usize) -> u32;
type LogFn = unsafe extern "C" fn(Handle, *mut c_char) -> u32;
type DestroyFn = unsafe extern "C" fn(*mut Handle) -> u32;

/// `NVJITLINK_INPUT_PTX`.
const INPUT_PTX: u32 = 2;

/// Where nvJitLink is: `TORCHLOWER_NVJITLINK`, else the repository venv's torch dependencies.
fn nvjitlink_path() -> PathBuf {
    if let Some(path) = std::env::var_os("TORCHLOWER_NVJITLINK") {
        return PathBuf::from(path);
    }
    let venv = std::env::var_os("VIRTUAL_ENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv"));
    let mut searched = Vec::new();
    for lib in std::fs::read_dir(venv.join("lib")).into_iter().flatten().flatten() {
        let nvidia = lib.path().join("site-packages/nvidia");
        for cuda in std::fs::read_dir(&nvidia).into_iter().flatten().flatten() {
            let candidate = cuda.path().join("lib/libnvJitLink.so.13");
            if candidate.exists() {
                return candidate;
            }
            searched.push(candidate.display().to_string());
        }
    }
    panic!(
        "libnvJitLink.so.13 not found under {} (searched {searched:?}); install the project's \
         venv (scripts/setup.sh installs torch with its CUDA dependencies) or set TORCHLOWER_NVJITLINK",
        venv.display()
    );
}

struct NvJitLink {
    _library: Library,
    create: CreateFn,
    add_data: AddDataFn,
    complete: HandleFn,
    cubin_size: SizeFn,
    error_log_size: SizeFn,
    error_log: LogFn,
    info_log_size: SizeFn,
    info_log: LogFn,
    destroy: DestroyFn,
}

impl NvJitLink {
    fn load() -> NvJitLink {
        let path = nvjitlink_path();
        // SAFETY: loading NVIDIA's nvJitLink runs its initialisers, which is what we want.
        let library = unsafe { Library::new(&path) }
            .unwrap_or_else(|e| panic!("cannot load {}: {e:?}", path.display()));
        // SAFETY: the signatures are those of nvJitLink.h (CUDA 13, `_13_0` entry points).
        unsafe {
            macro_rules! sym {
                ($name:literal) => {
                    *library
                        .get(concat!($name, "\0").as_bytes())
                        .unwrap_or_else(|e| panic!("{} lacks {}: {e}", path.display(), $name))
                };
            }
            NvJitLink {
                create: sym!("__nvJitLinkCreate_13_0"),
                add_data: sym!("__nvJitLinkAddData_13_0"),
                complete: sym!("__nvJitLinkComplete_13_0"),
                cubin_size: sym!("__nvJitLinkGetLinkedCubinSize_13_0"),
                error_log_size: sym!("__nvJitLinkGetErrorLogSize_13_0"),
                error_log: sym!("__nvJitLinkGetErrorLog_13_0"),
                info_log_size: sym!("__nvJitLinkGetInfoLogSize_13_0"),
                info_log: sym!("__nvJitLinkGetInfoLog_13_0"),
                destroy: sym!("__nvJitLinkDestroy_13_0"),
                _library: library,
            }
        }
    }

    /// Assembles `ptx` for `arch`: `Ok(cubin size)` or `Err(result code and error log)`.
    fn assemble(&self, name: &str, ptx: &str, arch: &str) -> Result<usize, String> {
        let option = CString::new(format!("-arch={arch}")).unwrap();
        let options = [option.as_ptr()];
        let mut handle: Handle = std::ptr::null_mut();
        let label = CString::new(name).unwrap();
        let text = CString::new(ptx).unwrap();
        // SAFETY: nvJitLink's documented call sequence; every buffer outlives its call.
        unsafe {
            let code = (self.create)(&mut handle, 1, options.as_ptr());
            if code != 0 {
                return Err(format!("nvJitLinkCreate returned {code}"));
            }
            let bytes = text.as_bytes_with_nul();
            let mut outcome = match (self.add_data)(handle, INPUT_PTX, bytes.as_ptr() as *const c_void, bytes.len(), label.as_ptr()) {
                0 => match (self.complete)(handle) {
                    0 => {
                        let mut size = 0usize;
                        (self.cubin_size)(handle, &mut size);
                        Ok(size)
                    }
                    code => Err(format!("nvJitLinkComplete returned {code}")),
                },
                code => Err(format!("nvJitLinkAddData returned {code}")),
            };
            let error_log = read_log(handle, self.error_log_size, self.error_log);
            let info_log = read_log(handle, self.info_log_size, self.info_log);
            if !error_log.trim().is_empty() {
                outcome = Err(format!("{}\nerror log:\n{error_log}", outcome.err().unwrap_or_default()));
            }
            if outcome.is_err() && !info_log.trim().is_empty() {
                outcome = outcome.map_err(|e| format!("{e}\ninfo log:\n{info_log}"));
            }
            (self.destroy)(&mut handle);
            outcome
        }
    }
}

unsafe fn read_log(handle: Handle, size_fn: SizeFn, log_fn: LogFn) -> String {
    let mut size = 0usize;
    // SAFETY: the caller passes a live handle; the buffer has the size nvJitLink reported.
    unsafe {
        if size_fn(handle, &mut size) != 0 || size == 0 {
            return String::new();
        }
        let mut buffer = vec![0u8; size];
        log_fn(handle, buffer.as_mut_ptr() as *mut c_char);
        let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
        String::from_utf8_lossy(&buffer[..end]).into_owned()
    }
}

#[test]
fn every_kernel_assembles_for_sm80_and_sm90() {
    let jit = NvJitLink::load();
    let kernels = Kernel::all();
    assert_eq!(kernels.len(), Kernel::COUNT);
    let mut failures = Vec::new();
    for kernel in kernels {
        let ptx = kernel.ptx();
        for arch in ["sm_80", "sm_90"] {
            match jit.assemble(kernel.name(), &ptx, arch) {
                Ok(size) => assert!(size > 0, "{} for {arch}: empty cubin", kernel.name()),
                Err(error) => failures.push(format!("{} for {arch}: {error}", kernel.name())),
            }
        }
    }
    assert!(failures.is_empty(), "PTX that did not assemble:\n{}", failures.join("\n\n"));
}

#[test]
fn the_assembler_check_does_reject_invalid_ptx() {
    // Guards the test above against passing vacuously: a kernel with an undeclared register.
    let jit = NvJitLink::load();
    let bad = Kernel::all()[0].ptx().replacen("ret;", "add.f32 %undeclared, %undeclared, 1.0;\n\tret;", 1);
    let error = jit.assemble("bad", &bad, "sm_80").expect_err("invalid PTX must not assemble");
    println!("{error}");
    assert!(error.contains("undeclared"), "{error}");
}

#[test]
fn every_entry_line_matches_its_signature() {
    for kernel in Kernel::all() {
        let ptx = kernel.ptx();
        let signature = kernel.signature();
        let expected = format!(".visible .entry {}({})", signature.name, signature.ptx_params());
        assert!(ptx.contains(&expected), "{}: entry line differs from signature", signature.name);
        assert_eq!(ptx.matches(".param ").count(), signature.params.len(), "{}", signature.name);
    }
}
