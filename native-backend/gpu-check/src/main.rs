//! torchlower GPU check: on a machine with an NVIDIA GPU and driver (no toolkit, no PyTorch,
//! no network needed), loads the driver, JIT-compiles every generated kernel, runs each on
//! random and special values in several layouts, compares the device's output with the
//! kernel's host model (bit for bit: the models use the same IEEE operations in the same
//! order), measures launch overhead and matmul throughput, and writes one JSON report.
//!
//! Usage: `torchlower-gpu-check [REPORT_PATH] [DUMP_DIR]` (default `gpu-report.json`). With
//! `DUMP_DIR`, every case's inputs and device output are also written there
//! (`dump.rs`) for `scripts/gpu_eager_compare.py`, which compares them with eager PyTorch on
//! the same GPU. Exit status 0 when every case matches, 1 when any differs, 2 when no
//! driver/GPU could be used.

#![allow(dead_code, unused_imports)]

#[path = "../../src/cuda/error.rs"]
mod error;
#[path = "../../src/cuda/kernels/mod.rs"]
mod kernels;
#[path = "../../src/cuda/launch.rs"]
mod launch;
#[path = "../../src/cuda/loader.rs"]
mod loader;
#[path = "../../src/cuda/result.rs"]
mod result;
#[path = "../../src/cuda/safe/mod.rs"]
mod safe;
#[path = "../../src/cuda/sys.rs"]
mod sys;

mod cases;
mod dump;

use std::time::Instant;

use serde_json::{json, Value};

use kernels::Kernel;
use safe::PrimaryContext;

fn main() {
    let report_path = std::env::args().nth(1).unwrap_or_else(|| "gpu-report.json".to_string());
    let dump_dir = std::env::args().nth(2);
    let started = Instant::now();
    let (report, status) = run(dump_dir.as_deref());
    let mut report = report;
    report["total_seconds"] = json!(started.elapsed().as_secs_f64());
    let text = serde_json::to_string_pretty(&report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    if let Err(error) = std::fs::write(&report_path, &text) {
        eprintln!("cannot write {report_path}: {error}");
    }
    println!("report written to {report_path}");
    std::process::exit(status);
}

/// Runs everything; returns the report and the exit status.
fn run(dump_dir: Option<&str>) -> (Value, i32) {
    let mut report = json!({ "tool": "torchlower-gpu-check", "version": env!("CARGO_PKG_VERSION") });
    let driver = match loader::Driver::load() {
        Ok(driver) => driver,
        Err(error) => {
            println!("{error}");
            report["driver_error"] = json!(error.to_string());
            return (report, 2);
        }
    };
    let device = match describe_device(&driver) {
        Ok(device) => device,
        Err(error) => {
            println!("device query failed: {error}");
            report["driver_error"] = json!(error.to_string());
            return (report, 2);
        }
    };
    println!("driver {} ({}), device: {}", device["driver_version"], driver.path(), device["name"]);
    report["driver_path"] = json!(driver.path());
    report["device"] = device;
    let context = match PrimaryContext::retain(&driver, 0) {
        Ok(context) => context,
        Err(error) => {
            report["driver_error"] = json!(error.to_string());
            return (report, 2);
        }
    };

    // JIT every kernel, timing each.
    let mut modules = Vec::new();
    let mut jit = Vec::new();
    let mut jit_failed = false;
    for kernel in Kernel::all() {
        let t0 = Instant::now();
        match safe::Module::load_ptx(&context, kernel.name(), &kernel.ptx()) {
            Ok(module) => {
                jit.push(json!({ "kernel": kernel.name(), "ok": true, "ms": t0.elapsed().as_secs_f64() * 1e3 }));
                modules.push((kernel, module));
            }
            Err(error) => {
                jit_failed = true;
                println!("JIT of {} failed: {error}", kernel.name());
                jit.push(json!({ "kernel": kernel.name(), "ok": false, "error": error.to_string() }));
            }
        }
    }
    report["jit"] = json!(jit);

    let dump = match dump_dir.map(|d| dump::Dump::new(std::path::Path::new(d))) {
        Some(Ok(dump)) => Some(dump),
        Some(Err(error)) => {
            println!("cannot create the dump directory: {error}");
            None
        }
        None => None,
    };
    let mut runner = cases::Runner::new(&context, &modules, dump);
    let results = runner.run_all();
    if let Some(manifest) = runner.finish_dump() {
        println!("dump written: {}", manifest.display());
        report["dump_manifest"] = json!(manifest.display().to_string());
    }
    let failed = results.iter().filter(|r| r["ok"] != json!(true)).count();
    println!("{} cases, {failed} failed", results.len());
    for r in results.iter().filter(|r| r["ok"] != json!(true)).take(20) {
        println!("  FAILED {r}");
    }
    report["cases"] = json!(results);
    report["cases_failed"] = json!(failed);
    report["performance"] = runner.performance();
    println!("performance: {}", report["performance"]);
    let ok = failed == 0 && !jit_failed;
    report["ok"] = json!(ok);
    (report, if ok { 0 } else { 1 })
}

fn describe_device(driver: &loader::Driver) -> result::Result<Value> {
    let version = result::driver::version(driver)?;
    let count = result::device::count(driver)?;
    let device = result::device::get(driver, 0)?;
    let attribute = |a| result::device::attribute(driver, device, a);
    Ok(json!({
        "driver_version": format!("{}.{}", version / 1000, (version % 1000) / 10),
        "device_count": count,
        "name": result::device::name(driver, device)?,
        "compute_capability": format!("{}.{}",
            attribute(sys::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attribute(sys::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?),
        "multiprocessors": attribute(sys::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        "total_memory_bytes": result::device::total_memory(driver, device)?,
    }))
}
