//! Lane: convolution, pooling and padding — `F.conv1d`/`conv2d`, `F.max_pool1d`/`2d`,
//! `F.avg_pool1d`/`2d`, `F.adaptive_avg_pool1d`/`2d`, `F.adaptive_max_pool2d`, `F.pad`. Each is
//! bound by its Python signature (sizes as ints or tuples of ints, options by position or
//! keyword) and calls libtorch's kernel, so values and errors are eager's. The input keeps its
//! rank: batched or unbatched, as eager accepts both.

use super::{params, Decision, Query};
use crate::ir::Op;
use crate::rules::{self, Rule};

/// The rule of `op` and the input ranks it takes.
fn rule(op: Op) -> Option<(&'static Rule, std::ops::RangeInclusive<u8>)> {
    Some(match op {
        Op::Conv1d => (&rules::CONV1D, 2..=3),
        Op::Conv2d => (&rules::CONV2D, 3..=4),
        Op::MaxPool1d => (&rules::MAX_POOL1D, 2..=3),
        Op::MaxPool2d => (&rules::MAX_POOL2D, 3..=4),
        Op::AvgPool1d => (&rules::AVG_POOL1D, 2..=3),
        Op::AvgPool2d => (&rules::AVG_POOL2D, 3..=4),
        Op::AdaptiveAvgPool1d => (&rules::ADAPTIVE_AVG_POOL1D, 2..=3),
        Op::AdaptiveAvgPool2d => (&rules::ADAPTIVE_AVG_POOL2D, 3..=4),
        Op::AdaptiveMaxPool2d => (&rules::ADAPTIVE_MAX_POOL2D, 3..=4),
        Op::Pad => (&rules::PAD, 1..=4),
        Op::Conv1dPadding => (&rules::CONV1D_PADDING, 2..=3),
        Op::Conv2dPadding => (&rules::CONV2D_PADDING, 3..=4),
        Op::ConvTranspose1d => (&rules::CONV_TRANSPOSE1D, 2..=3),
        Op::ConvTranspose2d => (&rules::CONV_TRANSPOSE2D, 3..=4),
        Op::Interpolate => (&rules::INTERPOLATE, 3..=4),
        _ => return None,
    })
}

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    // `padding="same"` / `"valid"`: libtorch's padding-string overload
    let position = params::of(op).iter().position(|p| p.name == "padding");
    let given = position.and_then(|i| q.args.get(i)).or_else(|| super::keyword(q, "padding").map(|(_, v)| v));
    let padding_string = given.is_some_and(|v| matches!(v.lit, super::Lit::Str(_)));
    let op = match (op, padding_string) {
        (Op::Conv1d, true) => Op::Conv1dPadding,
        (Op::Conv2d, true) => Op::Conv2dPadding,
        (op, _) => op,
    };
    let Some((rule, ranks)) = rule(op) else { return super::not_in_lane(op) };
    let bound = match params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let Some(input) = bound.tensor("input") else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs the input tensor"));
    };
    if op == Op::Interpolate {
        if let Some(d) = interpolate_checks(&bound, input.rank, path) {
            return d;
        }
    }
    if !ranks.contains(&input.rank) {
        return Decision::reject(
            &rules::BAD_RANKS,
            format!("{path} of a rank-{} input (ranks {}–{} are lowered; eager raises for others)", input.rank, ranks.start(), ranks.end()),
        );
    }
    bound.claim(rule, op, input)
}

