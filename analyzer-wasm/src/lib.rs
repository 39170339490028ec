//! torchlower's analyzer: parse annotated PyTorch inference code, type it, decide site by site
//! what runs natively (claim / reject / not covered), and lower native functions to Rust over
//! `torchlower-backend`. Pure: no I/O, no threads, no clock; builds to wasm.
//!
//! Data flow (one folder per stage): [`parse`] → [`resolve`] (imports, annotations) →
//! [`types`] (flow-sensitive typing of each function, which asks [`claim`] about every torch
//! site and builds the typed [`ir`]) → [`lower`] (Rust emission) → [`report`] (JSON).
//! Every rule id and diagnostic code lives in [`rules`].

pub mod abi;
pub mod parse;
pub mod report;
pub mod rules;
#[cfg(feature = "web")]
pub mod web;

use report::{Diagnostic, Report, Span, SCHEMA_VERSION};

/// Analyze one Python source file.
pub fn analyze(source: &str, filename: &str) -> Report {
    let index = parse::LineIndex::new(source);
    let mut report = Report {
        schema: SCHEMA_VERSION,
        filename: filename.to_string(),
        diagnostics: Vec::new(),
        functions: Vec::new(),
        rust: None,
    };
    match parse::parse_module(source, filename, &index) {
        Ok(_body) => {}
        Err(diag) => report.diagnostics.push(diag),
    }
    report
}

/// [`analyze`], serialised as the report JSON.
pub fn analyze_json(source: &str, filename: &str) -> String {
    analyze(source, filename).to_json()
}

/// Entry for hosts handing over raw bytes: invalid UTF-8 is replaced and reported (TL003).
pub fn analyze_bytes_json(source: &[u8], filename: &[u8]) -> String {
    let name = String::from_utf8_lossy(filename);
    match std::str::from_utf8(source) {
        Ok(text) => analyze_json(text, &name),
        Err(err) => {
            let text = String::from_utf8_lossy(source);
            let mut report = analyze(&text, &name);
            let index = parse::LineIndex::new(&text);
            let at = err.valid_up_to();
            report.diagnostics.insert(0, Diagnostic {
                code: rules::NOT_UTF8.code.to_string(),
                severity: rules::NOT_UTF8.severity,
                message: "source is not valid UTF-8; invalid bytes were replaced by U+FFFD".to_string(),
                hint: Some(rules::NOT_UTF8.hint.to_string()),
                span: {
                    let s: Span = index.span_of(at, at);
                    s
                },
            });
            report.to_json()
        }
    }
}
