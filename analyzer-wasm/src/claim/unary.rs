//! Lane: unary math `abs, neg, negative, square, exp, log, sqrt` as exact `torch.X(t)` or
//! zero-argument methods. Rank 1 or 2; the result keeps the type. Aliases such as
//! `torch.absolute` are not covered.

use super::activations::{one_tensor_function, zero_arg_method};
use super::{Decision, Operand, Query};
use crate::ir::Op;
use crate::rules::{self, Rule};

/// The rule of the spelling `name` (`torch.name` or `.name()`) of `op`.
fn rule(op: Op, name: &str) -> Option<&'static Rule> {
    Some(match op {
        Op::Abs => &rules::UNARY_ABS,
        // eager `negative` is an alias of `neg`, with its own rule
        Op::Neg if name == "negative" => &rules::UNARY_NEGATIVE,
        Op::Neg => &rules::UNARY_NEG,
        Op::Square => &rules::UNARY_SQUARE,
        Op::Exp => &rules::UNARY_EXP,
        Op::Log => &rules::UNARY_LOG,
        Op::Sqrt => &rules::UNARY_SQRT,
        _ => return None,
    })
}

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    let name = path.trim_start_matches("torch.");
    let Some(rule) = rule(op, name) else { return super::not_in_lane(op) };
    let rule = int64_rule(op, q.args.first()).unwrap_or(rule);
    one_tensor_function(q, path, rule, op)
}

pub fn method(q: &Query, receiver: &Operand, op: Op, name: &str) -> Decision {
    let Some(rule) = rule(op, name) else { return super::not_in_lane(op) };
    let rule = int64_rule(op, Some(receiver)).unwrap_or(rule);
    zero_arg_method(q, receiver, name, rule, op)
}

/// `abs`/`neg` of an int64 tensor: their own rule, the tensor's type (the other ops of the lane
/// are float32 only).
fn int64_rule(op: Op, input: Option<&Operand>) -> Option<&'static Rule> {
    (matches!(op, Op::Abs | Op::Neg) && input.and_then(super::int64_tensor).is_some()).then_some(&rules::INT64_SIGN)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::ty::TensorTy as T;

    #[test]
    fn every_unary_function_and_method() {
        for name in ["abs", "neg", "negative", "square", "exp", "log", "sqrt"] {
            for (ty, marker) in [(T::F32_CPU_1D, "TensorF32Cpu1D"), (T::F32_CPU_2D, "TensorF32Cpu2D")] {
                let want = (format!("torchlower/unary-{name}-f32-rank1-2"), marker.to_string());
                assert_eq!(outcome(&call(&format!("torch.{name}"), &[t(ty)], &[])), want);
                assert_eq!(outcome(&method(&t(ty), name, &[], &[])), want);
            }
        }
    }

    #[test]
    fn variants_are_rejected_or_not_covered() {
        let x = t(T::F32_CPU_1D);
        assert_eq!(outcome(&call("torch.exp", &[int(2)], &[])).0, "TL200");
        assert_eq!(outcome(&call("torch.abs", &[x.clone()], &[kw("out", x.clone())])).0, "TL201");
        assert_eq!(outcome(&method(&x, "abs_", &[], &[])).0, "TL203");
        assert_eq!(outcome(&method(&x, "sqrt", &[int(1)], &[])).0, "TL202");
        assert_eq!(outcome(&call("torch.absolute", &[x.clone()], &[])).0, "not_covered");
        assert_eq!(outcome(&call("torch.exp", &[t(T::I64_CPU_2D)], &[])).0, "TL200");
    }

    #[test]
    fn abs_and_neg_of_int64() {
        let want = ("torchlower/abs-neg-int64".to_string(), "TensorI64Cpu2D".to_string());
        assert_eq!(outcome(&call("torch.abs", &[t(T::I64_CPU_2D)], &[])), want);
        assert_eq!(outcome(&method(&t(T::I64_CPU_2D), "neg", &[], &[])), want);
        assert_eq!(outcome(&super::super::negation(&t(T::I64_CPU_2D))), want);
    }
}
