//! Lane: `softmax` (method, `torch.softmax`, `torch.nn.functional.softmax`) and `argmax`
//! (method, `torch.argmax`) over one static dim. argmax gives int64 rank-1 labels only.

use super::reductions::{dim_args, normalize_dim};
use super::{f32_tensor, keyword, keywords_only, Claim, Decision, Lit, Operand, OperandRef, Query};
use crate::ir::{Op, Options};
use crate::rules;
use crate::ty::{Device, Dtype, TensorTy, Ty};

/// `.softmax(dim)` / `.argmax(dim)`.
pub fn method(q: &Query, receiver: &Operand, op: Op) -> Decision {
    match op {
        Op::Softmax => softmax(q, receiver, q.args, ".softmax()", false, OperandRef::Receiver),
        Op::Argmax => argmax(q, receiver, q.args, ".argmax()", OperandRef::Receiver),
        Op::LogSoftmax => log_softmax(q, ".log_softmax()", 1),
        _ => super::not_in_lane(op),
    }
}

/// `torch.softmax`, `torch.nn.functional.softmax`, `torch.argmax`.
pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    match op {
        Op::Softmax => softmax_function(q, path == "torch.nn.functional.softmax"),
        Op::Argmax => argmax_function(q),
        Op::LogSoftmax if path == "torch.nn.functional.log_softmax" => super::params::elementwise(q, op, &rules::LOG_SOFTMAX, path),
        Op::LogSoftmax => log_softmax(q, path, 2),
        _ => super::not_in_lane(op),
    }
}

/// `torch.log_softmax(x, dim)` / `x.log_softmax(dim)`: their next positional argument is
/// `dtype` (F.log_softmax's is `_stacklevel`), an int there is eager's TypeError.
fn log_softmax(q: &Query, form: &str, positional: usize) -> Decision {
    if q.args.len() > positional {
        return Decision::reject(&rules::BAD_ARITY, format!("{form}: the argument after `dim` is `dtype` (only its default None is lowered)"));
    }
    // only F.log_softmax has eager's implicit dim; these raise a TypeError without one (or
    // with None)
    let dim = q.args.get(positional - 1).or(keyword(q, "dim").map(|(_, d)| d));
    if dim.is_none_or(|d| d.lit == Lit::None) {
        return Decision::reject(&rules::DIM_MISSING, format!("{form} needs an explicit dim"));
    }
    super::params::elementwise(q, Op::LogSoftmax, &rules::LOG_SOFTMAX, form)
}

/// `functional` is true for `torch.nn.functional.softmax` (which also permits `dtype=None`).
fn softmax_function(q: &Query, functional: bool) -> Decision {
    let form = if functional { "F.softmax" } else { "torch.softmax" };
    let Some((input, rest)) = q.args.split_first() else {
        return Decision::reject(&rules::BAD_ARITY, format!("{form} needs the input tensor positionally"));
    };
    softmax(q, input, rest, form, functional, OperandRef::Arg(0))
}

fn softmax(q: &Query, input: &Operand, positional: &[Operand], form: &str, functional: bool, at: OperandRef) -> Decision {
    let check = || -> Result<Claim, Decision> {
        let t = f32_tensor(input, &format!("{form} input"))?;
        if let Some((_, dtype)) = keyword(q, "dtype") {
            // `dtype=torch.float32` on a float32 input converts nothing (eager's `to` is a no-op)
            let own = t.dtype == crate::ty::Dtype::F32 && dtype.lit == Lit::Dtype("torch.float32");
            if !(own || functional && dtype.lit == Lit::None) {
                return Err(Decision::reject(&rules::SOFTMAX_DTYPE, format!("{form}: `dtype` override is not supported")));
            }
        }
        keywords_only(q, &["dim", "dtype"], form)?;
        let rule = if functional { &rules::FUNCTIONAL_SOFTMAX } else { &rules::SOFTMAX_DIM };
        // a Python int known only at run time (fairseq's `softmax(x, dim)` helper): the result
        // keeps the input's type whatever it is, and libtorch checks it with eager's IndexError
        let run_time = |d: &Operand| d.ty == Ty::Int && !matches!(d.lit, Lit::Int(_));
        let offset = q.args.len() - positional.len();
        let dim_at = match (positional, keyword(q, "dim")) {
            ([d], None) if run_time(d) => Some(OperandRef::Arg(offset)),
            ([], Some((i, d))) if run_time(d) => Some(OperandRef::Keyword(i)),
            _ => None,
        };
        if let Some(dim_at) = dim_at {
            return Ok(Claim { rule, result: t, op: Op::Softmax, options: Options::DynDim, operands: vec![at, dim_at] });
        }
        // `F.softmax(x, dim=None)`: the implicit dim, as without one
        let none_dim = match (positional, keyword(q, "dim")) {
            ([d], None) | ([], Some((_, d))) => d.lit == Lit::None,
            _ => false,
        };
        let given = if functional && none_dim { None } else { dim_args(q, positional, form, false)?.dim };
        let dim = match given {
            Some(dim) => normalize_dim(dim, t.rank, form)?,
            // `F.softmax(x)`: eager's implicit dim (`_get_softmax_dim`, which also warns that the
            // choice is deprecated): 0 for ranks 0, 1 and 3, else 1
            None if functional => i64::from(!matches!(t.rank, 0 | 1 | 3)),
            None => return Err(Decision::reject(&rules::DIM_MISSING, format!("{form} needs an explicit dim"))),
        };
        Ok(Claim { rule, result: t, op: Op::Softmax, options: Options::Dim(dim), operands: vec![at] })
    };
    check().map_or_else(|d| d, Decision::Claimed)
}

