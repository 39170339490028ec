//! Lane: attention — `F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
//! is_causal=False, scale=None, enable_gqa=False)`: float32 query, key and value of rank 3–4 on
//! one device, a bool or float mask, no dropout (inference); libtorch's kernel, so the values
//! and errors are eager's. The result has the query's type. On cuda:0 it is composed from our
//! matmul, scale, add and softmax kernels, which do not take the causal or grouped-head
//! forms yet: those (and a flag that is not a literal `False`) are TL209 there.

use super::{params, Decision, Lit, Query};
use crate::ir::Op;
use crate::rules;
use crate::ty::Device;

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    if op != Op::ScaledDotProductAttention {
        return super::not_in_lane(op);
    }
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

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
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
}
