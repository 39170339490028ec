//! Lane: views and reshapes — `view`, `reshape`, `permute`, `transpose`, `t`, `unsqueeze`,
//! `flatten`, `contiguous` — as methods and as the `torch.X(t, …)` functions. Any dtype (they
//! move no values); the result's rank follows from the arguments, so shapes and permutations
//! are Python ints (one per dim, or one tuple of them, which the walk spreads), and the dims
//! of `transpose`, `unsqueeze` and `flatten` are int literals. A view returned by native code
//! aliases its input exactly as eager's does: both are libtorch's own view ops. Sizes that do
//! not fit raise eager's errors at run time.

use super::reductions::normalize_dim;
use super::{keyword, keywords_only, Claim, Decision, Lit, Operand, OperandRef, Query, Target};
use crate::ir::{Op, Options};
use crate::rules::{self, Rule};
use crate::ty::{TensorTy, Ty};

fn rule(op: Op) -> Option<&'static Rule> {
    Some(match op {
        Op::View => &rules::VIEW,
        Op::Reshape => &rules::RESHAPE,
        Op::Permute => &rules::PERMUTE,
        Op::Expand => &rules::EXPAND,
        Op::ExpandAs => &rules::EXPAND_AS,
        Op::ViewAs => &rules::VIEW_AS,
        Op::ReshapeAs => &rules::RESHAPE_AS,
        Op::Transpose => &rules::TRANSPOSE,
        Op::T => &rules::MATRIX_T,
        Op::Unsqueeze => &rules::UNSQUEEZE,
        Op::Flatten => &rules::FLATTEN,
        Op::Contiguous => &rules::CONTIGUOUS,
        Op::Chunk => &rules::CHUNK,
        Op::Split => &rules::SPLIT,
        Op::Unbind => &rules::UNBIND,
        Op::Cat => &rules::CAT,
        Op::Stack => &rules::STACK,
        Op::Narrow => &rules::NARROW,
        Op::Select => &rules::SELECT,
        Op::Unflatten => &rules::UNFLATTEN,
        Op::Squeeze => &rules::SQUEEZE,
        Op::Detach => &rules::DETACH,
        Op::Clone => &rules::CLONE,
        Op::Roll => &rules::ROLL,
        Op::Flip => &rules::FLIP,
        Op::Unfold => &rules::UNFOLD,
        Op::RepeatInterleave => &rules::REPEAT_INTERLEAVE,
        Op::Dropout => &rules::DROPOUT_EVAL,
        Op::Repeat => &rules::REPEAT,
        _ => return None,
    })
}

/// `t.view(…)` & co.
pub fn method(q: &Query, receiver: &Operand, op: Op, name: &str) -> Decision {
    if !super::params::of(op).is_empty() {
        return through_signature(q, op, &format!(".{name}()"));
    }
    claim(q, receiver, q.args, op, &format!(".{name}()"), OperandRef::Receiver, 0)
}

/// `torch.reshape(t, shape)` & co.: the tensor first, positionally.
pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    if matches!(op, Op::Cat | Op::Stack) {
        return join(q, op, path);
    }
    if !super::params::of(op).is_empty() {
        return through_signature(q, op, path);
    }
    let Some((input, rest)) = q.args.split_first() else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs the input tensor positionally"));
    };
    claim(q, input, rest, op, path, OperandRef::Arg(0), 1)
}

