//! Times the analysis of a generated 2,000-line module (median of several runs).
//!
//!     cargo run --release -p torchlower-analyzer --example bench_2000_lines [-- OUT.py]
//!
//! With OUT.py the generated module is also written there, so the same text can be timed
//! elsewhere (e.g. `python -c "import ast,sys; ast.parse(open(sys.argv[1]).read())"`, or the
//! wasm build through the host).

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

fn main() {
    let src = generate_module(2000);
    if let Some(path) = std::env::args().nth(1) {
        if let Err(e) = std::fs::write(&path, &src) {
            eprintln!("cannot write {path}: {e}");
        }
    }
    let runs = 21;
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    let mut bytes = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let json = torchlower_analyzer::analyze_json(&src, "bench.py");
        times.push(t.elapsed());
        bytes = json.len();
    }
    times.sort();
    let median = times[runs / 2];
    // the parser alone, for comparison
    let mut parse_times: Vec<Duration> = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let parsed = rustpython_parser::parse(&src, rustpython_parser::Mode::Module, "bench.py");
        parse_times.push(t.elapsed());
        assert!(parsed.is_ok());
    }
    parse_times.sort();
    println!("rustpython-parser alone: median {:.2} ms", parse_times[runs / 2].as_secs_f64() * 1e3);
    let report = torchlower_analyzer::analyze(&src, "bench.py");
    let native = report.functions.iter().filter(|f| f.route == torchlower_analyzer::report::Route::Native).count();
    println!(
        "{} lines, {} functions ({} native), report {} bytes: median {:.2} ms over {} runs (min {:.2} ms, max {:.2} ms)",
        src.lines().count(),
        report.functions.len(),
        native,
        bytes,
        median.as_secs_f64() * 1e3,
        runs,
        times[0].as_secs_f64() * 1e3,
        times[runs - 1].as_secs_f64() * 1e3
    );
}
