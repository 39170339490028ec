//! Inputs the fuzz targets (analyzer-wasm/fuzz/, docs/fuzzing.md) found or that guard what
//! they check: each file of `tests/fuzz_regressions/` is analyzed on the wasm's 1 MiB stack
//! and its report must hold the fuzzers' invariants: valid JSON, spans inside the source (in
//! Python's lines: `\r\n`, `\r` and `\n` all end one), native functions with a range inside
//! the emitted Rust, and emitted Rust that parses with `syn`.

use std::path::Path;

use torchlower_analyzer::report::{Report, Route};

const STACK: usize = if cfg!(debug_assertions) { 4 << 20 } else { 1 << 20 };

fn analyze_small_stack(source: Vec<u8>) -> Report {
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || torchlower_analyzer::analyze_bytes(&source, b"regression.py"))
        .expect("spawn")
        .join()
        .expect("analysis thread must not panic or overflow")
}

#[test]
fn every_fuzz_regression_holds_the_invariants() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut cases: Vec<_> = std::fs::read_dir(&folder).expect("the regressions folder").map(|e| e.expect("entry").path()).collect();
    cases.sort();
    assert!(!cases.is_empty());
    for case in cases {
        let bytes = std::fs::read(&case).expect("read");
        let source = String::from_utf8_lossy(&bytes).into_owned();
        let report = analyze_small_stack(bytes);
        let json = report.to_json();
        serde_json::from_str::<Report>(&json).unwrap_or_else(|e| panic!("{}: report JSON: {e}", case.display()));
        let lines = source.replace("\r\n", "\n").split(['\n', '\r']).count() as u32 + 1;
        let spans = report.diagnostics.iter().map(|d| d.span).chain(report.functions.iter().flat_map(|f| std::iter::once(f).chain(&f.specialisations)).flat_map(|f| {
            std::iter::once(f.span).chain(f.sites.iter().map(|s| s.span)).chain(f.diagnostics.iter().map(|d| d.span))
        }));
        for span in spans {
            assert!(span.line >= 1 && span.col >= 1 && (span.end_line, span.end_col) >= (span.line, span.col), "{}: {span:?}", case.display());
            assert!(span.end_line <= lines, "{}: {span:?} past {lines} lines", case.display());
        }
        for function in report.functions.iter().flat_map(|f| std::iter::once(f).chain(&f.specialisations)).filter(|f| f.route == Route::Native) {
            let rust = report.rust.as_deref().expect("emitted Rust");
            let [start, end] = function.rust_range.expect("rust_range");
            assert!(start < end && end <= rust.len(), "{}: rust_range of {}", case.display(), function.name);
        }
        if let Some(rust) = &report.rust {
            syn::parse_file(rust).unwrap_or_else(|e| panic!("{}: emitted Rust does not parse: {e}", case.display()));
        }
    }
}
