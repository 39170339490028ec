//! The op table (`torchlower-ops`) drives claim dispatch, the IR, lowering names and the
//! registry; these tests fail when a row lacks any of its parts on the analyzer's side:
//! - every Python spelling of every row is claimed by its lane, as that row's op, under a rule
//!   of the registry that names the op;
//! - every rule of the registry lowers an op of the table and is reached by some spelling;
//! - every rejected spelling is answered by a code, not by "not covered";
//! - the emitted Rust of each claim calls the backend function the row names.

use std::collections::BTreeSet;
use torchlower_analyzer::claim::{decide, Decision, Keyword, Lit, Operand, Query, Target};
use torchlower_analyzer::ir::Op;
use torchlower_analyzer::rules::ALL_RULES;
use torchlower_analyzer::ty::{TensorTy, Ty};
use torchlower_ops::{Signature, TABLE};

fn tensor(t: TensorTy) -> Operand {
    Operand { ty: Ty::Tensor(t), lit: Lit::NotLiteral }
}

fn int(v: i64) -> Operand {
    Operand { ty: Ty::Int, lit: Lit::Int(v) }
}

fn dim(d: i64) -> Keyword {
    Keyword { name: Some("dim".to_string()), value: Operand { ty: Ty::Int, lit: Lit::Int(d) } }
}

/// Operands (after a method's receiver) and keywords that every spelling of an op with this
/// signature accepts, with the receiver (or first operand) first.
fn valid_operands(row: &torchlower_ops::OpInfo) -> (Vec<Operand>, Vec<Keyword>) {
    let (m, v) = (tensor(TensorTy::F32_CPU_2D), tensor(TensorTy::F32_CPU_1D));
    if matches!(row.op, Op::LogicalAnd | Op::LogicalOr | Op::LogicalXor) {
        let mask = tensor(TensorTy::new(torchlower_analyzer::ty::Dtype::Bool, torchlower_analyzer::ty::Device::Cpu, 2).expect("a type"));
        return (vec![mask.clone(), mask], vec![]);
    }
    if row.op == Op::Bmm {
        let b = tensor(TensorTy::F32_CPU_3D);
        return (vec![b.clone(), b], vec![]);
    }
    if matches!(row.op, Op::Meshgrid | Op::Outer) {
        return (vec![v.clone(), v], vec![]);
    }
    if row.op == Op::Einsum {
        let equation = Operand { ty: Ty::Str, lit: Lit::Str("ij,jk->ik".to_string()) };
        return (vec![equation, m.clone(), m], vec![]);
    }
    match row.signature {
        Signature::Unary => (vec![m], vec![]),
        Signature::Binary | Signature::Product => (vec![m.clone(), m], vec![]),
        Signature::Linear => (vec![m.clone(), m, v], vec![]),
        Signature::DimKeepdim | Signature::Dim => (vec![m], vec![dim(1)]),
        Signature::Tensor => (vec![m], vec![]),
        Signature::IntList => (vec![m, int(1), int(0)], vec![]),
        Signature::DimPair => (vec![m, int(0), int(1)], vec![]),
        Signature::Index => (vec![m], vec![]),
        Signature::Parts => (vec![m, int(1)], vec![]),
        Signature::TensorList => (vec![m.clone(), m], vec![]),
        Signature::TensorNumber => (vec![m, int(2)], vec![]),
        Signature::Clamp => (vec![m, int(0), int(1)], vec![]),
        Signature::LayerNorm => (vec![m, int(2)], vec![]),
        Signature::Params(params) => params_operands(params),
    }
}

/// A parameter a call may leave out (its default, `None`, the first choice, the fixed value).
fn optional(p: &torchlower_ops::Param) -> bool {
    use torchlower_ops::Kind;
    // a dim that may be None is given all the same: only `F.log_softmax` defaults it, the
    // other spellings of its row need it
    let defaulted_dim = p.name == "dim" && p.kind == Kind::OptInt;
    !p.required && !defaulted_dim && (p.default.is_some() || matches!(p.kind, Kind::Fixed(_) | Kind::Choice(_) | Kind::OptTensor | Kind::OptAnyTensor))
}

