//! Lane: attention — `F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
//! is_causal=False, scale=None, enable_gqa=False)`: float32 query, key and value of rank 3–4 on
//! one device, a bool or float mask, no dropout (inference); libtorch's kernel, so the values
//! and errors are eager's. The result has the query's type. On cuda:0 it is composed from our
//! matmul, scale, add and softmax kernels, which do not take the causal or grouped-head
//! forms yet: those (and a flag that is not a literal `False`) are TL209 there.
//!
//! Also `F.multi_head_attention_forward`, what `nn.MultiheadAttention` calls: eager's Python
//! function over ATen ops, run natively as the same ops (`tl::ops::multi_head_attention_forward`).

use super::{params, Decision, Lit, Query};
use crate::ir::Op;
use crate::rules;
use crate::ty::Device;

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    match op {
        Op::ScaledDotProductAttention => scaled_dot_product(q, op, path),
        Op::MultiHeadAttentionForward => multi_head(q, op, path),
        _ => super::not_in_lane(op),
    }
}

fn scaled_dot_product(q: &Query, op: Op, path: &str) -> Decision {
    let bound = match params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    if bound.device == Device::Cuda0 {
        for flag in ["is_causal", "enable_gqa"] {
            if !matches!(bound.literal(flag), None | Some(Lit::Bool(false))) {
                return Decision::reject(&rules::CUDA_UNSUPPORTED, format!("{path} with `{flag}` on cuda:0 (our kernels compose the plain and masked forms only)"));
            }
        }
    }
    match bound.tensor("query") {
        Some(query) if (3..=4).contains(&query.rank) => bound.claim(&rules::SDPA, op, query),
        Some(query) => Decision::reject(&rules::BAD_RANKS, format!("{path} of a rank-{} query (ranks 3–4 are lowered)", query.rank)),
        None => Decision::reject(&rules::BAD_ARITY, format!("{path} needs the query")),
    }
}

