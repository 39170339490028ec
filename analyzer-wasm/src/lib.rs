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
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::TextRange;

pub use lower::Target;

/// Analyze one Python source file (its native functions lowered for a Python extension).
pub fn analyze(source: &str, filename: &str) -> Report {
    analyze_for(source, filename, Target::Extension)
}

/// Analyze one Python source file, its native functions lowered for `target`: the report is
/// the same, but `rust` is the `lib.rs` of that target and a native function's `symbol` is the
/// name of its entry there (a public Rust function's name for [`Target::Crate`]).
pub fn analyze_for(source: &str, filename: &str, target: Target) -> Report {
    let index = parse::LineIndex::new(source);
    let mut report = Report {
        schema: SCHEMA_VERSION,
        filename: filename.to_string(),
        diagnostics: Vec::new(),
        functions: Vec::new(),
        rust: None,
    };
    let body = match parse::parse_module(source, &index) {
        Ok(body) => body,
        Err(diag) => {
            report.diagnostics.push(diag);
            return report;
        }
    };
    let scope = resolve::ModuleScope::from_module(&body);
    let callees = callees(&body, &scope);
    let defs: Vec<&ruff_python_ast::StmtFunctionDef> = body.iter().filter_map(|s| if let Stmt::FunctionDef(d) = s { Some(d) } else { None }).collect();
    // every function can be specialised: callees for their callers' argument types, and any
    // function for the None / tensor combinations of its `Optional[<marker>]` parameters
    let callable = defs.iter().enumerate().filter(|(_, d)| !d.is_async).map(|(i, d)| (i, *d)).collect();
    let spec = walk::variants::Specialiser::new(&scope, &index, &callees, callable, defs.len());
    let mut analyzed = Vec::new();
    for stmt in &body {
        match stmt {
            Stmt::FunctionDef(def) if !def.is_async => {
                let a = walk::analyze_function(def, &spec);
                report.functions.push(function_entry(def.name.as_str(), parse::def_range(source, def), &index, &a));
                analyzed.push(a);
            }
            Stmt::FunctionDef(def) => {
                let span = index.span(parse::def_range(source, def));
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
                        caused_by: None,
                    }],
                    specialisations: Vec::new(),
                });
                analyzed.push(walk::Analyzed::empty());
            }
            _ => {}
        }
    }
    // the specialised copies follow the module's functions (hidden functions of the Rust);
    // while lowering they are entries after the module's, then each goes under its function
    let exported = report.functions.len();
    let mut of = Vec::new();
    for variant in spec.into_variants() {
        let types: Vec<String> = variant.params.iter().map(|t| t.describe()).collect();
        let name = format!("{} ({})", report.functions.get(variant.of).map_or("", |f| f.name.as_str()), types.join(", "));
        let range = defs.get(variant.of).map_or_else(TextRange::default, |d| parse::def_range(source, d));
        of.push(variant.of);
        let given = variant.params.clone();
        let a = variant.into_analyzed();
        let mut entry = function_entry(&name, range, &index, &a);
        // the types this copy was walked for, not the annotations
        for (param, ty) in entry.params.iter_mut().zip(given) {
            param.ty = ty.marker().map(str::to_string);
        }
        report.functions.push(entry);
        analyzed.push(a);
    }
    drop(defs);
    parse::drop_statements(body);
    let names: Vec<String> = report.functions.iter().map(|f| f.name.clone()).collect();
    require_native_callees(&mut report, &mut analyzed, &names);
    lower_natives(&mut report, analyzed, filename, exported, target);
    // sites in source order (nested sites after the site that contains them)
    for f in &mut report.functions {
        sort_sites(f);
    }
    let copies = report.functions.split_off(exported);
    for (copy, of) in copies.into_iter().zip(of) {
        if let Some(f) = report.functions.get_mut(of) {
            f.specialisations.push(copy);
        }
    }
    report
}

/// A function's sites in source order, the `caused_by` links (site indices) renumbered.
fn sort_sites(f: &mut report::Function) {
    let mut order: Vec<usize> = (0..f.sites.len()).collect();
    order.sort_by_key(|&i| {
        let s = &f.sites[i].span;
        (s.line, s.col, std::cmp::Reverse((s.end_line, s.end_col)))
    });
    let mut renumbered = vec![0; order.len()];
    for (new, &old) in order.iter().enumerate() {
        renumbered[old] = new;
    }
    let mut sites: Vec<Option<report::Site>> = f.sites.drain(..).map(Some).collect();
    f.sites = order.iter().filter_map(|&old| sites[old].take()).collect();
    let renumber = |links: &mut Option<Vec<usize>>| {
        if let Some(links) = links {
            links.iter_mut().for_each(|i| *i = renumbered.get(*i).copied().unwrap_or(*i));
            links.sort_unstable();
        }
    };
    f.sites.iter_mut().for_each(|s| renumber(&mut s.caused_by));
    f.diagnostics.iter_mut().for_each(|d| renumber(&mut d.caused_by));
}

