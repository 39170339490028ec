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
        _ => return None,
    })
}

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    let Some((rule, ranks)) = rule(op) else { return super::not_in_lane(op) };
    let bound = match params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let Some(input) = bound.tensor("input") else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs the input tensor"));
    };
    if !ranks.contains(&input.rank) {
        return Decision::reject(
            &rules::BAD_RANKS,
            format!("{path} of a rank-{} input (ranks {}–{} are lowered; eager raises for others)", input.rank, ranks.start(), ranks.end()),
        );
    }
    bound.claim(rule, op, input)
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
        // a padding string stays Python
        assert_eq!(outcome(&call("torch.nn.functional.conv2d", &[x.clone(), w.clone()], &[kw("padding", string("same"))])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.conv2d", &[t(T::F32_CPU_2D), w.clone()], &[])).0, "TL208");
        assert_eq!(outcome(&call("torch.nn.functional.conv2d", &[t(T::F32_CUDA0_2D), w], &[])).0, "TL204");
        assert_eq!(outcome(&call("torch.nn.functional.max_pool2d", &[x.clone()], &[kw("kernel_size", int(3)), kw("stride", int(2)), kw("padding", int(1))])).0, "torchlower/max-pool2d");
        assert_eq!(outcome(&call("torch.nn.functional.max_pool2d", &[x.clone(), int(2)], &[kw("return_indices", boolean(true))])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.max_pool2d", &[x.clone()], &[])).0, "TL202");
        assert_eq!(outcome(&call("torch.nn.functional.adaptive_avg_pool2d", &[x.clone(), pair(1, 1)], &[])).0, "torchlower/adaptive-avg-pool2d");
        let padded = call("torch.nn.functional.pad", &[x.clone(), pair(0, 1)], &[kw("mode", string("reflect")), kw("value", none())]);
        assert_eq!(outcome(&padded).0, "torchlower/pad");
        assert_eq!(outcome(&call("torch.nn.functional.pad", &[x.clone(), pair(0, 1)], &[kw("mode", string("wrap"))])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.avg_pool2d", &[t(T::F32_CUDA0_3D), int(2)], &[])).0, "TL209");
    }
}
