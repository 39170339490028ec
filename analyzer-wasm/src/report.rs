//! The JSON report (docs/architecture.md, "The report"; `"schema": 1`), as serde structs.
//!
//! Field order here is the order in the JSON, and every collection is a `Vec`, so the output
//! is deterministic byte for byte. Additions beyond the contract that other parts rely on:
//! `symbol`, `rust_range` and `params` per function, `rust_range` and `fused_into` per
//! claimed site (docs/architecture.md, "Report").

use serde::{Deserialize, Serialize};

const FALLBACK_JSON: &str = "{\"schema\":1,\"filename\":\"\",\"diagnostics\":[],\"functions\":[],\"rust\":null}";

/// Version of the report layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// 1-based line/column span of a piece of source (columns count Unicode scalar values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Span {
    pub line: u32,
    pub col: u32,
    pub end_line: u32,
    pub end_col: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub code: String,
    pub severity: Severity,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(flatten)]
    pub span: Span,
    /// A knock-on: this diagnostic's site failed only because an input did, and these are the
    /// indices (in the function's `sites`) of the failed sites that input came from (empty when
    /// it failed outside a torch call, e.g. an unsupported expression reported on its own).
    /// Text output prints root causes only (`torchlower check --all` prints these too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<Vec<usize>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    Native,
    Fallback,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SiteKind {
    Call,
    Method,
    Binop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Claimed,
    Rejected,
    NotCovered,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    /// Marker name (`TensorF32Cpu2D`, `int`, `bool`) or null when unannotated/unsupported.
    #[serde(rename = "type")]
    pub ty: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    #[serde(flatten)]
    pub span: Span,
    pub kind: SiteKind,
    /// Canonical target: `torch.nn.functional.linear`, `Tensor.relu`, `@`, `+`, ...
    pub target: String,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The `tl::fused` kernel this claimed site was fused into (`linear_epilogue`, …), when
    /// the fusion pass grouped it with others (native functions only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fused_into: Option<String>,
    /// The Rust expression emitted for this site (native functions only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rust: Option<String>,
    /// Byte range of `rust` inside the report's top-level `rust` string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rust_range: Option<[usize; 2]>,
    /// A knock-on (see [`Diagnostic::caused_by`]): the failed sites its unresolved input came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<Vec<usize>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    #[serde(flatten)]
    pub span: Span,
    pub route: Route,
    /// Name of the generated pyfunction (`tl_fn_N`) when native.
    pub symbol: Option<String>,
    /// Byte range of the generated pyfunction inside the top-level `rust` string.
    pub rust_range: Option<[usize; 2]>,
    pub params: Vec<Param>,
    pub returns: Option<String>,
    pub sites: Vec<Site>,
    pub diagnostics: Vec<Diagnostic>,
    /// The copies of this function walked for calls with other argument types than its
    /// annotations (an unannotated helper is always walked so): each one's name says the
    /// types (`helper (TensorF32Cpu2D, float)`), its sites and route are that walk's. They are
    /// hidden functions of the emitted Rust, called by their callers, never from Python.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub specialisations: Vec<Function>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub schema: u32,
    pub filename: String,
    pub diagnostics: Vec<Diagnostic>,
    pub functions: Vec<Function>,
    pub rust: Option<String>,
}

impl Report {
    /// Compact JSON (what the ABI returns). Serialising these plain structs cannot fail, but
    /// we never panic: a failure would yield a minimal valid JSON object instead.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| FALLBACK_JSON.to_string())
    }

    /// Indented JSON (CLI output and corpus snapshots, where humans read diffs).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| FALLBACK_JSON.to_string())
    }
}