/// `F.multi_head_attention_forward` in its inference form (see the rule): the result is the
/// pair `(output, None)` of the query's type (`walk::call` types the pair).
fn multi_head(q: &Query, op: Op, path: &str) -> Decision {
    let bound = match params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    if bound.literal("need_weights") != Some(&Lit::Bool(false)) {
        return Decision::reject(
            &rules::BAD_KEYWORD,
            format!("{path} returns the averaged attention weights unless `need_weights=False`; only that form is lowered"),
        );
    }
    let no_dropout = matches!(bound.literal("dropout_p"), Some(Lit::Int(0))) || matches!(bound.literal("dropout_p"), Some(Lit::Float(p)) if *p == 0.0);
    if !no_dropout && bound.literal("training") != Some(&Lit::Bool(false)) {
        return Decision::reject(&rules::BAD_KEYWORD, format!("{path} with dropout (`training` not False and `dropout_p` not 0) is random; inference passes `training=False`"));
    }
    let (Some(query), Some(key), Some(value)) = (bound.tensor("query"), bound.tensor("key"), bound.tensor("value")) else {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs the query, key and value"));
    };
    if !(2..=3).contains(&query.rank) || key.rank != query.rank || value.rank != query.rank {
        return Decision::reject(
            &rules::BAD_RANKS,
            format!("{path} of ranks {}, {} and {} (query, key and value all of rank 3, or all of rank 2, are lowered)", query.rank, key.rank, value.rank),
        );
    }
    if let Some(mask) = bound.tensor("attn_mask").filter(|m| !(2..=3).contains(&m.rank)) {
        return Decision::reject(&rules::BAD_RANKS, format!("{path} with a rank-{} `attn_mask` (ranks 2–3 are lowered)", mask.rank));
    }
    bound.claim(&rules::MHA, op, query)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Lit, Operand};
    use crate::ty::{Device, Dtype, TensorTy as T};

    #[test]
    fn sdpa_with_masks() {
        let x = t(T::F32_CPU_4D);
        let mask = t(T::new(Dtype::Bool, Device::Cpu, 2).expect("a type"));
        let p = "torch.nn.functional.scaled_dot_product_attention";
        assert_eq!(outcome(&call(p, &[x.clone(), x.clone(), x.clone()], &[])), ("torchlower/scaled-dot-product-attention".into(), "TensorF32Cpu4D".into()));
        assert_eq!(outcome(&call(p, &[x.clone(), x.clone(), x.clone(), mask], &[kw("scale", int(1))])).0, "torchlower/scaled-dot-product-attention");
        assert_eq!(outcome(&call(p, &[x.clone(), x.clone(), x.clone()], &[kw("dropout_p", super::super::test_support::int(0)), kw("is_causal", boolean(true))])).0, "torchlower/scaled-dot-product-attention");
        assert_eq!(outcome(&call(p, &[x.clone(), x.clone(), x], &[kw("dropout_p", super::super::Operand { ty: crate::ty::Ty::Float, lit: super::super::Lit::Float(0.1) })])).0, "TL201");
    }

    #[test]
    fn sdpa_on_cuda_takes_the_plain_and_masked_forms() {
        let x = t(T::new(Dtype::F32, Device::Cuda0, 4).expect("a type"));
        let p = "torch.nn.functional.scaled_dot_product_attention";
        let rule = "torchlower/scaled-dot-product-attention";
        assert_eq!(outcome(&call(p, &[x.clone(), x.clone(), x.clone()], &[kw("scale", int(1))])).0, rule);
        assert_eq!(outcome(&call(p, &[x.clone(), x.clone(), x.clone(), x.clone()], &[kw("is_causal", boolean(false))])).0, rule);
        assert_eq!(outcome(&call(p, &[x.clone(), x.clone(), x.clone()], &[kw("is_causal", boolean(true))])).0, "TL209");
        assert_eq!(outcome(&call(p, &[x.clone(), x.clone(), x], &[kw("enable_gqa", boolean(true))])).0, "TL209");
    }

    #[test]
    fn multi_head_attention_forward_in_its_inference_form() {
        let x = t(T::F32_CPU_3D);
        let (w, b) = (t(T::F32_CPU_2D), t(T::F32_CPU_1D));
        let p = "torch.nn.functional.multi_head_attention_forward";
        let rule = "torchlower/multi-head-attention-forward";
        let args = |query: Operand| vec![query.clone(), query.clone(), query, int(8), int(2), w.clone(), b.clone(), none(), none(), boolean(false), int(0), w.clone(), b.clone()];
        let off = kw("need_weights", boolean(false));
        assert_eq!(outcome(&call(p, &args(x.clone()), &[off.clone(), kw("training", boolean(false))])), (rule.into(), "TensorF32Cpu3D".into()));
        // unbatched
        assert_eq!(outcome(&call(p, &args(t(T::F32_CPU_2D)), &[off.clone()])), (rule.into(), "TensorF32Cpu2D".into()));
        // the weights (need_weights defaults to True), dropout in training, a missing argument,
        // a key padding mask, ranks that differ
        assert_eq!(outcome(&call(p, &args(x.clone()), &[])).0, "TL201");
        let mut dropout = args(x.clone());
        dropout[10] = Operand { ty: crate::ty::Ty::Float, lit: Lit::Float(0.1) };
        assert_eq!(outcome(&call(p, &dropout, &[off.clone()])).0, "TL201");
        assert_eq!(outcome(&call(p, &dropout, &[off.clone(), kw("training", boolean(false))])).0, rule);
        assert_eq!(outcome(&call(p, &args(x.clone())[..12], &[off.clone()])).0, "TL202");
        assert_eq!(outcome(&call(p, &args(x.clone()), &[off.clone(), kw("key_padding_mask", x.clone())])).0, "TL201");
        let mut mixed = args(x.clone());
        mixed[1] = t(T::F32_CPU_2D);
        assert_eq!(outcome(&call(p, &mixed, &[off.clone()])).0, "TL208");
        assert_eq!(outcome(&call(p, &args(x.clone()), &[off, kw("attn_mask", t(T::F32_CPU_1D))])).0, "TL208");
    }
}
