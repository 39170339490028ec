//! Lane: `torch.distributions` — `Categorical(logits=…)` and `Normal(loc, scale)` assigned to a
//! name, then their `log_prob`, `entropy`, `probs`, `mode`, `mean`, `stddev`, as the RL policy
//! heads of real code use them. The constructor stores what eager stores (the normalized
//! logits; the broadcast loc and the scale) in the distribution's locals; each method is one
//! backend function computing eager's formula op by op. Eager's argument and sample checks
//! (`validate_args`, on by default) are made too: where they fail, native code refuses, and
//! `auto` mode reruns the Python, which raises eager's own error.

use super::{params, Claim, Decision, Operand, OperandRef, Query};
use crate::ir::{Op, Options};
use crate::rules::{self, Rule};
use crate::ty::{Distribution, Dtype, TensorTy, Ty};

/// The constructors: `Categorical(logits=x)` → the normalized logits (`x`'s type, rank ≥ 1);
/// `Normal(loc, scale)` → the broadcast loc (float32 of the larger rank).
pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    let bound = match params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    match op {
        Op::Categorical => match bound.tensor("logits") {
            Some(logits) => bound.claim(&rules::CATEGORICAL, op, logits),
            None => Decision::reject(&rules::BAD_ARITY, format!("{path} is claimed with `logits=` (a `probs` distribution stays Python)")),
        },
        Op::Normal => {
            let rank = bound.tensors.iter().map(|(_, t)| t.rank).max().unwrap_or(1);
            match TensorTy::f32(bound.device, rank) {
                Some(result) => bound.claim(&rules::NORMAL, op, result),
                None => Decision::reject(&rules::BAD_RANKS, format!("{path}: no result type")),
            }
        }
        other => super::not_in_lane(other),
    }
}

/// The distribution a constructor path makes.
pub fn constructor(path: &str) -> Option<Distribution> {
    match Op::from_function(path) {
        Some(Op::Categorical) => Some(Distribution::Categorical),
        Some(Op::Normal) => Some(Distribution::Normal),
        _ => None,
    }
}

/// What an attribute of a distribution is: one of its stored tensors, or an op on them.
pub enum Attribute {
    Stored(u8),
    Op(Decision),
}

/// `d.probs`, `d.logits`, `d.mode` (Categorical); `d.mean`, `d.loc`, `d.mode`, `d.stddev`,
/// `d.scale` (Normal). `stored` are the types of the distribution's tensors.
pub fn attribute(kind: Distribution, name: &str, stored: &[Ty]) -> Option<Attribute> {
    let logits = stored.first().and_then(|t| t.tensor());
    Some(match (kind, name) {
        (Distribution::Categorical, "logits") | (Distribution::Normal, "mean" | "loc" | "mode") => Attribute::Stored(0),
        (Distribution::Categorical, "probs") => Attribute::Op(on_stored(Op::CategoricalProbs, &rules::CATEGORICAL_PROBS, logits, 0)),
        (Distribution::Categorical, "mode") => Attribute::Op(on_stored(Op::CategoricalMode, &rules::CATEGORICAL_MODE, logits, -1)),
        (Distribution::Normal, "stddev" | "scale") => Attribute::Op(on_stored(Op::NormalStddev, &rules::NORMAL_STDDEV, logits, 0)),
        _ => return None,
    })
}

/// An op of the stored tensors whose result is the first one's type, `rank_change` ranks
/// more (the mode drops the event dim, an int64 result).
fn on_stored(op: Op, rule: &'static Rule, first: Option<TensorTy>, rank_change: i8) -> Decision {
    let Some(t) = first else { return Decision::Unresolved("the distribution's tensors have an unresolved type".into()) };
    let dtype = if op == Op::CategoricalMode { Dtype::I64 } else { t.dtype };
    let rank = t.rank as i8 + rank_change;
    let operands = (0..params::of(op).len()).map(OperandRef::Arg).collect();
    match u8::try_from(rank).ok().filter(|r| *r >= 1).and_then(|r| TensorTy::new(dtype, t.device, r)) {
        Some(result) => Decision::Claimed(Claim { rule, result, op, options: Options::Params { present: (1 << params::of(op).len()) - 1, choice: 0 }, operands }),
        None => Decision::reject(&rules::RANK0_RESULT, format!("{}: the result would be rank {rank}", op.name())),
    }
}

/// `d.log_prob(value)` and `d.entropy()`; the operands are the stored tensors, then the
/// arguments (`Arg(i)` over both, in that order).
pub fn method(kind: Distribution, name: &str, stored: &[Ty], args: &[Operand], keywords: usize) -> Decision {
    let form = format!("{}.{name}()", kind.name());
    let op = match (kind, name) {
        (Distribution::Categorical, "log_prob") => Op::CategoricalLogProb,
        (Distribution::Categorical, "entropy") => Op::CategoricalEntropy,
        (Distribution::Normal, "log_prob") => Op::NormalLogProb,
        (Distribution::Normal, "entropy") => Op::NormalEntropy,
        _ => return Decision::NotCovered(format!("`{form}` is not part of the claimed surface")),
    };
    let wanted = if name == "log_prob" { 1 } else { 0 };
    if args.len() != wanted || keywords != 0 {
        return Decision::reject(&rules::BAD_ARITY, format!("{form} takes {wanted} positional argument{}", if wanted == 1 { "" } else { "s" }));
    }
    let operands: Vec<Operand> = stored.iter().map(|ty| Operand { ty: *ty, lit: super::Lit::NotLiteral }).chain(args.iter().cloned()).collect();
    let q = Query { target: super::Target::Function(op.name()), receiver: None, args: &operands, keywords: &[], starred: false };
    let bound = match params::bind(&q, op, &form) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let ranks: Vec<u8> = bound.tensors.iter().map(|(_, t)| t.rank).collect();
    let rank = match op {
        // the value broadcast against the batch dims (the logits' last dim is the events)
        Op::CategoricalLogProb => ranks.get(1).copied().unwrap_or(1).max(ranks[0].saturating_sub(1)),
        Op::CategoricalEntropy => ranks[0].saturating_sub(1),
        _ => ranks.iter().copied().max().unwrap_or(1),
    };
    let rule = match op {
        Op::CategoricalLogProb => &rules::CATEGORICAL_LOG_PROB,
        Op::CategoricalEntropy => &rules::CATEGORICAL_ENTROPY,
        Op::NormalLogProb => &rules::NORMAL_LOG_PROB,
        _ => &rules::NORMAL_ENTROPY,
    };
    match TensorTy::f32(bound.device, rank).filter(|_| rank >= 1) {
        Some(result) => bound.claim(rule, op, result),
        None => Decision::reject(&rules::RANK0_RESULT, format!("{form}: the result would be rank {rank}")),
    }
}