/// The required arguments of a `Params` op: rank-3 float32 tensors (every such op takes one as
/// its input; embedding's weight is a matrix), rank-2 int64 indices, 1 for ints and sizes;
/// positionally until an optional parameter is skipped, by keyword after it.
fn params_operands(params: &[torchlower_ops::Param]) -> (Vec<Operand>, Vec<Keyword>) {
    use torchlower_ops::Kind;
    if params.iter().any(|p| p.name == "steps") {
        return (vec![int(0), int(1), int(5)], vec![]); // linspace: start, end, steps
    }
    if params.first().is_some_and(|p| p.name == "start") {
        return (vec![int(1)], vec![]); // arange: its overloads are bound by its lane
    }
    if params.iter().any(|p| p.name == "scale_factor") {
        // interpolate: a batch of images and exactly one of size and scale_factor
        let scale = Keyword { name: Some("scale_factor".to_string()), value: Operand { ty: Ty::Float, lit: Lit::Float(2.0) } };
        return (vec![tensor(TensorTy::F32_CPU_4D)], vec![scale]);
    }
    if params.iter().any(|p| p.name == "num_samples") {
        return (vec![tensor(TensorTy::F32_CPU_2D), int(1)], vec![]); // multinomial: rows of probabilities
    }
    if params.iter().any(|p| p.name == "embed_dim_to_check") {
        // multi_head_attention_forward: CLIP's call (self-attention, packed weights, no weights out)
        let (x, m, v) = (tensor(TensorTy::F32_CPU_3D), tensor(TensorTy::F32_CPU_2D), tensor(TensorTy::F32_CPU_1D));
        let none = Operand { ty: Ty::NoneVal, lit: Lit::None };
        let boolean = |b: bool| Operand { ty: Ty::Bool, lit: Lit::Bool(b) };
        let zero = Operand { ty: Ty::Float, lit: Lit::Float(0.0) };
        let args = vec![x.clone(), x.clone(), x, int(8), int(2), m.clone(), v.clone(), none.clone(), none, boolean(false), zero, m, v];
        let need_weights = Keyword { name: Some("need_weights".to_string()), value: boolean(false) };
        return (args, vec![need_weights]);
    }
    if params.iter().any(|p| p.name == "training") && params.iter().any(|p| p.name == "p") {
        // dropout: claimed outside training only
        let training = Keyword { name: Some("training".to_string()), value: Operand { ty: Ty::Bool, lit: Lit::Bool(false) } };
        return (vec![tensor(TensorTy::F32_CPU_3D)], vec![training]);
    }
    if params.iter().any(|p| p.name == "label_smoothing") {
        // cross_entropy: scores over the classes of dim 1, targets of one rank less, per target
        let targets = tensor(TensorTy::new(torchlower_analyzer::ty::Dtype::I64, torchlower_analyzer::ty::Device::Cpu, 2).expect("a type"));
        let none = Keyword { name: Some("reduction".to_string()), value: Operand { ty: Ty::Str, lit: Lit::Str("none".to_string()) } };
        return (vec![tensor(TensorTy::F32_CPU_3D), targets], vec![none]);
    }
    let (mut positional, mut keywords) = (Vec::new(), Vec::new());
    let mut skipped = false;
    for p in params {
        if optional(p) {
            skipped = true;
            continue;
        }
        let value = match p.kind {
            Kind::Tensor if p.name == "weight" && params[0].kind == Kind::Indices => tensor(TensorTy::F32_CPU_2D),
            Kind::Tensor if params.iter().any(|p| p.name == "mat1") => tensor(TensorTy::F32_CPU_2D),
            Kind::Tensor | Kind::AnyTensor => tensor(TensorTy::F32_CPU_3D),
            Kind::Ints(_) if p.name == "sizes" => Operand { ty: Ty::Tuple(2), lit: Lit::Ints(vec![Some(1), Some(-1)]) },
            Kind::Ints(_) if p.name == "repeats" => Operand { ty: Ty::Tuple(3), lit: Lit::Ints(vec![Some(1), Some(2), Some(1)]) },
            // a sequence only (`F.pad(x, (1, 1))`, `F.rms_norm(x, (4,))`)
            Kind::IntSeq => Operand { ty: Ty::Tuple(2), lit: Lit::Ints(vec![Some(1), Some(1)]) },
            Kind::Indices => {
                // gather and scatter take an index of the input's rank, index_select a rank-1 one
                let rank = match params.iter().map(|p| p.name).collect::<Vec<_>>().as_slice() {
                    ["input", "dim", "index", "sparse_grad"] | ["input", "dim", "index", "src"] => 3,
                    ["input", "dim", "index"] => 1,
                    _ => 2,
                };
                tensor(TensorTy::new(torchlower_analyzer::ty::Dtype::I64, torchlower_analyzer::ty::Device::Cpu, rank).expect("a type"))
            }
            Kind::Mask => tensor(TensorTy::new(torchlower_analyzer::ty::Dtype::Bool, torchlower_analyzer::ty::Device::Cpu, 3).expect("a type")),
            Kind::TensorOrNumber if p.name == "fill_value" => int(1),
            // torch.tensor(number): float32 is the one 0-dim type
            Kind::TensorOrNumber if p.name == "data" => Operand { ty: Ty::Float, lit: Lit::Float(0.5) },
            Kind::TensorOrNumber => tensor(TensorTy::F32_CPU_3D),
            _ => int(1),
        };
        if skipped {
            keywords.push(Keyword { name: Some(p.name.to_string()), value });
        } else {
            positional.push(value);
        }
    }
    (positional, keywords)
}

