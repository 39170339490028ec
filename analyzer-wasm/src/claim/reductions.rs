//! Lane: `mean` / `sum` over one static dim, as methods or exact `torch.mean/sum` (over a tuple
//! of dims: the signature-bound rows, as `amax`, `var` and the other reductions of this file).
//!
//! `dim` is an int literal given once (positionally or as keyword); `keepdim` is omitted
//! (False) or a keyword bool literal. The result must have rank 1 or 2: rank-2 inputs reduce
//! dim 0/1; rank-1 inputs need keepdim=True. Negative literal dims are normalised (extension).

use super::{f32_tensor, keyword, keywords_only, Claim, Decision, Lit, Operand, OperandRef, Query};
use crate::ir::{Op, Options};
use crate::rules;
use crate::ty::TensorTy;

/// Static `dim` and `keepdim` of a call; `positional` are the arguments after the tensor.
pub struct DimArgs {
    pub dim: Option<i64>,
    pub keepdim: bool,
}

/// Read dim/keepdim. `allow_keepdim` is false for softmax (no keepdim option there).
pub fn dim_args(q: &Query, positional: &[Operand], form: &str, allow_keepdim: bool) -> Result<DimArgs, Decision> {
    if q.starred {
        return Err(Decision::reject(&rules::BAD_ARITY, format!("{form}: starred arguments are not supported")));
    }
    if positional.len() >= 2 {
        if allow_keepdim {
            return Err(Decision::reject(&rules::KEEPDIM_POSITIONAL, format!("{form}: keepdim must be a keyword (`keepdim=...`)")));
        }
        return Err(Decision::reject(&rules::BAD_ARITY, format!("{form}: too many positional arguments")));
    }
    let kw_dim = keyword(q, "dim").map(|(_, v)| v);
    let dim_operand = match (positional.first(), kw_dim) {
        (Some(_), Some(_)) => return Err(Decision::reject(&rules::DIM_DUPLICATE, format!("{form}: dim given positionally and as keyword"))),
        (Some(p), None) => Some(p),
        (None, k) => k,
    };
    let dim = match dim_operand {
        None => None,
        Some(op) => match op.lit {
            Lit::Int(d) => Some(d),
            _ => return Err(Decision::reject(&rules::DIM_NOT_LITERAL, format!("{form}: dim must be an int literal"))),
        },
    };
    let mut keepdim = false;
    if allow_keepdim {
        if let Some((_, k)) = keyword(q, "keepdim") {
            match k.lit {
                Lit::Bool(b) => keepdim = b,
                _ => return Err(Decision::reject(&rules::KEEPDIM_NOT_LITERAL, format!("{form}: keepdim must be True or False literally"))),
            }
        }
    }
    Ok(DimArgs { dim, keepdim })
}

/// Normalise a literal dim against a static rank (PyTorch's wrap rule).
pub fn normalize_dim(dim: i64, rank: u8, form: &str) -> Result<i64, Decision> {
    let r = i64::from(rank);
    if (-r..r).contains(&dim) {
        Ok(if dim < 0 { dim + r } else { dim })
    } else {
        Err(Decision::reject(&rules::DIM_OUT_OF_RANGE, format!("{form}: dim {dim} is out of range for a rank-{rank} tensor")))
    }
}

pub fn method(q: &Query, receiver: &Operand, op: Op, name: &str) -> Decision {
    let form = format!(".{name}()");
    if let Some(op) = over_tuple(q, receiver, q.args, op) {
        return over_dims(q, op, &form);
    }
    reduce(q, receiver, q.args, &form, op, OperandRef::Receiver)
}

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    let Some((input, rest)) = q.args.split_first() else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs the input tensor positionally"));
    };
    if let Some(op) = over_tuple(q, input, rest, op) {
        return over_dims(q, op, path);
    }
    reduce(q, input, rest, path, op, OperandRef::Arg(0))
}

