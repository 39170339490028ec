//! Hostile inputs: nothing may panic or overflow the stack, and the report is always valid
//! JSON. Analyses run on a thread with a 1 MiB stack, the default wasm shadow stack, in a
//! release build (`scripts/test.sh` runs these tests with `--release`, as the wasm is built);
//! a debug build's frames are several times larger, so it gets 4 MiB.

use torchlower_analyzer::report::{Report, Route};

const STACK: usize = if cfg!(debug_assertions) { 4 << 20 } else { 1 << 20 };

fn analyze_small_stack(source: String) -> Report {
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let json = torchlower_analyzer::analyze_json(&source, "hostile.py");
            serde_json::from_str::<Report>(&json).expect("valid report JSON")
        })
        .expect("spawn")
        .join()
        .expect("analysis thread must not panic or overflow")
}

fn module_codes(r: &Report) -> Vec<&str> {
    r.diagnostics.iter().map(|d| d.code.as_str()).collect()
}

fn function_codes(r: &Report) -> Vec<&str> {
    r.functions.iter().flat_map(|f| f.diagnostics.iter().map(|d| d.code.as_str())).collect()
}

#[test]
fn five_thousand_nested_parentheses() {
    let src = format!("def f(x):\n    return {}x{}\n", "(".repeat(5000), ")".repeat(5000));
    let r = analyze_small_stack(src);
    assert_eq!(module_codes(&r), ["TL002"]);
    assert!(r.functions.is_empty());
}

#[test]
fn five_thousand_nested_ifs() {
    let mut src = String::from("def f(x: int) -> int:\n");
    for level in 1..=5000 {
        src.push_str(&" ".repeat(level));
        src.push_str("if x:\n");
    }
    src.push_str(&" ".repeat(5001));
    src.push_str("return x\n");
    let r = analyze_small_stack(src);
    assert_eq!(module_codes(&r), ["TL002"]);
}

#[test]
fn long_prefix_operator_runs() {
    for op in ["-", "not ", "~", "+"] {
        let src = format!("def f(n: int) -> int:\n    return {}n\n", op.repeat(5000));
        let r = analyze_small_stack(src);
        assert_eq!(module_codes(&r), ["TL002"], "{op}");
    }
}

#[test]
fn long_binary_chains_fall_back_with_a_depth_diagnostic() {
    // below the pre-scan limit: parsed, then refused by the walk's depth limit
    let terms = vec!["n"; 1500].join(" + ");
    let src = format!("from torchlower.types import TensorF32Cpu2D\ndef f(n: int) -> int:\n    return {terms}\n");
    let r = analyze_small_stack(src);
    assert!(r.diagnostics.is_empty());
    assert_eq!(r.functions[0].route, Route::Fallback);
    assert!(function_codes(&r).contains(&"TL002"));
    // above it: refused before parsing
    let terms = vec!["n"; 5000].join(" + ");
    let r = analyze_small_stack(format!("def f(n: int) -> int:\n    return {terms}\n"));
    assert_eq!(module_codes(&r), ["TL002"]);
}

#[test]
fn chains_just_below_the_prescan_limit_do_not_overflow() {
    // the deepest ASTs the pre-scan lets through, analyzed and dropped on a 1 MiB stack
    let n = torchlower_analyzer::parse::MAX_LINE_OPERATORS - 5;
    for (sep, wrap) in [(" + ", false), (" @ ", false), (".a", true), ("(1)", true), ("[0]", true), (".relu()", true)] {
        let expr = if wrap { format!("x{}", sep.repeat(n)) } else { vec!["x"; n].join(sep) };
        let r = analyze_small_stack(format!("def f(x: int) -> int:\n    return {expr}\n"));
        assert!(r.diagnostics.is_empty(), "{sep}: {:?}", r.diagnostics);
        assert_eq!(r.functions[0].route, Route::Fallback, "{sep}");
        let over = if wrap { format!("x{}", sep.repeat(n + 10)) } else { vec!["x"; n + 10].join(sep) };
        let r = analyze_small_stack(format!("def f(x: int) -> int:\n    return {over}\n"));
        assert_eq!(module_codes(&r), ["TL002"], "{sep}");
    }
}

#[test]
fn calls_nested_in_arguments_up_to_the_bracket_limit() {
    let depth = torchlower_analyzer::parse::MAX_BRACKET_DEPTH - 1;
    for call in ["F.relu(", "torch.sigmoid(", "g(", "x.add("] {
        let src = format!(
            "import torch\nimport torch.nn.functional as F\nfrom torchlower.types import TensorF32Cpu2D\n\
             def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return {}x{}\n",
            call.repeat(depth),
            ")".repeat(depth)
        );
        let r = analyze_small_stack(src);
        assert!(r.diagnostics.is_empty(), "{call}: {:?}", r.diagnostics);
        assert_eq!(r.functions[0].route, Route::Fallback, "{call}");
        assert!(function_codes(&r).contains(&"TL002"), "{call}: {:?}", function_codes(&r));
    }
}

