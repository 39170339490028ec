//! Flow-sensitive typing through assignments, branches, loops and early returns.

use torchlower_analyzer::report::{Function, Outcome, Route};

const HEADER: &str = "from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D\nimport torch\n";

fn only_function(body: &str) -> Function {
    let src = format!("{HEADER}{body}");
    let mut r = torchlower_analyzer::analyze(&src, "t.py");
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    r.functions.remove(0)
}

fn codes(f: &Function) -> Vec<&str> {
    f.diagnostics.iter().map(|d| d.code.as_str()).collect()
}

#[test]
fn branch_join_with_different_ranks_walks_the_rest_per_branch() {
    // `h` is rank 2 on one path and rank 1 on the other: the `return` after the `if` is walked
    // once per branch, so each path is typed as it runs, and the path that returns a matrix
    // where the annotation says rank 1 is refused at run time (TL404), the other one native
    let f = only_function(
        "def f(x: TensorF32Cpu2D, c: bool) -> TensorF32Cpu1D:\n    if c:\n        h = x\n    else:\n        h = x.sum(dim=0)\n    return h.relu()\n",
    );
    assert_eq!(f.route, Route::Native);
    assert_eq!(codes(&f), ["TL404"]);
    assert!(f.diagnostics[0].message.starts_with("returns TensorF32Cpu2D on this path, where the annotation says TensorF32Cpu1D"), "{}", f.diagnostics[0].message);
    let relus: Vec<_> = f.sites.iter().filter(|s| s.target == "Tensor.relu").map(|s| (s.outcome, s.result_type.clone())).collect();
    assert_eq!(relus, [(Outcome::Claimed, Some("TensorF32Cpu2D".to_string())), (Outcome::Claimed, Some("TensorF32Cpu1D".to_string()))]);
}

#[test]
fn branch_join_inside_a_loop_is_unknown() {
    let f = only_function(
        "def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    for i in range(n):\n        if i > 1:\n            h = x\n        else:\n            h = x.sum(dim=0)\n        x = x + h.relu()\n    return x\n",
    );
    assert_eq!(f.route, Route::Fallback);
    let relu = f.sites.iter().find(|s| s.target == "Tensor.relu").expect("relu site");
    assert_eq!(relu.outcome, Outcome::NotCovered);
}

#[test]
fn branch_join_with_equal_types_keeps_the_type() {
    let f = only_function(
        "def f(x: TensorF32Cpu2D, c: bool) -> TensorF32Cpu2D:\n    if c:\n        h = x.relu()\n    elif not c:\n        h = x.tanh()\n    else:\n        h = x\n    return h.sigmoid()\n",
    );
    assert_eq!(f.route, Route::Native, "{:?}", f.diagnostics);
}

#[test]
fn early_return_branch_does_not_join() {
    let f = only_function(
        "def f(x: TensorF32Cpu2D, c: bool) -> TensorF32Cpu1D:\n    if c:\n        h = x\n        return h.sum(dim=1)\n    h = x.mean(dim=0)\n    return h\n",
    );
    assert_eq!(f.route, Route::Native, "{:?}", f.diagnostics);
}

#[test]
fn name_first_bound_in_a_loop_is_maybe_unbound_after_it() {
    let f = only_function(
        "def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    for i in range(n):\n        h = x.relu()\n    return h\n",
    );
    assert_eq!(codes(&f), ["TL307"]);
}

#[test]
fn loop_variable_keeps_int_type_after_the_loop() {
    let f = only_function("def f(n: int) -> int:\n    i = 0\n    for i in range(n):\n        pass\n    return i\n");
    assert_eq!(f.route, Route::Native, "{:?}", f.diagnostics);
}

#[test]
fn locals_shadow_module_imports() {
    // `torch` assigned in the function is a local everywhere in it (Python scoping)
    let f = only_function("def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    y = torch.relu(x)\n    torch = 1\n    return y\n");
    assert_eq!(f.route, Route::Fallback);
    assert!(codes(&f).contains(&"TL307"), "{:?}", codes(&f));
}

