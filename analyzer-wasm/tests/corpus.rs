//! The corpus under `tests/corpus/{accepted,rejected}/*.py`: each file's report must equal its
//! reviewed snapshot `X.expected.json` byte for byte. Regenerate snapshots (then review the
//! diff by hand) with:
//!
//!     TORCHLOWER_BLESS=1 cargo test -p torchlower-analyzer --test corpus
//!
//! Independently of snapshots: every function in `accepted/` routes native, every function
//! in `rejected/` routes fallback with at least one coded diagnostic with a hint, every
//! emitted Rust text parses with `syn`, and every rule id and diagnostic code of the registry
//! is exercised by the corpus.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use torchlower_analyzer::report::{Outcome, Report, Route};
use torchlower_analyzer::rules;

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

/// (relative name like `accepted/linear.py`, path), sorted.
fn corpus_files() -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    for group in ["accepted", "rejected"] {
        let dir = corpus_root().join(group);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("dir entry").path();
            if path.extension().is_some_and(|x| x == "py") {
                let name = format!("{group}/{}", path.file_name().expect("name").to_string_lossy());
                files.push((name, path));
            }
        }
    }
    files.sort();
    assert!(files.len() >= 30, "corpus looks incomplete: {} files", files.len());
    files
}

fn analyze(name: &str, path: &Path) -> (Report, String) {
    let source = std::fs::read_to_string(path).expect("read corpus file");
    let report = torchlower_analyzer::analyze(&source, name);
    // the ABI's compact JSON must carry exactly the same report
    let compact: Report = serde_json::from_str(&torchlower_analyzer::analyze_json(&source, name)).expect("valid JSON");
    assert_eq!(compact, report, "{name}: JSON round trip differs");
    let json = report.to_json_pretty() + "\n";
    (report, json)
}

