//! Lane: binary operators `+ - * / @`, `torch.matmul` / `.matmul`, and `torch.add/sub/mul/div`.
//!
//! Elementwise: float32 tensors of ranks 1–4; the result has the larger rank (torch
//! broadcasting; sizes that do not broadcast raise eager's error at run time). Matmul: 2/2 → 2,
//! 2/1 or 1/2 → 1, batched (a rank ≥ 3 side) → the larger rank, or one less with a rank-1
//! side; 1/1 would be rank 0.

use super::{f32_tensor, keywords_only, one_device, positional_exactly, Claim, Decision, Operand, OperandRef, Query};
use crate::ir::{Op, Options};
use crate::rules::{self, Rule};
use crate::ty::{Device, Dtype, TensorTy, Ty};
use ruff_python_ast::Operator;

/// The rule of an arithmetic op with a Python number as one operand.
fn scalar_rule(op: Op) -> Option<&'static Rule> {
    Some(match op {
        Op::Add => &rules::ADD_SCALAR,
        Op::Sub => &rules::SUB_SCALAR,
        Op::Mul => &rules::MUL_SCALAR,
        Op::Div => &rules::DIV_SCALAR,
        _ => return None,
    })
}

/// (same-rank operator rule, broadcast operator rule, `torch.X` rule) of an arithmetic op.
fn arith_rules(op: Op) -> Option<(&'static Rule, &'static Rule, &'static Rule)> {
    Some(match op {
        Op::Add => (&rules::ADD_SAME, &rules::ADD_BCAST, &rules::FUNCTION_ADD),
        Op::Sub => (&rules::SUB_SAME, &rules::SUB_BCAST, &rules::FUNCTION_SUB),
        Op::Mul => (&rules::MUL_SAME, &rules::MUL_BCAST, &rules::FUNCTION_MUL),
        Op::Div => (&rules::DIV_SAME, &rules::DIV_BCAST, &rules::FUNCTION_DIV),
        _ => return None,
    })
}

/// `a <op> b` (and `a <op>= b`). Scalar-only operands are not a torch site.
pub fn binop(q: &Query, op: Operator, augmented: bool) -> Decision {
    let (Some(left), Some(right)) = (q.args.first(), q.args.get(1)) else { return Decision::NotASite };
    let tensorish = |o: &Operand| matches!(o.ty, Ty::Tensor(_) | Ty::Unknown);
    if !tensorish(left) && !tensorish(right) {
        return Decision::NotASite;
    }
    let sym = super::operator_symbol(op);
    if left.ty == Ty::Unknown || right.ty == Ty::Unknown {
        return Decision::Unresolved(format!("an operand of `{sym}` has an unresolved type"));
    }
    if augmented {
        return Decision::reject(&rules::IN_PLACE, format!("`{sym}=` on a tensor updates it in place"));
    }
    match Op::from_operator(sym) {
        Some(Op::Matmul) => matmul(left, right, &rules::MATMUL_OP_2D, &rules::MATMUL_OP_MIXED, "`@`", [OperandRef::Arg(0), OperandRef::Arg(1)]),
        Some(Op::Pow) => super::pointwise::power_operator(left, right),
        Some(op @ (Op::LogicalAnd | Op::LogicalOr | Op::LogicalXor)) => {
            super::masking::logical(q, op, &format!("`{sym}`"), q.args, [OperandRef::Arg(0), OperandRef::Arg(1)]).unwrap_or_else(|| super::not_in_lane(op))
        }
        Some(Op::DivMode) => div_mode(left, right, 0, "`//`", [OperandRef::Arg(0), OperandRef::Arg(1)]),
        Some(Op::Remainder) => rounded(Op::Remainder, left, right, 0, "`%`", [OperandRef::Arg(0), OperandRef::Arg(1)]),
        Some(op) => match arith_rules(op) {
            Some((same, bcast, _)) => {
                let form = format!("`{sym}`");
                with_number(left, right, op, &form, true).unwrap_or_else(|| elementwise(left, right, op, same, bcast, &form))
            }
            None => super::not_in_lane(op),
        },
        None => Decision::NotCovered(format!("tensor operator `{sym}` is not part of the claimed surface")),
    }
}

/// `a // b` and the other spellings of a rounded division (`choice`: 0 floor, 1 trunc): a
/// float32 or int64 tensor by such a tensor or a Python number, on the CPU; int64 when both
/// sides are integers, float32 otherwise, as eager promotes.
fn div_mode(input: &Operand, other: &Operand, choice: u8, form: &str, operands: [OperandRef; 2]) -> Decision {
    rounded(Op::DivMode, input, other, choice, form, operands)
}

/// `torch.remainder(a, b)` / `a.remainder(b)` (`a % b` is [`binop`]'s).
pub fn remainder_call(q: &Query, form: &str) -> Decision {
    if let Err(d) = keywords_only(q, &[], form) {
        return d;
    }
    match (q.starred, operand_pair(q)) {
        (false, Some((input, other, operands))) => rounded(Op::Remainder, input, other, 0, form, operands),
        _ => Decision::reject(&rules::BAD_ARITY, format!("{form} takes two operands")),
    }
}