/// `sum`/`mean` whose `dim` (the first argument after the input, or the keyword) is a tuple or
/// list of ints, and `sum` of a bool or int64 tensor (an int64 result): the signature-bound row
/// over several dims.
fn over_tuple(q: &Query, input: &Operand, positional: &[Operand], op: Op) -> Option<Op> {
    let dim = positional.first().or_else(|| keyword(q, "dim").map(|(_, v)| v))?;
    let integral = matches!(input.ty, crate::ty::Ty::Tensor(t) if t.dtype != crate::ty::Dtype::F32);
    if !matches!(dim.lit, Lit::Ints(_)) && !(integral && op == Op::SumDim) {
        return None;
    }
    match op {
        Op::SumDim => Some(Op::SumDims),
        Op::MeanDim => Some(Op::MeanDims),
        _ => None,
    }
}

fn reduce(q: &Query, input: &Operand, positional: &[Operand], form: &str, op: Op, at: OperandRef) -> Decision {
    let rule = match op {
        Op::MeanDim => &rules::MEAN_DIM,
        Op::SumDim => &rules::SUM_DIM,
        _ => return super::not_in_lane(op),
    };
    match check(q, input, positional, form) {
        Ok((result, options)) => Decision::Claimed(Claim { rule, result, op, options, operands: vec![at] }),
        Err(d) => d,
    }
}

