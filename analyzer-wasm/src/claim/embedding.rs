//! Lane: embedding — `F.embedding(indices, weight)`: the rows of a float32 matrix picked by
//! int64 indices, libtorch's kernel (eager's values, and its IndexError out of range). The
//! options that only matter for training or that write the weight (`max_norm`) are accepted at
//! eager's defaults only.

use super::{params, Decision, Query};
use crate::ir::Op;
use crate::rules;
use crate::ty::TensorTy;

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    match op {
        Op::Embedding => embedding(q, op, path),
        Op::EmbeddingBag => embedding_bag(q, op, path),
        Op::Gather | Op::IndexSelect | Op::OneHot | Op::Scatter => picking(q, op, path),
        Op::CrossEntropy => cross_entropy(q, op, path),
        other => super::not_in_lane(other),
    }
}

/// `x.gather(dim, index)` / `x.index_select(dim, index)` / `x.scatter(dim, index, src)`.
pub fn method(q: &Query, op: Op, name: &str) -> Decision {
    match op {
        Op::Gather | Op::IndexSelect | Op::Scatter => picking(q, op, &format!(".{name}()")),
        other => super::not_in_lane(other),
    }
}

/// `torch.gather(x, dim, index)` (the index's rank, the input's dtype), `torch.index_select(x,
/// dim, index)` (a rank-1 index; the input's type), `F.one_hot(labels, num_classes=-1)` (int64,
/// one rank more), `torch.scatter(x, dim, index, src)` (index and `src` of the input's rank,
/// `src` of its dtype; the input's type). Sizes and ranges are checked by libtorch with eager's
/// errors.
fn picking(q: &Query, op: Op, form: &str) -> Decision {
    let bound = match params::bind(q, op, form) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let Some(input) = bound.tensor("input") else { return Decision::reject(&rules::BAD_ARITY, format!("{form} needs the input tensor")) };
    let (rule, result) = match op {
        Op::Gather => match bound.tensor("index") {
            Some(index) if index.rank == input.rank => (&rules::GATHER, TensorTy::new(input.dtype, input.device, index.rank)),
            _ => return Decision::reject(&rules::BAD_RANKS, format!("{form}: the index must have the input's rank (eager raises)")),
        },
        Op::Scatter => match (bound.tensor("index"), bound.tensor("src")) {
            (Some(index), Some(src)) if index.rank == input.rank && src.rank == input.rank && src.dtype == input.dtype => (&rules::SCATTER, Some(input)),
            // a Python number given positionally (the `value` overload, whose keyword is `value`,
            // not `src`): converted to the input's dtype by libtorch
            (Some(index), None) if index.rank == input.rank && super::keyword(q, "src").is_none() => (&rules::SCATTER, Some(input)),
            _ => return Decision::reject(&rules::BAD_RANKS, format!("{form}: the index and `src` must have the input's rank, `src` its dtype (eager raises)")),
        },
        Op::IndexSelect => match bound.tensor("index") {
            Some(index) if index.rank == 1 => (&rules::INDEX_SELECT, Some(input)),
            _ => return Decision::reject(&rules::BAD_RANKS, format!("{form}: the index must be rank 1 (eager raises)")),
        },
        _ => (&rules::ONE_HOT, TensorTy::new(input.dtype, input.device, input.rank + 1)),
    };
    match result {
        Some(result) => bound.claim(rule, op, result),
        None => Decision::reject(&rules::BAD_RANKS, format!("{form}: no tensor type for the result")),
    }
}