fn argmax_function(q: &Query) -> Decision {
    let Some((input, rest)) = q.args.split_first() else {
        return Decision::reject(&rules::BAD_ARITY, "torch.argmax needs the input tensor positionally");
    };
    argmax(q, input, rest, "torch.argmax", OperandRef::Arg(0))
}

fn argmax(q: &Query, input: &Operand, positional: &[Operand], form: &str, at: OperandRef) -> Decision {
    let check = || -> Result<Claim, Decision> {
        // float32, or int64 / int32 as eager takes them (CLIP's `text.argmax(dim=-1)` of token
        // ids, GPT-2's int32 `(token_indices * non_pad_mask).argmax(-1)`)
        let t = match input.ty {
            crate::ty::Ty::Tensor(t) if t.dtype.is_integer() => t,
            _ => f32_tensor(input, &format!("{form} input"))?,
        };
        keywords_only(q, &["dim", "keepdim"], form)?;
        let args = dim_args(q, positional, form, true)?;
        let Some(dim) = args.dim else {
            return Err(Decision::reject(&rules::DIM_MISSING, format!("{form} without dim returns a rank-0 index")));
        };
        let dim = normalize_dim(dim, t.rank, form)?;
        if t.device != Device::Cpu {
            return Err(Decision::reject(&rules::ARGMAX_RESULT_TYPE, format!("{form} on cuda:0 would need an int64 CUDA type, which does not exist")));
        }
        let rank = if args.keepdim { t.rank } else { t.rank - 1 };
        let Some(result) = TensorTy::new(Dtype::I64, Device::Cpu, rank) else {
            return Err(Decision::reject(&rules::ARGMAX_RESULT_TYPE, format!("{form} of a rank-1 tensor without keepdim=True would be int64 rank 0")));
        };
        Ok(Claim { rule: &rules::ARGMAX_DIM, result, op: Op::Argmax, options: Options::DimKeepdim(dim, args.keepdim), operands: vec![at] })
    };
    check().map_or_else(|d| d, Decision::Claimed)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::ty::TensorTy as T;
    use crate::ty::Ty;

    #[test]
    fn softmax_forms() {
        let (one, two) = (T::F32_CPU_1D, T::F32_CPU_2D);
        let s = "torchlower/softmax-static-dim-f32-rank1-2";
        assert_eq!(outcome(&method(&t(two), "softmax", &[], &[kw("dim", int(1))])), (s.into(), "TensorF32Cpu2D".into()));
        assert_eq!(outcome(&method(&t(one), "softmax", &[int(0)], &[])), (s.into(), "TensorF32Cpu1D".into()));
        assert_eq!(outcome(&call("torch.softmax", &[t(two), int(0)], &[])).0, s);
        let f = "torchlower/functional-softmax-f32-rank1-2";
        assert_eq!(outcome(&call("torch.nn.functional.softmax", &[t(two)], &[kw("dim", int(1)), kw("dtype", none())])).0, f);
        // rejections
        assert_eq!(outcome(&call("torch.softmax", &[t(two), int(1)], &[kw("dtype", none())])).0, "TL260");
        let f32 = super::Operand { ty: crate::ty::Ty::Unknown, lit: super::Lit::Dtype("torch.float32") };
        assert_eq!(outcome(&call("torch.softmax", &[t(two), int(1)], &[kw("dtype", f32)])).0, "torchlower/softmax-static-dim-f32-rank1-2");
        assert_eq!(outcome(&call("torch.nn.functional.softmax", &[t(two)], &[kw("dim", int(1)), kw("dtype", unknown())])).0, "TL260");
        assert_eq!(outcome(&method(&t(two), "softmax", &[], &[])).0, "TL250");
        assert_eq!(outcome(&method(&t(two), "softmax", &[], &[kw("dim", int(1)), kw("keepdim", boolean(true))])).0, "TL201");
        assert_eq!(outcome(&method(&t(one), "softmax", &[int(1)], &[])).0, "TL252");
        assert_eq!(outcome(&method(&t(two), "softmax", &[int(0)], &[kw("dim", int(1))])).0, "TL253");
        // a dim known only at run time: the input's type, the dim an operand
        let claimed = call("torch.nn.functional.softmax", &[t(two)], &[kw("dim", super::Operand { ty: Ty::Int, lit: super::Lit::NotLiteral })]);
        assert_eq!(outcome(&claimed), (f.into(), "TensorF32Cpu2D".into()));
        let crate::claim::Decision::Claimed(c) = method(&t(two), "softmax", &[super::Operand { ty: Ty::Int, lit: super::Lit::NotLiteral }], &[]) else { panic!("claimed") };
        assert_eq!((c.options, c.operands), (crate::ir::Options::DynDim, vec![super::OperandRef::Receiver, super::OperandRef::Arg(0)]));
        assert_eq!(outcome(&method(&t(two), "softmax", &[super::Operand { ty: Ty::Float, lit: super::Lit::NotLiteral }], &[])).0, "TL251");
        // F.softmax's implicit dim: 1 for rank 2, 0 for rank 1; torch.softmax has none
        for (input, dims) in [(two, 1), (one, 0)] {
            for keywords in [vec![], vec![kw("dim", none())]] {
                let crate::claim::Decision::Claimed(c) = call("torch.nn.functional.softmax", &[t(input)], &keywords) else { panic!("claimed") };
                assert_eq!(c.options, crate::ir::Options::Dim(dims));
            }
        }
        assert_eq!(outcome(&call("torch.softmax", &[t(two)], &[])).0, "TL250");
    }

    #[test]
    fn argmax_forms() {
        let (one, two) = (T::F32_CPU_1D, T::F32_CPU_2D);
        let a = "torchlower/argmax-static-dim-i64-rank1";
        assert_eq!(outcome(&method(&t(two), "argmax", &[], &[kw("dim", int(1)), kw("keepdim", boolean(false))])), (a.into(), "TensorI64Cpu1D".into()));
        assert_eq!(outcome(&call("torch.argmax", &[t(two), int(0)], &[])), (a.into(), "TensorI64Cpu1D".into()));
        assert_eq!(outcome(&method(&t(one), "argmax", &[], &[kw("dim", int(0)), kw("keepdim", boolean(true))])), (a.into(), "TensorI64Cpu1D".into()));
        // int64 rank 2 exists (TensorI64Cpu2D): keepdim on a matrix is claimed
        assert_eq!(outcome(&method(&t(two), "argmax", &[], &[kw("dim", int(1)), kw("keepdim", boolean(true))])), (a.into(), "TensorI64Cpu2D".into()));
        assert_eq!(outcome(&method(&t(T::F32_CPU_4D), "argmax", &[int(-1)], &[])), (a.into(), "TensorI64Cpu3D".into()));
        // a rank-0 index has its type (TensorI64Cpu0D), over one dim or every element
        assert_eq!(outcome(&method(&t(one), "argmax", &[], &[kw("dim", int(0))])), (a.into(), "TensorI64Cpu0D".into()));
        assert_eq!(outcome(&method(&t(two), "argmax", &[], &[])), ("torchlower/argmax-all".into(), "TensorI64Cpu0D".into()));
        assert_eq!(outcome(&method(&t(T::F32_CUDA0_2D), "argmax", &[int(1)], &[])).0, "TL261");
        // int64 input (token ids), as eager takes it; bool is not
        assert_eq!(outcome(&method(&t(T::I64_CPU_2D), "argmax", &[int(-1)], &[])), (a.into(), "TensorI64Cpu1D".into()));
        assert_eq!(outcome(&method(&t(T::BOOL_CPU_2D), "argmax", &[int(1)], &[])).0, "TL200");
    }
}