/// `torch.cat([a, b, …], dim=0)` / `torch.stack(…)`: the walk spreads the list (a list or
/// tuple display, or a tuple local) into the leading arguments. One dtype, one device, one
/// rank; sizes are checked by libtorch.
fn join(q: &Query, op: Op, path: &str) -> Decision {
    let Some(rule) = rule(op) else { return super::not_in_lane(op) };
    if q.starred {
        return Decision::reject(&rules::BAD_ARITY, format!("{path}: the tensors as one list or tuple"));
    }
    if let Err(d) = keywords_only(q, &["dim"], path) {
        return d;
    }
    let count = q.args.iter().take_while(|o| matches!(o.ty, Ty::Tensor(_) | Ty::Unknown)).count();
    let (tensors, rest) = q.args.split_at(count);
    if tensors.iter().any(|o| o.ty == Ty::Unknown) {
        return Decision::Unresolved(format!("a tensor of {path} has an unresolved type"));
    }
    let types: Vec<TensorTy> = tensors.iter().filter_map(|o| o.ty.tensor()).collect();
    let Some(first) = types.first().copied() else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} of no tensors (eager raises)"));
    };
    if types.iter().any(|t| t.dtype != first.dtype || t.rank != first.rank) {
        return Decision::reject(&rules::BAD_RANKS, format!("{path} of tensors of different dtypes or ranks"));
    }
    if let Err(d) = super::one_device(&types) {
        return d;
    }
    let result_rank = if op == Op::Stack { first.rank + 1 } else { first.rank };
    // a Python int known only at run time (YOLOv5's `Concat(dimension)`): the result's rank
    // does not depend on it, and libtorch checks it with eager's IndexError
    let dynamic = match (rest, keyword(q, "dim")) {
        ([d], None) if d.ty == Ty::Int && !matches!(d.lit, Lit::Int(_)) => Some(OperandRef::Arg(count)),
        ([], Some((i, d))) if d.ty == Ty::Int && !matches!(d.lit, Lit::Int(_)) => Some(OperandRef::Keyword(i)),
        _ => None,
    };
    if let Some(dim) = dynamic {
        return match TensorTy::new(first.dtype, first.device, result_rank) {
            Some(result) => Decision::Claimed(Claim { rule, result, op, options: Options::DynDim, operands: (0..count).map(OperandRef::Arg).chain([dim]).collect() }),
            None => Decision::reject(&rules::BAD_RANKS, format!("{path}: there is no rank-{result_rank} type")),
        };
    }
    let dim = match (rest, keyword(q, "dim")) {
        ([], None) => 0,
        ([d], None) | ([], Some((_, d))) => match literal(d, path) {
            Ok(d) => d,
            Err(e) => return e,
        },
        _ => return Decision::reject(&rules::BAD_ARITY, format!("{path}: a list of tensors and one dim")),
    };
    let dim = match normalize_dim(dim, result_rank, path) {
        Ok(d) => d,
        Err(e) => return e,
    };
    match TensorTy::new(first.dtype, first.device, result_rank) {
        Some(result) => Decision::Claimed(Claim { rule, result, op, options: Options::Dim(dim), operands: (0..count).map(OperandRef::Arg).collect() }),
        None => Decision::reject(&rules::BAD_RANKS, format!("{path}: there is no rank-{result_rank} type")),
    }
}