fn check(q: &Query, input: &Operand, positional: &[Operand], form: &str) -> Result<(TensorTy, Options), Decision> {
    let t = f32_tensor(input, &format!("{form} input"))?;
    keywords_only(q, &["dim", "keepdim"], form)?;
    let args = dim_args(q, positional, form, true)?;
    let Some(dim) = args.dim else {
        return Err(Decision::reject(&rules::DIM_MISSING, format!("{form} without dim reduces the whole tensor to rank 0")));
    };
    let dim = normalize_dim(dim, t.rank, form)?;
    let rank = if args.keepdim { t.rank } else { t.rank - 1 };
    if rank == 0 {
        return Err(Decision::reject(&rules::RANK0_RESULT, format!("{form} of a rank-1 tensor without keepdim=True is rank 0")));
    }
    let result = TensorTy::f32(t.device, rank).ok_or_else(|| Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type")))?;
    Ok((result, Options::DimKeepdim(dim, args.keepdim)))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::ty::TensorTy as T;

    #[test]
    fn cuda_norms_take_the_orders_our_kernels_compose() {
        let x = t(T::F32_CUDA0_2D);
        let norm = "torch.linalg.vector_norm";
        assert_eq!(outcome(&call(norm, &[x.clone()], &[kw("dim", int(1))])).1, "TensorF32Cuda0_1D");
        assert_eq!(outcome(&call(norm, &[x.clone(), int(1)], &[kw("dim", int(1))])).1, "TensorF32Cuda0_1D");
        assert_eq!(outcome(&call(norm, &[x.clone(), int(3)], &[kw("dim", int(1))])).0, "TL209");
        assert_eq!(outcome(&call("torch.nn.functional.normalize", &[x.clone()], &[kw("p", int(2)), kw("dim", int(-1))])).1, "TensorF32Cuda0_2D");
        assert_eq!(outcome(&call("torch.nn.functional.normalize", &[x.clone()], &[kw("p", int(4))])).0, "TL209");
        // on the CPU every order is libtorch's
        assert_eq!(outcome(&call(norm, &[t(T::F32_CPU_2D), int(3)], &[kw("dim", int(1))])).1, "TensorF32Cpu1D");
    }

    #[test]
    fn accepted_forms_and_ranks() {
        let (one, two) = (T::F32_CPU_1D, T::F32_CPU_2D);
        for name in ["mean", "sum"] {
            let rule = format!("torchlower/{name}-static-dim-f32-rank1-2");
            let f = format!("torch.{name}");
            assert_eq!(outcome(&method(&t(two), name, &[], &[kw("dim", int(1)), kw("keepdim", boolean(false))])), (rule.clone(), "TensorF32Cpu1D".into()));
            assert_eq!(outcome(&method(&t(two), name, &[int(0)], &[])), (rule.clone(), "TensorF32Cpu1D".into()));
            assert_eq!(outcome(&method(&t(two), name, &[int(0)], &[kw("keepdim", boolean(true))])), (rule.clone(), "TensorF32Cpu2D".into()));
            assert_eq!(outcome(&method(&t(one), name, &[], &[kw("dim", int(0)), kw("keepdim", boolean(true))])), (rule.clone(), "TensorF32Cpu1D".into()));
            assert_eq!(outcome(&call(&f, &[t(two), int(1)], &[kw("keepdim", boolean(true))])), (rule.clone(), "TensorF32Cpu2D".into()));
            assert_eq!(outcome(&call(&f, &[t(two)], &[kw("dim", int(-1))])), (rule.clone(), "TensorF32Cpu1D".into()));
        }
    }

    #[test]
    fn whole_tensor_forms() {
        let (two, ids, mask) = (T::F32_CPU_2D, T::I64_CPU_1D, T::BOOL_CPU_2D);
        assert_eq!(outcome(&method(&t(mask), "sum", &[], &[])), ("torchlower/sum-all".into(), "TensorI64Cpu0D".into()));
        assert_eq!(outcome(&method(&t(ids), "max", &[], &[])), ("torchlower/max-all".into(), "TensorI64Cpu0D".into()));
        assert_eq!(outcome(&call("torch.max", &[t(mask)], &[])), ("torchlower/max-all".into(), "TensorBoolCpu0D".into()));
        assert_eq!(outcome(&call("torch.min", &[t(two)], &[])), ("torchlower/min-all".into(), "TensorF32Cpu0D".into()));
        assert_eq!(outcome(&method(&t(two), "std", &[boolean(false)], &[])), ("torchlower/std-all".into(), "TensorF32Cpu0D".into()));
        assert_eq!(outcome(&method(&t(two), "var", &[], &[kw("unbiased", boolean(false))])), ("torchlower/var-all".into(), "TensorF32Cpu0D".into()));
        assert_eq!(outcome(&method(&t(ids), "prod", &[], &[])), ("torchlower/prod-all".into(), "TensorI64Cpu0D".into()));
        assert_eq!(outcome(&method(&t(ids), "argmin", &[], &[])), ("torchlower/argmin-all".into(), "TensorI64Cpu0D".into()));
        // eager's errors and the forms left to their own lanes
        assert_eq!(outcome(&method(&t(ids), "mean", &[], &[])).0, "TL200");
        assert_eq!(outcome(&method(&t(mask), "argmax", &[], &[])).0, "TL200");
        assert_eq!(outcome(&method(&t(T::F32_CUDA0_2D), "sum", &[], &[])).0, "TL209");
        assert_eq!(outcome(&method(&t(T::new(crate::ty::Dtype::I32, crate::ty::Device::Cpu, 2).expect("int32")), "max", &[], &[])).0, "TL207");
        assert_eq!(outcome(&call("torch.max", &[t(two), t(two)], &[])).1, "TensorF32Cpu2D");
        assert_eq!(outcome(&method(&t(two), "std", &[int(0)], &[])).1, "TensorF32Cpu1D");
        // `torch.maximum(x)` / `x.minimum()` are eager's TypeError, not reductions
        assert_ne!(outcome(&call("torch.maximum", &[t(two)], &[])).0, "torchlower/max-all");
        assert_ne!(outcome(&method(&t(two), "minimum", &[], &[])).0, "torchlower/min-all");
    }

    #[test]
    fn rejected_forms() {
        let (one, two) = (T::F32_CPU_1D, T::F32_CPU_2D);
        // without a dim: every element (the whole-tensor rows)
        assert_eq!(outcome(&method(&t(two), "mean", &[], &[])), ("torchlower/mean-all".into(), "TensorF32Cpu0D".into()));
        assert_eq!(outcome(&method(&t(two), "mean", &[], &[kw("keepdim", boolean(true))])).0, "TL201");
        assert_eq!(outcome(&method(&t(one), "mean", &[], &[kw("dim", int(0))])).0, "TL207");
        assert_eq!(outcome(&method(&t(two), "mean", &[int(0), boolean(true)], &[])).0, "TL254");
        assert_eq!(outcome(&method(&t(two), "sum", &[int(0)], &[kw("dim", int(1))])).0, "TL253");
        assert_eq!(outcome(&method(&t(two), "sum", &[], &[kw("dim", unknown())])).0, "TL251");
        assert_eq!(outcome(&method(&t(two), "sum", &[boolean(true)], &[])).0, "TL251");
        assert_eq!(outcome(&method(&t(two), "sum", &[int(2)], &[])).0, "TL252");
        assert_eq!(outcome(&method(&t(two), "sum", &[int(1)], &[kw("keepdim", unknown())])).0, "TL255");
        assert_eq!(outcome(&method(&t(two), "sum", &[int(1)], &[kw("dtype", unknown())])).0, "TL201");
        assert_eq!(outcome(&call("torch.mean", &[t(two), int(1), boolean(true)], &[])).0, "TL254");
        assert_eq!(outcome(&call("torch.sum", &[t(two)], &[])), ("torchlower/sum-all".into(), "TensorF32Cpu0D".into()));
    }
}

/// `torch.norm(t, p, dim, keepdim)` / `t.norm(…)` / `torch.linalg.vector_norm(x, ord, dim,
/// keepdim)`: a float32 tensor, a Python-number order (`p` omitted, None or `"fro"`: 2), the
/// dims as an int or a tuple of ints (all of them given: without `dim` the result is rank 0),
/// `keepdim` a bool literal; eager sends these to libtorch's vector norm, and so does native.
pub fn vector_norm(q: &Query, op: Op, form: &str) -> Decision {
    let rule = if op == Op::Norm { &rules::NORM } else { &rules::VECTOR_NORM };
    // `p="fro"` is the 2-norm for one or two dims, as eager's torch.norm decides
    let fro = |o: &Operand| matches!(&o.lit, Lit::Str(s) if s == "fro");
    let args: Vec<Operand> = q.args.iter().map(|o| if fro(o) { Operand { ty: crate::ty::Ty::NoneVal, lit: Lit::None } } else { o.clone() }).collect();
    let keywords: Vec<super::Keyword> = q
        .keywords
        .iter()
        .map(|k| if fro(&k.value) { super::Keyword { name: k.name.clone(), value: Operand { ty: crate::ty::Ty::NoneVal, lit: Lit::None } } } else { k.clone() })
        .collect();
    let q = Query { args: &args, keywords: &keywords, ..*q };
    let bound = match super::params::bind(&q, op, form) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let Some(t) = bound.tensor(if op == Op::Norm { "input" } else { "x" }) else {
        return Decision::reject(&rules::BAD_ARITY, format!("{form} needs the input tensor"));
    };
    let (dims, keepdim) = match reduced_dims(&bound, form) {
        Ok(d) => d,
        Err(d) => return d,
    };
    if op == Op::Norm && dims > 2 && !bound.literal("p").is_some_and(|p| !matches!(p, Lit::None)) {
        return Decision::reject(&rules::BAD_ARITY, format!("{form}: the Frobenius norm over {dims} dims is a matrix norm (eager raises)"));
    }
    if let Some(d) = cuda_norm_order(&bound, if op == Op::Norm { "p" } else { "ord" }, form) {
        return d;
    }
    match reduced_type(t, t.dtype, dims, keepdim, form) {
        Ok(result) => bound.claim(rule, op, result),
        Err(d) => d,
    }
}

/// On cuda:0 the norms are composed from our kernels for the orders 1 (`Σ|x|`) and 2
/// (`sqrt(Σx²)`, also the default); another order is TL209 there.
pub(super) fn cuda_norm_order(bound: &super::params::Bound, name: &str, form: &str) -> Option<Decision> {
    if bound.device != crate::ty::Device::Cuda0 {
        return None;
    }
    match bound.literal(name) {
        None | Some(Lit::None) | Some(Lit::Int(1 | 2)) => None,
        Some(Lit::Float(p)) if *p == 1.0 || *p == 2.0 => None,
        _ => Some(Decision::reject(&rules::CUDA_UNSUPPORTED, format!("{form} with `{name}` other than a literal 1 or 2 on cuda:0 (our kernels compose those orders only)"))),
    }
}

/// `amax`, `amin`, `logsumexp`, `var`, `std` over an int or a tuple of ints; `prod` and
/// `argmin` over one int; `all` and `any` (any dtype, a bool result): the dims given (without
/// them the result is rank 0), `keepdim` a bool literal. libtorch's kernels.
pub fn over_dims(q: &Query, op: Op, form: &str) -> Decision {
    let rule = match op {
        Op::Amax => &rules::AMAX,
        Op::SumDims => &rules::SUM_DIMS,
        Op::MeanDims => &rules::MEAN_DIMS,
        Op::Amin => &rules::AMIN,
        Op::Logsumexp => &rules::LOGSUMEXP,
        Op::Var => &rules::VAR,
        Op::Std => &rules::STD,
        Op::Prod => &rules::PROD,
        Op::Argmin => &rules::ARGMIN,
        Op::All => &rules::ALL,
        Op::Any => &rules::ANY,
        Op::MaxDim => &rules::MAX_DIM,
        Op::MinDim => &rules::MIN_DIM,
        Op::Nansum => &rules::NANSUM,
        Op::Topk => return topk(q, form),
        Op::Sort | Op::Argsort | Op::Cumsum => return along_dim(q, op, form),
        other => return super::not_in_lane(other),
    };
    let bound = match super::params::bind(q, op, form) {
        Ok(b) => b,
        Err(d) => return d,
    };
    if bound.literal("unbiased").is_some() && bound.literal("correction").is_some_and(|c| *c != Lit::None) {
        return Decision::reject(&rules::BAD_KEYWORD, format!("{form}: `unbiased` and `correction` together (eager raises)"));
    }
    let Some(t) = bound.tensor("input") else { return Decision::reject(&rules::BAD_ARITY, format!("{form} needs the input tensor")) };
    let (dims, keepdim) = match reduced_dims(&bound, form) {
        Ok(d) => d,
        Err(d) => return d,
    };
    let dtype = match op {
        Op::Argmin => crate::ty::Dtype::I64,
        Op::All | Op::Any => crate::ty::Dtype::Bool,
        Op::SumDims if t.dtype != crate::ty::Dtype::F32 => crate::ty::Dtype::I64,
        _ => t.dtype,
    };
    match reduced_type(t, dtype, dims, keepdim, form) {
        Ok(result) => bound.claim(rule, op, result),
        Err(d) => d,
    }
}

/// The reduction over every element that a call without a dim means (`x.sum()`,
/// `torch.max(x)`, `x.argmax()`, `x.std(False)`), or None where the call names a dim (or is
/// another form: `torch.max(a, b)`), which its own lane decides.
pub fn whole_op(q: &Query, op: Op) -> Option<Op> {
    let whole = match op {
        Op::SumDim | Op::SumDims => Op::SumAll,
        Op::MeanDim | Op::MeanDims => Op::MeanAll,
        Op::MaxDim | Op::Maximum => Op::MaxAll,
        Op::MinDim | Op::Minimum => Op::MinAll,
        Op::Argmax => Op::ArgmaxAll,
        Op::Argmin => Op::ArgminAll,
        Op::Prod => Op::ProdAll,
        Op::Std => Op::StdAll,
        Op::Var => Op::VarAll,
        _ => return None,
    };
    // only the spellings whose one-tensor form reduces: `torch.max(x)`, not `torch.maximum(x)`
    // (eager's TypeError)
    let spelled = match q.target {
        super::Target::Function(path) => path.rsplit('.').next().unwrap_or(path),
        super::Target::Method(name) => name,
        _ => return None,
    };
    if spelled != whole_name(whole) {
        return None;
    }
    let rest = match q.receiver {
        Some(_) => q.args,
        None => q.args.get(1..)?,
    };
    if q.starred || keyword(q, "dim").is_some() {
        return None;
    }
    let no_dim = match rest {
        [] => true,
        // `x.std(False)`: the `unbiased` overload
        [flag] => matches!(whole, Op::StdAll | Op::VarAll) && matches!(flag.lit, Lit::Bool(_)),
        _ => false,
    };
    no_dim.then_some(whole)
}

/// The Python name of a whole-tensor reduction's spellings.
fn whole_name(op: Op) -> &'static str {
    match op {
        Op::SumAll => "sum",
        Op::MeanAll => "mean",
        Op::MaxAll => "max",
        Op::MinAll => "min",
        Op::ArgmaxAll => "argmax",
        Op::ArgminAll => "argmin",
        Op::ProdAll => "prod",
        Op::StdAll => "std",
        _ => "var",
    }
}

