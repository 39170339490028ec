//! Lane: GELU, `torch.nn.functional.gelu(t)` or with `approximate="none"` (the exact one, our
//! fused kernels), and `approximate="tanh"` (libtorch's tanh kernel, op `GeluTanh`). The
//! approximation is a string literal; it is never interpolated into Rust.

use super::activations::one_tensor_function;
use super::{keyword, Decision, Lit, Query};
use crate::ir::Op;
use crate::rules;

pub fn functional_gelu(q: &Query) -> Decision {
    if q.args.len() >= 2 && !q.starred {
        return Decision::reject(&rules::GELU_APPROXIMATE, "F.gelu: a positional `approximate` is not accepted");
    }
    if let Some((i, approx)) = keyword(q, "approximate") {
        match &approx.lit {
            Lit::Str(s) if s == "none" => {}
            Lit::Str(s) if s == "tanh" => {
                let rest: Vec<_> = q.keywords.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, k)| k.clone()).collect();
                let q2 = Query { keywords: &rest, ..*q };
                return match one_tensor_function(&q2, "F.gelu", &rules::GELU_TANH, Op::GeluTanh) {
                    Decision::Claimed(mut claim) => {
                        claim.options = crate::ir::Options::Params { present: 1, choice: 0 };
                        Decision::Claimed(claim)
                    }
                    other => other,
                };
            }
            Lit::Str(s) => {
                return Decision::reject(&rules::GELU_APPROXIMATE, format!("F.gelu(approximate={s:?}) is neither \"none\" nor \"tanh\""))
            }
            _ => return Decision::reject(&rules::GELU_APPROXIMATE, "F.gelu: `approximate` must be the literal \"none\" or \"tanh\""),
        }
        // drop the validated keyword before the shared one-tensor check
        let rest: Vec<_> = q.keywords.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, k)| k.clone()).collect();
        let q2 = Query { keywords: &rest, ..*q };
        return one_tensor_function(&q2, "F.gelu", &rules::GELU_NONE, Op::Gelu);
    }
    one_tensor_function(q, "F.gelu", &rules::GELU_NONE, Op::Gelu)
}

/// `torch.nn.GELU(...)`: capturing the module is not claimed.
pub fn module() -> Decision {
    Decision::reject(&rules::GELU_METHOD, "`torch.nn.GELU` modules are not claimed; call torch.nn.functional.gelu")
}

pub fn method() -> Decision {
    Decision::reject(&rules::GELU_METHOD, "`.gelu()` is not claimed; call torch.nn.functional.gelu")
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::ty::TensorTy as T;

    const G: &str = "torch.nn.functional.gelu";

    #[test]
    fn exact_gelu() {
        for ty in [T::F32_CPU_1D, T::F32_CPU_2D] {
            assert_eq!(outcome(&call(G, &[t(ty)], &[])).0, "torchlower/functional-gelu-none-f32-rank1-2");
            assert_eq!(outcome(&call(G, &[t(ty)], &[kw("approximate", string("none"))])).0, "torchlower/functional-gelu-none-f32-rank1-2");
        }
    }

    #[test]
    fn variants() {
        let x = t(T::F32_CPU_2D);
        assert_eq!(outcome(&call(G, &[x.clone()], &[kw("approximate", string("tanh"))])).0, "torchlower/gelu-tanh");
        assert_eq!(outcome(&call(G, &[x.clone()], &[kw("approximate", string("erf"))])).0, "TL230");
        assert_eq!(outcome(&call(G, &[x.clone()], &[kw("approximate", unknown())])).0, "TL230");
        assert_eq!(outcome(&call(G, &[x.clone(), string("none")], &[])).0, "TL230");
        assert_eq!(outcome(&call(G, &[x.clone()], &[kw("inplace", boolean(false))])).0, "TL201");
        assert_eq!(outcome(&method(&x, "gelu", &[], &[])).0, "TL231");
    }
}
