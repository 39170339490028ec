//! Lane: embedding — `F.embedding(indices, weight)`: the rows of a float32 matrix picked by
//! int64 indices, libtorch's kernel (eager's values, and its IndexError out of range). The
//! options that only matter for training or that write the weight (`max_norm`) are accepted at
//! eager's defaults only.

use super::{params, Decision, Query};
use crate::ir::Op;
use crate::rules;
use crate::ty::TensorTy;

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    if op != Op::Embedding {
        return super::not_in_lane(op);
    }
    let bound = match params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let (Some(indices), Some(weight)) = (bound.tensor("input"), bound.tensor("weight")) else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs the indices and the weight"));
    };
    if weight.rank != 2 {
        return Decision::reject(&rules::BAD_RANKS, format!("{path}: the weight is rank {}, not a matrix (eager raises)", weight.rank));
    }
    match TensorTy::f32(weight.device, indices.rank + 1) {
        Some(result) => bound.claim(&rules::EMBEDDING, op, result),
        None => Decision::reject(&rules::BAD_RANKS, format!("{path}: rank-{} indices give a rank-{} result (no tensor type has that rank)", indices.rank, indices.rank + 1)),
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
}