/// The top-level functions other functions may call natively: each bound once in the module
/// (by its `def` only) with a call signature of the vocabulary (`walk::callee`).
fn callees(body: &[Stmt], scope: &resolve::ModuleScope) -> walk::Callees {
    use std::collections::BTreeMap;
    let mut bindings: BTreeMap<String, usize> = BTreeMap::new();
    let mut count = |name: &str| *bindings.entry(name.to_string()).or_default() += 1;
    for stmt in body {
        match stmt {
            Stmt::FunctionDef(d) => count(d.name.as_str()),
            Stmt::ClassDef(d) => count(d.name.as_str()),
            Stmt::Import(s) => s.names.iter().for_each(|a| count(a.asname.as_ref().unwrap_or(&a.name).as_str().split('.').next().unwrap_or(""))),
            Stmt::ImportFrom(s) => s.names.iter().for_each(|a| count(a.asname.as_ref().unwrap_or(&a.name).as_str())),
            Stmt::Assign(s) => s.targets.iter().for_each(|t| names_bound(t, &mut count)),
            Stmt::AnnAssign(s) => names_bound(&s.target, &mut count),
            Stmt::AugAssign(s) => names_bound(&s.target, &mut count),
            // a name bound in a compound statement counts twice: never a callee
            _ => {}
        }
    }
    let mut out = walk::Callees::new();
    let mut position = 0;
    for stmt in body {
        match stmt {
            Stmt::FunctionDef(def) if !def.is_async => {
                if bindings.get(def.name.as_str()) == Some(&1) && !scope_rebinds(scope, def.name.as_str()) {
                    if let Some(callee) = walk::callee(def, scope, position) {
                        out.insert(def.name.to_string(), callee);
                    }
                }
                position += 1;
            }
            Stmt::FunctionDef(_) => position += 1,
            _ => {}
        }
    }
    out
}

fn names_bound(target: &Expr, count: &mut impl FnMut(&str)) {
    match target {
        Expr::Name(n) => count(n.id.as_str()),
        Expr::Tuple(t) => t.elts.iter().for_each(|e| names_bound(e, count)),
        Expr::List(t) => t.elts.iter().for_each(|e| names_bound(e, count)),
        Expr::Starred(s) => names_bound(&s.value, count),
        _ => {}
    }
}

/// Whether the scope saw the name bound by anything but its `def` (inside a compound
/// statement, where the counting above does not look). `ModuleScope` binds a def as opaque.
fn scope_rebinds(scope: &resolve::ModuleScope, name: &str) -> bool {
    !matches!(scope.get(name), Some(resolve::Binding::Opaque))
}