/// `F.cross_entropy(scores, targets, reduction="none")`: float32 scores with the classes in
/// dim 1 and int64 targets of one rank less; the loss per target (the targets' type as
/// float32). The other reductions return a rank-0 tensor.
fn cross_entropy(q: &Query, op: Op, path: &str) -> Decision {
    let bound = match params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let (Some(scores), Some(targets)) = (bound.tensor("input"), bound.tensor("target")) else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs the scores and the targets"));
    };
    if bound.choice != 2 {
        return Decision::reject(&rules::RANK0_RESULT, format!("{path}: reduction=\"mean\" or \"sum\" returns a rank-0 tensor; pass reduction=\"none\""));
    }
    if targets.rank == 0 || scores.rank != targets.rank + 1 {
        return Decision::reject(&rules::BAD_RANKS, format!("{path}: rank-{} scores need rank-{} class-index targets, not rank {} (eager raises)", scores.rank, scores.rank.saturating_sub(1), targets.rank));
    }
    match TensorTy::f32(scores.device, targets.rank) {
        Some(result) => bound.claim(&rules::CROSS_ENTROPY, op, result),
        None => Decision::reject(&rules::BAD_RANKS, format!("{path}: no tensor type for the result")),
    }
}

/// The arguments both embedding forms start from: bound, with the indices and a rank-2 weight
/// (`raises`: what eager's message says it raises for another rank).
fn indices_and_weight(q: &Query, op: Op, path: &str, raises: &str) -> Result<(params::Bound, TensorTy, TensorTy), Decision> {
    let bound = params::bind(q, op, path)?;
    let (Some(indices), Some(weight)) = (bound.tensor("input"), bound.tensor("weight")) else {
        return Err(Decision::reject(&rules::BAD_ARITY, format!("{path} needs the indices and the weight")));
    };
    if weight.rank != 2 {
        return Err(Decision::reject(&rules::BAD_RANKS, format!("{path}: the weight is rank {}, not a matrix ({raises})", weight.rank)));
    }
    Ok((bound, indices, weight))
}

fn embedding(q: &Query, op: Op, path: &str) -> Decision {
    let (bound, indices, weight) = match indices_and_weight(q, op, path, "eager raises") {
        Ok(found) => found,
        Err(d) => return d,
    };
    match TensorTy::f32(weight.device, indices.rank + 1) {
        Some(result) => bound.claim(&rules::EMBEDDING, op, result),
        None => Decision::reject(&rules::BAD_RANKS, format!("{path}: rank-{} indices give a rank-{} result (no tensor type has that rank)", indices.rank, indices.rank + 1)),
    }
}

