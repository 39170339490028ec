//! Claim: decide for one torch site whether it is claimed (with its rule, result type and IR
//! op), rejected (with a code) or not covered. One module per lane; this module routes a site
//! to its lane by the op table (`torchlower-ops`: each op's Python spellings and lane) and
//! holds the checks that every lane shares.
//!
//! Claims are a pure function of the site's target, operand types and literal options.

pub mod activations;
pub mod binops;
pub mod norms;
pub mod params;
pub mod embedding;
pub mod vision;
pub mod masking;
pub mod creation;
pub mod attention;
pub mod distributions;
pub mod pointwise;
pub mod classification;
pub mod gelu;
pub mod linear;
pub mod reductions;
pub mod unary;
pub mod views;

use crate::ir::{Op, Options};
use crate::report::SiteKind;
use crate::rules::{self, Code, Rule};
use crate::ty::{Device, Dtype, TensorTy, Ty};
use ruff_python_ast::Operator;
use torchlower_ops::unclaimed::{TRANSFER_METHODS, VIEW_METHODS};
use torchlower_ops::{Lane, CUDA_POW_EXPONENTS};

/// Static value of an argument, when it is a literal.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// A torch dtype (`torch.float32`, `x.dtype`), by its canonical name.
    Dtype(&'static str),
    /// A device (`x.device`): `"cpu"` or `"cuda:0"`, the only devices of the vocabulary.
    Device(&'static str),
    /// A tuple or list of Python ints (`(2, 2)`, `(h, w)`): each value where it is a literal.
    Ints(Vec<Option<i64>>),
    NotLiteral,
}

/// An evaluated argument: its type and, for literals, its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    pub ty: Ty,
    pub lit: Lit,
}

/// A keyword argument; `name` is `None` for `**kwargs`.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyword {
    pub name: Option<String>,
    pub value: Operand,
}