/// `narrow`, `select`, `unflatten`, `squeeze(dim)` and `detach`, bound by their Python
/// signatures; dims and indices are Python ints (checked against the size by libtorch, with
/// eager's errors), the result's rank follows from the op alone.
fn through_signature(q: &Query, op: Op, form: &str) -> Decision {
    let Some(rule) = rule(op) else { return super::not_in_lane(op) };
    let bound = match super::params::bind(q, op, form) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let Some(t) = bound.tensor("input") else { return Decision::reject(&rules::BAD_ARITY, format!("{form} needs the input tensor")) };
    if op == Op::Dropout {
        if let Err(d) = dropout_in_inference(&bound, form) {
            return d;
        }
    }
    let rank = match op {
        Op::Select | Op::Squeeze => i64::from(t.rank) - 1,
        Op::Unfold => i64::from(t.rank) + 1,
        Op::Repeat => match bound.literal("repeats") {
            Some(Lit::Ints(sizes)) if sizes.len() >= usize::from(t.rank) => sizes.len() as i64,
            _ => return Decision::reject(&rules::BAD_ARITY, format!("{form}: at least one Python int per dim (eager raises with fewer)")),
        },
        // a tuple `dim` is eager's TypeError; without one the flattened tensor repeats
        Op::RepeatInterleave => match (bound.literal("dim"), bound.scalar_type("dim")) {
            (None | Some(Lit::None), _) => 1,
            (Some(Lit::Int(_)), _) | (Some(Lit::NotLiteral), Some(Ty::Int)) => i64::from(t.rank),
            _ => return Decision::reject(&rules::BAD_KEYWORD, format!("{form}: `dim` as one Python int")),
        },
        Op::Unflatten => match bound.literal("sizes") {
            Some(Lit::Ints(sizes)) => i64::from(t.rank) + sizes.len() as i64 - 1,
            _ => return Decision::reject(&rules::BAD_ARITY, format!("{form}: `sizes` as a tuple or list of Python ints")),
        },
        _ => i64::from(t.rank),
    };
    match u8::try_from(rank).ok().filter(|r| *r >= 1).and_then(|r| TensorTy::new(t.dtype, t.device, r)) {
        Some(result) => bound.claim(rule, op, result),
        None => Decision::reject(&rules::BAD_RANKS, format!("{form}: the result would be rank {rank} (no tensor type has that rank)")),
    }
}

/// `F.dropout` as inference calls it: `training=False`, or a bool known at run time (the
/// backend refuses True, and auto mode reruns Python); the default trains (random). `p` a
/// float (an int variable would print as a float in eager's range error).
fn dropout_in_inference(bound: &super::params::Bound, form: &str) -> Result<(), Decision> {
    let runtime_flag = bound.literal("training") == Some(&Lit::NotLiteral) && bound.scalar_type("training") == Some(Ty::Bool);
    if bound.literal("training") != Some(&Lit::Bool(false)) && !runtime_flag {
        return Err(Decision::reject(&rules::BAD_KEYWORD, format!("{form} in training draws random masks; inference passes `training=False`")));
    }
    match (bound.literal("p"), bound.scalar_type("p")) {
        (Some(Lit::Int(p)), _) if (0..=1).contains(p) => Ok(()),
        (_, Some(Ty::Int)) => Err(Decision::reject(&rules::BAD_KEYWORD, format!("{form}: `p` as a Python float (an int outside 0 and 1 is refused)"))),
        _ => Ok(()),
    }
}

/// `t.mT` (the last two dims swapped, rank ≥ 2) and `t.T` (rank ≤ 2: `t.t()`), views; `None`
/// for other attributes.
pub fn attribute(receiver: &Operand, name: &str) -> Option<Decision> {
    let Ty::Tensor(t) = receiver.ty else { return None };
    let decision = match (name, t.rank) {
        ("mT", r) if r >= 2 => {
            let r = i64::from(r);
            Decision::Claimed(Claim { rule: &rules::TRANSPOSE, result: t, op: Op::Transpose, options: Options::DimPair(r - 2, r - 1), operands: vec![OperandRef::Receiver] })
        }
        ("T", r) if r <= 2 => Decision::Claimed(Claim { rule: &rules::MATRIX_T, result: t, op: Op::T, options: Options::None, operands: vec![OperandRef::Receiver] }),
        ("mT", _) => Decision::reject(&rules::BAD_RANKS, "`.mT` of a rank-1 tensor (eager raises)"),
        ("T", _) => Decision::reject(&rules::VIEW_OP, "`.T` of a tensor of rank > 2 reverses every dim (deprecated in eager); use permute"),
        _ => return None,
    };
    let q = Query { target: Target::Method(name), receiver: Some(receiver), args: &[], keywords: &[], starred: false };
    Some(super::cuda_gate(&q, decision))
}

