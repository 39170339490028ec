//! Lane: pointwise ops with Python-number parameters — `t ** s` / `torch.pow(t, s)` /
//! `t.pow(s)`, `torch.clamp(t, min, max)` / `t.clamp(…)` / `clip`, `clamp_min`, `clamp_max` —
//! and `torch.maximum` / `torch.minimum` of two tensors. Float32 tensors of any rank; numbers
//! are Python ints or floats (literals, locals, parameters, constants), passed to libtorch as
//! eager wraps them (an int stays an int), so the results are eager's.

use super::{f32_tensor, keyword, keywords_only, one_device, Claim, Decision, Lit, Operand, OperandRef, Query};
use crate::ir::{Op, Options};
use crate::rules::{self, Rule};
use crate::ty::{Device, Dtype, TensorTy, Ty};

fn rule(op: Op) -> Option<&'static Rule> {
    Some(match op {
        Op::Pow => &rules::POW,
        Op::Clamp => &rules::CLAMP,
        Op::ClampMin => &rules::CLAMP_MIN,
        Op::ClampMax => &rules::CLAMP_MAX,
        Op::Maximum => &rules::MAXIMUM,
        Op::Silu => &rules::SILU,
        Op::Rsqrt => &rules::RSQRT,
        Op::Erf => &rules::ERF,
        Op::Softplus => &rules::SOFTPLUS,
        Op::Log1p => &rules::LOG1P,
        Op::Expm1 => &rules::EXPM1,
        Op::Sin => &rules::SIN,
        Op::Atan => &rules::ATAN,
        Op::Sign => &rules::SIGN,
        Op::Floor => &rules::FLOOR,
        Op::Outer => &rules::OUTER,
        Op::Cos => &rules::COS,
        Op::Relu6 => &rules::RELU6,
        Op::Hardswish => &rules::HARDSWISH,
        Op::Hardsigmoid => &rules::HARDSIGMOID,
        Op::Mish => &rules::MISH,
        Op::Selu => &rules::SELU,
        Op::Elu => &rules::ELU,
        Op::LeakyRelu => &rules::LEAKY_RELU,
        Op::Hardtanh => &rules::HARDTANH,
        Op::Glu => &rules::GLU,
        Op::Minimum => &rules::MINIMUM,
        _ => return None,
    })
}

fn is_number(o: &Operand) -> bool {
    matches!(o.ty, Ty::Int | Ty::Float)
}

/// `t ** s` with a number exponent; `t ** u` and `s ** t` with a tensor one ([`pow_tensor`]).
pub fn power_operator(left: &Operand, right: &Operand) -> Decision {
    if matches!(right.ty, Ty::Tensor(_)) {
        return pow_tensor(left, right, [OperandRef::Arg(0), OperandRef::Arg(1)], "`**`");
    }
    if !matches!(left.ty, Ty::Tensor(_)) {
        return Decision::reject(&rules::SCALAR_OPERAND, "`number ** tensor` is not lowered");
    }
    with_number(left, right, Op::Pow, "`**`", [OperandRef::Arg(0), OperandRef::Arg(1)])
}