/// The same arguments as Python source: `x` the rank-3 input, `w` a matrix, `i` indices.
/// The method whose call without a dim reaches a whole-tensor row (`x.sum()` → `SumAll`).
fn whole_method(op: Op) -> Option<&'static str> {
    Some(match op {
        Op::SumAll => "sum",
        Op::MeanAll => "mean",
        Op::MaxAll => "max",
        Op::MinAll => "min",
        Op::ArgmaxAll => "argmax",
        Op::ArgminAll => "argmin",
        Op::ProdAll => "prod",
        Op::StdAll => "std",
        Op::VarAll => "var",
        _ => return None,
    })
}

fn params_call(row: &torchlower_ops::OpInfo, params: &[torchlower_ops::Param]) -> String {
    use torchlower_ops::Kind;
    if let Some(method) = whole_method(row.op) {
        return format!("x.{method}()");
    }
    if row.op == Op::Arange {
        return "torch.arange(1)".to_string(); // its overloads are bound by its lane
    }
    if row.op == Op::Linspace {
        return "torch.linspace(0, 1.5, 5)".to_string();
    }
    if row.op == Op::GeluTanh {
        return "F.gelu(x, approximate=\"tanh\")".to_string();
    }
    if row.op == Op::Interpolate {
        return "F.interpolate(x.unsqueeze(0), scale_factor=2.0)[0]".to_string();
    }
    if row.op == Op::Addmm {
        return "torch.addmm(w, w, w)".to_string();
    }
    if row.op == Op::Tensordot {
        // the walk splits `dims` into the row's two lists
        return "torch.tensordot(x, x, dims=([1], [1]))".to_string();
    }
    if matches!(row.op, Op::MaxDim | Op::MinDim) {
        return format!("x.{}(1)[0]", row.methods[0]);
    }
    if row.op == Op::Topk {
        return "w.topk(2)[0]".to_string();
    }
    if row.op == Op::Sort {
        return "torch.sort(x, 1)[0]".to_string();
    }
    if row.op == Op::Scatter {
        return "torch.scatter(x, 1, i3, x)".to_string();
    }
    if row.op == Op::Isin {
        return "torch.isin(w, w)".to_string();
    }
    if row.op == Op::Meshgrid {
        return "torch.meshgrid(i1, i1, indexing=\"ij\")[0]".to_string();
    }
    if row.op == Op::Outer {
        return "torch.outer(x[0, 0], w[0])".to_string();
    }
    if row.op == Op::Multinomial {
        return "torch.multinomial(w, 1)".to_string();
    }
    if row.op == Op::WhereNonzero {
        return "torch.where(i1 > 0)[0]".to_string();
    }
    if row.op == Op::ScalarTensor {
        return "x * torch.tensor(0.5)".to_string();
    }
    if row.op == Op::ScalarTensor {
        return "x * torch.tensor(0.5)".to_string();
    }
    if row.op == Op::TensorOfInts {
        return "torch.tensor([k * 2 for k in range(1, 4)])".to_string();
    }
    if row.op == Op::CrossEntropy {
        return "F.cross_entropy(x, i, reduction=\"none\")".to_string();
    }
    if row.op == Op::Dropout {
        return "F.dropout(x, 0.1, training=False)".to_string();
    }
    if row.op == Op::MultiHeadAttentionForward {
        return "F.multi_head_attention_forward(x, x, x, 1, 1, w, None, None, None, False, 0.0, w, None, need_weights=False)[0]".to_string();
    }
    if let Some((value, before, _)) = distribution_use(row.op) {
        return format!("{value}\n    {before}");
    }
    if let Some((_, python)) = torchlower_ops::CLAIMED_THROUGH.iter().find(|(op, _)| *op == row.op) {
        return python.to_string();
    }
    let mut args: Vec<String> = Vec::new();
    let mut skipped = false;
    for p in params {
        if optional(p) {
            skipped = true;
            continue;
        }
        let value = match p.kind {
            Kind::Tensor if p.name == "weight" && params[0].kind == Kind::Indices => "w",
            Kind::Tensor | Kind::AnyTensor => "x",
            Kind::Ints(_) if p.name == "sizes" => "(1, -1)",
            Kind::Ints(_) if p.name == "repeats" => "1, 2, 1",
            Kind::IntSeq => "(1, 1)",
            Kind::Indices if row.op == Op::Gather => "i3",
            Kind::Indices if row.op == Op::IndexSelect => "i1",
            Kind::Indices => "i",
            Kind::Mask => "x > 0",
            Kind::TensorOrNumber if p.name == "fill_value" => "1",
            Kind::TensorOrNumber => "x",
            _ => "1",
        };
        args.push(if skipped { format!("{}={value}", p.name) } else { value.to_string() });
    }
    match row.functions.first() {
        Some(path) => format!("{path}({})", args.join(", ")),
        None => format!("{}.{}({})", args[0], row.methods[0], args[1..].join(", ")),
    }
}