#[test]
fn snapshots_match() {
    let bless = std::env::var_os("TORCHLOWER_BLESS").is_some();
    let mut stale = Vec::new();
    for (name, path) in corpus_files() {
        let (_, json) = analyze(&name, &path);
        let expected_path = path.with_extension("expected.json");
        match std::fs::read_to_string(&expected_path) {
            Ok(expected) if expected == json => {}
            _ if bless => std::fs::write(&expected_path, &json).expect("write snapshot"),
            Ok(_) => stale.push(format!("{name}: report differs from {}", expected_path.display())),
            Err(_) => stale.push(format!("{name}: missing snapshot {}", expected_path.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "{}\nRegenerate with `TORCHLOWER_BLESS=1 cargo test -p torchlower-analyzer --test corpus` and review the diff.",
        stale.join("\n")
    );
}

#[test]
fn accepted_files_route_native_and_rejected_files_fall_back() {
    for (name, path) in corpus_files() {
        let (report, _) = analyze(&name, &path);
        if name.starts_with("accepted/") {
            assert!(report.diagnostics.is_empty(), "{name}: {:?}", report.diagnostics);
            assert!(!report.functions.is_empty(), "{name}: no functions");
            for f in &report.functions {
                assert_eq!(f.route, Route::Native, "{name}::{} falls back: {:?}", f.name, f.diagnostics);
                assert!(f.sites.iter().all(|s| s.outcome == Outcome::Claimed && s.rust.is_some()), "{name}::{}", f.name);
                assert!(f.symbol.is_some() && f.rust_range.is_some());
            }
            assert!(report.rust.is_some());
        } else {
            for f in &report.functions {
                assert_eq!(f.route, Route::Fallback, "{name}::{} should fall back", f.name);
                assert!(!f.diagnostics.is_empty(), "{name}::{} falls back without a diagnostic", f.name);
                for d in &f.diagnostics {
                    assert!(d.code.starts_with("TL") && d.hint.as_deref().is_some_and(|h| !h.is_empty()), "{name}: {d:?}");
                }
                for s in &f.sites {
                    if s.outcome == Outcome::Rejected {
                        assert!(s.code.is_some() && s.message.is_some() && s.hint.is_some(), "{name}: {s:?}");
                    }
                }
            }
            assert!(report.functions.iter().all(|f| f.symbol.is_none()));
        }
    }
}

#[test]
fn emitted_rust_parses_with_syn() {
    for (name, path) in corpus_files() {
        let (report, _) = analyze(&name, &path);
        let Some(rust) = &report.rust else { continue };
        assert!(rust.is_ascii(), "{name}: emitted Rust is not ASCII");
        if let Err(e) = syn::parse_file(rust) {
            panic!("{name}: emitted Rust does not parse: {e}\n{rust}");
        }
        // each claimed site's snippet is an expression at its recorded range
        for f in &report.functions {
            let Some([fs, fe]) = f.rust_range else { continue };
            assert!(rust.get(fs..fe).is_some_and(|t| t.contains(f.symbol.as_deref().unwrap_or("?"))));
            for s in &f.sites {
                let [a, b] = s.rust_range.expect("claimed site of a native function has a range");
                assert!(fs <= a && b <= fe, "{name}: site range outside its function");
                assert_eq!(rust.get(a..b), s.rust.as_deref());
                let snippet = s.rust.as_deref().unwrap_or_default();
                syn::parse_str::<syn::Expr>(snippet).unwrap_or_else(|e| panic!("{name}: site snippet {snippet:?}: {e}"));
            }
        }
    }
}

#[test]
fn every_rule_and_code_is_exercised() {
    let mut rules_seen = BTreeSet::new();
    let mut codes_seen = BTreeSet::new();
    for (name, path) in corpus_files() {
        let (report, _) = analyze(&name, &path);
        codes_seen.extend(report.diagnostics.iter().map(|d| d.code.clone()));
        for f in &report.functions {
            codes_seen.extend(f.diagnostics.iter().map(|d| d.code.clone()));
            for s in &f.sites {
                rules_seen.extend(s.rule.clone());
                codes_seen.extend(s.code.clone());
            }
        }
    }
    let missing_rules: Vec<_> = rules::ALL_RULES.iter().map(|r| r.id).filter(|id| !rules_seen.contains(*id)).collect();
    assert!(missing_rules.is_empty(), "rules never claimed in the corpus: {missing_rules:?}");
    // TL003 (bytes that are not UTF-8) cannot be written in a `.py` corpus file read as text;
    // the ABI unit tests (src/abi.rs) exercise it through analyze_bytes. TL109 is the host's
    // (its module rewriting), tested by tests/python/test_cli_check.py
    let exempt = ["TL003", "TL109"];
    let missing_codes: Vec<_> =
        rules::ALL_CODES.iter().map(|c| c.code).filter(|c| !codes_seen.contains(*c) && !exempt.contains(c)).collect();
    assert!(missing_codes.is_empty(), "codes never produced by the corpus: {missing_codes:?}");
    // and nothing outside the registry is produced
    let known: BTreeSet<&str> = rules::ALL_CODES.iter().map(|c| c.code).collect();
    for c in &codes_seen {
        assert!(known.contains(c.as_str()), "code {c} is not in the registry");
    }
}

/// `torchlower export`'s lowering ([`torchlower_analyzer::Target::Crate`]) of every corpus
/// file: the same routes and sites as the extension's, Rust that parses, one documented `pub fn`
/// per native function under its symbol, and nothing of Python's boundary.
#[test]
fn the_crate_lowering_matches_the_extension_s_report_and_parses() {
    use torchlower_analyzer::Target;
    for (name, path) in corpus_files() {
        let source = std::fs::read_to_string(&path).expect("read corpus file");
        let extension = torchlower_analyzer::analyze(&source, &name);
        let export = torchlower_analyzer::analyze_for(&source, &name, Target::Crate);
        let routes = |r: &Report| r.functions.iter().map(|f| (f.name.clone(), f.route, f.sites.len())).collect::<Vec<_>>();
        assert_eq!(routes(&extension), routes(&export), "{name}: routes differ between the targets");
        let Some(rust) = export.rust.as_deref() else {
            assert!(extension.rust.is_none(), "{name}");
            continue;
        };
        let file = syn::parse_file(rust).unwrap_or_else(|e| panic!("{name}: exported Rust does not parse: {e}\n{rust}"));
        assert!(!rust.contains("pyo3"), "{name}: the crate has no Python boundary");
        let public: BTreeSet<String> = file
            .items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Fn(f) if matches!(f.vis, syn::Visibility::Public(_)) => {
                    assert!(f.attrs.iter().any(|a| a.path().is_ident("doc")), "{name}: {} has no doc", f.sig.ident);
                    Some(f.sig.ident.to_string().trim_start_matches("r#").to_string())
                }
                _ => None,
            })
            .collect();
        let natives: BTreeSet<String> = export
            .functions
            .iter()
            .filter(|f| f.route == Route::Native)
            .map(|f| f.symbol.clone().expect("a native function has a symbol").trim_start_matches("r#").to_string())
            .collect();
        assert_eq!(public, natives, "{name}: one pub fn per native function");
    }
}
