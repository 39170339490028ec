//! The GPU check binary (native-backend/gpu-check, built by `scripts/gpu-check.sh build`)
//! builds from these sources without tch, and behaves on machines it was not meant for:
//! without a driver it reports the loader error and exits 2; with the fake driver (which
//! runs no kernels) every kernel JIT-"loads" but the comparisons catch the wrong outputs and
//! it exits 1 — so a passing run on a GPU really means the device matched the models.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn build_check() -> PathBuf {
    let status = Command::new(repo().join("scripts/gpu-check.sh"))
        .arg("build")
        .status()
        .expect("run scripts/gpu-check.sh build");
    assert!(status.success(), "scripts/gpu-check.sh build failed");
    repo().join("artifacts/gpu-check/torchlower-gpu-check")
}

fn run_check(binary: &Path, driver: &str, report: &Path) -> (i32, serde_like::Report) {
    let out = Command::new(binary).arg(report).env("TORCHLOWER_CUDA_DRIVER", driver).output().expect("run gpu check");
    let text = std::fs::read_to_string(report).expect("report written");
    (out.status.code().unwrap_or(-1), serde_like::Report(text))
}

/// Just enough JSON inspection for these assertions, without a JSON dependency here.
mod serde_like {
    pub struct Report(pub String);
    impl Report {
        pub fn has(&self, needle: &str) -> bool {
            self.0.contains(needle)
        }
    }
}

#[test]
fn the_check_reports_a_missing_driver_and_catches_wrong_results() {
    let binary = build_check();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let missing = "/nonexistent/torchlower/libcuda.so.1";
    let (code, report) = run_check(&binary, missing, &dir.join("report-missing.json"));
    assert_eq!(code, 2);
    assert!(report.has("\"driver_error\"") && report.has(missing), "{}", report.0);

    let fake = dir.join("libfakecuda_gpucheck.so");
    let source = repo().join("native-backend/tests/fake_driver/fake_cuda.c");
    assert!(Command::new("cc").args(["-shared", "-fPIC", "-O1", "-o"]).arg(&fake).arg(&source).status().unwrap().success());
    let (code, report) = run_check(&binary, fake.to_str().unwrap(), &dir.join("report-fake.json"));
    assert_eq!(code, 1, "{}", report.0);
    assert!(report.has("\"name\": \"Fake GPU\""), "{}", report.0);
    assert!(report.has("\"ok\": false"), "{}", report.0);
    assert!(!report.has("\"cases_failed\": 0,"), "the fake run must not pass");
}