fn python_operator(symbol: &str) -> ruff_python_ast::Operator {
    use ruff_python_ast::Operator;
    match symbol {
        "+" => Operator::Add,
        "-" => Operator::Sub,
        "*" => Operator::Mult,
        "/" => Operator::Div,
        "@" => Operator::MatMult,
        "**" => Operator::Pow,
        "//" => Operator::FloorDiv,
        "%" => Operator::Mod,
        "&" => Operator::BitAnd,
        "|" => Operator::BitOr,
        "^" => Operator::BitXor,
        other => panic!("operator {other} has no Python form here"),
    }
}

/// How a distribution method row is used: (returned value, statement before it, result type).
fn distribution_use(op: Op) -> Option<(&'static str, &'static str, &'static str)> {
    let categorical = "d = torch.distributions.Categorical(logits=x)";
    let normal = "d = torch.distributions.Normal(x, x)";
    Some(match op {
        Op::ToDtype => ("x.long()", "pass", "TensorI64Cpu3D"),
        Op::Categorical => ("d.logits", categorical, "TensorF32Cpu3D"),
        Op::Normal => ("d.mean", normal, "TensorF32Cpu3D"),
        Op::CategoricalProbs => ("d.probs", categorical, "TensorF32Cpu3D"),
        Op::CategoricalLogProb => ("d.log_prob(i)", categorical, "TensorF32Cpu2D"),
        Op::CategoricalEntropy => ("d.entropy()", categorical, "TensorF32Cpu2D"),
        Op::CategoricalMode => ("d.mode", categorical, "TensorI64Cpu2D"),
        Op::NormalLogProb => ("d.log_prob(x)", normal, "TensorF32Cpu3D"),
        Op::NormalEntropy => ("d.entropy()", normal, "TensorF32Cpu3D"),
        Op::NormalStddev => ("d.stddev", normal, "TensorF32Cpu3D"),
        _ => return None,
    })
}