/// A rounded division (`DivMode`) or Python's modulo (`Remainder`) of a float32 or int64
/// tensor by such a tensor or a Python number: their dtypes and ranks, as eager promotes.
fn rounded(op: Op, input: &Operand, other: &Operand, choice: u8, form: &str, operands: [OperandRef; 2]) -> Decision {
    let numeric = |t: TensorTy| matches!(t.dtype, Dtype::F32 | Dtype::I64);
    let (a, other_float, other_rank, other_device) = match (input.ty, other.ty) {
        (Ty::Unknown, _) | (_, Ty::Unknown) => return Decision::Unresolved(format!("an operand of {form} has an unresolved type")),
        (Ty::Tensor(a), Ty::Tensor(b)) if numeric(a) && numeric(b) => (a, b.dtype == Dtype::F32, b.rank, Some(b.device)),
        (Ty::Tensor(a), Ty::Int | Ty::Float) if numeric(a) => (a, other.ty == Ty::Float, 0, None),
        (Ty::Int | Ty::Float, Ty::Tensor(_)) => return Decision::reject(&rules::SCALAR_OPERAND, format!("{form} of a number by a tensor is not claimed")),
        _ => return Decision::reject(&rules::NOT_F32_OPERAND, format!("{form}: float32 or int64 tensors and Python numbers are claimed")),
    };
    if a.device != Device::Cpu || other_device.is_some_and(|d| d != Device::Cpu) {
        return Decision::reject(&rules::CUDA_UNSUPPORTED, format!("{form} is claimed on the CPU"));
    }
    let dtype = if a.dtype == Dtype::F32 || other_float { Dtype::F32 } else { Dtype::I64 };
    match TensorTy::new(dtype, Device::Cpu, a.rank.max(other_rank)) {
        Some(result) => Decision::Claimed(Claim {
            rule: if op == Op::Remainder { &rules::REMAINDER } else { &rules::DIV_MODE },
            result,
            op,
            options: Options::Params { present: 0b11, choice },
            operands: operands.to_vec(),
        }),
        None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type of rank {}", a.rank.max(other_rank))),
    }
}

/// `torch.floor_divide(a, b)` / `a.floor_divide(b)`, and `torch.div(a, b, rounding_mode=…)` /
/// `a.div(b, rounding_mode=…)` with a string mode; `None` for a `div` without one (or with
/// `rounding_mode=None`: true division).
pub fn div_mode_call(q: &Query, op: Op, form: &str) -> Option<Decision> {
    let floor_divide = op == Op::DivMode;
    let mode = q.keywords.iter().find(|k| k.name.as_deref() == Some("rounding_mode"));
    let choice = match mode.map(|k| &k.value.lit) {
        _ if floor_divide => 0,
        Some(super::Lit::Str(m)) if m == "floor" => 0,
        Some(super::Lit::Str(m)) if m == "trunc" => 1,
        None | Some(super::Lit::None) => return None,
        Some(_) => return Some(Decision::reject(&rules::BAD_KEYWORD, format!("{form}: `rounding_mode` as \"floor\", \"trunc\" or None (eager raises for another string)"))),
    };
    let allowed: &[&str] = if floor_divide { &[] } else { &["rounding_mode"] };
    if let Err(d) = keywords_only(q, allowed, form) {
        return Some(d);
    }
    if q.starred {
        return Some(Decision::reject(&rules::BAD_ARITY, format!("{form}: starred arguments are not supported")));
    }
    Some(match operand_pair(q) {
        Some((input, other, operands)) => div_mode(input, other, choice, form, operands),
        None => Decision::reject(&rules::BAD_ARITY, format!("{form} takes two operands")),
    })
}

/// The two operands of `a.op(b)` or `torch.op(a, b)`, with where each stands.
fn operand_pair<'q>(q: &Query<'q>) -> Option<(&'q Operand, &'q Operand, [OperandRef; 2])> {
    match (q.receiver, q.args) {
        (Some(input), [other]) => Some((input, other, [OperandRef::Receiver, OperandRef::Arg(0)])),
        (None, [input, other]) => Some((input, other, [OperandRef::Arg(0), OperandRef::Arg(1)])),
        _ => None,
    }
}

/// A claimed function of the lane: `torch.matmul` or an arithmetic `torch.add` & co.
pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    if op == Op::Einsum {
        return einsum(q, path);
    }
    if op == Op::Tensordot {
        return tensordot(q, path);
    }
    if matches!(op, Op::DivMode | Op::Div) {
        if let Some(decision) = div_mode_call(q, op, path) {
            return decision;
        }
    }
    if op == Op::Remainder {
        return remainder_call(q, path);
    }
    if matches!(op, Op::Addmm | Op::Baddbmm) {
        return add_product(q, op, path);
    }
    if op == Op::Matmul {
        return matmul_call(q);
    }
    if matches!(op, Op::Bmm | Op::Mm) {
        if let Err(d) = keywords_only(q, &[], path).and_then(|_| positional_exactly(q, 2, path)) {
            return d;
        }
        return fixed_rank_product(op, &q.args[0], &q.args[1], path, [OperandRef::Arg(0), OperandRef::Arg(1)]);
    }
    arith_function(q, op, path)
}

