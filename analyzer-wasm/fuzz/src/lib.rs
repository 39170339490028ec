//! What the fuzz targets share: the invariants every report must hold, and a generator of
//! grammar-shaped Python (annotated functions over the op table's own spellings) that reaches
//! the typing, claiming, fusion and lowering code that random bytes rarely get past the parser.

use arbitrary::{Result, Unstructured};
use torchlower_analyzer::report::{Report, Route, Span};

/// Analyze `source` and check the report: spans inside the source, native functions with a
/// symbol and a range inside the emitted Rust, JSON that serialises, and emitted Rust that
/// parses as a Rust file (`syn`). A violation panics, which libFuzzer reports as a crash.
pub fn check(source: &str) {
    let report = analyze(source.as_bytes().to_vec());
    check_report(source, &report);
}

/// The analysis on a thread with the wasm build's stack (1 MiB; `TL_FUZZ_STACK_KB` raises it
/// for sanitizer builds, whose frames are larger): deep input must end in a diagnostic, not
/// in an overflow, as it must inside wasmtime.
pub fn analyze(source: Vec<u8>) -> Report {
    let kib: usize = std::env::var("TL_FUZZ_STACK_KB").ok().and_then(|v| v.parse().ok()).unwrap_or(1024);
    std::thread::Builder::new()
        .stack_size(kib << 10)
        .spawn(move || torchlower_analyzer::analyze_bytes(&source, b"fuzz.py"))
        .expect("spawn the analysis thread")
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

pub fn check_report(source: &str, report: &Report) {
    // Python's line breaks: `\r\n`, `\r` and `\n` (a span may end on the line after the last)
    let lines = source.replace("\r\n", "\n").split(['\n', '\r']).count() as u32 + 1;
    let spans = report.diagnostics.iter().map(|d| &d.span).chain(report.functions.iter().flat_map(|f| std::iter::once(f).chain(&f.specialisations)).flat_map(|f| {
        std::iter::once(&f.span).chain(f.sites.iter().map(|s| &s.span)).chain(f.diagnostics.iter().map(|d| &d.span))
    }));
    for span in spans {
        check_span(span, lines);
    }
    let json = report.to_json();
    assert!(json.starts_with('{') && json.contains("\"schema\""), "report JSON: {json}");
    let rust = report.rust.as_deref();
    for function in report.functions.iter().flat_map(|f| std::iter::once(f).chain(&f.specialisations)) {
        if function.route == Route::Native {
            let rust = rust.unwrap_or_else(|| panic!("native `{}` without emitted Rust", function.name));
            let [start, end] = function.rust_range.unwrap_or_else(|| panic!("native `{}` without a rust_range", function.name));
            assert!(start < end && end <= rust.len() && rust.is_char_boundary(start) && rust.is_char_boundary(end), "rust_range of `{}`", function.name);
            assert!(function.symbol.is_some(), "native `{}` without a symbol", function.name);
        }
    }
    if let Some(rust) = rust {
        if let Err(error) = syn::parse_file(rust) {
            panic!("emitted Rust does not parse: {error}\n{rust}");
        }
    }
}

fn check_span(span: &Span, lines: u32) {
    assert!(span.line >= 1 && span.col >= 1, "{span:?}: lines and columns are 1-based");
    assert!((span.end_line, span.end_col) >= (span.line, span.col), "{span:?} ends before it starts");
    assert!(span.end_line <= lines, "{span:?} is past the source's {lines} lines");
}

/// Every tensor marker the analyzer knows, and the scalar annotations.
const ANNOTATIONS: &[&str] = &[
    "TensorF32Cpu0D", "TensorF32Cpu1D", "TensorF32Cpu2D", "TensorF32Cpu3D", "TensorF32Cpu4D", "TensorF32Cpu5D", "TensorF32Cpu6D",
    "TensorF32Cuda0_1D", "TensorF32Cuda0_2D", "TensorF32Cuda0_3D", "TensorF32Cuda0_4D",
    "TensorI64Cpu0D", "TensorI64Cpu1D", "TensorI64Cpu2D", "TensorI64Cpu3D", "TensorI64Cpu4D",
    "TensorBoolCpu0D", "TensorBoolCpu1D", "TensorBoolCpu2D", "int", "float", "bool",
];
const KEYWORDS: &[&str] = &["dim", "keepdim", "inplace", "approximate", "bias", "eps", "p", "dtype", "min", "max", "padding", "stride", "value", "mask"];
const BINOPS: &[&str] = &["+", "-", "*", "/", "@", "**", "//", "%", "<", "<=", "==", "!=", ">", "&", "|"];
const STRINGS: &[&str] = &["\"tanh\"", "\"none\"", "\"same\"", "\"valid\"", "\"reflect\"", "\"mean\"", "\"cpu\"", "\"fro\""];
const ATTRIBUTES: &[&str] = &["shape", "T", "mT", "ndim", "dtype", "device", "data", "real"];
const DTYPES: &[&str] = &["torch.float32", "torch.int64", "torch.bool", "torch.float64", "torch.float16"];

/// A module of 1–3 annotated functions (the first may call the others), each a few
/// statements over the parameters, expressions built from the op table's spellings.
pub fn python(u: &mut Unstructured) -> Result<String> {
    let mut out = String::from("import math\nimport torch\nimport torch.nn.functional as F\nfrom torchlower.types import (\n");
    for marker in ANNOTATIONS.iter().filter(|a| a.starts_with("Tensor")) {
        out.push_str("    ");
        out.push_str(marker);
        out.push_str(",\n");
    }
    out.push_str(")\n\nEPS = 1e-5\n");
    let functions = u.int_in_range(1..=3)?;
    for f in 0..functions {
        let mut g = Gen { u, names: Vec::new(), depth: 0, functions };
        g.function(f, &mut out)?;
    }
    Ok(out)
}

struct Gen<'a, 'b> {
    u: &'a mut Unstructured<'b>,
    names: Vec<String>,
    depth: u32,
    functions: u32,
}

impl Gen<'_, '_> {
    fn function(&mut self, index: u32, out: &mut String) -> Result<()> {
        let params = self.u.int_in_range(1..=4)?;
        out.push_str(&format!("\n\ndef f{index}("));
        for p in 0..params {
            let name = format!("a{p}");
            let annotation = self.u.choose(ANNOTATIONS)?;
            out.push_str(&format!("{}{name}: {annotation}", if p > 0 { ", " } else { "" }));
            self.names.push(name);
        }
        out.push(')');
        if self.u.ratio(1, 2)? {
            out.push_str(&format!(" -> {}", self.u.choose(ANNOTATIONS)?));
        }
        out.push_str(":\n");
        let statements = self.u.int_in_range(1..=6)?;
        for _ in 0..statements {
            self.statement(1, out)?;
        }
        let value = self.expr()?;
        out.push_str(&format!("    return {value}\n"));
        Ok(())
    }

    fn statement(&mut self, indent: usize, out: &mut String) -> Result<()> {
        let pad = "    ".repeat(indent);
        let nested = indent < 3;
        match self.u.int_in_range(0..=9)? {
            0..=3 => {
                let value = self.expr()?;
                let name = if self.u.ratio(1, 3)? && !self.names.is_empty() { self.u.choose(&self.names)?.clone() } else { format!("h{}", self.names.len()) };
                out.push_str(&format!("{pad}{name} = {value}\n"));
                if !self.names.contains(&name) {
                    self.names.push(name);
                }
            }
            4 => {
                let name = self.name()?;
                let op = self.u.choose(&["+=", "-=", "*=", "/="])?;
                let value = self.expr()?;
                out.push_str(&format!("{pad}{name} {op} {value}\n"));
            }
            5 if nested => {
                let cond = self.expr()?;
                out.push_str(&format!("{pad}if {cond}:\n"));
                self.statement(indent + 1, out)?;
                if self.u.ratio(1, 2)? {
                    out.push_str(&format!("{pad}else:\n"));
                    self.statement(indent + 1, out)?;
                }
            }
            6 if nested => {
                let bound = self.u.choose(&["3", "a0.shape[0]", "len(a0)", "[1, 2]", "(0, 1)", "a0"])?;
                let head = if bound.starts_with(['[', '(']) || *bound == "a0" { format!("i in {bound}") } else { format!("i in range({bound})") };
                out.push_str(&format!("{pad}for {head}:\n"));
                self.names.push("i".into());
                self.statement(indent + 1, out)?;
                if self.u.ratio(1, 4)? {
                    out.push_str(&format!("{pad}    {}\n", self.u.choose(&["break", "continue"])?));
                }
            }
            7 => {
                let (a, b) = (self.name()?, self.name()?);
                let value = self.expr()?;
                out.push_str(&format!("{pad}{a}, {b} = {value}\n"));
            }
            8 => {
                let target = self.name()?;
                let index = self.index()?;
                let value = self.expr()?;
                out.push_str(&format!("{pad}{target}[{index}] = {value}\n"));
            }
            _ => {
                let value = self.expr()?;
                out.push_str(&format!("{pad}assert {value}, f\"bad {{{}}}\"\n", self.name()?));
            }
        }
        Ok(())
    }

    fn name(&mut self) -> Result<String> {
        if self.names.is_empty() {
            return Ok("a0".into());
        }
        Ok(self.u.choose(&self.names)?.clone())
    }

    fn literal(&mut self) -> Result<String> {
        Ok(match self.u.int_in_range(0..=6)? {
            0 => format!("{}", self.u.int_in_range(-3i64..=4)?),
            1 => format!("{}", self.u.arbitrary::<i64>()?),
            2 => format!("{:?}", self.u.arbitrary::<f32>()? as f64),
            3 => self.u.choose(&["True", "False", "None"])?.to_string(),
            4 => self.u.choose(&["math.pi", "math.sqrt(2.0)", "EPS", "float(\"-inf\")", "1e-6"])?.to_string(),
            5 => self.u.choose(STRINGS)?.to_string(),
            _ => self.u.choose(DTYPES)?.to_string(),
        })
    }

    fn index(&mut self) -> Result<String> {
        Ok(match self.u.int_in_range(0..=5)? {
            0 => format!("{}", self.u.int_in_range(-2i64..=2)?),
            1 => ":, 0".into(),
            2 => "..., :-1".into(),
            3 => "None, :, 1:".into(),
            4 => self.expr()?,
            _ => format!("{}, {}", self.expr()?, self.expr()?),
        })
    }

    fn expr(&mut self) -> Result<String> {
        self.depth += 1;
        let leaf = self.depth > 4 || self.u.is_empty();
        let e = if leaf { self.leaf()? } else { self.compound()? };
        self.depth -= 1;
        Ok(e)
    }

    fn leaf(&mut self) -> Result<String> {
        if self.u.ratio(2, 3)? {
            self.name()
        } else {
            self.literal()
        }
    }

    fn args(&mut self, max: u32) -> Result<String> {
        let mut parts = Vec::new();
        for _ in 0..self.u.int_in_range(0..=max)? {
            parts.push(self.expr()?);
        }
        for _ in 0..self.u.int_in_range(0..=2)? {
            let keyword = self.u.choose(KEYWORDS)?;
            parts.push(format!("{keyword}={}", self.expr()?));
        }
        Ok(parts.join(", "))
    }

    fn compound(&mut self) -> Result<String> {
        let table = torchlower_ops::TABLE;
        Ok(match self.u.int_in_range(0..=11)? {
            0..=2 => {
                let row = self.u.choose(table)?;
                match row.functions.first() {
                    Some(_) => {
                        let path = self.u.choose(row.functions)?;
                        let first = self.expr()?;
                        let rest = self.args(3)?;
                        let path = path.replacen("torch.nn.functional.", "F.", 1);
                        format!("{path}({first}{}{rest})", if rest.is_empty() { "" } else { ", " })
                    }
                    None => self.leaf()?,
                }
            }
            3..=4 => {
                let row = self.u.choose(table)?;
                match row.methods.first() {
                    Some(_) => {
                        let method = self.u.choose(row.methods)?;
                        let receiver = self.expr()?;
                        let rest = self.args(2)?;
                        format!("({receiver}).{method}({rest})")
                    }
                    None => self.leaf()?,
                }
            }
            5..=6 => {
                let op = self.u.choose(BINOPS)?;
                format!("({} {op} {})", self.expr()?, self.expr()?)
            }
            7 => format!("{}[{}]", self.name()?, self.index()?),
            8 => format!("{}.{}", self.name()?, self.u.choose(ATTRIBUTES)?),
            9 => format!("({} if {} else {})", self.expr()?, self.expr()?, self.expr()?),
            10 => format!("({}, {})", self.expr()?, self.expr()?),
            _ => {
                let callee = self.u.int_in_range(0..=self.functions - 1)?;
                format!("f{callee}({})", self.args(3)?)
            }
        })
    }
}