/// `pow` with a tensor exponent: a tensor or Python-number base, on the CPU, where either
/// side is float32 — eager's result is float32 then (a float tensor outranks an int one of any
/// rank, a 0-dim one included) with the broadcast rank.
fn pow_tensor(input: &Operand, exponent: &Operand, operands: [OperandRef; 2], form: &str) -> Decision {
    let (base, power) = match (input.ty, exponent.ty) {
        (Ty::Unknown, _) | (_, Ty::Unknown) => return Decision::Unresolved(format!("an operand of {form} has an unresolved type")),
        (Ty::Tensor(b), Ty::Tensor(e)) => (Some(b), e),
        (Ty::Int | Ty::Float, Ty::Tensor(e)) => (None, e),
        (other, _) => return Decision::reject(&rules::SCALAR_OPERAND, format!("{form} with a base of {} is not claimed", other.describe())),
    };
    if base.is_some_and(|b| b.device != Device::Cpu) || power.device != Device::Cpu {
        return Decision::reject(&rules::CUDA_UNSUPPORTED, format!("{form} with a tensor exponent is claimed on the CPU"));
    }
    let float = power.dtype == Dtype::F32 || base.is_some_and(|b| b.dtype == Dtype::F32);
    if !float {
        return Decision::reject(&rules::SCALAR_OPERAND, format!("{form} with a tensor exponent is claimed where the base or the exponent is float32"));
    }
    let rank = base.map_or(power.rank, |b| b.rank.max(power.rank));
    match TensorTy::f32(Device::Cpu, rank) {
        Some(result) => Decision::Claimed(Claim { rule: &rules::POW_TENSOR, result, op: Op::PowTensor, options: Options::Params { present: 0b11, choice: 0 }, operands: operands.to_vec() }),
        None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no float32 type of rank {rank}")),
    }
}

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    if let Some(decision) = through_signature(q, op, path) {
        return decision;
    }
    let Some((input, rest)) = q.args.split_first() else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs the input tensor positionally"));
    };
    claim(q, input, rest, op, path, OperandRef::Arg(0), 1)
}

pub fn method(q: &Query, receiver: &Operand, op: Op, name: &str) -> Decision {
    if let Some(decision) = through_signature(q, op, &format!(".{name}()")) {
        return decision;
    }
    claim(q, receiver, q.args, op, &format!(".{name}()"), OperandRef::Receiver, 0)
}

/// The elementwise libtorch ops declared with their Python signature (`F.leaky_relu(x,
/// negative_slope=0.2)`): bound by it, the result of the input's type.
fn through_signature(q: &Query, op: Op, form: &str) -> Option<Decision> {
    if super::params::of(op).is_empty() {
        return None;
    }
    Some(match rule(op) {
        Some(rule) if op == Op::Outer => outer(q, rule, form),
        Some(rule) => super::params::elementwise(q, op, rule, form),
        None => super::not_in_lane(op),
    })
}

/// `torch.outer(a, b)`: two rank-1 float32 / int64 tensors on one device (llama2.c's
/// `torch.outer(t, freqs)` of int64 positions and float32 frequencies), a rank-2 result of the
/// promoted dtype (eager raises for another rank).
fn outer(q: &Query, rule: &'static crate::rules::Rule, form: &str) -> Decision {
    let bound = match super::params::bind(q, Op::Outer, form) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let (Some(a), Some(b)) = (bound.tensor("input"), bound.tensor("vec2")) else {
        return Decision::reject(&rules::BAD_ARITY, format!("{form} needs two tensors"));
    };
    if a.rank != 1 || b.rank != 1 {
        return Decision::reject(&rules::BAD_RANKS, format!("{form} of rank-{} and rank-{} tensors (eager takes two vectors)", a.rank, b.rank));
    }
    if [a, b].iter().any(|t| !matches!(t.dtype, Dtype::F32 | Dtype::I64)) {
        return Decision::reject(&rules::NOT_F32_OPERAND, format!("{form}: float32 and int64 vectors are claimed"));
    }
    match TensorTy::new(a.dtype.promote(b.dtype), a.device, 2) {
        Some(result) => bound.claim(rule, Op::Outer, result),
        None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type")),
    }
}