/// Every claim of every spelling, as (op, rule id).
fn claims_of_every_spelling() -> Vec<(Op, String, &'static str)> {
    let mut claims = Vec::new();
    for row in TABLE {
        let (operands, keywords) = valid_operands(row);
        let mut queries: Vec<(String, Decision)> = Vec::new();
        for path in row.functions {
            let q = Query { target: Target::Function(path), receiver: None, args: &operands, keywords: &keywords, starred: false };
            queries.push((path.to_string(), decide(&q)));
        }
        for name in row.methods {
            let (receiver, rest) = operands.split_first().expect("an operand");
            let q = Query { target: Target::Method(name), receiver: Some(receiver), args: rest, keywords: &keywords, starred: false };
            queries.push((format!("Tensor.{name}"), decide(&q)));
        }
        // `[]` is indexing, which the walk claims from the subscript itself (its items are not
        // operands): asked through the analyzer
        if row.operators.contains(&"[]") {
            let source = "from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D\ndef f(x: TensorF32Cpu2D) -> TensorF32Cpu1D:\n    return x[0]\n";
            let report = torchlower_analyzer::analyze(source, "index.py");
            let site = &report.functions[0].sites[0];
            let rule = site.rule.clone().unwrap_or_else(|| panic!("`x[0]` is not claimed: {site:?}"));
            let registered = ALL_RULES.iter().find(|r| r.id == rule).expect("a registered rule");
            assert_eq!(registered.op, row.op, "`x[0]`: rule {rule} lowers another op");
            claims.push((row.op, rule, row.name));
        }
        for symbol in row.operators.iter().filter(|s| **s != "[]") {
            let comparison = ["==", "!=", "<", "<=", ">", ">="].contains(symbol);
            let target = if comparison { Target::Compare(symbol) } else { Target::BinOp { op: python_operator(symbol), augmented: false } };
            let q = Query { target, receiver: None, args: &operands, keywords: &[], starred: false };
            queries.push((symbol.to_string(), decide(&q)));
        }
        // rows claimed through another row's spelling and an option
        if row.op == Op::GeluTanh {
            let approximate = [Keyword { name: Some("approximate".to_string()), value: Operand { ty: Ty::Str, lit: Lit::Str("tanh".to_string()) } }];
            let q = Query { target: Target::Function("torch.nn.functional.gelu"), receiver: None, args: &operands[..1], keywords: &approximate, starred: false };
            queries.push(("F.gelu(approximate=\"tanh\")".to_string(), decide(&q)));
        }
        if let Some(path) = match row.op {
            Op::Conv1dPadding => Some("torch.nn.functional.conv1d"),
            Op::Conv2dPadding => Some("torch.nn.functional.conv2d"),
            _ => None,
        } {
            let same = [Keyword { name: Some("padding".to_string()), value: Operand { ty: Ty::Str, lit: Lit::Str("same".to_string()) } }];
            let q = Query { target: Target::Function(path), receiver: None, args: &operands[..2], keywords: &same, starred: false };
            queries.push((format!("{path}(padding=\"same\")"), decide(&q)));
        }
        if let Some(method) = whole_method(row.op) {
            let q = Query { target: Target::Method(method), receiver: Some(&operands[0]), args: &[], keywords: &[], starred: false };
            queries.push((format!("x.{method}()"), decide(&q)));
        }
        if let Some(method) = match row.op {
            Op::SumDims => Some("sum"),
            Op::MeanDims => Some("mean"),
            _ => None,
        } {
            let dims = [Operand { ty: Ty::Tuple(2), lit: Lit::Ints(vec![Some(0), Some(1)]) }];
            let q = Query { target: Target::Method(method), receiver: Some(&operands[0]), args: &dims, keywords: &[], starred: false };
            queries.push((format!("x.{method}((0, 1))"), decide(&q)));
        }
        if row.op == Op::WhereNonzero {
            let mask = [tensor(TensorTy::new(torchlower_analyzer::ty::Dtype::Bool, torchlower_analyzer::ty::Device::Cpu, 1).expect("a type"))];
            let q = Query { target: Target::Function("torch.where"), receiver: None, args: &mask, keywords: &[], starred: false };
            queries.push(("torch.where(cond)".to_string(), decide(&q)));
        }
        if row.op == Op::PowTensor {
            let pair = [operands[1].clone(), operands[1].clone()];
            let q = Query { target: Target::Function("torch.pow"), receiver: None, args: &pair, keywords: &[], starred: false };
            queries.push(("torch.pow(x, x)".to_string(), decide(&q)));
        }
        if row.op == Op::ClampTensor {
            let bounds = [Keyword { name: Some("min".to_string()), value: operands[0].clone() }];
            let q = Query { target: Target::Function("torch.clamp"), receiver: None, args: &operands[..1], keywords: &bounds, starred: false };
            queries.push(("torch.clamp(x, min=x)".to_string(), decide(&q)));
        }
        // `torch.tensor` of a comprehension is claimed by the walk, which lowers its loops
        if row.op == Op::TensorOfInts {
            let report = torchlower_analyzer::analyze("import torch\ndef f(n: int):\n    return torch.tensor([k for k in range(n)])\n", "ints.py");
            let rule = report.functions[0].sites.iter().filter_map(|s| s.rule.clone()).find(|r| ALL_RULES.iter().any(|g| g.id == *r && g.op == row.op));
            claims.push((row.op, rule.unwrap_or_else(|| panic!("torch.tensor of a comprehension is not claimed: {:?}", report.functions[0])), row.name));
        }
        // a distribution's methods are claimed on a distribution local: asked through the analyzer
        if let Some((value, before, _)) = distribution_use(row.op) {
            let source = format!(
                "import torch\nfrom torchlower.types import TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu2D\ndef f(x: TensorF32Cpu3D, i: TensorI64Cpu2D):\n    {before}\n    return {value}\n"
            );
            let report = torchlower_analyzer::analyze(&source, "dist.py");
            let rule = report.functions[0].sites.iter().filter_map(|s| s.rule.clone()).find(|r| ALL_RULES.iter().any(|g| g.id == *r && g.op == row.op));
            let rule = rule.unwrap_or_else(|| panic!("{:?} is not claimed in\n{source}\n{:?}", row.op, report.functions[0].sites));
            claims.push((row.op, rule, row.name));
        }
        for (spelling, decision) in queries {
            match decision {
                Decision::Claimed(claim) => {
                    assert_eq!(claim.op, row.op, "{spelling} claims another op");
                    assert_eq!(claim.rule.op, row.op, "{spelling}: rule {} lowers another op", claim.rule.id);
                    claims.push((row.op, claim.rule.id.to_string(), row.name));
                }
                other => panic!("{spelling} ({:?}) is not claimed with valid operands: {other:?}", row.op),
            }
        }
    }
    claims
}