#[test]
fn long_attribute_and_method_chains() {
    let src = format!("def f(x):\n    return x{}\n", ".a".repeat(1500));
    let r = analyze_small_stack(src);
    assert!(function_codes(&r).contains(&"TL002"), "{:?}", function_codes(&r));
    let src = format!(
        "from torchlower.types import TensorF32Cpu2D\ndef f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x{}\n",
        ".relu()".repeat(1000)
    );
    let r = analyze_small_stack(src);
    assert_eq!(r.functions[0].route, Route::Fallback);
    assert!(function_codes(&r).contains(&"TL002"));
}

#[test]
fn data_literals_are_not_mistaken_for_nesting() {
    let floats: Vec<String> = (0..5000).map(|i| format!("{i}.5")).collect();
    let src = format!("TABLE = [{}]\n", floats.join(", "));
    let r = analyze_small_stack(src);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
}

#[test]
fn malformed_sources_give_a_syntax_diagnostic() {
    let cases = [
        "def f(:\n",
        "x = 'unterminated\n",
        "def f():\n\treturn 1\n        return 2\n",
        "\u{0}\u{1}\u{2}",
        "class",
        "def f(x: TensorF32Cpu2D) -> :\n    pass\n",
        "if True:\npass\n",
        ")))(((",
        "\"\"\"never closed",
    ];
    for src in cases {
        let r = analyze_small_stack(src.to_string());
        assert_eq!(module_codes(&r), ["TL001"], "{src:?}");
        let d = &r.diagnostics[0];
        assert!(d.span.line >= 1 && d.span.col >= 1);
    }
}

#[test]
fn odd_but_valid_sources() {
    for src in ["", "# only a comment", "\r\n\r\n", "\u{feff}x = 1\n", "def f():\r\n    return 1\r\n", "pass\n\x0c\n"] {
        let r = analyze_small_stack(src.to_string());
        assert!(r.diagnostics.iter().all(|d| d.code == "TL001"), "{src:?}: {:?}", r.diagnostics);
    }
}

#[test]
fn pseudo_random_garbage_never_panics() {
    // deterministic xorshift so failures reproduce
    let alphabet: Vec<char> = "def return ( ) [ ] { } : , . + - * / @ % = == < not and if else for in range while x y 1 2.5 'a' \n    \t torch F @ relu() ñ 名".chars().collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..300 {
        let mut src = String::new();
        for _ in 0..200 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            src.push(alphabet[(state % alphabet.len() as u64) as usize]);
        }
        let _ = analyze_small_stack(src);
    }
}

#[test]
fn hostile_identifiers_route_native_and_mangle() {
    let src = [
        "from torchlower.types import TensorF32Cpu2D",
        "def f(self: TensorF32Cpu2D, crate: TensorF32Cpu2D, fn: int, type: bool) -> TensorF32Cpu2D:",
        "    ñame = self @ crate",
        "    名前 = ñame.relu()",
        "    _ = 名前",
        "    __x = _",
        "    return __x",
        "",
    ]
    .join("\n");
    let r = analyze_small_stack(src);
    assert_eq!(r.functions[0].route, Route::Native, "{:?}", r.functions[0].diagnostics);
    let rust = r.rust.expect("rust");
    assert!(rust.is_ascii());
    syn::parse_file(&rust).expect("emitted Rust parses");
    for ident in ["v_self_t", "v_crate_t", "v_fn_i", "v_type_b", "v__0_t", "v__0_0x_t"] {
        assert!(rust.contains(ident), "{ident} missing in\n{rust}");
    }
    // the parameter names reach Rust only as string literals
    assert!(rust.contains("\"self\"") && rust.contains("\"type\""));
}

#[test]
fn hostile_filename_is_escaped_in_the_header() {
    let r = torchlower_analyzer::analyze(
        "from torchlower.types import TensorF32Cpu2D\ndef f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x.relu()\n",
        "evil\n*/ fn main() {} //\u{1f600}.py",
    );
    let rust = r.rust.expect("rust");
    assert!(rust.is_ascii());
    assert_eq!(rust.lines().next().map(|l| l.starts_with("// Generated")), Some(true));
    assert!(!rust.contains("\nfn main"));
    syn::parse_file(&rust).expect("parses");
}

#[test]
fn five_thousand_elifs() {
    // elif chains nest in the AST without indentation; at module level and in a function
    let mut body = String::from("if n == 0:\n    x = 0\n");
    for i in 1..5000 {
        body.push_str(&format!("elif n == {i}:\n    x = {i}\n"));
    }
    let r = analyze_small_stack(body.clone());
    assert!(r.diagnostics.iter().all(|d| d.code == "TL002"), "{:?}", r.diagnostics);
    let indented: String = body.lines().map(|l| format!("    {l}\n")).collect();
    let r = analyze_small_stack(format!("def f(n: int) -> int:\n    x = 0\n{indented}    return x\n"));
    assert!(r.diagnostics.iter().all(|d| d.code == "TL002"), "{:?}", r.diagnostics);
    if let Some(f) = r.functions.first() {
        assert_eq!(f.route, Route::Fallback);
        assert!(function_codes(&r).contains(&"TL002"));
    }
}