/// What eager's `F.interpolate` raises for every input, decided here: both or neither of `size`
/// and `scale_factor`, `align_corners` with nearest, a size tuple of another length than the
/// two spatial dims.
fn interpolate_checks(bound: &params::Bound, rank: u8, path: &str) -> Option<Decision> {
    let given = |name| bound.literal(name).is_some_and(|l| *l != super::Lit::None);
    let (size, scale) = (given("size"), given("scale_factor"));
    if size == scale {
        let which = if size { "only one of size or scale_factor should be defined" } else { "either size or scale_factor should be defined" };
        return Some(Decision::reject(&rules::BAD_KEYWORD, format!("{path}: {which} (eager raises)")));
    }
    if bound.choice == 0 && given("align_corners") {
        return Some(Decision::reject(&rules::BAD_KEYWORD, format!("{path}: align_corners with mode=\"nearest\" (eager raises)")));
    }
    let spatial = usize::from(rank.saturating_sub(2));
    if let Some(super::Lit::Ints(sizes)) = bound.literal("size") {
        if sizes.len() != spatial {
            return Some(Decision::reject(&rules::BAD_ARITY, format!("{path}: a size of {} dims for {spatial} spatial dims (eager raises)", sizes.len())));
        }
    }
    // the modes of each rank eager's Python dispatches (others raise NotImplementedError)
    let modes = params::of(Op::Interpolate).iter().find_map(|p| if let torchlower_ops::Kind::Choice(modes) = p.kind { Some(modes) } else { None });
    let mode = modes.and_then(|m| m.get(usize::from(bound.choice))).copied().unwrap_or("nearest");
    let fits = match mode {
        "nearest" => (3..=4).contains(&rank),
        "linear" => rank == 3,
        _ => rank == 4,
    };
    if !fits {
        return Some(Decision::reject(&rules::BAD_RANKS, format!("{path}: mode=\"{mode}\" of a rank-{rank} input (eager raises NotImplementedError)")));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Lit, Operand};
    use crate::ty::{TensorTy as T, Ty};

    fn pair(a: i64, b: i64) -> Operand {
        Operand { ty: Ty::Tuple(2), lit: Lit::Ints(vec![Some(a), Some(b)]) }
    }

    #[test]
    fn convolutions_pools_and_padding() {
        let (x, w, b) = (t(T::F32_CPU_4D), t(T::F32_CPU_4D), t(T::F32_CPU_1D));
        let conv = call("torch.nn.functional.conv2d", &[x.clone(), w.clone(), b.clone()], &[kw("stride", int(2)), kw("padding", pair(1, 1))]);
        assert_eq!(outcome(&conv), ("torchlower/conv2d".into(), "TensorF32Cpu4D".into()));
        assert_eq!(outcome(&call("torch.nn.functional.conv2d", &[x.clone(), w.clone(), none(), int(1), int(1)], &[])).0, "torchlower/conv2d");
        // a padding string is libtorch's other overload
        assert_eq!(outcome(&call("torch.nn.functional.conv2d", &[x.clone(), w.clone()], &[kw("padding", string("same"))])).0, "torchlower/conv2d-padding-string");
        assert_eq!(outcome(&call("torch.nn.functional.conv2d", &[x.clone(), w.clone()], &[kw("padding", string("full"))])).0, "TL201");
        let up = call("torch.nn.functional.interpolate", &[x.clone()], &[kw("scale_factor", int(2)), kw("mode", string("nearest"))]);
        assert_eq!(outcome(&up).0, "torchlower/interpolate");
        assert_eq!(outcome(&call("torch.nn.functional.interpolate", &[x.clone()], &[])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.interpolate", &[x.clone(), pair(4, 4)], &[kw("align_corners", boolean(true))])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.interpolate", &[x.clone(), pair(4, 4)], &[kw("mode", string("bilinear")), kw("align_corners", boolean(true))])).0, "torchlower/interpolate");
        assert_eq!(outcome(&call("torch.nn.functional.conv2d", &[t(T::F32_CPU_2D), w.clone()], &[])).0, "TL208");
        assert_eq!(outcome(&call("torch.nn.functional.conv2d", &[t(T::F32_CUDA0_2D), w], &[])).0, "TL204");
        assert_eq!(outcome(&call("torch.nn.functional.max_pool2d", &[x.clone()], &[kw("kernel_size", int(3)), kw("stride", int(2)), kw("padding", int(1))])).0, "torchlower/max-pool2d");
        assert_eq!(outcome(&call("torch.nn.functional.max_pool2d", &[x.clone(), int(2)], &[kw("return_indices", boolean(true))])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.max_pool2d", &[x.clone()], &[])).0, "TL202");
        assert_eq!(outcome(&call("torch.nn.functional.adaptive_avg_pool2d", &[x.clone(), pair(1, 1)], &[])).0, "torchlower/adaptive-avg-pool2d");
        let padded = call("torch.nn.functional.pad", &[x.clone(), pair(0, 1)], &[kw("mode", string("reflect")), kw("value", none())]);
        assert_eq!(outcome(&padded).0, "torchlower/pad");
        assert_eq!(outcome(&call("torch.nn.functional.pad", &[x.clone(), pair(0, 1)], &[kw("mode", string("wrap"))])).0, "TL201");
        // pooling and direct convolution have kernels of ours on cuda:0, padding strings not yet
        assert_eq!(outcome(&call("torch.nn.functional.avg_pool2d", &[t(T::F32_CUDA0_3D), int(2)], &[])).0, "torchlower/avg-pool2d");
        assert_eq!(outcome(&call("torch.nn.functional.conv2d", &[t(T::F32_CUDA0_4D), t(T::F32_CUDA0_4D)], &[])).0, "torchlower/conv2d");
        let same = call("torch.nn.functional.conv2d", &[t(T::F32_CUDA0_4D), t(T::F32_CUDA0_4D)], &[kw("padding", string("same"))]);
        assert_eq!(outcome(&same).0, "TL209");
    }
}