/// What the site calls.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// a module-level function by dotted path (`torch.nn.functional.linear`)
    Function(&'a str),
    /// a method by name on the receiver
    Method(&'a str),
    /// a binary operator; `augmented` for `h += x`
    BinOp { op: Operator, augmented: bool },
    /// a comparison operator (`"=="`, `"<"`, …) between two operands
    Compare(&'a str),
}

/// Everything the lanes may look at.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    pub target: Target<'a>,
    pub receiver: Option<&'a Operand>,
    pub args: &'a [Operand],
    pub keywords: &'a [Keyword],
    /// a `*args` argument was present
    pub starred: bool,
}

/// Which evaluated value becomes an operand of the IR op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperandRef {
    Receiver,
    Arg(usize),
    Keyword(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub rule: &'static Rule,
    pub result: TensorTy,
    pub op: Op,
    pub options: Options,
    pub operands: Vec<OperandRef>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Claimed(Claim),
    Rejected { code: &'static Code, message: String },
    NotCovered(String),
    /// not covered because an input's type is unresolved: a knock-on of an earlier failure
    /// (the report links it to the failed sites, `caused_by`; text output hides it)
    Unresolved(String),
    /// not a torch site at all (scalar arithmetic, a non-torch call)
    NotASite,
}

impl Decision {
    pub fn reject(code: &'static Code, message: impl Into<String>) -> Decision {
        Decision::Rejected { code, message: message.into() }
    }
}

/// Site kind and canonical target name for the report.
pub fn describe_target(target: Target) -> (SiteKind, String) {
    match target {
        Target::Function(path) => (SiteKind::Call, path.to_string()),
        Target::Method(name) => (SiteKind::Method, format!("Tensor.{name}")),
        Target::BinOp { op, augmented } => {
            let sym = operator_symbol(op);
            (SiteKind::Binop, if augmented { format!("{sym}=") } else { sym.to_string() })
        }
        Target::Compare(sym) => (SiteKind::Binop, sym.to_string()),
    }
}

pub fn operator_symbol(op: Operator) -> &'static str {
    match op {
        Operator::Add => "+",
        Operator::Sub => "-",
        Operator::Mult => "*",
        Operator::MatMult => "@",
        Operator::Div => "/",
        Operator::Mod => "%",
        Operator::Pow => "**",
        Operator::LShift => "<<",
        Operator::RShift => ">>",
        Operator::BitOr => "|",
        Operator::BitXor => "^",
        Operator::BitAnd => "&",
        Operator::FloorDiv => "//",
    }
}

/// Route a site to its lane; then the device and rank-0 gates every lane shares.
pub fn decide(q: &Query) -> Decision {
    let decision = match q.target {
        Target::Function(path) => decide_function(q, path),
        Target::Method(name) => decide_method(q, name),
        Target::BinOp { op, augmented } => binops::binop(q, op, augmented),
        Target::Compare(sym) => masking::operator(q, sym),
    };
    rank0_gate(q, cuda_gate(q, decision))
}

/// A rank-0 tensor operand (`torch.full([], v)`, `x[0, 0]`, a reduction over every dim) is
/// claimed only by elementwise ops, which broadcast it as eager does: the lanes that take
/// dims, sizes or shapes check them for ranks 1 and up, and eager's errors on a rank-0
/// tensor (`torch.stack(s)`, `F.normalize(s)`, `s.t()`) are its own.
fn rank0_gate(q: &Query, decision: Decision) -> Decision {
    let Decision::Claimed(claim) = &decision else { return decision };
    let operands = q.receiver.into_iter().chain(q.args.iter()).chain(q.keywords.iter().map(|k| &k.value));
    let rank0 = operands.into_iter().any(|o| matches!(o.ty, Ty::Tensor(t) if t.rank == 0));
    let elementwise = claim.op.unary().is_some()
        || claim.op.binary().is_some()
        || matches!(claim.op, Op::Where | Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Maximum | Op::Minimum | Op::PowTensor);
    if rank0 && !elementwise {
        return Decision::reject(&rules::RANK0_RESULT, format!("`{}` of a rank-0 tensor is not claimed (elementwise ops take one)", claim.op.name()));
    }
    decision
}

/// `-t`, the unary minus operator on a tensor (eager's `torch.neg`).
pub fn negation(operand: &Operand) -> Decision {
    let decision = match int64_tensor(operand) {
        Some(t) => Decision::Claimed(Claim { rule: &rules::INT64_SIGN, result: t, op: Op::Neg, options: Options::None, operands: vec![OperandRef::Receiver] }),
        None => match f32_tensor(operand, "operand of unary `-`") {
            Ok(t) => Decision::Claimed(Claim { rule: &rules::NEG_OPERATOR, result: t, op: Op::Neg, options: Options::None, operands: vec![OperandRef::Receiver] }),
            Err(d) => d,
        },
    };
    let q = Query { target: Target::Method("neg"), receiver: Some(operand), args: &[], keywords: &[], starred: false };
    cuda_gate(&q, decision)
}

/// What the CUDA kernels do not take yet is rejected on `cuda:0` with its own code: an op
/// without a kernel (its table row's `cuda_kernel` is empty), and `t ** e` for an exponent
/// other than those eager's CUDA kernel computes exactly (`CUDA_POW_EXPONENTS`).
pub(crate) fn cuda_gate(q: &Query, decision: Decision) -> Decision {
    let Decision::Claimed(claim) = &decision else { return decision };
    if claim.result.device != Device::Cuda0 {
        return decision;
    }
    if claim.op.info().cuda_kernel.is_empty() {
        return Decision::reject(&rules::CUDA_UNSUPPORTED, format!("`{}` is CPU-only so far", claim.op.name()));
    }
    if claim.op == Op::Pow {
        let exponent = claim.operands.last().and_then(|&at| operand(q, at)).map(|o| &o.lit);
        let value = match exponent {
            Some(Lit::Int(i)) => Some(*i as f64),
            Some(Lit::Float(f)) => Some(*f),
            _ => None,
        };
        if !value.is_some_and(|v| CUDA_POW_EXPONENTS.contains(&v)) {
            return Decision::reject(
                &rules::CUDA_UNSUPPORTED,
                format!("`t ** e` on cuda:0 is lowered for a literal e in {CUDA_POW_EXPONENTS:?} (the exponents eager's CUDA kernel computes exactly)"),
            );
        }
    }
    decision
}

/// The operand a claim refers to.
fn operand<'q>(q: &Query<'q>, at: OperandRef) -> Option<&'q Operand> {
    match at {
        OperandRef::Receiver => q.receiver,
        OperandRef::Arg(i) => q.args.get(i),
        OperandRef::Keyword(i) => q.keywords.get(i).map(|k| &k.value),
    }
}