fn claim(q: &Query, input: &Operand, rest: &[Operand], op: Op, form: &str, at: OperandRef, first: usize) -> Decision {
    if q.starred {
        return Decision::reject(&rules::BAD_ARITY, format!("{form}: starred arguments are not supported"));
    }
    match op {
        Op::Pow | Op::ClampMin | Op::ClampMax => {
            if let Err(d) = keywords_only(q, &[], form) {
                return d;
            }
            let [number] = rest else {
                return Decision::reject(&rules::BAD_ARITY, format!("{form} takes the tensor and one number"));
            };
            if op == Op::Pow && matches!(number.ty, Ty::Tensor(_)) {
                return pow_tensor(input, number, [at, OperandRef::Arg(first)], form);
            }
            with_number(input, number, op, form, [at, OperandRef::Arg(first)])
        }
        // a tensor bound: libtorch's `clamp.Tensor`, bound by its signature
        Op::Clamp if rest.iter().chain(q.keywords.iter().map(|k| &k.value)).any(|o| matches!(o.ty, Ty::Tensor(_))) => {
            let query = Query { receiver: None, args: &positional_with(input, rest), ..*q };
            match super::params::bind(&query, Op::ClampTensor, form) {
                Ok(mut bound) => {
                    let Some(t) = bound.tensor("input") else { return super::not_in_lane(op) };
                    let rank = bound.tensors.iter().map(|(_, b)| b.rank).max().unwrap_or(t.rank);
                    // the operands are the call's own (the receiver first for the method form)
                    bound.operands = remap(&bound.operands, at, first);
                    match TensorTy::f32(t.device, rank) {
                        Some(result) => bound.claim(&rules::CLAMP_TENSOR, Op::ClampTensor, result),
                        None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type")),
                    }
                }
                Err(d) => d,
            }
        }
        Op::Clamp => clamp(q, input, rest, form, at, first),
        // `torch.max(t, dim)` / `torch.min(t, dim=…)`: the (values, indices) reduction
        Op::Maximum | Op::Minimum if matches!(form, "torch.max" | "torch.min") && (rest.first().is_some_and(|o| o.ty == Ty::Int) || super::keyword(q, "dim").is_some()) => {
            let reduction = if op == Op::Maximum { Op::MaxDim } else { Op::MinDim };
            super::reductions::over_dims(q, reduction, form)
        }
        Op::Maximum | Op::Minimum => {
            if let Err(d) = keywords_only(q, &[], form) {
                return d;
            }
            let [other] = rest else {
                return Decision::reject(&rules::BAD_ARITY, format!("{form}: only the two-tensor form is claimed (the reductions are not)"));
            };
            if !matches!(other.ty, Ty::Tensor(_) | Ty::Unknown) {
                return Decision::reject(&rules::BAD_ARITY, format!("{form}: only the two-tensor form is claimed here"));
            }
            let Some(rule) = rule(op) else { return super::not_in_lane(op) };
            if let (Some(a), Some(b)) = (super::int64_tensor(input), super::int64_tensor(other)) {
                return match TensorTy::new(Dtype::I64, Device::Cpu, a.rank.max(b.rank)) {
                    Some(result) => Decision::Claimed(Claim { rule: &rules::INT64_MIN_MAX, result, op, options: Options::None, operands: vec![at, OperandRef::Arg(first)] }),
                    None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type")),
                };
            }
            let a = match f32_tensor(input, &format!("{form} input")) {
                Ok(t) => t,
                Err(d) => return d,
            };
            let b = match f32_tensor(other, &format!("{form} other")) {
                Ok(t) => t,
                Err(d) => return d,
            };
            let device = match one_device(&[a, b]) {
                Ok(d) => d,
                Err(d) => return d,
            };
            match TensorTy::f32(device, a.rank.max(b.rank)) {
                Some(result) => Decision::Claimed(Claim { rule, result, op, options: Options::None, operands: vec![at, OperandRef::Arg(first)] }),
                None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type")),
            }
        }
        other => super::not_in_lane(other),
    }
}

/// The input followed by the other positional arguments, as one argument list.
fn positional_with(input: &Operand, rest: &[Operand]) -> Vec<Operand> {
    std::iter::once(input.clone()).chain(rest.iter().cloned()).collect()
}

