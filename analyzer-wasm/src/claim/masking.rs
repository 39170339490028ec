//! Lane: comparisons and masking — `a == b`, `!=`, `<`, `<=`, `>`, `>=` (and `torch.eq` & co.,
//! `.eq()` & co.) between tensors of any dtype or a tensor and a Python number, giving a bool
//! tensor; `x.masked_fill(mask, value)`; `torch.where(cond, a, b)` with tensors or numbers.
//! libtorch's kernels: eager's type promotion, broadcasting and errors. Bool tensors exist on
//! the CPU only, so these are CPU-only.

use super::{params, Claim, Decision, Operand, OperandRef, Query};
use crate::ir::{Op, Options};
use crate::rules::{self, Rule};
use crate::ty::{Dtype, TensorTy, Ty};

fn rule(op: Op) -> Option<&'static Rule> {
    Some(match op {
        Op::Eq => &rules::EQ,
        Op::Ne => &rules::NE,
        Op::Lt => &rules::LT,
        Op::Le => &rules::LE,
        Op::Gt => &rules::GT,
        Op::Ge => &rules::GE,
        Op::MaskedFill => &rules::MASKED_FILL,
        Op::Where => &rules::WHERE,
        Op::Tril => &rules::TRIL,
        Op::LogicalAnd => &rules::LOGICAL_AND,
        Op::LogicalOr => &rules::LOGICAL_OR,
        Op::LogicalXor => &rules::LOGICAL_XOR,
        Op::LogicalNot => &rules::LOGICAL_NOT,
        Op::Triu => &rules::TRIU,
        Op::Isin => &rules::ISIN,
        _ => return None,
    })
}

/// `a <sym> b` for a comparison operator.
pub fn operator(q: &Query, sym: &str) -> Decision {
    let Some(op) = Op::from_operator(sym) else {
        return Decision::NotCovered(format!("tensor comparison `{sym}` is not part of the claimed surface"));
    };
    let [left, right] = q.args else { return Decision::reject(&rules::BAD_ARITY, format!("`{sym}` compares two operands")) };
    compare(left, right, op, &format!("`{sym}`"), true, [OperandRef::Arg(0), OperandRef::Arg(1)])
}

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    // `torch.where(cond)`: eager's `cond.nonzero(as_tuple=True)`
    if op == Op::Where && q.args.len() == 1 && q.keywords.is_empty() && !q.starred {
        return where_nonzero(q, path);
    }
    if op == Op::Multinomial {
        return multinomial(q, op, path);
    }
    if !params::of(op).is_empty() {
        return through_signature(q, op, path);
    }
    if let Some(decision) = logical(q, op, path, &q.args, [OperandRef::Arg(0), OperandRef::Arg(1)]) {
        return decision;
    }
    if let Err(d) = super::keywords_only(q, &[], path).and_then(|_| super::positional_exactly(q, 2, path)) {
        return d;
    }
    compare(&q.args[0], &q.args[1], op, path, false, [OperandRef::Arg(0), OperandRef::Arg(1)])
}