fn decide_function(q: &Query, path: &str) -> Decision {
    if let Some(op) = Op::from_function(path) {
        if let Some(whole) = reductions::whole_op(q, op) {
            return reductions::whole(q, whole, path);
        }
        return match op.info().lane {
            Lane::Linear => linear::functional_linear(q),
            Lane::Activations => activations::function(q, op, path),
            Lane::Unary => unary::function(q, op, path),
            Lane::Gelu => gelu::functional_gelu(q),
            Lane::Binops => binops::function(q, op, path),
            Lane::Reductions if matches!(op, Op::Norm | Op::VectorNorm) => reductions::vector_norm(q, op, path),
            Lane::Reductions if !params::of(op).is_empty() => reductions::over_dims(q, op, path),
            Lane::Reductions => reductions::function(q, op, path),
            Lane::Classification => classification::function(q, op, path),
            Lane::Views => views::function(q, op, path),
            Lane::Pointwise => pointwise::function(q, op, path),
            Lane::Norms => norms::function(q, op, path),
            Lane::Vision => vision::function(q, op, path),
            Lane::Embedding => embedding::function(q, op, path),
            Lane::Masking => masking::function(q, op, path),
            Lane::Creation => creation::function(q, op, path),
            Lane::Attention => attention::function(q, op, path),
            Lane::Distributions => distributions::function(q, op, path),
        };
    }
    match Op::from_rejected_function(path) {
        Some(Op::Gelu) => gelu::module(),
        Some(op) => not_in_lane(op),
        None if path == "torch" || path.starts_with("torch.") => {
            let claimed = torchlower_ops::TABLE.iter().flat_map(|row| row.functions.iter().copied());
            Decision::NotCovered(format!("`{path}` is not part of the claimed surface{}", listed(&relatives(path, claimed), "")))
        }
        None => Decision::NotASite,
    }
}

/// Claimed spellings whose last name shares a stem with `path`'s (one contains the other, or
/// they differ in at most two letters), closest first, at most three: what a user who wrote
/// `F.embedding_bag` or `x.sigmoid_()` may use instead.
fn relatives<'t>(path: &str, claimed: impl Iterator<Item = &'t str>) -> Related<'t> {
    let claimed: Vec<&'t str> = claimed.collect();
    // another name of the same op (NumPy-style aliases, `torch.special`): that one alone
    if let Some((_, same)) = ALIASES.iter().find(|(alias, _)| path.ends_with(alias)) {
        let wanted = path.replacen(path.rsplit('.').next().unwrap_or(path), same, 1);
        if let Some(found) = claimed.iter().find(|c| **c == wanted || c.rsplit('.').next() == Some(same)) {
            return Related::Same(found);
        }
    }
    let last = |p: &'t str| p.rsplit('.').next().unwrap_or(p);
    let name = path.rsplit('.').next().unwrap_or(path).trim_end_matches('_');
    let related = |other: &str| {
        let short = name.len().min(other.len()) >= 3;
        other != name && short && (other.contains(name) || name.contains(other) || edit_distance(name, other) <= 2)
    };
    let mut found: Vec<&str> = claimed.into_iter().filter(|c| *c != path && related(last(c))).collect();
    found.sort_by_key(|c| (edit_distance(name, last(c)), c.len()));
    found.dedup();
    found.truncate(3);
    Related::Close(found)
}