/// A reduction over every element (see [`whole_op`]): a CPU tensor of the dtypes eager
/// reduces so, a rank-0 result (int64 for `sum`/`prod` of integers and bools, int64 indices).
pub fn whole(q: &Query, op: Op, form: &str) -> Decision {
    use crate::ty::{Device, Dtype};
    let bound = match super::params::bind(q, op, form) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let Some(t) = bound.tensor("input") else { return Decision::reject(&rules::BAD_ARITY, format!("{form} needs the input tensor")) };
    let (rule, dtype) = match (op, t.dtype) {
        (Op::SumAll, Dtype::F32) => (&rules::SUM_ALL, Dtype::F32),
        (Op::SumAll, _) => (&rules::SUM_ALL, Dtype::I64),
        (Op::ProdAll, Dtype::F32) => (&rules::PROD_ALL, Dtype::F32),
        (Op::ProdAll, _) => (&rules::PROD_ALL, Dtype::I64),
        (Op::MeanAll | Op::StdAll | Op::VarAll, other) if other != Dtype::F32 => {
            return Decision::reject(&rules::NOT_F32_OPERAND, format!("{form} of {}: eager takes floating-point tensors only", crate::ty::Ty::Tensor(t).describe()));
        }
        (Op::MeanAll, _) => (&rules::MEAN_ALL, Dtype::F32),
        (Op::StdAll, _) => (&rules::STD_ALL, Dtype::F32),
        (Op::VarAll, _) => (&rules::VAR_ALL, Dtype::F32),
        (Op::MaxAll, dtype) => (&rules::MAX_ALL, dtype),
        (Op::MinAll, dtype) => (&rules::MIN_ALL, dtype),
        (Op::ArgmaxAll | Op::ArgminAll, Dtype::Bool) => {
            return Decision::reject(&rules::NOT_F32_OPERAND, format!("{form} of a bool tensor (eager raises: not implemented for 'Bool')"));
        }
        (Op::ArgmaxAll, _) => (&rules::ARGMAX_ALL, Dtype::I64),
        (Op::ArgminAll, _) => (&rules::ARGMIN_ALL, Dtype::I64),
        (other, _) => return super::not_in_lane(other),
    };
    if t.device != Device::Cpu {
        return Decision::reject(&rules::CUDA_UNSUPPORTED, format!("{form} over every element is CPU-only so far (there is no rank-0 cuda:0 type)"));
    }
    match TensorTy::new(dtype, t.device, 0) {
        Some(result) => bound.claim(rule, op, result),
        None => Decision::reject(&rules::RANK0_RESULT, format!("{form}: no rank-0 type for {}", crate::ty::Ty::Tensor(t).describe())),
    }
}