/// Operand references into `positional_with`'s list, mapped back to the call's own (`Arg(0)`
/// is the input at `at`; `Arg(i)` the call's argument `first + i - 1`).
fn remap(operands: &[OperandRef], at: OperandRef, first: usize) -> Vec<OperandRef> {
    operands
        .iter()
        .map(|r| match r {
            OperandRef::Arg(0) => at,
            OperandRef::Arg(i) => OperandRef::Arg(first + i - 1),
            other => *other,
        })
        .collect()
}

/// A float32 tensor and a Python number: the result has the tensor's type.
fn with_number(tensor: &Operand, number: &Operand, op: Op, form: &str, operands: [OperandRef; 2]) -> Decision {
    let Some(rule) = rule(op) else { return super::not_in_lane(op) };
    let t = match f32_tensor(tensor, &format!("{form} input")) {
        Ok(t) => t,
        Err(d) => return d,
    };
    match number.ty {
        Ty::Int | Ty::Float => Decision::Claimed(Claim { rule, result: t, op, options: Options::None, operands: operands.to_vec() }),
        Ty::Unknown => Decision::Unresolved(format!("the number of {form} has an unresolved type")),
        other => Decision::reject(&rules::SCALAR_OPERAND, format!("{form} with {} (a Python int or float is claimed)", other.describe())),
    }
}