/// What the claimed surface has near an unclaimed spelling.
enum Related<'t> {
    /// the same op under another name
    Same(&'t str),
    /// spellings with a similar name
    Close(Vec<&'t str>),
}

/// Other names torch gives the same op (the last name of a spelling → the claimed one's).
const ALIASES: &[(&str, &str)] = &[
    ("expit", "sigmoid"),
    ("subtract", "sub"),
    ("multiply", "mul"),
    ("divide", "div"),
    ("true_divide", "div"),
    ("absolute", "abs"),
    ("negative", "neg"),
    ("clip", "clamp"),
    ("concat", "cat"),
    ("concatenate", "cat"),
    ("greater", "gt"),
    ("less", "lt"),
    ("greater_equal", "ge"),
    ("less_equal", "le"),
    ("not_equal", "ne"),
    ("arctan", "atan"),
    ("fix", "trunc"),
];

/// `; the same op is claimed as `a`` or `; claimed relatives: `a`, `b`` (each name after
/// `prefix`), or nothing.
fn listed(related: &Related, prefix: &str) -> String {
    match related {
        Related::Same(name) => format!("; the same op is claimed as `{prefix}{name}`"),
        Related::Close(found) if found.is_empty() => String::new(),
        Related::Close(found) => {
            let names: Vec<String> = found.iter().map(|c| format!("`{prefix}{c}`")).collect();
            format!("; claimed relatives: {}", names.join(", "))
        }
    }
}

/// Levenshtein distance of two short names (bytes; names are ASCII identifiers).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != cb)).min(row[j] + 1).min(current + 1);
            previous = current;
        }
    }
    row[b.len()]
}

fn decide_method(q: &Query, name: &str) -> Decision {
    let Some(receiver) = q.receiver else { return Decision::NotASite };
    let base = name.strip_suffix('_').unwrap_or(name);
    let in_place = name.ends_with('_') && !name.starts_with('_');
    let known = Op::from_method(base).is_some()
        || Op::from_rejected_method(base).is_some()
        || TRANSFER_METHODS.contains(&name)
        || VIEW_METHODS.contains(&name);
    match receiver.ty {
        Ty::Tensor(_) => {}
        Ty::Unknown if known => {
            return Decision::Unresolved(format!("receiver of `.{name}()` has an unresolved type"));
        }
        _ => return Decision::NotASite,
    }
    if in_place {
        return Decision::reject(&rules::IN_PLACE, format!("`.{name}()` modifies its receiver in place"));
    }
    if TRANSFER_METHODS.contains(&name) {
        return Decision::reject(&rules::DEVICE_TRANSFER, format!("`.{name}()` transfers or converts the tensor"));
    }
    if VIEW_METHODS.contains(&name) {
        return Decision::reject(&rules::VIEW_OP, format!("`.{name}()` returns a view or reshaped alias"));
    }
    if let Some(op) = Op::from_method(name) {
        if let Some(whole) = reductions::whole_op(q, op) {
            return reductions::whole(q, whole, &format!(".{name}()"));
        }
        return match op.info().lane {
            Lane::Activations => activations::method(q, receiver, op),
            Lane::Unary => unary::method(q, receiver, op, name),
            Lane::Binops if matches!(op, Op::Bmm | Op::Mm) => binops::fixed_rank_product_method(q, receiver, op),
            Lane::Binops if matches!(op, Op::Addmm | Op::Baddbmm) => binops::add_product(q, op, &format!(".{name}()")),
            Lane::Binops if op == Op::DivMode => binops::div_mode_call(q, op, &format!(".{name}()")).unwrap_or_else(|| not_in_lane(op)),
            Lane::Binops if op == Op::Remainder => binops::remainder_call(q, &format!(".{name}()")),
            Lane::Binops if op.binary().is_some() => binops::arith_method(q, receiver, op, name),
            Lane::Binops => binops::matmul_method(q, receiver),
            Lane::Reductions if op == Op::Norm => reductions::vector_norm(q, op, &format!(".{name}()")),
            Lane::Reductions if !params::of(op).is_empty() => reductions::over_dims(q, op, &format!(".{name}()")),
            Lane::Reductions => reductions::method(q, receiver, op, name),
            Lane::Classification => classification::method(q, receiver, op),
            Lane::Views => views::method(q, receiver, op, name),
            Lane::Pointwise => pointwise::method(q, receiver, op, name),
            Lane::Masking => masking::method(q, receiver, op, name),
            Lane::Embedding => embedding::method(q, op, name),
            Lane::Linear | Lane::Gelu | Lane::Norms | Lane::Vision | Lane::Creation | Lane::Attention | Lane::Distributions => {
                not_in_lane(op)
            }
        };
    }
    match Op::from_rejected_method(name) {
        Some(Op::Gelu) => gelu::method(),
        Some(op) => not_in_lane(op),
        None => {
            let claimed = torchlower_ops::TABLE.iter().flat_map(|row| row.methods.iter().copied());
            Decision::NotCovered(format!("`Tensor.{name}` is not part of the claimed surface{}", listed(&relatives(name, claimed), "Tensor.")))
        }
    }
}