/// `torch.topk`: values of the input's type; the indices' int64 type is added where the pair
/// is taken apart (`walk/call.rs`).
fn topk(q: &Query, form: &str) -> Decision {
    let bound = match super::params::bind(q, Op::Topk, form) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let Some(t) = bound.tensor("input") else { return Decision::reject(&rules::BAD_ARITY, format!("{form} needs the input tensor")) };
    if t.dtype != crate::ty::Dtype::F32 {
        return Decision::reject(&rules::NOT_F32_OPERAND, format!("{form} of {}: float32 is claimed", crate::ty::Ty::Tensor(t).describe()));
    }
    bound.claim(&rules::TOPK, Op::Topk, t)
}

/// `sort` (the `(values, indices)` pair: values of the input's type, the indices' int64 type
/// added where the pair is taken apart, as topk's), `argsort` (int64 indices) and `cumsum`
/// (int64 for int64 and bool inputs, as eager) along one Python-int dim: the input's rank,
/// libtorch's kernels and dim errors.
fn along_dim(q: &Query, op: Op, form: &str) -> Decision {
    let bound = match super::params::bind(q, op, form) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let Some(t) = bound.tensor("input") else { return Decision::reject(&rules::BAD_ARITY, format!("{form} needs the input tensor")) };
    // `cumsum`'s dtype is keyword-only (a third positional is eager's TypeError)
    if op == Op::Cumsum && q.args.len() + usize::from(q.receiver.is_some()) > 2 {
        return Decision::reject(&rules::BAD_ARITY, format!("{form}: `dtype` is keyword-only (eager raises TypeError)"));
    }
    use crate::ty::Dtype;
    let (rule, dtype) = match (op, t.dtype) {
        // `dtype=` casts the input first, as eager's `cumsum(…, dtype=…)`
        (Op::Cumsum, _) if bound.choice == 1 => (&rules::CUMSUM, Dtype::F32),
        (Op::Cumsum, _) if bound.choice == 2 => (&rules::CUMSUM, Dtype::I64),
        (Op::Cumsum, Dtype::F32) => (&rules::CUMSUM, Dtype::F32),
        (Op::Cumsum, _) => (&rules::CUMSUM, Dtype::I64),
        (_, Dtype::Bool) => return Decision::reject(&rules::NOT_F32_OPERAND, format!("{form} of a bool tensor: float32 and int64 are claimed")),
        (Op::Sort, dtype) => (&rules::SORT, dtype),
        _ => (&rules::ARGSORT, Dtype::I64),
    };
    match TensorTy::new(dtype, t.device, t.rank) {
        Some(result) => bound.claim(rule, op, result),
        None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no tensor type for the result")),
    }
}

