//! Lane: relu / sigmoid / tanh as zero-argument methods, as `torch.relu(t)`-style functions
//! and as `torch.nn.functional.relu(t, inplace=False)`. Rank 1 or 2; the result keeps the type.

use super::{elementwise_result, f32_tensor, keyword, keywords_only, positional_exactly, Claim, Decision, Lit, Operand, OperandRef, Query};
use crate::ir::{Op, Options};
use crate::rules::{self, Rule};

/// (method rule, `torch.X` rule) of an activation op.
fn op_rules(op: Op) -> Option<(&'static Rule, &'static Rule)> {
    Some(match op {
        Op::Relu => (&rules::TENSOR_RELU, &rules::FUNCTION_RELU),
        Op::Sigmoid => (&rules::TENSOR_SIGMOID, &rules::FUNCTION_SIGMOID),
        Op::Tanh => (&rules::TENSOR_TANH, &rules::FUNCTION_TANH),
        _ => return None,
    })
}

/// `t.relu()`: zero arguments, no keywords.
pub fn method(q: &Query, receiver: &Operand, op: Op) -> Decision {
    let Some((rule, _)) = op_rules(op) else { return super::not_in_lane(op) };
    zero_arg_method(q, receiver, op.name(), rule, op)
}

/// `torch.relu(t)`: one positional tensor, no keywords; `F.relu(t)` has its own form.
pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    if path == "torch.nn.functional.relu" {
        return functional_relu(q);
    }
    let Some((_, rule)) = op_rules(op) else { return super::not_in_lane(op) };
    one_tensor_function(q, &format!("torch.{}", op.name()), rule, op)
}

/// `torch.nn.functional.relu(t)` with `inplace` omitted or the keyword literal False.
fn functional_relu(q: &Query) -> Decision {
    let form = "F.relu";
    if q.args.len() == 2 && !q.starred {
        return Decision::reject(&rules::RELU_INPLACE, "F.relu: a positional `inplace` is not accepted; omit it");
    }
    if let Some((_, inplace)) = keyword(q, "inplace") {
        match inplace.lit {
            Lit::Bool(false) => {}
            Lit::Bool(true) => return Decision::reject(&rules::RELU_INPLACE, "F.relu(..., inplace=True) modifies its input"),
            _ => return Decision::reject(&rules::RELU_INPLACE, "F.relu: `inplace` must be the literal False"),
        }
    }
    if let Err(d) = keywords_only(q, &["inplace"], form) {
        return d;
    }
    if let Err(d) = positional_exactly(q, 1, form) {
        return d;
    }
    tensor_claim(&q.args[0], "F.relu input", &rules::FUNCTIONAL_RELU, Op::Relu, OperandRef::Arg(0))
}

/// Shared by the activation and unary lanes: a zero-argument out-of-place method.
pub fn zero_arg_method(q: &Query, receiver: &Operand, name: &str, rule: &'static Rule, op: Op) -> Decision {
    if q.starred || !q.args.is_empty() {
        return Decision::reject(&rules::BAD_ARITY, format!("`.{name}()` takes no arguments"));
    }
    if let Err(d) = keywords_only(q, &[], &format!(".{name}()")) {
        return d;
    }
    tensor_claim(receiver, &format!("receiver of `.{name}()`"), rule, op, OperandRef::Receiver)
}

/// Shared: `torch.fn(t)` with one positional tensor and no keywords.
pub fn one_tensor_function(q: &Query, form: &str, rule: &'static Rule, op: Op) -> Decision {
    if let Err(d) = keywords_only(q, &[], form) {
        return d;
    }
    if let Err(d) = positional_exactly(q, 1, form) {
        return d;
    }
    tensor_claim(&q.args[0], &format!("{form} input"), rule, op, OperandRef::Arg(0))
}

fn tensor_claim(input: &Operand, what: &str, rule: &'static Rule, op: Op, at: OperandRef) -> Decision {
    if let (true, Some(t)) = (rule.id == rules::INT64_SIGN.id, super::int64_tensor(input)) {
        return Decision::Claimed(Claim { rule, result: t, op, options: Options::None, operands: vec![at] });
    }
    match f32_tensor(input, what) {
        Ok(t) => Decision::Claimed(Claim { rule, result: elementwise_result(t), op, options: Options::None, operands: vec![at] }),
        Err(d) => d,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::ty::TensorTy as T;

    #[test]
    fn methods_keep_rank_1_and_2() {
        for (ty, marker) in [(T::F32_CPU_1D, "TensorF32Cpu1D"), (T::F32_CPU_2D, "TensorF32Cpu2D"), (T::F32_CUDA0_2D, "TensorF32Cuda0_2D")] {
            for name in ["relu", "sigmoid", "tanh"] {
                let d = method(&t(ty), name, &[], &[]);
                assert_eq!(outcome(&d), (format!("torchlower/tensor-{name}-f32-rank1-2"), marker.to_string()));
            }
        }
    }

    #[test]
    fn functions() {
        for name in ["relu", "sigmoid", "tanh"] {
            let d = call(&format!("torch.{name}"), &[t(T::F32_CPU_1D)], &[]);
            assert_eq!(outcome(&d), (format!("torchlower/function-{name}-f32-rank1-2"), "TensorF32Cpu1D".into()));
        }
        let f = "torch.nn.functional.relu";
        assert_eq!(outcome(&call(f, &[t(T::F32_CPU_2D)], &[])).0, "torchlower/functional-relu-f32-rank1-2");
        assert_eq!(outcome(&call(f, &[t(T::F32_CPU_2D)], &[kw("inplace", boolean(false))])).0, "torchlower/functional-relu-f32-rank1-2");
    }

    #[test]
    fn rejections() {
        let x = t(T::F32_CPU_2D);
        assert_eq!(outcome(&method(&x, "relu_", &[], &[])).0, "TL203");
        assert_eq!(outcome(&method(&x, "sigmoid_", &[], &[])).0, "TL203");
        assert_eq!(outcome(&method(&x, "relu", &[int(1)], &[])).0, "TL202");
        assert_eq!(outcome(&method(&x, "tanh", &[], &[kw("out", x.clone())])).0, "TL201");
        assert_eq!(outcome(&call("torch.relu", &[x.clone()], &[kw("out", x.clone())])).0, "TL201");
        assert_eq!(outcome(&call("torch.relu", &[int(2)], &[])).0, "TL200");
        assert_eq!(outcome(&method(&t(T::I64_CPU_1D), "relu", &[], &[])).0, "TL200");
        let f = "torch.nn.functional.relu";
        assert_eq!(outcome(&call(f, &[x.clone()], &[kw("inplace", boolean(true))])).0, "TL220");
        assert_eq!(outcome(&call(f, &[x.clone(), boolean(false)], &[])).0, "TL220");
        assert_eq!(outcome(&call(f, &[x.clone()], &[kw("inplace", unknown())])).0, "TL220");
        assert_eq!(outcome(&method(&unknown(), "relu", &[], &[])).0, "not_covered");
        assert_eq!(outcome(&call("torch.nn.functional.sigmoid", &[x.clone()], &[])).0, "not_covered");
    }
}