/// `torch.tensordot(a, b, dims)` with `dims` split by the walk into `dims_a` and `dims_b`:
/// float32 tensors on one device, as many dims on each side; the result has the dims left
/// over (`rank(a) + rank(b) - 2k`). Which dims, and their sizes, libtorch checks.
fn tensordot(q: &Query, path: &str) -> Decision {
    let bound = match super::params::bind(q, Op::Tensordot, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let (Some(a), Some(b)) = (bound.tensor("a"), bound.tensor("b")) else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs two tensors"));
    };
    let count = |name: &str| match bound.literal(name) {
        Some(super::Lit::Ints(dims)) => Some(dims.len()),
        _ => None,
    };
    let (Some(k), Some(k_b)) = (count("dims_a"), count("dims_b")) else {
        return Decision::reject(&rules::BAD_KEYWORD, format!("{path}: `dims` as lists of Python ints"));
    };
    if k != k_b {
        return Decision::reject(&rules::BAD_RANKS, format!("{path}: {k} dims of `a` against {k_b} of `b` (eager raises RuntimeError)"));
    }
    if k > usize::from(a.rank.min(b.rank)) {
        return Decision::reject(&rules::BAD_RANKS, format!("{path}: {k} contracted dims of a rank-{} and a rank-{} tensor (eager raises RuntimeError)", a.rank, b.rank));
    }
    let rank = usize::from(a.rank) + usize::from(b.rank) - 2 * k;
    match u8::try_from(rank).ok().and_then(|r| TensorTy::new(a.dtype, a.device, r)) {
        Some(result) => bound.claim(&rules::TENSORDOT, Op::Tensordot, result),
        None => Decision::reject(&rules::BAD_RANKS, format!("{path}: the result would be rank {rank} (no tensor type has that rank)")),
    }
}

/// `torch.einsum(equation, *operands)` (the walk spreads a list of operands): a string literal
/// whose subscripts fit the operands' ranks, tensors of one dtype (float32 or int64) and
/// device; the result's rank follows from the output subscripts (explicit after `->`, or the
/// letters used once, as eager's implicit form). Sizes are checked by libtorch's kernel.
fn einsum(q: &Query, path: &str) -> Decision {
    if let Err(d) = keywords_only(q, &[], path) {
        return d;
    }
    let Some((equation, operands)) = q.args.split_first() else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs the equation and the operands"));
    };
    let super::Lit::Str(equation) = &equation.lit else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path}: the equation as a string literal is claimed"));
    };
    let mut tensors = Vec::new();
    for o in operands {
        match o.ty {
            Ty::Tensor(t) => tensors.push(t),
            Ty::Unknown => return Decision::Unresolved(format!("an operand of {path} has an unresolved type")),
            other => return Decision::reject(&rules::BAD_ARITY, format!("{path}: the operands are tensors (not {})", other.describe())),
        }
    }
    let Some(first) = tensors.first().copied() else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} of no operands (eager raises)"));
    };
    if tensors.iter().any(|t| t.dtype != first.dtype) || first.dtype == Dtype::Bool {
        return Decision::reject(&rules::NOT_F32_OPERAND, format!("{path}: operands of one dtype, float32 or int64"));
    }
    if let Err(d) = one_device(&tensors) {
        return d;
    }
    let ranks: Vec<u8> = tensors.iter().map(|t| t.rank).collect();
    let text: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let rank = match einsum_rank(&text, &ranks) {
        Ok(rank) => rank,
        Err(why) => return Decision::reject(&rules::BAD_RANKS, format!("{path}(\"{equation}\"): {why}")),
    };
    if text.len() > crate::ir::EQUATION_BYTES {
        return Decision::reject(&rules::BAD_ARITY, format!("{path}: an equation longer than {} characters", crate::ir::EQUATION_BYTES));
    }
    let mut bytes = [0u8; crate::ir::EQUATION_BYTES];
    bytes[..text.len()].copy_from_slice(text.as_bytes());
    match TensorTy::new(first.dtype, first.device, rank) {
        Some(result) => Decision::Claimed(Claim {
            rule: &rules::EINSUM,
            result,
            op: Op::Einsum,
            options: Options::Equation { text: bytes, len: text.len() as u8 },
            operands: (1..=operands.len()).map(OperandRef::Arg).collect(),
        }),
        None => Decision::reject(&rules::BAD_RANKS, format!("{path}: the result would be rank {rank} (no tensor type has that rank)")),
    }
}

/// The rank of an einsum's result, or why the equation does not fit the operands' ranks:
/// each term's letters (an ellipsis standing for the dims left over, broadcast across terms)
/// against its operand's rank; the output's letters (each used in a term, once in the output)
/// plus the ellipsis dims, or, without `->`, the letters used once.
fn einsum_rank(equation: &str, ranks: &[u8]) -> Result<u8, String> {
    /// A term's letters and whether it has an ellipsis.
    fn term(text: &str) -> Result<(Vec<char>, bool), String> {
        let ellipsis = text.matches("...").count();
        if ellipsis > 1 {
            return Err(format!("`{text}` has more than one ellipsis"));
        }
        let letters: Vec<char> = text.replacen("...", "", 1).chars().collect();
        if let Some(c) = letters.iter().find(|c| !c.is_ascii_alphabetic()) {
            return Err(format!("`{c}` is not a subscript letter"));
        }
        Ok((letters, ellipsis == 1))
    }
    let (inputs, output) = match equation.split_once("->") {
        Some((i, o)) => (i, Some(o)),
        None => (equation, None),
    };
    let terms: Vec<&str> = inputs.split(',').collect();
    if terms.len() != ranks.len() {
        return Err(format!("the equation has {} operand terms, the call passes {} tensors", terms.len(), ranks.len()));
    }
    let mut uses: std::collections::BTreeMap<char, usize> = std::collections::BTreeMap::new();
    let (mut ellipsis_dims, mut any_ellipsis) = (0usize, false);
    for (text, rank) in terms.iter().zip(ranks) {
        let (letters, ellipsis) = term(text)?;
        let rank = usize::from(*rank);
        match (ellipsis, letters.len()) {
            (true, n) if n <= rank => {
                any_ellipsis = true;
                ellipsis_dims = ellipsis_dims.max(rank - n);
            }
            (false, n) if n == rank => {}
            (_, n) => return Err(format!("`{text}` names {n} dims of a rank-{rank} operand")),
        }
        for c in letters {
            *uses.entry(c).or_default() += 1;
        }
    }
    let rank = match output {
        Some(text) => {
            let (letters, ellipsis) = term(text)?;
            if ellipsis != any_ellipsis {
                return Err("an ellipsis in the operands and not in the output (or the reverse)".to_string());
            }
            let mut seen = std::collections::BTreeSet::new();
            for c in &letters {
                if !uses.contains_key(c) || !seen.insert(*c) {
                    return Err(format!("the output subscript `{c}` is not an operand's, or is repeated"));
                }
            }
            letters.len() + if ellipsis { ellipsis_dims } else { 0 }
        }
        None => uses.values().filter(|n| **n == 1).count() + ellipsis_dims,
    };
    u8::try_from(rank).map_err(|_| "too many dims".to_string())
}