#[test]
fn while_with_int_condition_and_truthiness() {
    let f = only_function(
        "def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    while n:\n        x = x.relu()\n        n -= 1\n    return x\n",
    );
    assert_eq!(f.route, Route::Native, "{:?}", f.diagnostics);
    let rust = torchlower_analyzer::analyze(&format!("{HEADER}def f(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:\n    while n:\n        x = x.relu()\n        n -= 1\n    return x\n"), "t.py").rust.expect("rust");
    assert!(rust.contains("while (v_n_i != 0i64) {"), "{rust}");
    assert!(rust.contains("v_n_i = tl::scalar::sub(v_n_i, 1i64)?;"), "{rust}");
}

#[test]
fn chained_comparison_evaluates_each_operand_once() {
    let src = format!("{HEADER}def f(a: int, b: int, c: int) -> bool:\n    return a < b * 2 <= c\n");
    let r = torchlower_analyzer::analyze(&src, "t.py");
    assert_eq!(r.functions[0].route, Route::Native);
    let rust = r.rust.expect("rust");
    assert_eq!(rust.matches("tl::scalar::mul(v_b_i, 2i64)?").count(), 1, "{rust}");
}

#[test]
fn unannotated_helpers_are_specialised_per_call_and_return_types_inferred() {
    let src = format!(
        "{HEADER}import torch.nn.functional as F\n\ndef helper(h, scale=2.0):\n    return F.gelu(h) * scale\n\n\
         def caller(x: TensorF32Cpu2D, w: TensorF32Cpu2D):\n    return helper(x @ w) + helper(x, 0.5).sum(dim=1, keepdim=True)\n"
    );
    let r = torchlower_analyzer::analyze(&src, "t.py");
    let (helper, caller) = (&r.functions[0], &r.functions[1]);
    // alone, the helper has no types: TL101 (torchlower.compile specialises it on its calls)
    assert_eq!(helper.route, Route::Fallback);
    assert!(codes(helper).contains(&"TL101"), "{:?}", helper.diagnostics);
    // called with types, a specialised copy is native, its return type inferred
    assert_eq!(caller.route, Route::Native, "{:?}", caller.diagnostics);
    assert_eq!(caller.returns.as_deref(), Some("TensorF32Cpu2D"));
    let rust = r.rust.expect("native code");
    // both calls pass (a rank-2 tensor, a float): one copy serves them
    assert_eq!(rust.matches("fn tl_body_").count(), 2, "the caller and one copy of the helper:\n{rust}");
}

#[test]
fn a_helper_result_is_fresh_only_when_every_tensor_argument_is() {
    let src = format!(
        "{HEADER}def passthrough(t: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return t\n\n\
         def via_parameter(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    h = passthrough(x)\n    h += 1.0\n    return h\n\n\
         def via_fresh(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    h = passthrough(x * 2.0)\n    h += 1.0\n    return h\n"
    );
    let r = torchlower_analyzer::analyze(&src, "t.py");
    let by_name = |n: &str| r.functions.iter().find(|f| f.name == n).expect("the function");
    // the helper may return the caller's parameter: the update writes into it, as eager's
    // does, so the function is one that writes into its arguments (TL212), not a fresh update
    assert_eq!(by_name("via_parameter").route, Route::Native);
    assert_eq!(codes(by_name("via_parameter")), vec!["TL212"]);
    assert!(codes(by_name("via_fresh")).is_empty());
    assert_eq!(by_name("via_fresh").route, Route::Native);
}

#[test]
fn a_return_refused_on_every_path_is_a_mismatch() {
    // no path returns what the annotation says: nothing would run natively, so the function
    // falls back with TL401, not a native function that always refuses
    let f = only_function(
        "def f(x: TensorF32Cpu2D, c: bool) -> TensorF32Cpu1D:\n    if c:\n        h = x\n    else:\n        h = x.unsqueeze(0)\n    return h\n",
    );
    assert_eq!(f.route, Route::Fallback);
    assert_eq!(codes(&f), ["TL401", "TL401"]);
    assert!(f.diagnostics[0].message.starts_with("returns TensorF32Cpu2D on every path, but the annotation says TensorF32Cpu1D"), "{}", f.diagnostics[0].message);
    // outside a run-time branch the mismatch is TL401 as before
    let g = only_function("def g(x: TensorF32Cpu2D) -> TensorF32Cpu1D:\n    return x.relu()\n");
    assert_eq!((g.route, codes(&g)), (Route::Fallback, vec!["TL401"]));
}
