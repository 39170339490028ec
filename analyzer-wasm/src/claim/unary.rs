//! Lane: unary math `abs, neg, negative, square, exp, log, sqrt` as exact `torch.X(t)` or
//! zero-argument methods. Rank 1 or 2; the result keeps the type. Aliases such as
//! `torch.absolute` are not covered.

use super::activations::{one_tensor_function, zero_arg_method};
use super::{Decision, Operand, Query};
use crate::ir::TensorOp;
use crate::rules::{self, Rule};

fn rule_and_op(name: &str) -> (&'static Rule, TensorOp) {
    match name {
        "abs" => (&rules::UNARY_ABS, TensorOp::Abs),
        "neg" => (&rules::UNARY_NEG, TensorOp::Neg),
        // eager `negative` is an alias of `neg`
        "negative" => (&rules::UNARY_NEGATIVE, TensorOp::Neg),
        "square" => (&rules::UNARY_SQUARE, TensorOp::Square),
        "exp" => (&rules::UNARY_EXP, TensorOp::Exp),
        "log" => (&rules::UNARY_LOG, TensorOp::Log),
        _ => (&rules::UNARY_SQRT, TensorOp::Sqrt),
    }
}

pub fn function(q: &Query, name: &str) -> Decision {
    let (rule, op) = rule_and_op(name);
    one_tensor_function(q, &format!("torch.{name}"), rule, op)
}

pub fn method(q: &Query, receiver: &Operand, name: &str) -> Decision {
    let (rule, op) = rule_and_op(name);
    zero_arg_method(q, receiver, name, rule, op)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::types::ty::TensorTy as T;

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
    }
}