/// How many dims a reduction bound by its signature removes (`dim` an int or a tuple of them;
/// without it the result would be rank 0) and whether it keeps them (a bool literal).
fn reduced_dims(bound: &super::params::Bound, form: &str) -> Result<(usize, bool), Decision> {
    let dims = match bound.literal("dim") {
        Some(Lit::Ints(d)) => d.len(),
        Some(_) => 1,
        None => return Err(Decision::reject(&rules::DIM_MISSING, format!("{form} without dim reduces to rank 0"))),
    };
    let keepdim = match bound.literal("keepdim") {
        None | Some(Lit::Bool(false)) => false,
        Some(Lit::Bool(true)) => true,
        Some(_) => return Err(Decision::reject(&rules::BAD_KEYWORD, format!("{form}: keepdim must be a bool literal"))),
    };
    Ok((dims, keepdim))
}

/// The type of `t` reduced over `dims` dims (kept or not), in `dtype`.
fn reduced_type(t: TensorTy, dtype: crate::ty::Dtype, dims: usize, keepdim: bool, form: &str) -> Result<TensorTy, Decision> {
    let rank = if keepdim { i64::from(t.rank) } else { i64::from(t.rank) - dims as i64 };
    // rank 0 where that type exists (float32 on the CPU): `x.mean(dim=(0, 1))`
    u8::try_from(rank)
        .ok()
        .and_then(|r| TensorTy::new(dtype, t.device, r))
        .ok_or_else(|| Decision::reject(&rules::RANK0_RESULT, format!("{form}: the result would be rank {rank}")))
}
