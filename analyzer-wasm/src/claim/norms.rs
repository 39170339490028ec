//! Lane: normalization — `F.layer_norm(x, normalized_shape, weight=None, bias=None,
//! eps=1e-5)`, `F.batch_norm` with running statistics (`training=False`) and `F.group_norm`:
//! libtorch's kernels, so the values are eager's. For layer_norm, `normalized_shape` is one
//! Python int or a tuple/list of them (the walk spreads it), `weight` and `bias` float32
//! tensors or `None`, `eps` a Python float; the other two are bound by their Python signature.

use super::{f32_tensor, keyword, keywords_only, Claim, Decision, Lit, OperandRef, Query};
use crate::ir::{Op, Options};
use crate::rules;
use crate::ty::Ty;

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    match op {
        Op::LayerNorm => layer_norm(q, op, path),
        Op::BatchNorm | Op::GroupNorm => with_statistics(q, op, path),
        Op::Normalize => normalize(q, op, path),
        Op::RmsNorm => super::params::elementwise(q, op, &rules::RMS_NORM, path),
        other => super::not_in_lane(other),
    }
}

/// `F.normalize(x, p, dim, eps)`: on cuda:0 for the orders our norm composes (1, 2).
fn normalize(q: &Query, op: Op, path: &str) -> Decision {
    let bound = match super::params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    if let Some(d) = super::reductions::cuda_norm_order(&bound, "p", path) {
        return d;
    }
    match bound.tensor("input") {
        Some(input) => bound.claim(&rules::NORMALIZE, op, input),
        None => Decision::reject(&rules::BAD_ARITY, format!("{path} needs the input tensor")),
    }
}

/// `F.batch_norm(x, mean, var, …, training=False)` and `F.group_norm(x, groups, …)`: an
/// input of rank 2–4 (eager's own checks on the sizes run in libtorch).
fn with_statistics(q: &Query, op: Op, path: &str) -> Decision {
    let rule = if op == Op::BatchNorm { &rules::BATCH_NORM } else { &rules::GROUP_NORM };
    let bound = match super::params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    match bound.tensor("input") {
        Some(x) if x.rank >= 2 => bound.claim(rule, op, x),
        Some(x) => Decision::reject(&rules::BAD_RANKS, format!("{path} of a rank-{} input (eager raises below rank 2)", x.rank)),
        None => Decision::reject(&rules::BAD_ARITY, format!("{path} needs the input tensor")),
    }
}

fn layer_norm(q: &Query, op: Op, path: &str) -> Decision {
    if q.starred {
        return Decision::reject(&rules::BAD_ARITY, format!("{path}: starred arguments are not supported"));
    }
    if let Err(d) = keywords_only(q, &["weight", "bias", "eps"], path) {
        return d;
    }
    let Some((input, rest)) = q.args.split_first() else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs the input tensor positionally"));
    };
    let x = match f32_tensor(input, &format!("{path} input")) {
        Ok(t) => t,
        Err(d) => return d,
    };
    // the shape: the leading ints after the input (a tuple was spread by the walk)
    let dims = rest.iter().take_while(|o| o.ty == Ty::Int).count();
    if dims == 0 || dims > usize::from(x.rank) {
        return Decision::reject(&rules::BAD_RANKS, format!("{path}: normalized_shape of {dims} dims for a rank-{} input", x.rank));
    }
    let mut operands: Vec<OperandRef> = (0..=dims).map(OperandRef::Arg).collect();
    let mut present = [false; 3];
    for (slot, name) in ["weight", "bias", "eps"].into_iter().enumerate() {
        let value = match (q.args.get(1 + dims + slot), keyword(q, name)) {
            (Some(_), Some(_)) => return Decision::reject(&rules::BAD_KEYWORD, format!("{path}: `{name}` given twice")),
            (Some(v), None) => Some((v, OperandRef::Arg(1 + dims + slot))),
            (None, Some((i, v))) => Some((v, OperandRef::Keyword(i))),
            (None, None) => None,
        };
        let Some((v, at)) = value else { continue };
        let fits = match (slot, v.ty) {
            (_, Ty::NoneVal) if slot < 2 && v.lit == Lit::None => continue,
            (0 | 1, Ty::Tensor(t)) => t.dtype == x.dtype && t.device == x.device,
            (2, Ty::Float) => true,
            (_, Ty::Unknown) => return Decision::Unresolved(format!("`{name}` of {path} has an unresolved type")),
            _ => false,
        };
        if !fits {
            return Decision::reject(&rules::NOT_F32_OPERAND, format!("{path}: `{name}` is {} (a float32 tensor on the input's device, or None; eps a Python float)", v.ty.describe()));
        }
        present[slot] = true;
        operands.push(at);
    }
    if q.args.len() > 1 + dims + 3 {
        return Decision::reject(&rules::BAD_ARITY, format!("{path}: too many arguments"));
    }
    Decision::Claimed(Claim {
        rule: &rules::LAYER_NORM,
        result: x,
        op,
        options: Options::LayerNorm { dims: dims as u8, weight: present[0], bias: present[1], eps: present[2] },
        operands,
    })
}