/// A spelling the op table gives to a lane that has no claim logic for it: a table row
/// without its lane code. Never reached for a complete table (`tests/op_table.rs` claims every
/// spelling); not a panic, so a half-added op degrades to "not covered".
fn not_in_lane(op: Op) -> Decision {
    Decision::NotCovered(format!("`{}` has no claim logic in the {} lane", op.name(), op.info().lane.title()))
}

// ---- checks shared by the lanes -------------------------------------------------------------

/// A float32 tensor operand, or the decision explaining why not (`what` names it).
pub fn f32_tensor(op: &Operand, what: &str) -> Result<TensorTy, Decision> {
    match op.ty {
        Ty::Tensor(t) if t.dtype == Dtype::F32 => Ok(t),
        Ty::Unknown => Err(Decision::Unresolved(format!("{what} has an unresolved type"))),
        other => Err(Decision::reject(&rules::NOT_F32_OPERAND, format!("{what} is {}, not a float32 tensor", other.describe()))),
    }
}

/// The operand's type when it is an int64 tensor (on the CPU, the only device they have).
pub fn int64_tensor(op: &Operand) -> Option<TensorTy> {
    match op.ty {
        Ty::Tensor(t) if t.dtype == Dtype::I64 => Some(t),
        _ => None,
    }
}

/// Every tensor operand must live on one device.
pub fn one_device(tensors: &[TensorTy]) -> Result<Device, Decision> {
    let first = tensors.first().map(|t| t.device).unwrap_or(Device::Cpu);
    if tensors.iter().all(|t| t.device == first) {
        Ok(first)
    } else {
        Err(Decision::reject(&rules::MIXED_DEVICE, "operands live on different devices (cpu and cuda:0)"))
    }
}

/// No `*args` and exactly `n` positional arguments.
pub fn positional_exactly(q: &Query, n: usize, form: &str) -> Result<(), Decision> {
    if q.starred {
        return Err(Decision::reject(&rules::BAD_ARITY, format!("{form}: starred arguments are not supported")));
    }
    if q.args.len() != n {
        return Err(Decision::reject(
            &rules::BAD_ARITY,
            format!("{form} takes exactly {n} positional argument{}, got {}", if n == 1 { "" } else { "s" }, q.args.len()),
        ));
    }
    Ok(())
}

