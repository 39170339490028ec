//! torchlower's analyzer: parse annotated PyTorch inference code, type it, decide site by site
//! what runs natively (claim / reject / not covered), and lower native functions to Rust over
//! `torchlower-backend`. Pure: no I/O, no threads, no clock; builds to wasm.
//!
//! Data flow (one module per stage): [`parse`] → [`resolve`] (imports, annotations) →
//! [`walk`] (flow-sensitive typing of each function over the types of [`ty`], which asks
//! [`claim`] about every torch site and builds the typed [`ir`]) → [`fuse`] (groups of ops
//! become fused kernel nodes) → [`lower`] (Rust emission, printing only) → [`report`] (JSON).
//! Every rule id and diagnostic code lives in [`rules`]; every op in the op table
//! (`torchlower-ops`). The design is in `docs/architecture.md`.

pub mod abi;
pub mod claim;
pub mod fuse;
pub mod ir;
pub mod lower;
pub mod parse;
pub mod report;
pub mod resolve;
pub mod rules;
pub mod ty;
pub mod walk;
#[cfg(feature = "web")]
pub mod web;

use report::{Diagnostic, Function, Report, Route, Span, SCHEMA_VERSION};
use rustpython_parser::ast::Stmt;

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
    let body = match parse::parse_module(source, filename, &index) {
        Ok(body) => body,
        Err(diag) => {
            report.diagnostics.push(diag);
            return report;
        }
    };
    let scope = resolve::ModuleScope::from_module(&body);
    let mut analyzed = Vec::new();
    for stmt in &body {
        match stmt {
            Stmt::FunctionDef(def) => {
                let a = walk::analyze_function(def, &scope, &index);
                report.functions.push(function_entry(def.name.as_str(), def.range, &index, &a));
                analyzed.push(a);
            }
            Stmt::AsyncFunctionDef(def) => {
                let span = index.span(def.range);
                report.functions.push(Function {
                    name: def.name.to_string(),
                    span,
                    route: Route::Fallback,
                    symbol: None,
                    rust_range: None,
                    params: Vec::new(),
                    returns: None,
                    sites: Vec::new(),
                    diagnostics: vec![Diagnostic {
                        code: rules::ASYNC_FN.code.to_string(),
                        severity: rules::ASYNC_FN.severity,
                        message: "async functions are not lowered".to_string(),
                        hint: Some(rules::ASYNC_FN.hint.to_string()),
                        span,
                    }],
                });
                analyzed.push(walk::Analyzed::empty());
            }
            _ => {}
        }
    }
    parse::drop_statements(body);
    lower_natives(&mut report, analyzed, filename);
    // sites in source order (nested sites after the site that contains them)
    for f in &mut report.functions {
        f.sites.sort_by_key(|s| (s.span.line, s.span.col, std::cmp::Reverse((s.span.end_line, s.span.end_col))));
    }
    report
}

fn function_entry(name: &str, range: rustpython_parser::text_size::TextRange, index: &parse::LineIndex, a: &walk::Analyzed) -> Function {
    Function {
        name: name.to_string(),
        span: index.span(range),
        route: if a.ir.is_some() { Route::Native } else { Route::Fallback },
        symbol: None,
        rust_range: None,
        params: a.params.clone(),
        returns: a.returns.clone(),
        sites: a.sites.clone(),
        diagnostics: a.diagnostics.clone(),
    }
}

/// Fuse and emit Rust for every native function, and link functions and sites to their text
/// and their fused kernels.
fn lower_natives(report: &mut Report, analyzed: Vec<walk::Analyzed>, filename: &str) {
    let fused: Vec<(usize, ir::Function, usize)> = analyzed
        .into_iter()
        .enumerate()
        .filter_map(|(index, a)| a.ir.map(|ir| (index, fuse::fuse_function(ir), a.sites.len())))
        .collect();
    for (index, ir, _) in &fused {
        let Some(f) = report.functions.get_mut(*index) else { continue };
        for (site, kernel) in ir.fused_sites() {
            if let Some(s) = f.sites.get_mut(site) {
                s.fused_into = Some(kernel.to_string());
            }
        }
    }
    let natives: Vec<lower::NativeFn> =
        fused.iter().map(|(index, ir, site_count)| lower::NativeFn { index: *index, ir, site_count: *site_count }).collect();
    if natives.is_empty() {
        return;
    }
    let emitted = lower::lower_module(filename, &natives);
    for (native, (symbol, range, site_ranges)) in natives.iter().zip(emitted.functions) {
        let Some(f) = report.functions.get_mut(native.index) else { continue };
        f.symbol = Some(symbol);
        f.rust_range = Some(range);
        for (site, r) in f.sites.iter_mut().zip(site_ranges) {
            if let Some([start, end]) = r {
                site.rust = emitted.rust.get(start..end).map(str::to_string);
                site.rust_range = Some([start, end]);
            }
        }
    }
    report.rust = Some(emitted.rust);
}


/// [`analyze`], serialised as the report JSON.
pub fn analyze_json(source: &str, filename: &str) -> String {
    analyze(source, filename).to_json()
}

/// Entry for hosts handing over raw bytes: invalid UTF-8 is replaced and reported (TL003).
pub fn analyze_bytes(source: &[u8], filename: &[u8]) -> Report {
    let name = String::from_utf8_lossy(filename);
    match std::str::from_utf8(source) {
        Ok(text) => analyze(text, &name),
        Err(err) => {
            let text = String::from_utf8_lossy(source);
            let mut report = analyze(&text, &name);
            let index = parse::LineIndex::new(&text);
            let at = err.valid_up_to();
            let span: Span = index.span_of(at, at);
            report.diagnostics.insert(0, Diagnostic {
                code: rules::NOT_UTF8.code.to_string(),
                severity: rules::NOT_UTF8.severity,
                message: "source is not valid UTF-8; invalid bytes were replaced by U+FFFD".to_string(),
                hint: Some(rules::NOT_UTF8.hint.to_string()),
                span,
            });
            report
        }
    }
}

/// [`analyze_bytes`] as compact JSON (the C ABI's payload).
pub fn analyze_bytes_json(source: &[u8], filename: &[u8]) -> String {
    analyze_bytes(source, filename).to_json()
}
