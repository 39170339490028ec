//! Lets this crate's own test binaries find libtorch (and libpython) at run time.
//!
//! The tests link libtorch through tch, but nothing puts libtorch's folder on the loader's
//! path: a Python process has already loaded it when a generated extension is imported, a
//! plain test binary has not. So the test binaries get an rpath to the folder torch-sys
//! linked against (`DEP_TCH_LIBTORCH_LIB`, published by torch-sys) and to the interpreter's
//! library folder. `rustc-link-arg` only applies to this package's own linked targets
//! (tests here): crates that depend on the backend, like generated extensions, are untouched.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");
    if let Ok(libtorch) = env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{libtorch}");
    }
    if let Some(libdir) = python_libdir() {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{libdir}");
    }
}

/// `sysconfig.get_config_var("LIBDIR")` of the interpreter pyo3 builds against, if any.
fn python_libdir() -> Option<String> {
    let python = env::var("PYO3_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let output = Command::new(python)
        .args(["-c", "import sysconfig; print(sysconfig.get_config_var('LIBDIR') or '')"])
        .output()
        .ok()?;
    let libdir = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (output.status.success() && !libdir.is_empty()).then_some(libdir)
}