/// `clamp(t, min=None, max=None)` of a float32 or int64 tensor: each bound positional or by
/// keyword, a Python number or the literal `None`, at least one given.
fn clamp(q: &Query, input: &Operand, positional: &[Operand], form: &str, at: OperandRef, first: usize) -> Decision {
    if let Err(d) = keywords_only(q, &["min", "max"], form) {
        return d;
    }
    if positional.len() > 2 {
        return Decision::reject(&rules::BAD_ARITY, format!("{form} takes at most two bounds"));
    }
    // an int64 tensor (Transformers' `last_ind.clamp_(max=…)`): int bounds keep int64, a float
    // bound promotes to float32, as eager's result type
    let integral = super::int64_tensor(input);
    let t = match integral {
        Some(t) => {
            let float_bound = positional.iter().chain(q.keywords.iter().map(|k| &k.value)).any(|o| o.ty == Ty::Float);
            let dtype = if float_bound { Dtype::F32 } else { Dtype::I64 };
            match TensorTy::new(dtype, t.device, t.rank) {
                Some(result) => result,
                None => return Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type")),
            }
        }
        None => match f32_tensor(input, &format!("{form} input")) {
            Ok(t) => t,
            Err(d) => return d,
        },
    };
    let mut operands = vec![at];
    let mut present = [false, false];
    for (slot, name) in ["min", "max"].into_iter().enumerate() {
        let (value, reference) = match (positional.get(slot), keyword(q, name)) {
            (Some(_), Some(_)) => return Decision::reject(&rules::BAD_KEYWORD, format!("{form}: `{name}` given twice")),
            (Some(v), None) => (Some(v), OperandRef::Arg(first + slot)),
            (None, Some((i, v))) => (Some(v), OperandRef::Keyword(i)),
            (None, None) => (None, OperandRef::Receiver),
        };
        match value {
            None => {}
            Some(v) if v.lit == Lit::None => {}
            Some(v) if is_number(v) => {
                present[slot] = true;
                operands.push(reference);
            }
            Some(v) if v.ty == Ty::Unknown => return Decision::Unresolved(format!("`{name}` of {form} has an unresolved type")),
            Some(v) => return Decision::reject(&rules::SCALAR_OPERAND, format!("{form}: `{name}` is {} (a Python int or float is claimed)", v.ty.describe())),
        }
    }
    if present == [false, false] {
        return Decision::reject(&rules::BAD_ARITY, format!("{form} without a bound (eager raises)"));
    }
    Decision::Claimed(Claim { rule: &rules::CLAMP, result: t, op: Op::Clamp, options: Options::Bounds(present[0], present[1]), operands })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Lit, Operand};
    use crate::ty::Ty;
    use super::super::{decide, Query, Target};
    use crate::ty::TensorTy as T;
    use ruff_python_ast::Operator;

    #[test]
    fn numbers_bounds_and_pairs() {
        let x = t(T::F32_CPU_3D);
        let half = super::Operand { ty: crate::ty::Ty::Float, lit: super::Lit::Float(0.5) };
        let args = [x.clone(), int(2)];
        let pow = decide(&Query { target: Target::BinOp { op: Operator::Pow, augmented: false }, receiver: None, args: &args, keywords: &[], starred: false });
        assert_eq!(outcome(&pow), ("torchlower/pow-number".into(), "TensorF32Cpu3D".into()));
        let args = [int(2), x.clone()];
        let rpow = decide(&Query { target: Target::BinOp { op: Operator::Pow, augmented: false }, receiver: None, args: &args, keywords: &[], starred: false });
        assert_eq!(outcome(&rpow), ("torchlower/pow-tensor-exponent".into(), "TensorF32Cpu3D".into()));
        assert_eq!(outcome(&method(&x, "pow", &[half.clone()], &[])).0, "torchlower/pow-number");
        assert_eq!(outcome(&call("torch.pow", &[x.clone(), x.clone()], &[])).0, "torchlower/pow-tensor-exponent");
        // a 0-dim float32 base over an int32 exponent: float32 of the exponent's rank
        let powers = t(T::new(crate::ty::Dtype::I32, crate::ty::Device::Cpu, 1).expect("int32 rank 1"));
        let base = t(T::new(crate::ty::Dtype::F32, crate::ty::Device::Cpu, 0).expect("float32 rank 0"));
        assert_eq!(outcome(&call("torch.pow", &[base, powers.clone()], &[])), ("torchlower/pow-tensor-exponent".into(), "TensorF32Cpu1D".into()));
        assert_eq!(outcome(&call("torch.pow", &[int(2), powers.clone()], &[])).0, "TL242");
        assert_eq!(outcome(&call("torch.pow", &[powers.clone(), powers], &[])).0, "TL242");
        assert_eq!(outcome(&call("torch.pow", &[x.clone(), t(T::F32_CUDA0_3D)], &[])).0, "TL209");
        assert_eq!(outcome(&call("torch.clamp", &[x.clone()], &[kw("min", half.clone())])).0, "torchlower/clamp-numbers");
        assert_eq!(outcome(&method(&x, "clamp", &[none(), int(1)], &[])).0, "torchlower/clamp-numbers");
        assert_eq!(outcome(&method(&x, "clamp", &[], &[])).0, "TL202");
        assert_eq!(outcome(&call("torch.clamp_min", &[x.clone(), int(0)], &[])).0, "torchlower/clamp-min-number");
        assert_eq!(outcome(&call("torch.maximum", &[x.clone(), t(T::F32_CPU_1D)], &[])), ("torchlower/maximum".into(), "TensorF32Cpu3D".into()));
        assert_eq!(outcome(&method(&t(T::F32_CUDA0_2D), "clamp_max", &[half.clone()], &[])).1, "TensorF32Cuda0_2D");
        // on cuda:0, `**` only for the exponents eager's CUDA kernel special-cases
        let c = t(T::F32_CUDA0_3D);
        assert_eq!(outcome(&method(&c, "pow", &[int(2)], &[])).1, "TensorF32Cuda0_3D");
        assert_eq!(outcome(&method(&c, "pow", &[half], &[])).1, "TensorF32Cuda0_3D");
        assert_eq!(outcome(&method(&c, "pow", &[Operand { ty: Ty::Float, lit: Lit::Float(2.5) }], &[])).0, "TL209");
        assert_eq!(outcome(&method(&c, "pow", &[Operand { ty: Ty::Float, lit: Lit::NotLiteral }], &[])).0, "TL209");
    }
}