/// `rest` are the arguments after the tensor; `first` is the index of `rest[0]` in `q.args`.
fn claim(q: &Query, input: &Operand, rest: &[Operand], op: Op, form: &str, at: OperandRef, first: usize) -> Decision {
    let Some(rule) = rule(op) else { return super::not_in_lane(op) };
    let t = match input.ty {
        Ty::Tensor(t) => t,
        Ty::Unknown => return Decision::Unresolved(format!("{form} input has an unresolved type")),
        other => return Decision::reject(&rules::NOT_F32_OPERAND, format!("{form} input is {}, not a tensor", other.describe())),
    };
    if q.starred {
        return Decision::reject(&rules::BAD_ARITY, format!("{form}: starred arguments that are not tuples are not supported"));
    }
    let allowed: &[&str] = match op {
        Op::Flatten => &["start_dim", "end_dim"],
        Op::Unsqueeze | Op::Chunk | Op::Split | Op::Unbind => &["dim"],
        _ => &[],
    };
    if let Err(d) = keywords_only(q, allowed, form) {
        return d;
    }
    let mut dynamic_dim = None;
    let outcome = match op {
        Op::View | Op::Reshape | Op::Permute | Op::Expand => int_list(t, rest, op, form),
        Op::ExpandAs => match rest {
            [other] => match other.ty {
                Ty::Tensor(o) if o.device == t.device && o.rank >= t.rank => {
                    TensorTy::new(t.dtype, t.device, o.rank).map(|r| (r, Options::None)).ok_or_else(|| Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type")))
                }
                Ty::Tensor(_) => Err(Decision::reject(&rules::BAD_RANKS, format!("{form}: the other tensor has fewer dims or another device"))),
                Ty::Unknown => Err(Decision::Unresolved(format!("the other tensor of {form} has an unresolved type"))),
                other => Err(Decision::reject(&rules::NOT_F32_OPERAND, format!("{form} of {}", other.describe()))),
            },
            _ => Err(Decision::reject(&rules::BAD_ARITY, format!("{form} takes one tensor"))),
        },
        // the other tensor's shape, so its rank (libtorch raises eager's error when the sizes
        // do not fit)
        Op::ViewAs | Op::ReshapeAs => match rest {
            [other] => match other.ty {
                Ty::Tensor(o) if o.device == t.device => {
                    TensorTy::new(t.dtype, t.device, o.rank).map(|r| (r, Options::None)).ok_or_else(|| Decision::reject(&rules::BAD_RANKS, format!("{form}: no result type")))
                }
                Ty::Tensor(_) => Err(Decision::reject(&rules::MIXED_DEVICE, format!("{form}: the other tensor lives on another device"))),
                Ty::Unknown => Err(Decision::Unresolved(format!("the other tensor of {form} has an unresolved type"))),
                other => Err(Decision::reject(&rules::NOT_F32_OPERAND, format!("{form} of {}", other.describe()))),
            },
            _ => Err(Decision::reject(&rules::BAD_ARITY, format!("{form} takes one tensor"))),
        },
        Op::Transpose => dim_pair(t, rest, form).map(|(a, b)| (t, Options::DimPair(a, b))),
        Op::Flatten => flatten(q, t, rest, form),
        Op::Unsqueeze => match (rest, keyword(q, "dim")) {
            ([], Some((i, dim))) => unsqueeze(t, std::slice::from_ref(dim), form).map(|r| {
                dynamic_dim = (r.1 == Options::DynDim).then_some(OperandRef::Keyword(i));
                r
            }),
            (_, None) => unsqueeze(t, rest, form).map(|r| {
                dynamic_dim = (r.1 == Options::DynDim).then_some(OperandRef::Arg(first));
                r
            }),
            _ => Err(Decision::reject(&rules::DIM_DUPLICATE, format!("{form}: `dim` given twice"))),
        },
        Op::Chunk | Op::Split | Op::Unbind => parts(q, t, rest, op, form).map(|r| {
            if r.1 == Options::DynDim {
                let positional = if op == Op::Unbind { first } else { first + 1 };
                dynamic_dim = Some(match keyword(q, "dim") {
                    Some((i, _)) => OperandRef::Keyword(i),
                    None => OperandRef::Arg(positional),
                });
            }
            r
        }),
        Op::T if t.rank > 2 => Err(Decision::reject(&rules::BAD_RANKS, format!("{form} of a rank-{} tensor (eager accepts rank ≤ 2)", t.rank))),
        _ if !rest.is_empty() => Err(Decision::reject(&rules::BAD_ARITY, format!("{form} takes no arguments"))),
        _ => Ok((t, Options::None)),
    };
    match outcome {
        Ok((result, options)) => {
            let mut operands = vec![at];
            if matches!(op, Op::View | Op::Reshape | Op::Permute | Op::Expand | Op::ExpandAs | Op::ViewAs | Op::ReshapeAs) {
                operands.extend((0..rest.len()).map(|i| OperandRef::Arg(first + i)));
            }
            if matches!(op, Op::Chunk | Op::Split) {
                operands.push(OperandRef::Arg(first));
            }
            operands.extend(dynamic_dim);
            Decision::Claimed(Claim { rule, result, op, options, operands })
        }
        Err(d) => d,
    }
}

/// A shape (`view`, `reshape`) or a permutation (`permute`): one Python int per dim.
fn int_list(t: TensorTy, ints: &[Operand], op: Op, form: &str) -> Result<(TensorTy, Options), Decision> {
    if let Some(bad) = ints.iter().find(|o| o.ty != Ty::Int) {
        return Err(match bad.ty {
            Ty::Unknown => Decision::Unresolved(format!("a size of {form} has an unresolved type")),
            other => Decision::reject(&rules::BAD_ARITY, format!("{form} takes Python ints (or one tuple of them), got {}", other.describe())),
        });
    }
    let rank = u8::try_from(ints.len()).unwrap_or(u8::MAX);
    if op == Op::Expand && rank < t.rank {
        return Err(Decision::reject(&rules::BAD_RANKS, format!("{form} of a rank-{} tensor to {rank} sizes (eager raises)", t.rank)));
    }
    if op == Op::Permute && rank != t.rank {
        return Err(Decision::reject(&rules::BAD_RANKS, format!("{form} of a rank-{} tensor needs {} dims, got {rank}", t.rank, t.rank)));
    }
    if rank == 0 {
        return Err(Decision::reject(&rules::RANK0_RESULT, format!("{form} with no sizes gives a rank-0 tensor")));
    }
    TensorTy::new(t.dtype, t.device, rank)
        .map(|result| (result, Options::None))
        .ok_or_else(|| Decision::reject(&rules::BAD_RANKS, format!("{form} to rank {rank}: no tensor type has rank {rank}")))
}

/// The literal int of an operand.
fn literal(o: &Operand, form: &str) -> Result<i64, Decision> {
    match o.lit {
        Lit::Int(v) => Ok(v),
        _ => Err(Decision::reject(&rules::DIM_NOT_LITERAL, format!("{form}: dims must be int literals"))),
    }
}

fn dim_pair(t: TensorTy, dims: &[Operand], form: &str) -> Result<(i64, i64), Decision> {
    let [a, b] = dims else {
        return Err(Decision::reject(&rules::BAD_ARITY, format!("{form} takes two dims")));
    };
    Ok((normalize_dim(literal(a, form)?, t.rank, form)?, normalize_dim(literal(b, form)?, t.rank, form)?))
}

/// `flatten(start_dim=0, end_dim=-1)`, positionally or by keyword: dims `start..=end` merged.
fn flatten(q: &Query, t: TensorTy, positional: &[Operand], form: &str) -> Result<(TensorTy, Options), Decision> {
    if positional.len() > 2 {
        return Err(Decision::reject(&rules::BAD_ARITY, format!("{form} takes at most two dims")));
    }
    let pick = |index: usize, name: &str, default: i64| -> Result<i64, Decision> {
        match (positional.get(index), keyword(q, name)) {
            (Some(_), Some(_)) => Err(Decision::reject(&rules::DIM_DUPLICATE, format!("{form}: `{name}` given twice"))),
            (Some(o), None) | (None, Some((_, o))) => literal(o, form),
            (None, None) => Ok(default),
        }
    };
    let start = normalize_dim(pick(0, "start_dim", 0)?, t.rank, form)?;
    let end = normalize_dim(pick(1, "end_dim", -1)?, t.rank, form)?;
    if start > end {
        return Err(Decision::reject(&rules::DIM_OUT_OF_RANGE, format!("{form}: start_dim {start} is after end_dim {end} (eager raises)")));
    }
    let rank = t.rank - (end - start) as u8;
    let result = TensorTy::new(t.dtype, t.device, rank).ok_or_else(|| Decision::reject(&rules::BAD_RANKS, format!("{form}: no rank-{rank} type")))?;
    Ok((result, Options::DimPair(start, end)))
}

/// `chunk(n, dim=0)`, `split(size, dim=0)` (`n`, `size`: Python ints; `split` also takes the
/// sizes as a tuple or list of ints), `unbind(dim=0)`: each
/// part has the input's type (`unbind`: one rank less). The walk accepts them only as the
/// value unpacked by an assignment (`a, b = t.chunk(2, -1)`), which fixes how many parts.
fn parts(q: &Query, t: TensorTy, positional: &[Operand], op: Op, form: &str) -> Result<(TensorTy, Options), Decision> {
    let (count_arg, dim_args) = match op {
        Op::Unbind => (None, positional),
        _ => match positional.split_first() {
            Some((n, rest)) => (Some(n), rest),
            None => return Err(Decision::reject(&rules::BAD_ARITY, format!("{form} needs the number or size of the parts"))),
        },
    };
    if let Some(n) = count_arg {
        // `t.split((2, 2, nc + 1), 4)`: the parts' sizes as a tuple or list of Python ints
        let sizes = op == Op::Split && matches!(&n.lit, Lit::Ints(items) if !items.is_empty());
        if n.ty != Ty::Int && !sizes {
            let given = if op == Op::Split { "a Python int or a tuple of them" } else { "a Python int" };
            return Err(Decision::reject(&rules::BAD_ARITY, format!("{form}: the parts are given by {given} here (not {})", n.ty.describe())));
        }
    }
    let result = if op == Op::Unbind { t.rank.checked_sub(1).and_then(|r| TensorTy::new(t.dtype, t.device, r)) } else { Some(t) };
    let result = result.ok_or_else(|| Decision::reject(&rules::RANK0_RESULT, format!("{form} of a rank-{} tensor gives no parts of a tensor type", t.rank)))?;
    let dim = match (dim_args, keyword(q, "dim")) {
        ([], None) => 0,
        // a Python int known only at run time: the parts' rank does not depend on it
        ([d], None) | ([], Some((_, d))) if d.ty == Ty::Int && !matches!(d.lit, Lit::Int(_)) => return Ok((result, Options::DynDim)),
        ([d], None) | ([], Some((_, d))) => literal(d, form)?,
        _ => return Err(Decision::reject(&rules::BAD_ARITY, format!("{form}: one dim"))),
    };
    let dim = normalize_dim(dim, t.rank, form)?;
    Ok((result, Options::Dim(dim)))
}

/// `unsqueeze(dim)`: `dim` in `[-rank-1, rank]`, normalised against the result's rank.
fn unsqueeze(t: TensorTy, dims: &[Operand], form: &str) -> Result<(TensorTy, Options), Decision> {
    let [dim] = dims else {
        return Err(Decision::reject(&rules::BAD_ARITY, format!("{form} takes one dim")));
    };
    let result = TensorTy::new(t.dtype, t.device, t.rank + 1)
        .ok_or_else(|| Decision::reject(&rules::BAD_RANKS, format!("{form} of a rank-{} tensor: there is no rank-{} type", t.rank, t.rank + 1)))?;
    // the rank grows by one whatever the dim: a Python int known only at run time will do
    // (libtorch checks it with eager's IndexError)
    if dim.ty == Ty::Int && !matches!(dim.lit, Lit::Int(_)) {
        return Ok((result, Options::DynDim));
    }
    let dim = normalize_dim(literal(dim, form)?, t.rank + 1, form)?;
    Ok((result, Options::Dim(dim)))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::ty::TensorTy as T;

    #[test]
    fn views_give_the_rank_their_arguments_say() {
        let x = t(T::F32_CPU_3D);
        let n = super::Operand { ty: crate::ty::Ty::Int, lit: super::Lit::NotLiteral };
        assert_eq!(outcome(&method(&x, "view", &[n.clone(), int(-1)], &[])), ("torchlower/tensor-view".into(), "TensorF32Cpu2D".into()));
        assert_eq!(outcome(&method(&x, "reshape", &[int(2), int(3), int(4), n.clone()], &[])).1, "TensorF32Cpu4D");
        assert_eq!(outcome(&call("torch.reshape", &[x.clone(), int(-1)], &[])).1, "TensorF32Cpu1D");
        assert_eq!(outcome(&method(&x, "permute", &[int(0), int(2), int(1)], &[])).1, "TensorF32Cpu3D");
        assert_eq!(outcome(&method(&x, "permute", &[int(0), int(1)], &[])).0, "TL208");
        assert_eq!(outcome(&method(&x, "transpose", &[int(-1), int(-2)], &[])).1, "TensorF32Cpu3D");
        assert_eq!(outcome(&method(&x, "transpose", &[int(0), int(3)], &[])).0, "TL252");
        assert_eq!(outcome(&method(&x, "transpose", &[n.clone(), int(1)], &[])).0, "TL251");
        assert_eq!(outcome(&method(&x, "unsqueeze", &[int(-1)], &[])).1, "TensorF32Cpu4D");
        assert_eq!(outcome(&method(&t(T::F32_CPU_4D), "unsqueeze", &[int(0)], &[])).1, "TensorF32Cpu5D");
        let six = T::new(crate::ty::Dtype::F32, crate::ty::Device::Cpu, 6).expect("rank 6");
        assert_eq!(outcome(&method(&t(six), "unsqueeze", &[int(0)], &[])).0, "TL208");
        assert_eq!(outcome(&method(&x, "flatten", &[int(1)], &[])).1, "TensorF32Cpu2D");
        assert_eq!(outcome(&call("torch.flatten", &[x.clone()], &[kw("start_dim", int(0)), kw("end_dim", int(1))])).1, "TensorF32Cpu2D");
        assert_eq!(outcome(&method(&x, "flatten", &[], &[])).1, "TensorF32Cpu1D");
        assert_eq!(outcome(&method(&t(T::F32_CPU_2D), "t", &[], &[])).1, "TensorF32Cpu2D");
        assert_eq!(outcome(&method(&x, "t", &[], &[])).0, "TL208");
        assert_eq!(outcome(&method(&x, "contiguous", &[], &[])).1, "TensorF32Cpu3D");
        assert_eq!(outcome(&method(&t(T::I64_CPU_1D), "view", &[int(1), int(-1)], &[])).1, "TensorI64Cpu2D");
        assert_eq!(outcome(&method(&t(T::F32_CUDA0_2D), "view", &[int(-1)], &[])).1, "TensorF32Cuda0_1D");
        assert_eq!(outcome(&method(&t(T::F32_CUDA0_3D), "permute", &[int(2), int(0), int(1)], &[])).1, "TensorF32Cuda0_3D");
    }
}