/// `torch.where(cond)` of a rank-1 tensor of any dtype: the 1-tuple of the int64 indices of
/// its nonzero elements (how many is known only at run time; the rank is 1). A condition of
/// rank 2 or more gives a tuple of that many index tensors: not claimed.
fn where_nonzero(q: &Query, path: &str) -> Decision {
    let bound = match params::bind(q, Op::WhereNonzero, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    match bound.tensor("condition") {
        Some(cond) if cond.rank == 1 => match TensorTy::new(crate::ty::Dtype::I64, cond.device, 1) {
            Some(result) => bound.claim(&rules::WHERE_NONZERO, Op::WhereNonzero, result),
            None => Decision::reject(&rules::BAD_RANKS, format!("{path}: no result type")),
        },
        Some(cond) => Decision::reject(&rules::BAD_RANKS, format!("{path}(cond) of a rank-{} condition returns {} index tensors; only rank 1 is lowered", cond.rank, cond.rank)),
        None => Decision::reject(&rules::BAD_ARITY, format!("{path} needs a condition tensor")),
    }
}

/// `torch.multinomial(probs, num_samples, replacement=False)`: int64 indices of the input's
/// rank (1 or 2), drawn from torch's default generator as eager draws them (libtorch's kernel).
fn multinomial(q: &Query, op: Op, path: &str) -> Decision {
    let bound = match params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    match bound.tensor("input") {
        Some(probs) if matches!(probs.rank, 1 | 2) => match TensorTy::new(crate::ty::Dtype::I64, probs.device, probs.rank) {
            Some(result) => bound.claim(&rules::MULTINOMIAL, op, result),
            None => Decision::reject(&rules::BAD_RANKS, format!("{path}: no result type")),
        },
        _ => Decision::reject(&rules::BAD_RANKS, format!("{path} takes rank-1 or rank-2 probabilities (eager raises)")),
    }
}

pub fn method(q: &Query, receiver: &Operand, op: Op, name: &str) -> Decision {
    let form = format!(".{name}()");
    if op == Op::Multinomial {
        return multinomial(q, op, &form); // the binder takes the receiver as the first argument
    }
    if op == Op::LogicalNot {
        // `t.logical_not()` takes no argument (an extra one is eager's TypeError)
        if !q.args.is_empty() || q.starred {
            return Decision::reject(&rules::BAD_ARITY, format!("{form} takes no argument"));
        }
        let operands = [receiver.clone()];
        if let Some(decision) = logical(q, op, &form, &operands, [OperandRef::Receiver, OperandRef::Receiver]) {
            return decision;
        }
    }
    if !params::of(op).is_empty() {
        return through_signature(q, op, &form);
    }
    if let Err(d) = super::keywords_only(q, &[], &form).and_then(|_| super::positional_exactly(q, 1, &form)) {
        return d;
    }
    compare(receiver, &q.args[0], op, &form, false, [OperandRef::Receiver, OperandRef::Arg(0)])
}

/// `a & b`, `a | b`, `a ^ b` of bool tensors (`torch.logical_and` & co.), of int64 tensors (or
/// int64 and bool: the operators only, an int64 result), `torch.logical_not(t)` of any tensor:
/// tensors of the larger rank. `None` for the other ops of the lane.
pub fn logical(q: &Query, op: Op, form: &str, operands: &[Operand], at: [OperandRef; 2]) -> Option<Decision> {
    let rule = match op {
        Op::LogicalAnd | Op::LogicalOr | Op::LogicalXor | Op::LogicalNot => rule(op)?,
        _ => return None,
    };
    let unary = op == Op::LogicalNot;
    if let Err(d) = super::keywords_only(q, &[], form) {
        return Some(d);
    }
    if operands.len() != if unary { 1 } else { 2 } {
        return Some(Decision::reject(&rules::BAD_ARITY, format!("{form} takes {} tensor{}", if unary { "one" } else { "two" }, if unary { "" } else { "s" })));
    }
    // the operators are eager's bitwise ops: on int64 (with a bool promoted) an int64 result
    // (Transformers' `unfinished_sequences & ~is_done`); `torch.logical_and` & co. are logical
    let bitwise = !unary && matches!(q.target, super::Target::BinOp { .. });
    let mut tensors = Vec::new();
    for o in operands {
        match o.ty {
            Ty::Tensor(t) if unary || t.dtype == Dtype::Bool || (bitwise && t.dtype == Dtype::I64) => tensors.push(t),
            Ty::Unknown => return Some(Decision::Unresolved(format!("an operand of {form} has an unresolved type"))),
            other => {
                let claimed = if bitwise { "bool and int64 tensors are claimed" } else { "bool tensors are claimed" };
                return Some(Decision::reject(&rules::NOT_F32_OPERAND, format!("{form} of {} ({claimed})", other.describe())));
            }
        }
    }
    let dtype = if tensors.iter().any(|t| !unary && t.dtype == Dtype::I64) { Dtype::I64 } else { Dtype::Bool };
    let device = match super::one_device(&tensors) {
        Ok(d) => d,
        Err(d) => return Some(d),
    };
    let rank = tensors.iter().map(|t| t.rank).max().unwrap_or(1);
    let operands = if unary { vec![at[0]] } else { at.to_vec() };
    Some(match TensorTy::new(dtype, device, rank) {
        Some(result) => Decision::Claimed(Claim { rule, result, op, options: Options::None, operands }),
        None => Decision::reject(&rules::CUDA_UNSUPPORTED, format!("{form}: bool tensors have no type on cuda:0 yet")),
    })
}

/// Two tensors (any dtypes, one device), or a tensor and a Python int or float (on the left
/// only for the operators, as Python reflects `0 < x` to `x > 0`): a bool tensor of the larger
/// rank.
fn compare(left: &Operand, right: &Operand, op: Op, form: &str, number_left: bool, operands: [OperandRef; 2]) -> Decision {
    let Some(rule) = rule(op) else { return super::not_in_lane(op) };
    let number = |o: &Operand| matches!(o.ty, Ty::Int | Ty::Float);
    for o in [left, right] {
        if o.ty == Ty::Unknown {
            return Decision::Unresolved(format!("an operand of {form} has an unresolved type"));
        }
    }
    let (tensors, options) = match (left.ty, right.ty) {
        (Ty::Tensor(a), Ty::Tensor(b)) => (vec![a, b], Options::None),
        (Ty::Tensor(a), _) if number(right) => (vec![a], Options::ScalarRight),
        (_, Ty::Tensor(b)) if number(left) && number_left => (vec![b], Options::ScalarLeft),
        _ => {
            let other = if matches!(left.ty, Ty::Tensor(_)) { right } else { left };
            return Decision::reject(&rules::SCALAR_OPERAND, format!("{form} with {} (a tensor or a Python int or float is claimed)", other.ty.describe()));
        }
    };
    let device = match super::one_device(&tensors) {
        Ok(d) => d,
        Err(d) => return d,
    };
    let rank = tensors.iter().map(|t| t.rank).max().unwrap_or(1);
    match TensorTy::new(Dtype::Bool, device, rank) {
        Some(result) => Decision::Claimed(Claim { rule, result, op, options, operands: operands.to_vec() }),
        None => Decision::reject(&rules::CUDA_UNSUPPORTED, format!("{form}: bool tensors have no type on cuda:0 yet")),
    }
}

/// `masked_fill(x, mask, value)` (the input's type) and `torch.where(cond, a, b)` (float32 of
/// the largest rank, at least one of `a`, `b` a tensor).
fn through_signature(q: &Query, op: Op, form: &str) -> Decision {
    let Some(rule) = rule(op) else { return super::not_in_lane(op) };
    let bound = match params::bind(q, op, form) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let result = match op {
        Op::MaskedFill => bound.tensor("input"),
        // eager promotes mixed dtypes; one dtype (float32 or int64) is claimed
        Op::Isin => match (bound.tensor("elements"), bound.tensor("test_elements")) {
            (Some(e), Some(t)) if e.dtype == t.dtype && matches!(e.dtype, Dtype::F32 | Dtype::I64) => TensorTy::new(Dtype::Bool, e.device, e.rank),
            _ => return Decision::reject(&rules::BAD_RANKS, format!("{form}: two tensors of one dtype, float32 or int64")),
        },
        Op::Tril | Op::Triu => match bound.tensor("input") {
            Some(t) if t.rank >= 2 => Some(t),
            Some(t) => return Decision::reject(&rules::BAD_RANKS, format!("{form} of a rank-{} tensor (eager raises below rank 2)", t.rank)),
            None => None,
        },
        _ => {
            let rank = bound.tensors.iter().map(|(_, t)| t.rank).max().unwrap_or(1);
            if bound.tensor("input").is_none() && bound.tensor("other").is_none() {
                // two Python numbers: eager's result type of the pair (a float → float32)
                let numbers = [bound.literal("input"), bound.literal("other")];
                let float = q.args.iter().chain(q.keywords.iter().map(|k| &k.value)).any(|o| o.ty == Ty::Float);
                let dtype = if float { Dtype::F32 } else { Dtype::I64 };
                if numbers.iter().any(Option::is_none) {
                    return Decision::reject(&rules::SCALAR_OPERAND, format!("{form}: two values are needed"));
                }
                TensorTy::new(dtype, bound.device, rank)
            } else {
                // eager's promotion: float32 with any float32 tensor or Python float, else int64
                let values = [("input", bound.tensor("input")), ("other", bound.tensor("other"))];
                let float_number = q.args.iter().chain(q.keywords.iter().map(|k| &k.value)).any(|o| o.ty == Ty::Float);
                let float_tensor = values.iter().any(|(_, t)| t.is_some_and(|t| t.dtype == Dtype::F32));
                let dtype = if float_tensor || float_number { Dtype::F32 } else { Dtype::I64 };
                TensorTy::new(dtype, bound.device, rank)
            }
        }
    };
    match result {
        Some(result) => bound.claim(rule, op, result),
        None => Decision::reject(&rules::BAD_ARITY, format!("{form} needs its tensors")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{decide, Query, Target};
    use crate::ty::{Device, Dtype, TensorTy as T};

    #[test]
    fn comparisons_masks_and_where() {
        let x = t(T::F32_CPU_2D);
        let idx = t(T::I64_CPU_1D);
        let mask = t(T::new(Dtype::Bool, Device::Cpu, 2).expect("a type"));
        let args = [x.clone(), int(0)];
        let gt = decide(&Query { target: Target::Compare(">"), receiver: None, args: &args, keywords: &[], starred: false });
        assert_eq!(outcome(&gt), ("torchlower/gt".into(), "TensorBoolCpu2D".into()));
        let args = [int(0), idx.clone()];
        let lt = decide(&Query { target: Target::Compare("<"), receiver: None, args: &args, keywords: &[], starred: false });
        assert_eq!(outcome(&lt), ("torchlower/lt".into(), "TensorBoolCpu1D".into()));
        assert_eq!(outcome(&call("torch.eq", &[x.clone(), idx.clone()], &[])), ("torchlower/eq".into(), "TensorBoolCpu2D".into()));
        assert_eq!(outcome(&call("torch.eq", &[int(0), x.clone()], &[])).0, "TL242");
        assert_eq!(outcome(&method(&x, "masked_fill", &[mask.clone(), int(0)], &[])), ("torchlower/masked-fill".into(), "TensorF32Cpu2D".into()));
        assert_eq!(outcome(&method(&x, "masked_fill", &[x.clone(), int(0)], &[])).0, "TL200");
        assert_eq!(outcome(&call("torch.where", &[mask.clone(), x.clone(), int(0)], &[])).0, "torchlower/where");
        assert_eq!(outcome(&call("torch.where", &[mask.clone(), int(1), int(0)], &[])).1, "TensorI64Cpu2D");
        // one argument: the nonzero indices, for a rank-1 condition only
        assert_eq!(outcome(&call("torch.where", &[mask], &[])).0, "TL208");
        assert_eq!(outcome(&call("torch.where", &[t(T::new(crate::ty::Dtype::Bool, crate::ty::Device::Cpu, 1).expect("a type"))], &[])), ("torchlower/where-nonzero-rank1".into(), "TensorI64Cpu1D".into()));
        assert_eq!(outcome(&call("torch.multinomial", &[t(T::F32_CPU_2D), int(1)], &[])), ("torchlower/multinomial".into(), "TensorI64Cpu2D".into()));
        assert_eq!(outcome(&method(&t(T::F32_CPU_1D), "multinomial", &[int(3)], &[kw("replacement", boolean(true))])), ("torchlower/multinomial".into(), "TensorI64Cpu1D".into()));
        assert_eq!(outcome(&call("torch.multinomial", &[t(T::F32_CPU_2D), int(1)], &[kw("generator", none())])).0, "torchlower/multinomial");
        assert_eq!(outcome(&call("torch.multinomial", &[t(T::F32_CPU_3D), int(1)], &[])).0, "TL208");
        assert_eq!(outcome(&method(&t(T::F32_CUDA0_2D), "gt", &[int(0)], &[])).0, "TL209");
    }
}