/// `torch.addmm(input, mat1, mat2)` (rank-2 product, the input broadcast to it) and
/// `torch.baddbmm(input, batch1, batch2, beta=…, alpha=…)` (rank 3), libtorch's kernels; the
/// method forms (`input.baddbmm(…)`, BLOOM's ALiBi scores) bind the receiver as `input`.
pub fn add_product(q: &Query, op: Op, path: &str) -> Decision {
    let bound = match super::params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let (rule, rank) = if op == Op::Addmm { (&rules::ADDMM, 2) } else { (&rules::BADDBMM, 3) };
    let (first, second) = if op == Op::Addmm { ("mat1", "mat2") } else { ("batch1", "batch2") };
    match (bound.tensor("input"), bound.tensor(first), bound.tensor(second)) {
        (Some(input), Some(a), Some(b)) if a.rank == rank && b.rank == rank && input.rank <= rank => match TensorTy::f32(bound.device, rank) {
            Some(result) => bound.claim(rule, op, result),
            None => Decision::reject(&rules::BAD_RANKS, format!("{path}: no result type")),
        },
        _ => Decision::reject(&rules::BAD_RANKS, format!("{path} takes rank-{rank} products and an input that broadcasts to them")),
    }
}

/// `a.add(b)`, `a.mul(0.5)`, …: one tensor or Python number, no keywords, as the operator;
/// options (`alpha`, `rounding_mode`) are TL240.
pub fn arith_method(q: &Query, receiver: &Operand, op: Op, name: &str) -> Decision {
    let form = format!(".{name}()");
    if op == Op::Div && matches!(name, "div" | "divide") {
        if let Some(decision) = div_mode_call(q, op, &form) {
            return decision;
        }
    }
    let rule = match op {
        Op::Add => &rules::METHOD_ADD,
        Op::Sub => &rules::METHOD_SUB,
        Op::Mul => &rules::METHOD_MUL,
        Op::Div => &rules::METHOD_DIV,
        other => return super::not_in_lane(other),
    };
    let ([other], false, []) = (q.args, q.starred, q.keywords) else {
        return Decision::reject(&rules::ARITH_METHOD, format!("arithmetic method `{form}` with options or other arguments is not claimed"));
    };
    let decision = with_number(receiver, other, op, &form, false).unwrap_or_else(|| elementwise(receiver, other, op, rule, rule, &form));
    // the operands are the receiver and the argument; the number form keeps its own rule
    match decision {
        Decision::Claimed(mut claim) => {
            claim.operands = vec![OperandRef::Receiver, OperandRef::Arg(0)];
            if claim.options == Options::None {
                claim.rule = rule;
            }
            Decision::Claimed(claim)
        }
        other => other,
    }
}

/// `torch.add(a, b)` & co.: two positional tensors, no keywords (no alpha/out/rounding_mode).
fn arith_function(q: &Query, op: Op, form: &str) -> Decision {
    let Some((_, _, rule)) = arith_rules(op) else { return super::not_in_lane(op) };
    if let Err(d) = keywords_only(q, &[], form) {
        return d;
    }
    if let Err(d) = positional_exactly(q, 2, form) {
        return d;
    }
    if let Some(d) = with_number(&q.args[0], &q.args[1], op, form, false) {
        return d;
    }
    elementwise(&q.args[0], &q.args[1], op, rule, rule, form)
}

fn elementwise(left: &Operand, right: &Operand, op: Op, same: &'static Rule, bcast: &'static Rule, form: &str) -> Decision {
    if let Some(decision) = with_integer(left, right, op) {
        return decision;
    }
    match elementwise_types(left, right, form) {
        Ok((a, b, device)) => {
            let (rule, rank) = if a.rank == b.rank { (same, a.rank) } else { (bcast, a.rank.max(b.rank)) };
            match TensorTy::f32(device, rank) {
                Some(result) => Decision::Claimed(Claim { rule, result, op, options: Options::None, operands: vec![OperandRef::Arg(0), OperandRef::Arg(1)] }),
                None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type for ranks {} and {}", a.rank, b.rank)),
            }
        }
        Err(d) => d,
    }
}

