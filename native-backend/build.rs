//! Compiles `src/shim.cpp` (the boundary's few direct libtorch calls) against the libtorch and
//! Python headers of this build, and lets this crate's own test binaries find libtorch (and
//! libpython) at run time.
//!
//! The shim: tch's C API copies every tensor handle into a new heap `at::Tensor` and leaves
//! errors in a thread-local slot to be read after each call. At the boundary, where a one-op
//! function spends most of its time, three calls of our own avoid both (src/shim.cpp). Built
//! with the same headers, ABI flag and standard as torch-sys builds tch's own C++.
//!
//! The rpaths: the tests link libtorch through tch, but nothing puts libtorch's folder on the
//! loader's path: a Python process has already loaded it when a generated extension is
//! imported, a plain test binary has not. So the test binaries get an rpath to the folder
//! torch-sys linked against (`DEP_TCH_LIBTORCH_LIB`, published by torch-sys) and to the
//! interpreter's library folder. `rustc-link-arg` only applies to this package's own linked
//! targets (tests here): crates that depend on the backend, like generated extensions, are
//! untouched. The folder is also published to dependents (`links = "torchlower_backend"`:
//! `DEP_TORCHLOWER_BACKEND_LIBTORCH_LIB`), so a crate written by `torchlower export` gives its
//! own binaries and tests the same rpath.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(torchlower_openmp)");
    println!("cargo:rerun-if-changed=src/shim.cpp");
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");
    println!("cargo:rerun-if-env-changed=LIBTORCH_USE_PYTORCH");
    println!("cargo:rerun-if-env-changed=LIBTORCH_CXX11_ABI");
    let libtorch = env::var("DEP_TCH_LIBTORCH_LIB").expect("torch-sys publishes DEP_TCH_LIBTORCH_LIB");
    compile_shim(&PathBuf::from(&libtorch));
    println!("cargo:rustc-link-arg=-Wl,-rpath,{libtorch}");
    println!("cargo:libtorch_lib={libtorch}");
    if python_feature() {
        if let Some(libdir) = python_query("import sysconfig; print(sysconfig.get_config_var('LIBDIR') or '')") {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{libdir}");
        }
    }
}

/// `src/shim.cpp` → a static library linked into this crate.
fn compile_shim(libtorch_lib: &std::path::Path) {
    let root = libtorch_lib.parent().expect("libtorch's lib folder has a parent").join("include");
    // torch-sys's rule: a PyTorch install says which C++ ABI it was built with; a standalone
    // libtorch uses LIBTORCH_CXX11_ABI (default 1)
    let cxx11_abi = if env::var_os("LIBTORCH_USE_PYTORCH").is_some() {
        match python_query("import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))").as_deref() {
            Some("0") => "0".to_string(),
            _ => "1".to_string(),
        }
    } else {
        env::var("LIBTORCH_CXX11_ABI").unwrap_or_else(|_| "1".to_string())
    };
    let mut build = cc::Build::new();
    if python_feature() {
        let python_include = python_query("import sysconfig; print(sysconfig.get_paths()['include'])")
            .expect("the Python interpreter pyo3 builds against reports its include folder");
        build.include(python_include).define("TORCHLOWER_PYTHON", None);
    }
    build
        .cpp(true)
        .pic(true)
        .warnings(false)
        .include(&root)
        .include(root.join("torch/csrc/api/include"))
        .flag("-std=c++17")
        .flag(format!("-D_GLIBCXX_USE_CXX11_ABI={cxx11_abi}"))
        .flag("-DGLOG_USE_GLOG_EXPORT")
        .file("src/shim.cpp");
    if openmp_backend(&root) {
        // `tl_parallel_for` joins libtorch's OpenMP pool: compiled with OpenMP and linked to the
        // libgomp that libtorch ships (same soname, so a process loads one runtime, one pool).
        build.flag("-fopenmp");
        println!("cargo:rustc-link-search=native={}", libtorch_lib.display());
        println!("cargo:rustc-link-lib=dylib:+verbatim=libgomp.so.1");
        println!("cargo:rustc-cfg=torchlower_openmp");
    }
    build.compile("torchlower_shim");
}

/// Whether libtorch's intra-op parallel backend is OpenMP (`ATen/Config.h`) with its libgomp
/// beside it (the PyTorch wheels for Linux). Elsewhere the shim's parallel loop runs on one thread.
fn openmp_backend(include: &std::path::Path) -> bool {
    let config = std::fs::read_to_string(include.join("ATen/Config.h")).unwrap_or_default();
    let libgomp = include.parent().is_some_and(|root| root.join("lib/libgomp.so.1").is_file());
    config.contains("#define AT_PARALLEL_OPENMP 1") && libgomp && env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
}

/// Whether the crate is built with its `python` feature (the Python extension's boundary).
fn python_feature() -> bool {
    env::var_os("CARGO_FEATURE_PYTHON").is_some()
}

/// What the interpreter pyo3 builds against prints for `code` (trimmed), if it runs.
fn python_query(code: &str) -> Option<String> {
    let python = env::var("PYO3_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let output = Command::new(python).args(["-c", code]).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (output.status.success() && !text.is_empty()).then_some(text)
}
