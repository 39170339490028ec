//! Times the analysis of a generated 2,000-line module (median of several runs), stage by
//! stage, natively (for profiling: `perf record`, `valgrind --tool=callgrind`).
//!
//!     cargo run --release -p torchlower-analyzer --example bench_2000_lines [-- OUT.py]
//!     cargo run --release -p torchlower-analyzer --example bench_2000_lines -- --input FILE.py [--runs N]
//!
//! With OUT.py the generated module is also written there, so the same text can be timed
//! elsewhere (e.g. `python -c "import ast,sys; ast.parse(open(sys.argv[1]).read())"`, or the
//! wasm build through the host). With `--input` the module is read from FILE.py instead (e.g.
//! one written by `scripts/bench_analyze.py`'s generators).
//!
//! Stages: the line index, the parse (nesting pre-scan, then Ruff's parser), the
//! import/annotation scope, then
//! the rest of `analyze` (walk, claim, fusion, lowering: the whole analysis minus the stages
//! before it) and the report's JSON serialisation.

use std::time::{Duration, Instant};

/// A module of `lines` lines: a mix of native functions with control flow and claimed sites
/// and fallback functions with rejected / not-covered sites, like real model code.
pub fn generate_module(lines: usize) -> String {
    let mut src = String::from(
        "from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D\nimport torch\nimport torch.nn.functional as F\n\n",
    );
    let mut i = 0;
    while src.lines().count() + 16 <= lines {
        let block = match i % 3 {
            0 => format!(
                "def layer_{i}(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, depth: int) -> TensorF32Cpu1D:\n\
                 \x20   h = F.linear(x, w, b)\n\
                 \x20   for k in range(depth):\n\
                 \x20       if (k + {i}) % 2 == 0:\n\
                 \x20           h = (h @ w + b).relu()\n\
                 \x20       else:\n\
                 \x20           h = torch.sigmoid(h) * h\n\
                 \x20   return h.mean(dim=1, keepdim=False)\n\n"
            ),
            1 => format!(
                "def head_{i}(logits: TensorF32Cpu2D, scale: TensorF32Cpu1D) -> TensorI64Cpu1D:\n\
                 \x20   p = logits.softmax(dim=1)\n\
                 \x20   q = p / scale\n\
                 \x20   return q.argmax(dim=1)\n\n"
            ),
            _ => format!(
                "def fallback_{i}(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n\
                 \x20   y = x.transpose(0, 1)\n\
                 \x20   z = torch.subtract(x, y) * 2.0\n\
                 \x20   return F.gelu(z, approximate=\"tanh\")\n\n"
            ),
        };
        src.push_str(&block);
        i += 1;
    }
    while src.lines().count() < lines {
        src.push_str("# padding\n");
    }
    src
}

/// Median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut input = None;
    let mut out = None;
    let mut runs = 21;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--input" => {
                input = args.get(i + 1).cloned();
                i += 1;
            }
            "--runs" => {
                runs = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(runs).max(1);
                i += 1;
            }
            path => out = Some(path.to_string()),
        }
        i += 1;
    }
    let src = match &input {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("cannot read {path}: {e}");
                std::process::exit(2);
            }
        },
        None => generate_module(2000),
    };
    if let Some(path) = out {
        if let Err(e) = std::fs::write(&path, &src) {
            eprintln!("cannot write {path}: {e}");
        }
    }

    use torchlower_analyzer::{analyze, parse, resolve};
    let total = median(runs, || {
        std::hint::black_box(torchlower_analyzer::analyze_json(&src, "bench.py"));
    });
    let lines = median(runs, || {
        std::hint::black_box(parse::LineIndex::new(&src));
    });
    let index = parse::LineIndex::new(&src);
    let prescan = median(runs, || {
        std::hint::black_box(parse::prescan_nesting(&src));
    });
    let parsed = median(runs, || {
        // dropped flat, as `analyze` does
        if let Ok(body) = parse::parse_module(&src, &index) {
            parse::drop_statements(body);
        }
    });
    let body = match parse::parse_module(&src, &index) {
        Ok(body) => body,
        Err(diag) => {
            eprintln!("the module does not parse: {}", diag.message);
            std::process::exit(2);
        }
    };
    let scope = median(runs, || {
        std::hint::black_box(resolve::ModuleScope::from_module(&body));
    });
    let analysis = median(runs, || {
        std::hint::black_box(analyze(&src, "bench.py"));
    });
    let report = analyze(&src, "bench.py");
    let json = median(runs, || {
        std::hint::black_box(report.to_json());
    });
    let bytes = report.to_json().len();
    let native = report.functions.iter().filter(|f| f.route == torchlower_analyzer::report::Route::Native).count();
    println!(
        "{} lines, {} functions ({} native), report {} bytes; medians over {} runs:",
        src.lines().count(),
        report.functions.len(),
        native,
        bytes,
        runs
    );
    println!("  analyze_json (all)             {:8.2} ms", ms(total));
    println!("  line index                     {:8.2} ms", ms(lines));
    println!("  parse (pre-scan, parser)       {:8.2} ms   (of which pre-scan {:.2} ms)", ms(parsed), ms(prescan));
    println!("  module scope (resolve)         {:8.2} ms", ms(scope));
    println!(
        "  walk, claim, fuse, lower       {:8.2} ms   (analyze minus the stages above)",
        ms(analysis.saturating_sub(lines + parsed + scope))
    );
    println!("  report to JSON                 {:8.2} ms", ms(json));
}