/// Two tensors of which one or both are integer (int64 or int32; the other integer or
/// float32), on the CPU: eager's promotion — integer `+ - *` integer stays integer, the wider
/// of the two (libtorch's kernels, which wrap on overflow as eager's do), `/` and any float32
/// operand give float32. The values are libtorch's (the fused kernels take float32 only, so
/// these run op by op). `None` when no operand is an integer tensor.
fn with_integer(left: &Operand, right: &Operand, op: Op) -> Option<Decision> {
    let (Ty::Tensor(a), Ty::Tensor(b)) = (left.ty, right.ty) else { return None };
    if !a.dtype.is_integer() && !b.dtype.is_integer() {
        return None;
    }
    let numeric = |t: TensorTy| t.dtype.is_integer() || t.dtype == Dtype::F32;
    if !numeric(a) || !numeric(b) || a.device != Device::Cpu || b.device != Device::Cpu {
        return None; // the float32 rules give the code
    }
    let dtype = if op == Op::Div { Dtype::F32 } else { a.dtype.promote(b.dtype) };
    let rank = a.rank.max(b.rank);
    Some(match TensorTy::new(dtype, Device::Cpu, rank) {
        Some(result) => Decision::Claimed(Claim { rule: &rules::INT64_ELEMENTWISE, result, op, options: Options::None, operands: vec![OperandRef::Arg(0), OperandRef::Arg(1)] }),
        None => Decision::reject(&rules::BAD_RANKS, format!("no result type for ranks {} and {}", a.rank, b.rank)),
    })
}

/// A float32 tensor with a Python int or float on either side (`number_left`: the form lets
/// the number come first, as operators do and `torch.add(2.0, t)` does not): the result has
/// the tensor's type. `None` when neither operand is a number.
fn with_number(left: &Operand, right: &Operand, op: Op, form: &str, number_left: bool) -> Option<Decision> {
    let number = |o: &Operand| matches!(o.ty, Ty::Int | Ty::Float);
    let (tensor, options) = match (number(left), number(right)) {
        (false, true) => (left, Options::ScalarRight),
        (true, false) if number_left => (right, Options::ScalarLeft),
        _ => return None,
    };
    let rule = scalar_rule(op)?;
    let t = match tensor.ty {
        Ty::Tensor(t) if t.dtype.is_integer() => {
            let number = if matches!(options, Options::ScalarRight) { right } else { left };
            return Some(integer_with_number(t, number.ty, op, form, options));
        }
        Ty::Unknown => return Some(Decision::Unresolved(format!("an operand of {form} has an unresolved type"))),
        _ => match f32_tensor(tensor, "tensor operand") {
            Ok(t) => t,
            Err(d) => return Some(d),
        },
    };
    Some(Decision::Claimed(Claim { rule, result: t, op, options, operands: vec![OperandRef::Arg(0), OperandRef::Arg(1)] }))
}

/// An integer tensor with a Python number, on the CPU: eager's promotion — an int with `+ - *`
/// keeps the tensor's dtype (libtorch's kernel with an integer scalar, wrapping on overflow as
/// eager's does), `/` or a float gives float32 (torch's default dtype). T5's bucket arithmetic,
/// position offsets (`positions + past_length`), label shifts.
fn integer_with_number(t: TensorTy, number: Ty, op: Op, form: &str, options: Options) -> Decision {
    // integer tensors exist on the CPU only (`ty::MARKERS`)
    let dtype = if number == Ty::Int && op != Op::Div { t.dtype } else { Dtype::F32 };
    match TensorTy::new(dtype, Device::Cpu, t.rank) {
        Some(result) => Decision::Claimed(Claim { rule: &rules::INT64_NUMBER, result, op, options, operands: vec![OperandRef::Arg(0), OperandRef::Arg(1)] }),
        None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type for rank {}", t.rank)),
    }
}

/// Both operands float32 tensors on one device (scalars, int64 and mixes are rejected).
fn elementwise_types(left: &Operand, right: &Operand, form: &str) -> Result<(TensorTy, TensorTy, Device), Decision> {
    for o in [left, right] {
        if o.ty == Ty::Unknown {
            return Err(Decision::Unresolved(format!("an operand of {form} has an unresolved type")));
        }
    }
    for o in [left, right] {
        match o.ty {
            Ty::Tensor(t) if t.dtype.is_integer() => {
                return Err(Decision::reject(&rules::INT64_ARITH, format!("{form} on an integer tensor ({})", o.ty.describe())))
            }
            Ty::Tensor(_) => {}
            other => {
                return Err(Decision::reject(&rules::SCALAR_OPERAND, format!("{form} with a scalar operand of type {}", other.describe())))
            }
        }
    }
    let a = f32_tensor(left, "left operand")?;
    let b = f32_tensor(right, "right operand")?;
    let device = one_device(&[a, b])?;
    Ok((a, b, device))
}

/// `a.bmm(b)`, `a.mm(b)`.
pub fn fixed_rank_product_method(q: &Query, receiver: &Operand, op: Op) -> Decision {
    let form = format!(".{}()", op.info().name);
    if let Err(d) = keywords_only(q, &[], &form).and_then(|_| positional_exactly(q, 1, &form)) {
        return d;
    }
    fixed_rank_product(op, receiver, &q.args[0], &form, [OperandRef::Receiver, OperandRef::Arg(0)])
}

/// `torch.bmm(a, b)` (two float32 rank-3 tensors) and `torch.mm(a, b)` (rank 2): the other
/// sizes are checked by libtorch, with eager's message.
fn fixed_rank_product(op: Op, left: &Operand, right: &Operand, form: &str, operands: [OperandRef; 2]) -> Decision {
    let (a, b, device) = match elementwise_types(left, right, form) {
        Ok(v) => v,
        Err(d) => return d,
    };
    let (rule, rank) = if op == Op::Mm { (&rules::MM, 2) } else { (&rules::BMM, 3) };
    if (a.rank, b.rank) != (rank, rank) {
        return Decision::reject(&rules::BAD_RANKS, format!("{form} takes two rank-{rank} tensors, got ranks {} and {}", a.rank, b.rank));
    }
    match TensorTy::f32(device, rank) {
        Some(result) => Decision::Claimed(Claim { rule, result, op, options: Options::None, operands: operands.to_vec() }),
        None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type")),
    }
}

