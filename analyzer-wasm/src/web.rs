//! wasm-bindgen exports for the browser playground (feature `web`).

use wasm_bindgen::prelude::wasm_bindgen;

/// The report JSON for `source` (same as the C ABI's `tl_analyze`).
#[wasm_bindgen]
pub fn analyze(source: &str, filename: &str) -> String {
    crate::analyze_json(source, filename)
}

/// The rule registry as JSON: `{ "rules": [...], "extensions": [...], "codes": [...] }`.
#[wasm_bindgen]
pub fn rules() -> String {
    crate::rules::registry_json()
}