/// `F.embedding_bag(input, weight, offsets, mode=…)`: what eager's Python checks before the
/// kernel is decided here from the types (a rank-2 weight; rank-1 indices with rank-1 int64
/// offsets, or rank-2 indices without; per-sample weights of the indices' rank, with
/// `mode="sum"` only), so the native call raises only what the kernel raises.
fn embedding_bag(q: &Query, op: Op, path: &str) -> Decision {
    let (bound, indices, weight) = match indices_and_weight(q, op, path, "eager raises ValueError") {
        Ok(found) => found,
        Err(d) => return d,
    };
    match (indices.rank, bound.tensor("offsets")) {
        (1, Some(offsets)) if offsets.rank == 1 && offsets.dtype == crate::ty::Dtype::I64 => {}
        (1, Some(_)) => return Decision::reject(&rules::BAD_RANKS, format!("{path}: the offsets must be a rank-1 int64 tensor (eager raises)")),
        (1, None) => return Decision::reject(&rules::BAD_ARITY, format!("{path}: rank-1 indices need `offsets` (eager raises ValueError)")),
        (2, None) => {}
        (2, Some(_)) => return Decision::reject(&rules::BAD_KEYWORD, format!("{path}: rank-2 indices are bags of fixed length; `offsets` must be None (eager raises ValueError)")),
        (rank, _) => return Decision::reject(&rules::BAD_RANKS, format!("{path}: rank-{rank} indices (eager takes rank 1 or 2)")),
    }
    if let Some(weights) = bound.tensor("per_sample_weights") {
        if bound.choice != 1 {
            return Decision::reject(&rules::BAD_KEYWORD, format!("{path}: per_sample_weights only with mode=\"sum\" (eager raises NotImplementedError)"));
        }
        if weights.rank != indices.rank {
            return Decision::reject(&rules::BAD_RANKS, format!("{path}: per_sample_weights must have the indices' shape (eager raises ValueError)"));
        }
    }
    match TensorTy::f32(weight.device, 2) {
        Some(result) => bound.claim(&rules::EMBEDDING_BAG, op, result),
        None => Decision::reject(&rules::BAD_RANKS, format!("{path}: no tensor type for the result")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::ty::TensorTy as T;

    #[test]
    fn indices_pick_rows() {
        let (idx, w) = (t(T::I64_CPU_1D), t(T::F32_CPU_2D));
        assert_eq!(outcome(&call("torch.nn.functional.embedding", &[idx.clone(), w.clone()], &[])), ("torchlower/embedding".into(), "TensorF32Cpu2D".into()));
        assert_eq!(outcome(&call("torch.nn.functional.embedding", &[idx.clone(), w.clone()], &[kw("max_norm", int(1))])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.embedding", &[w.clone(), w.clone()], &[])).0, "TL200");
        assert_eq!(outcome(&call("torch.nn.functional.embedding", &[idx, t(T::F32_CPU_3D)], &[])).0, "TL208");
    }

    #[test]
    fn bags_of_rows() {
        let (idx, offsets, w) = (t(T::I64_CPU_1D), t(T::I64_CPU_1D), t(T::F32_CPU_2D));
        let sum = kw("mode", string("sum"));
        let bag = "torch.nn.functional.embedding_bag";
        assert_eq!(outcome(&call(bag, &[idx.clone(), w.clone(), offsets.clone()], &[sum.clone()])), ("torchlower/embedding-bag".into(), "TensorF32Cpu2D".into()));
        assert_eq!(outcome(&call(bag, &[t(T::I64_CPU_2D), w.clone()], &[kw("mode", string("max"))])).0, "torchlower/embedding-bag");
        assert_eq!(outcome(&call(bag, &[idx.clone(), w.clone()], &[])).0, "TL202"); // rank 1 needs offsets
        assert_eq!(outcome(&call(bag, &[t(T::I64_CPU_2D), w.clone(), offsets.clone()], &[])).0, "TL201");
        assert_eq!(outcome(&call(bag, &[idx.clone(), w.clone(), t(T::F32_CPU_1D)], &[])).0, "TL208");
        assert_eq!(outcome(&call(bag, &[idx.clone(), w.clone(), offsets.clone()], &[kw("per_sample_weights", t(T::F32_CPU_1D))])).0, "TL201");
        assert_eq!(outcome(&call(bag, &[idx.clone(), w.clone(), offsets.clone()], &[sum, kw("per_sample_weights", t(T::F32_CPU_1D))])).0, "torchlower/embedding-bag");
        assert_eq!(outcome(&call(bag, &[idx, w, offsets], &[kw("padding_idx", int(0))])).0, "TL201");
    }

    #[test]
    fn cross_entropy_per_target_only() {
        let (scores, targets) = (t(T::F32_CPU_3D), t(T::I64_CPU_2D));
        let none = kw("reduction", string("none"));
        assert_eq!(outcome(&call("torch.nn.functional.cross_entropy", &[scores.clone(), targets.clone()], &[none.clone()])), ("torchlower/cross-entropy-none".into(), "TensorF32Cpu2D".into()));
        assert_eq!(outcome(&call("torch.nn.functional.cross_entropy", &[scores.clone(), targets.clone()], &[])).0, "TL207");
        assert_eq!(outcome(&call("torch.nn.functional.cross_entropy", &[scores.clone(), targets.clone()], &[kw("weight", scores.clone()), none.clone()])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.cross_entropy", &[scores.clone(), t(T::I64_CPU_1D)], &[none])).0, "TL208");
    }
}