#[test]
fn every_spelling_of_every_row_is_claimed_as_its_op() {
    let claims = claims_of_every_spelling();
    let ops: BTreeSet<Op> = claims.iter().map(|(op, _, _)| *op).collect();
    assert_eq!(ops.len(), TABLE.len(), "every row claims");
}

#[test]
fn every_rule_lowers_a_table_op_and_every_op_has_a_rule() {
    for row in TABLE {
        assert!(ALL_RULES.iter().any(|r| r.op == row.op), "{:?} has no rule in the registry", row.op);
    }
    // Reached by a spelling with the canonical operands above, or (the other rank forms and
    // keyword spellings) by the corpus, which `tests/corpus.rs` requires for every rule.
    let reached: BTreeSet<String> = claims_of_every_spelling().into_iter().map(|(_, rule, _)| rule).collect();
    assert!(reached.len() >= TABLE.len(), "{reached:?}");
}

#[test]
fn rejected_spellings_get_a_code() {
    let x = tensor(TensorTy::F32_CPU_2D);
    for row in TABLE {
        for path in row.rejected_functions {
            let q = Query { target: Target::Function(path), receiver: None, args: std::slice::from_ref(&x), keywords: &[], starred: false };
            assert!(matches!(decide(&q), Decision::Rejected { .. }), "{path}");
        }
        for name in row.rejected_methods {
            let q = Query { target: Target::Method(name), receiver: Some(&x), args: std::slice::from_ref(&x), keywords: &[], starred: false };
            assert!(matches!(decide(&q), Decision::Rejected { .. }), "Tensor.{name}");
        }
    }
}

