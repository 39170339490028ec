//! The emitted Rust of grammar-shaped modules that route native: every `lib.rs` must parse
//! with `syn`, and analysing the same source twice must emit the same code (the build cache
//! is keyed by it).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    let Ok(source) = torchlower_analyzer_fuzz::python(&mut u) else { return };
    let report = torchlower_analyzer_fuzz::analyze(source.as_bytes().to_vec());
    if report.rust.is_none() {
        return;
    }
    torchlower_analyzer_fuzz::check_report(&source, &report);
    let again = torchlower_analyzer_fuzz::analyze(source.as_bytes().to_vec());
    assert_eq!(report.rust, again.rust, "the same source emitted different Rust");
});