/// A function is native only if every function it calls is native and it is not recursive:
/// the others fall back, with a diagnostic on the function (until nothing changes).
fn require_native_callees(report: &mut Report, analyzed: &mut [walk::Analyzed], names: &[String]) {
    loop {
        let mut changed = false;
        for i in 0..analyzed.len() {
            if analyzed[i].ir.is_none() {
                continue;
            }
            let reason = analyzed[i].calls.iter().find_map(|&j| {
                let name = names.get(j).cloned().unwrap_or_default();
                if reaches(analyzed, j, i) {
                    Some(format!("calls `{name}`, which calls back into this function (recursion is not lowered)"))
                } else if analyzed.get(j).is_none_or(|a| a.ir.is_none()) {
                    Some(format!("calls `{name}`, which falls back to Python"))
                } else {
                    None
                }
            });
            if let Some(message) = reason {
                analyzed[i].ir = None;
                if let Some(f) = report.functions.get_mut(i) {
                    f.route = Route::Fallback;
                    let span = f.span;
                    f.diagnostics.push(Diagnostic {
                        code: rules::UNSUPPORTED_EXPRESSION.code.to_string(),
                        severity: rules::UNSUPPORTED_EXPRESSION.severity,
                        message,
                        hint: Some(rules::UNSUPPORTED_EXPRESSION.hint.to_string()),
                        span,
                        caused_by: None,
                    });
                }
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// Whether function `from` calls `to`, directly or through others.
fn reaches(analyzed: &[walk::Analyzed], from: usize, to: usize) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = vec![from];
    while let Some(f) = stack.pop() {
        if f == to {
            return true;
        }
        if seen.insert(f) {
            stack.extend(analyzed.get(f).map(|a| a.calls.iter().copied().collect::<Vec<_>>()).unwrap_or_default());
        }
    }
    false
}

fn function_entry(name: &str, range: TextRange, index: &parse::LineIndex, a: &walk::Analyzed) -> Function {
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
        specialisations: Vec::new(),
    }
}

/// Fuse and emit Rust for every native function, and link functions and sites to their text
/// and their fused kernels.
/// `report.functions` holds the module's `exported` functions, then their specialised copies.
fn lower_natives(report: &mut Report, analyzed: Vec<walk::Analyzed>, filename: &str, exported: usize, target: Target) {
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
    let natives: Vec<lower::NativeFn> = fused
        .iter()
        .map(|(index, ir, site_count)| {
            let entry = &report.functions[*index];
            let doc = if target == Target::Crate && *index < exported { public_doc(entry, filename) } else { Vec::new() };
            lower::NativeFn { index: *index, ir, site_count: *site_count, exported: *index < exported, name: entry.name.clone(), doc }
        })
        .collect();
    if natives.is_empty() {
        return;
    }
    let emitted = lower::lower_module(filename, &natives, target);
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


/// The rustdoc of an exported function ([`Target::Crate`]): where it comes from, its Python
/// signature, each site with its rule (and fused kernel), and its errors. Source text enters
/// only through [`lower::mangle::comment_text`].
fn public_doc(entry: &Function, filename: &str) -> Vec<String> {
    let text = lower::mangle::comment_text;
    let typed = |ty: &Option<String>| ty.clone().unwrap_or_else(|| "?".to_string());
    let params: Vec<String> = entry.params.iter().map(|p| format!("{}: {}", p.name, typed(&p.ty))).collect();
    let span = &entry.span;
    let mut doc = vec![
        format!("`{}` of `{}`, lines {}–{}, lowered by torchlower.", text(&entry.name), text(filename), span.line, span.end_line),
        String::new(),
        format!("Python: `def {}({}) -> {}`", text(&entry.name), text(&params.join(", ")), text(&typed(&entry.returns))),
    ];
    if !entry.sites.is_empty() {
        doc.extend([String::new(), "Sites (line:col, target, rule):".to_string()]);
        for site in &entry.sites {
            let rule = site.rule.as_deref().map(|r| format!(" — `{}`", text(r))).unwrap_or_default();
            let fused = site.fused_into.as_deref().map(|k| format!(", fused into `{}`", text(k))).unwrap_or_default();
            doc.push(format!("- {}:{} `{}`{rule}{fused}", site.span.line, site.span.col, text(&site.target)));
        }
    }
    doc.extend([
        String::new(),
        "# Errors".to_string(),
        String::new(),
        "[`Error::Argument`] when a tensor argument is not of its annotated dtype, device or rank (checked in".to_string(),
        "parameter order before any work); otherwise the errors eager PyTorch raises for the same inputs".to_string(),
        "([`Error::Torch`] for libtorch's, with its message).".to_string(),
    ]);
    doc
}

/// [`analyze`], serialised as the report JSON.
pub fn analyze_json(source: &str, filename: &str) -> String {
    analyze(source, filename).to_json()
}

/// Entry for hosts handing over raw bytes: invalid UTF-8 is replaced and reported (TL003).
pub fn analyze_bytes(source: &[u8], filename: &[u8]) -> Report {
    analyze_bytes_for(source, filename, Target::Extension)
}

/// [`analyze_bytes`] lowering for `target` (see [`analyze_for`]).
pub fn analyze_bytes_for(source: &[u8], filename: &[u8], target: Target) -> Report {
    let name = String::from_utf8_lossy(filename);
    match std::str::from_utf8(source) {
        Ok(text) => analyze_for(text, &name, target),
        Err(err) => {
            let text = String::from_utf8_lossy(source);
            let mut report = analyze_for(&text, &name, target);
            let index = parse::LineIndex::new(&text);
            let at = err.valid_up_to();
            let span: Span = index.span_of(at, at);
            report.diagnostics.insert(0, Diagnostic {
                code: rules::NOT_UTF8.code.to_string(),
                severity: rules::NOT_UTF8.severity,
                message: "source is not valid UTF-8; invalid bytes were replaced by U+FFFD".to_string(),
                hint: Some(rules::NOT_UTF8.hint.to_string()),
                span,
                caused_by: None,
            });
            report
        }
    }
}

/// [`analyze_bytes`] as compact JSON (the C ABI's payload).
pub fn analyze_bytes_json(source: &[u8], filename: &[u8]) -> String {
    analyze_bytes(source, filename).to_json()
}