/// Reject any keyword except those in `allowed` (validated by the lane).
pub fn keywords_only(q: &Query, allowed: &[&str], form: &str) -> Result<(), Decision> {
    for kw in q.keywords {
        match &kw.name {
            Some(name) if allowed.contains(&name.as_str()) => {}
            Some(name) => return Err(Decision::reject(&rules::BAD_KEYWORD, format!("{form}: keyword `{name}` is not supported"))),
            None => return Err(Decision::reject(&rules::BAD_KEYWORD, format!("{form}: `**` keyword arguments are not supported"))),
        }
    }
    Ok(())
}

/// The keyword named `name`, with its index.
pub fn keyword<'a>(q: &Query<'a>, name: &str) -> Option<(usize, &'a Operand)> {
    q.keywords.iter().enumerate().find(|(_, k)| k.name.as_deref() == Some(name)).map(|(i, k)| (i, &k.value))
}

/// Shared shape of one-tensor elementwise ops (activations, unary math, gelu): the result has
/// the operand's type.
pub fn elementwise_result(input: TensorTy) -> TensorTy {
    input
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    pub fn t(ty: TensorTy) -> Operand {
        Operand { ty: Ty::Tensor(ty), lit: Lit::NotLiteral }
    }
    pub fn int(v: i64) -> Operand {
        Operand { ty: Ty::Int, lit: Lit::Int(v) }
    }
    pub fn float(v: f64) -> Operand {
        Operand { ty: Ty::Float, lit: Lit::Float(v) }
    }
    pub fn boolean(v: bool) -> Operand {
        Operand { ty: Ty::Bool, lit: Lit::Bool(v) }
    }
    pub fn none() -> Operand {
        Operand { ty: Ty::NoneVal, lit: Lit::None }
    }
    pub fn string(s: &str) -> Operand {
        Operand { ty: Ty::Str, lit: Lit::Str(s.to_string()) }
    }
    pub fn unknown() -> Operand {
        Operand { ty: Ty::Unknown, lit: Lit::NotLiteral }
    }
    pub fn kw(name: &str, value: Operand) -> Keyword {
        Keyword { name: Some(name.to_string()), value }
    }
    pub fn call(path: &str, args: &[Operand], keywords: &[Keyword]) -> Decision {
        decide(&Query { target: Target::Function(path), receiver: None, args, keywords, starred: false })
    }
    pub fn method(recv: &Operand, name: &str, args: &[Operand], keywords: &[Keyword]) -> Decision {
        decide(&Query { target: Target::Method(name), receiver: Some(recv), args, keywords, starred: false })
    }
    /// (rule id, result marker) of a claim, or the code / "not_covered".
    pub fn outcome(d: &Decision) -> (String, String) {
        match d {
            Decision::Claimed(c) => (c.rule.id.to_string(), c.result.marker().unwrap_or("?").to_string()),
            Decision::Rejected { code, .. } => (code.code.to_string(), String::new()),
            Decision::NotCovered(_) | Decision::Unresolved(_) => ("not_covered".into(), String::new()),
            Decision::NotASite => ("not_a_site".into(), String::new()),
        }
    }
}

#[cfg(test)]
mod relatives_tests {
    use super::*;

    fn message(path: &str) -> String {
        match decide(&Query { target: Target::Function(path), receiver: None, args: &[], keywords: &[], starred: false }) {
            Decision::NotCovered(message) => message,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn unclaimed_spellings_name_the_claimed_ones_near_them() {
        assert!(message("torch.special.expit").ends_with("the same op is claimed as `torch.sigmoid`"));
        assert!(message("torch.subtract").ends_with("the same op is claimed as `torch.sub`"));
        assert!(message("torch.nn.functional.embedding_renorm").contains("claimed relatives: `torch.nn.functional.embedding`"));
        // nothing near: the plain message
        assert_eq!(message("torch.fft.rfftn"), "`torch.fft.rfftn` is not part of the claimed surface");
        assert_eq!(edit_distance("logsoftmax", "log_softmax"), 1);
    }
}