/// `torch.matmul(a, b)`: two positional, no keywords.
fn matmul_call(q: &Query) -> Decision {
    if let Err(d) = keywords_only(q, &[], "torch.matmul") {
        return d;
    }
    if let Err(d) = positional_exactly(q, 2, "torch.matmul") {
        return d;
    }
    matmul(&q.args[0], &q.args[1], &rules::MATMUL_CALL_2D, &rules::MATMUL_CALL_MIXED, "torch.matmul", [OperandRef::Arg(0), OperandRef::Arg(1)])
}

/// `a.matmul(b)`: one positional, no keywords.
pub fn matmul_method(q: &Query, receiver: &Operand) -> Decision {
    if let Err(d) = keywords_only(q, &[], ".matmul()") {
        return d;
    }
    if let Err(d) = positional_exactly(q, 1, ".matmul()") {
        return d;
    }
    matmul(receiver, &q.args[0], &rules::MATMUL_CALL_2D, &rules::MATMUL_CALL_MIXED, ".matmul()", [OperandRef::Receiver, OperandRef::Arg(0)])
}

fn matmul(left: &Operand, right: &Operand, rule_2d: &'static Rule, rule_mixed: &'static Rule, form: &str, operands: [OperandRef; 2]) -> Decision {
    let (a, b, device) = match elementwise_types(left, right, form) {
        Ok(v) => v,
        Err(d) => return d,
    };
    let (rule, rank) = match (a.rank, b.rank) {
        (2, 2) => (rule_2d, 2),
        (2, 1) | (1, 2) => (rule_mixed, 1),
        (1, 1) => return Decision::reject(&rules::RANK0_RESULT, format!("{form} of two rank-1 tensors is a rank-0 dot product")),
        // batched: a rank-1 side is a vector (its dim dropped), else batch dims broadcast
        (x, 1) | (1, x) => (rule_mixed, x - 1),
        (x, y) => (rule_2d, x.max(y)),
    };
    match TensorTy::f32(device, rank) {
        Some(result) => Decision::Claimed(Claim { rule, result, op: Op::Matmul, options: Options::None, operands: operands.to_vec() }),
        None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{decide, Lit, Query, Target};
    use super::*;
    use crate::ty::TensorTy as T;

    fn bin(op: Operator, a: Operand, b: Operand) -> (String, String) {
        let args = [a, b];
        outcome(&decide(&Query { target: Target::BinOp { op, augmented: false }, receiver: None, args: &args, keywords: &[], starred: false }))
    }

    #[test]
    fn arithmetic_rank_matrix() {
        let (one, two) = (T::F32_CPU_1D, T::F32_CPU_2D);
        for (op, name) in [(Operator::Add, "add"), (Operator::Sub, "sub"), (Operator::Mult, "mul"), (Operator::Div, "div")] {
            assert_eq!(bin(op, t(one), t(one)), (format!("torchlower/tensor-{name}-f32-same-rank"), "TensorF32Cpu1D".into()));
            assert_eq!(bin(op, t(two), t(two)), (format!("torchlower/tensor-{name}-f32-same-rank"), "TensorF32Cpu2D".into()));
            assert_eq!(bin(op, t(two), t(one)), (format!("torchlower/tensor-{name}-f32-2d-1d-broadcast"), "TensorF32Cpu2D".into()));
            assert_eq!(bin(op, t(one), t(two)), (format!("torchlower/tensor-{name}-f32-2d-1d-broadcast"), "TensorF32Cpu2D".into()));
            for (a, b) in [(one, one), (two, two), (two, one), (one, two)] {
                let want_rank = if a.rank == b.rank { a } else { two };
                let d = call(&format!("torch.{name}"), &[t(a), t(b)], &[]);
                assert_eq!(outcome(&d), (format!("torchlower/function-{name}-f32-rank1-2"), want_rank.marker().unwrap_or("?").to_string()));
            }
        }
    }

    #[test]
    fn matmul_forms() {
        let (one, two) = (T::F32_CPU_1D, T::F32_CPU_2D);
        assert_eq!(bin(Operator::MatMult, t(two), t(two)), ("torchlower/tensor-matmul-f32-2d".into(), "TensorF32Cpu2D".into()));
        assert_eq!(bin(Operator::MatMult, t(two), t(one)), ("torchlower/tensor-matmul-f32-mixed-rank".into(), "TensorF32Cpu1D".into()));
        assert_eq!(bin(Operator::MatMult, t(one), t(two)), ("torchlower/tensor-matmul-f32-mixed-rank".into(), "TensorF32Cpu1D".into()));
        assert_eq!(bin(Operator::MatMult, t(one), t(one)).0, "TL207");
        assert_eq!(outcome(&call("torch.matmul", &[t(two), t(one)], &[])).0, "torchlower/tensor-matmul-call-f32-mixed-rank");
        assert_eq!(outcome(&method(&t(one), "matmul", &[t(two)], &[])).0, "torchlower/tensor-matmul-call-f32-mixed-rank");
        assert_eq!(outcome(&method(&t(two), "matmul", &[t(two)], &[])).0, "torchlower/tensor-matmul-call-f32-2d");
        assert_eq!(outcome(&call("torch.matmul", &[t(two), t(two)], &[kw("out", t(two))])).0, "TL201");
    }

    #[test]
    fn rejections_and_not_covered() {
        let x = t(T::F32_CPU_2D);
        assert_eq!(bin(Operator::Mult, x.clone(), boolean(true)).0, "TL242");
        let number_rule = "torchlower/tensor-arith-int64-number".to_string();
        assert_eq!(bin(Operator::Add, t(T::I64_CPU_1D), int(1)), (number_rule.clone(), "TensorI64Cpu1D".into()));
        assert_eq!(bin(Operator::Sub, int(1), t(T::I64_CPU_2D)), (number_rule.clone(), "TensorI64Cpu2D".into()));
        let half = Operand { ty: Ty::Float, lit: Lit::Float(0.5) };
        assert_eq!(bin(Operator::Mult, t(T::I64_CPU_2D), half), (number_rule.clone(), "TensorF32Cpu2D".into()));
        assert_eq!(bin(Operator::Div, t(T::I64_CPU_1D), int(2)), (number_rule.clone(), "TensorF32Cpu1D".into()));
        assert_eq!(outcome(&method(&t(T::I64_CPU_1D), "mul", &[int(3)], &[])), (number_rule, "TensorI64Cpu1D".into()));
        assert_eq!(bin(Operator::MatMult, t(T::I64_CPU_2D), t(T::F32_CPU_2D)).0, "TL241");
        assert_eq!(bin(Operator::Add, t(T::I64_CPU_1D), t(T::I64_CPU_1D)), ("torchlower/tensor-arith-int64".into(), "TensorI64Cpu1D".into()));
        assert_eq!(bin(Operator::Sub, t(T::I64_CPU_2D), t(T::I64_CPU_1D)), ("torchlower/tensor-arith-int64".into(), "TensorI64Cpu2D".into()));
        assert_eq!(bin(Operator::Add, t(T::I64_CPU_1D), t(T::F32_CPU_1D)), ("torchlower/tensor-arith-int64".into(), "TensorF32Cpu1D".into()));
        assert_eq!(bin(Operator::Div, t(T::I64_CPU_1D), t(T::I64_CPU_1D)), ("torchlower/tensor-arith-int64".into(), "TensorF32Cpu1D".into()));
        // int32 (GPT-2's positions): int32 with int32 or an int stays int32, int64 wins over it
        let (i32_1, i32_2) = (t(T::new(Dtype::I32, Device::Cpu, 1).expect("a type")), t(T::new(Dtype::I32, Device::Cpu, 2).expect("a type")));
        assert_eq!(bin(Operator::Mult, i32_1.clone(), i32_2.clone()), ("torchlower/tensor-arith-int64".into(), "TensorI32Cpu2D".into()));
        assert_eq!(bin(Operator::Add, i32_1.clone(), t(T::I64_CPU_1D)).1, "TensorI64Cpu1D");
        assert_eq!(bin(Operator::Add, i32_2.clone(), t(T::F32_CPU_1D)).1, "TensorF32Cpu2D");
        assert_eq!(bin(Operator::Sub, int(1), i32_1.clone()).1, "TensorI32Cpu1D");
        assert_eq!(bin(Operator::Div, i32_1.clone(), int(2)).1, "TensorF32Cpu1D");
        assert_eq!(bin(Operator::MatMult, i32_2, t(T::F32_CPU_2D)).0, "TL241");
        assert_eq!(bin(Operator::Add, x.clone(), t(T::F32_CUDA0_2D)).0, "TL204");
        // `//` and the rounding modes: float32 unless both sides are integers; CPU only
        assert_eq!(bin(Operator::FloorDiv, x.clone(), x.clone()), ("torchlower/div-rounding".into(), "TensorF32Cpu2D".into()));
        assert_eq!(bin(Operator::FloorDiv, t(T::I64_CPU_2D), int(2)), ("torchlower/div-rounding".into(), "TensorI64Cpu2D".into()));
        assert_eq!(bin(Operator::FloorDiv, t(T::I64_CPU_2D), float(2.5)).1, "TensorF32Cpu2D");
        assert_eq!(bin(Operator::FloorDiv, t(T::I64_CPU_1D), x.clone()).1, "TensorF32Cpu2D");
        assert_eq!(bin(Operator::FloorDiv, int(2), x.clone()).0, "TL242");
        assert_eq!(bin(Operator::FloorDiv, t(T::F32_CUDA0_2D), int(2)).0, "TL209");
        assert_eq!(bin(Operator::FloorDiv, t(T::BOOL_CPU_2D), int(2)).0, "TL200");
        assert_eq!(outcome(&call("torch.div", &[t(T::I64_CPU_2D), int(2)], &[kw("rounding_mode", string("floor"))])).1, "TensorI64Cpu2D");
        assert_eq!(outcome(&call("torch.div", &[x.clone(), int(2)], &[kw("rounding_mode", string("round"))])).0, "TL201");
        assert_eq!(outcome(&method(&x, "floor_divide", &[int(2)], &[])).0, "torchlower/div-rounding");
        assert_eq!(bin(Operator::Add, unknown(), x.clone()).0, "not_covered");
        assert_eq!(bin(Operator::Add, int(1), int(2)).0, "not_a_site");
        assert_eq!(outcome(&call("torch.add", &[x.clone(), x.clone()], &[kw("alpha", int(2))])).0, "TL201");
        assert_eq!(outcome(&call("torch.div", &[x.clone(), x.clone()], &[kw("rounding_mode", string("trunc"))])).0, "torchlower/div-rounding");
        assert_eq!(outcome(&call("torch.mul", &[int(2), x.clone()], &[])).0, "TL242");
        assert_eq!(outcome(&method(&x, "add", &[x.clone()], &[])).0, "torchlower/method-add");
        assert_eq!(outcome(&method(&x, "mul", &[int(2)], &[])).0, "torchlower/tensor-mul-scalar-f32");
        assert_eq!(outcome(&method(&x, "add", &[x.clone()], &[kw("alpha", int(2))])).0, "TL240");
        assert_eq!(outcome(&method(&x, "true_divide", &[t(T::F32_CPU_1D)], &[])), ("torchlower/method-div".into(), "TensorF32Cpu2D".into()));
        assert_eq!(outcome(&call("torch.subtract", &[x.clone(), x.clone()], &[])).0, "not_covered");
        let args = [x.clone(), x.clone()];
        let aug = decide(&Query { target: Target::BinOp { op: Operator::Add, augmented: true }, receiver: None, args: &args, keywords: &[], starred: false });
        assert_eq!(outcome(&aug).0, "TL203");
    }

    #[test]
    fn python_numbers_on_either_side() {
        let x = t(T::F32_CPU_3D);
        let half = Operand { ty: Ty::Float, lit: Lit::Float(0.5) };
        for (op, name) in [(Operator::Add, "add"), (Operator::Sub, "sub"), (Operator::Mult, "mul"), (Operator::Div, "div")] {
            let want = (format!("torchlower/tensor-{name}-scalar-f32"), "TensorF32Cpu3D".to_string());
            assert_eq!(bin(op, x.clone(), half.clone()), want);
            assert_eq!(bin(op, int(2), x.clone()), want);
            assert_eq!(outcome(&call(&format!("torch.{name}"), &[x.clone(), half.clone()], &[])), want);
        }
        let args = [int(3), x.clone()];
        let Decision::Claimed(c) = decide(&Query { target: Target::BinOp { op: Operator::Sub, augmented: false }, receiver: None, args: &args, keywords: &[], starred: false }) else {
            panic!("claimed")
        };
        assert_eq!(c.options, Options::ScalarLeft);
        assert_eq!(bin(Operator::Mult, t(T::F32_CUDA0_2D), half.clone()), ("torchlower/tensor-mul-scalar-f32".into(), "TensorF32Cuda0_2D".into()));
        assert_eq!(bin(Operator::Mult, unknown(), half).0, "not_covered");
    }

    #[test]
    fn ranks_3_and_4_broadcast_and_batch() {
        let (one, two, three, four) = (T::F32_CPU_1D, T::F32_CPU_2D, T::F32_CPU_3D, T::F32_CPU_4D);
        assert_eq!(bin(Operator::Add, t(three), t(one)), ("torchlower/tensor-add-f32-2d-1d-broadcast".into(), "TensorF32Cpu3D".into()));
        assert_eq!(bin(Operator::Mult, t(two), t(four)).1, "TensorF32Cpu4D");
        assert_eq!(bin(Operator::Sub, t(four), t(four)), ("torchlower/tensor-sub-f32-same-rank".into(), "TensorF32Cpu4D".into()));
        assert_eq!(bin(Operator::MatMult, t(three), t(two)), ("torchlower/tensor-matmul-f32-2d".into(), "TensorF32Cpu3D".into()));
        assert_eq!(bin(Operator::MatMult, t(four), t(three)).1, "TensorF32Cpu4D");
        assert_eq!(bin(Operator::MatMult, t(three), t(one)), ("torchlower/tensor-matmul-f32-mixed-rank".into(), "TensorF32Cpu2D".into()));
        assert_eq!(bin(Operator::MatMult, t(one), t(four)).1, "TensorF32Cpu3D");
    }

    #[test]
    fn cuda_takes_ranks_3_and_4_and_rejects_ops_without_kernels() {
        let (c1, c3, c4) = (T::F32_CUDA0_1D, T::F32_CUDA0_3D, T::F32_CUDA0_4D);
        assert_eq!(bin(Operator::Add, t(c3), t(c1)), ("torchlower/tensor-add-f32-2d-1d-broadcast".into(), "TensorF32Cuda0_3D".into()));
        assert_eq!(outcome(&method(&t(c3), "relu", &[], &[])).1, "TensorF32Cuda0_3D");
        assert_eq!(bin(Operator::MatMult, t(c3), t(c1)).1, "TensorF32Cuda0_2D");
        assert_eq!(bin(Operator::MatMult, t(c4), t(c3)).1, "TensorF32Cuda0_4D");
        // silu and rsqrt have kernels of ours; sin has none yet
        assert_eq!(outcome(&call("torch.nn.functional.silu", &[t(c3)], &[])), ("torchlower/silu".into(), "TensorF32Cuda0_3D".into()));
        assert_eq!(outcome(&call("torch.rsqrt", &[t(c3)], &[])).1, "TensorF32Cuda0_3D");
        assert_eq!(outcome(&call("torch.sin", &[t(c3)], &[])).0, "TL209");
    }

    #[test]
    fn cuda_keeps_device() {
        assert_eq!(bin(Operator::MatMult, t(T::F32_CUDA0_2D), t(T::F32_CUDA0_2D)).1, "TensorF32Cuda0_2D");
        assert_eq!(bin(Operator::Add, t(T::F32_CUDA0_2D), t(T::F32_CUDA0_1D)).1, "TensorF32Cuda0_2D");
    }
}