#[test]
fn emitted_code_calls_the_backend_function_of_the_row() {
    // one function per op, through its first spelling, on the CPU and on cuda:0
    for row in TABLE {
        for (marker, module) in [("TensorF32Cpu2D", "tl::ops"), ("TensorF32Cuda0_2D", "tl::cuda::ops")] {
            let vector = marker.replace("2D", "1D");
            let batched = marker.replace("2D", "3D");
            let (params, call, returns) = match row.signature {
                Signature::Unary => ("x: M", one_tensor_call(row, "x"), "M"),
                Signature::Product if row.op == Op::Bmm => ("x: B, y: B", "torch.bmm(x, y)".to_string(), "B"),
                Signature::Product if matches!(row.op, Op::LogicalAnd | Op::LogicalOr | Op::LogicalXor) => {
                    ("x: M, y: M", two_tensor_call(row, "(x > 0)", "(y > 0)"), "M")
                }
                Signature::Binary | Signature::Product => ("x: M, y: M", two_tensor_call(row, "x", "y"), "M"),
                Signature::Linear => ("x: M, w: M, b: V", format!("{}(x, w, b)", row.functions[0]), "M"),
                Signature::DimKeepdim | Signature::Dim if row.op == Op::Unsqueeze => ("x: V", format!("x.{}(dim=1)", row.methods[0]), "M"),
                Signature::DimKeepdim | Signature::Dim => ("x: M", format!("{}(x, dim=1)", row.functions[0]), "R"),
                Signature::Tensor => ("x: M", one_tensor_call(row, "x"), "M"),
                Signature::IntList => ("x: M", format!("x.{}(1, 0)", row.methods[0]), "M"),
                Signature::DimPair if row.op == Op::Flatten => ("x: M", format!("x.{}(0, 1)", row.methods[0]), "V"),
                Signature::DimPair => ("x: M", format!("x.{}(0, 1)", row.methods[0]), "M"),
                Signature::Index => ("x: M", "x[0]".to_string(), "V"),
                Signature::TensorList if row.op == Op::Einsum => ("x: M", "torch.einsum(\"ij,jk->ik\", x, x)".to_string(), "M"),
                Signature::TensorList if row.op == Op::Stack => ("x: M", format!("{}([x, x], 0)[0]", row.functions[0]), "M"),
                Signature::TensorList => ("x: M", format!("{}([x, x], 0)", row.functions[0]), "M"),
                Signature::TensorNumber => ("x: M", format!("x.{}(2)", row.methods[0]), "M"),
                Signature::Clamp => ("x: M", format!("x.{}(0, 1)", row.methods[0]), "M"),
                Signature::LayerNorm => ("x: M, w: V", format!("{}(x, (x.size(-1),), w, w, 1e-5)", row.functions[0]), "M"),
                Signature::Params(params) => ("x: B, w: M, i: TensorI64Cpu2D, i1: TensorI64Cpu1D, i3: TensorI64Cpu3D", params_call(row, params), "B"),
                // parts are lowered only as the value of an unpacking assignment
                Signature::Parts if row.op == Op::Unbind => ("x: M", format!("a\n    a, b = x.{}(0)", row.methods[0]), "V"),
                Signature::Parts => ("x: M", format!("a\n    a, b = x.{}(1, 0)", row.methods[0]), "M"),
            };
            // CPU-only ops are TL209 on cuda:0 (tested in the lanes)
            if row.cuda_kernel.is_empty() && marker.contains("Cuda") {
                continue;
            }
            let result = match (row.op, returns) {
                (Op::Argmax, _) if marker.contains("Cuda") => continue, // no int64 CUDA type
                (Op::Argmax, _) => "TensorI64Cpu1D".to_string(),
                (Op::SumDim | Op::MeanDim, _) | (_, "V") => vector.clone(),
                (Op::Arange | Op::Full, _) => "TensorI64Cpu1D".to_string(),
                (Op::Zeros | Op::Empty | Op::Ones, _) => vector.clone(),
                (Op::Addmm | Op::MaxDim | Op::MinDim | Op::Topk, _) => marker.to_string(),
                (op, _) if distribution_use(op).is_some() => distribution_use(op).map(|(_, _, r)| r.to_string()).unwrap_or_default(),
                (Op::Select | Op::Squeeze | Op::Norm | Op::VectorNorm | Op::Amax | Op::Amin | Op::Logsumexp | Op::Var | Op::Std | Op::Prod, _) => marker.to_string(),
                (Op::Argmin, _) => "TensorI64Cpu2D".to_string(),
                (Op::ArgmaxAll | Op::ArgminAll, _) => "TensorI64Cpu0D".to_string(),
                (op, _) if whole_method(op).is_some() => "TensorF32Cpu0D".to_string(),
                (Op::Argsort, _) => "TensorI64Cpu3D".to_string(),
                (Op::Isin, _) => "TensorBoolCpu2D".to_string(),
                (Op::Meshgrid, _) => "TensorI64Cpu2D".to_string(),
                (Op::Outer, _) => marker.to_string(),
                (Op::Linspace, _) => "TensorF32Cpu1D".to_string(),
                (Op::Nansum, _) => marker.to_string(),
                (Op::All | Op::Any, _) => "TensorBoolCpu2D".to_string(),
                (Op::OneHot, _) => "TensorI64Cpu3D".to_string(),
                (Op::CrossEntropy | Op::EmbeddingBag, _) => marker.to_string(),
                (Op::Multinomial, _) => "TensorI64Cpu2D".to_string(),
                (Op::WhereNonzero | Op::TensorOfInts, _) => "TensorI64Cpu1D".to_string(),
                (Op::Unflatten | Op::Tensordot | Op::Unfold, _) => marker.replace("2D", "4D"),
                (Op::RepeatInterleave, _) => vector.clone(),
                (op, _) if op.info().lane == torchlower_ops::Lane::Masking && row.signature == Signature::Product => "TensorBoolCpu2D".to_string(),
                (Op::LogicalNot, _) => "TensorBoolCpu2D".to_string(),
                (_, "B") => marker.replace("2D", "3D"),
                _ => marker.to_string(),
            };
            // `call` may carry statements to run first, after a newline: `a\n    a, b = …`
            let (value, before) = call.split_once('\n').map_or((call.as_str(), ""), |(v, b)| (v, b));
            let source = format!(
                "from torchlower.types import {marker}, {vector}, {batched}, {}, TensorF32Cpu4D, TensorI64Cpu1D, TensorI64Cpu2D, TensorI64Cpu3D, TensorBoolCpu2D, TensorF32Cpu0D, TensorI64Cpu0D\nimport torch\nimport torch.nn.functional as F\n\ndef f({}) -> {result}:\n{before}\n    return {value}\n",
                marker.replace("2D", "4D"),
                params.replace(": M", &format!(": {marker}")).replace(": V", &format!(": {vector}")).replace(": B", &format!(": {batched}")),
            );
            let report = torchlower_analyzer::analyze(&source, "op.py");
            let rust = report.rust.unwrap_or_else(|| panic!("{:?} on {marker} is not native:\n{source}\n{:?}", row.op, report.functions));
            let wanted = if row.signature == Signature::Index { "tl::index::get(".to_string() } else { format!("{module}::{}(", row.name) };
            // a lone CPU sum/mean of a parameter is fused (`tl::fused::reduce`) instead
            let fused = report.functions[0].sites.iter().all(|s| s.fused_into.is_some());
            assert!(rust.contains(&wanted) || (fused && module == "tl::ops"), "{:?}: no `{wanted}` in\n{rust}", row.op);
        }
    }
}

fn one_tensor_call(row: &torchlower_ops::OpInfo, x: &str) -> String {
    match row.functions.first() {
        Some(path) => format!("{path}({x})"),
        None => format!("{x}.{}()", row.methods[0]),
    }
}

fn two_tensor_call(row: &torchlower_ops::OpInfo, x: &str, y: &str) -> String {
    match (row.operators.first(), row.functions.first()) {
        (Some(symbol), _) => format!("{x} {symbol} {y}"),
        (None, Some(path)) => format!("{path}({x}, {y})"),
        (None, None) => format!("{x}.{}({y})", row.methods[0]),
    }
}
