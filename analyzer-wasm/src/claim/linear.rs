//! Lane: `torch.nn.functional.linear`.
//!
//! Seed: three positional tensors (2, 2, 1), or input/weight with the bias omitted, a
//! positional `None` or `bias=None`. Extension: a tensor-valued `bias=b` keyword.

use super::{f32_tensor, keyword, keywords_only, one_device, Claim, Decision, Lit, Operand, OperandRef, Query};
use crate::ir::{Op, Options};
use crate::rules;
use crate::ty::{TensorTy, Ty};

const FORM: &str = "F.linear";

pub fn functional_linear(q: &Query) -> Decision {
    match check(q) {
        Ok(claim) => Decision::Claimed(claim),
        Err(decision) => decision,
    }
}

fn check(q: &Query) -> Result<Claim, Decision> {
    if q.starred {
        return Err(Decision::reject(&rules::BAD_ARITY, "F.linear: starred arguments are not supported"));
    }
    for name in ["input", "weight"] {
        if keyword(q, name).is_some() {
            return Err(Decision::reject(&rules::LINEAR_KEYWORD_OPERAND, format!("F.linear: `{name}=` must be passed positionally")));
        }
    }
    keywords_only(q, &["bias"], FORM)?;
    let bias_kw = keyword(q, "bias");
    let (input, weight) = match q.args {
        [x, w] => (x, w),
        [x, w, _] if bias_kw.is_none() => (x, w),
        [_, _, _] => return Err(Decision::reject(&rules::BAD_ARITY, "F.linear: bias given both positionally and as `bias=`")),
        _ => {
            return Err(Decision::reject(
                &rules::BAD_ARITY,
                format!("F.linear takes input and weight positionally plus an optional bias, got {} positional arguments", q.args.len()),
            ))
        }
    };
    // bias: which operand and whether it is the keyword form
    let (bias, bias_ref, bias_keyword): (Option<&Operand>, Option<OperandRef>, bool) = match (q.args.get(2), bias_kw) {
        (Some(b), _) => (Some(b), Some(OperandRef::Arg(2)), false),
        (None, Some((i, b))) => (Some(b), Some(OperandRef::Keyword(i)), true),
        (None, None) => (None, None, false),
    };
    let bias = bias.filter(|b| b.lit != Lit::None);
    // unresolved operands first: no claim and no rejection on values we do not know
    for (op, what) in [(Some(input), "input"), (Some(weight), "weight"), (bias, "bias")] {
        if let Some(op) = op {
            if op.ty == Ty::Unknown {
                return Err(Decision::Unresolved(format!("F.linear {what} has an unresolved type")));
            }
        }
    }
    let x = f32_tensor(input, "F.linear input")?;
    let w = f32_tensor(weight, "F.linear weight")?;
    let b = bias.map(|b| f32_tensor(b, "F.linear bias")).transpose()?;
    let mut tensors = vec![x, w];
    tensors.extend(b);
    let device = one_device(&tensors)?;
    // a rank-1 input (a rank-1 result) stays outside, as in the seed's rank matrix
    let ranks_ok = x.rank >= 2 && w.rank == 2 && b.is_none_or(|b| b.rank == 1);
    if !ranks_ok {
        let got = match b {
            Some(b) => format!("{}, {}, {}", x.rank, w.rank, b.rank),
            None => format!("{}, {}", x.rank, w.rank),
        };
        return Err(Decision::reject(
            &rules::BAD_RANKS,
            format!("F.linear needs an input of rank 2–4, a rank-2 weight and a rank-1 bias; got ranks {got}"),
        ));
    }
    let rule = match (b.is_some(), bias_keyword) {
        (false, _) => &rules::LINEAR_NONE,
        (true, false) => &rules::LINEAR_BIAS,
        (true, true) => &rules::LINEAR_BIAS_KEYWORD,
    };
    let mut operands = vec![OperandRef::Arg(0), OperandRef::Arg(1)];
    if b.is_some() {
        operands.extend(bias_ref);
    }
    // the input's leading dims are kept; its last becomes the weight's rows
    let result = TensorTy::f32(device, x.rank).ok_or_else(|| Decision::reject(&rules::BAD_RANKS, "no result type of this rank"))?;
    Ok(Claim { rule, result, op: Op::Linear, options: Options::None, operands })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::ty::TensorTy as T;

    const L: &str = "torch.nn.functional.linear";

    #[test]
    fn seed_forms_claim_rank_2() {
        let (x, w, b) = (t(T::F32_CPU_2D), t(T::F32_CPU_2D), t(T::F32_CPU_1D));
        assert_eq!(outcome(&call(L, &[x.clone(), w.clone(), b.clone()], &[])).0, "torchlower/functional-linear-f32-2d");
        for d in [
            call(L, &[x.clone(), w.clone()], &[]),
            call(L, &[x.clone(), w.clone(), none()], &[]),
            call(L, &[x.clone(), w.clone()], &[kw("bias", none())]),
        ] {
            assert_eq!(outcome(&d), ("torchlower/functional-linear-none-f32-2d".into(), "TensorF32Cpu2D".into()));
        }
    }

    #[test]
    fn bias_keyword_is_an_extension() {
        let d = call(L, &[t(T::F32_CPU_2D), t(T::F32_CPU_2D)], &[kw("bias", t(T::F32_CPU_1D))]);
        assert_eq!(outcome(&d).0, "torchlower/functional-linear-bias-keyword-f32-2d");
    }

    #[test]
    fn rejections() {
        let (x, w, b) = (t(T::F32_CPU_2D), t(T::F32_CPU_2D), t(T::F32_CPU_1D));
        assert_eq!(outcome(&call(L, &[t(T::F32_CPU_1D), w.clone(), b.clone()], &[])).0, "TL208");
        assert_eq!(outcome(&call(L, &[x.clone(), w.clone(), t(T::F32_CPU_2D)], &[])).0, "TL208");
        assert_eq!(outcome(&call(L, &[x.clone()], &[kw("weight", w.clone())])).0, "TL210");
        assert_eq!(outcome(&call(L, &[x.clone(), w.clone()], &[kw("out", b.clone())])).0, "TL201");
        assert_eq!(outcome(&call(L, &[x.clone(), t(T::F32_CUDA0_2D)], &[])).0, "TL204");
        assert_eq!(outcome(&call(L, &[x.clone(), w.clone(), b.clone()], &[kw("bias", none())])).0, "TL202");
        assert_eq!(outcome(&call(L, &[x.clone(), int(3)], &[])).0, "TL200");
        assert_eq!(outcome(&call(L, &[unknown(), w.clone()], &[])).0, "not_covered");
    }

    #[test]
    fn cuda_surface() {
        let d = call(L, &[t(T::F32_CUDA0_2D), t(T::F32_CUDA0_2D), t(T::F32_CUDA0_1D)], &[]);
        assert_eq!(outcome(&d), ("torchlower/functional-linear-f32-2d".into(), "TensorF32Cuda0_2D".into()));
    }
}
