//! torchlower GPU check: on a machine with an NVIDIA GPU and driver (no toolkit, no PyTorch,
//! no network needed), loads the driver, JIT-compiles every generated kernel, runs each on
//! random and special values in several layouts, compares the device's output with the
//! kernel's host model (bit for bit: the models use the same IEEE operations in the same
//! order), measures launch overhead and matmul throughput, and writes one JSON report.
//!
//! Usage: `torchlower-gpu-check [REPORT_PATH]` (default `gpu-report.json`). Exit status 0
//! when every case matches, 1 when any differs, 2 when no driver/GPU could be used.

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

use std::time::Instant;

use serde_json::{json, Value};

use kernels::Kernel;
use safe::PrimaryContext;

fn main() {
    let report_path = std::env::args().nth(1).unwrap_or_else(|| "gpu-report.json".to_string());
    let started = Instant::now();
    let (report, status) = run();
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
fn run() -> (Value, i32) {
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

    let mut runner = cases::Runner::new(&context, &modules);
    let results = runner.run_all();
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
