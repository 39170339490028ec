//! `F.multi_head_attention_forward(…, need_weights=False)`: what `nn.MultiheadAttention` runs
//! (CLIP's residual blocks and attention pooling, ViT-style encoders). Eager's function is
//! Python over ATen ops, so this is the same ops in the same order — the packed or separate
//! input projections, the head split as views, libtorch's scaled dot-product attention, the
//! output projection — which makes the values eager's bit for bit. Its checks raise eager's
//! exception types with eager's messages, in eager's order.
//!
//! The analyzer lowers only the inference form: no `bias_k`/`bias_v`, no zero attention, no
//! key padding mask, no static keys, and dropout off (`training=False` or `dropout_p=0`).

use tch::Tensor;

use crate::error::{Error, Result};
use crate::ops::torch_size;
use crate::scalar;

extern "C" {
    fn tl_same_tensor(a: *const torch_sys::C_tensor, b: *const torch_sys::C_tensor) -> std::os::raw::c_int;
}

/// Python's `a is b` for two tensors: one Python object per `TensorImpl`, so the same impl.
fn same_tensor(a: &Tensor, b: &Tensor) -> bool {
    // SAFETY: both are live tensor handles; the shim only compares their impl pointers.
    unsafe { tl_same_tensor(a.as_ptr(), b.as_ptr()) == 1 }
}

/// The parameters of eager's signature that are not fixed by the inference form, in its order.
#[allow(clippy::too_many_arguments)]
pub fn multi_head_attention_forward(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    embed_dim_to_check: i64,
    num_heads: i64,
    in_proj_weight: Option<&Tensor>,
    in_proj_bias: Option<&Tensor>,
    dropout_p: f64,
    out_proj_weight: &Tensor,
    out_proj_bias: Option<&Tensor>,
    training: bool,
    need_weights: bool,
    attn_mask: Option<&Tensor>,
    use_separate_proj_weight: bool,
    q_proj_weight: Option<&Tensor>,
    k_proj_weight: Option<&Tensor>,
    v_proj_weight: Option<&Tensor>,
    _average_attn_weights: bool,
    is_causal: bool,
) -> Result<(Tensor, ())> {
    if need_weights {
        // the analyzer lowers `need_weights=False` only (the weights are another result type)
        return Err(Error::Runtime("torchlower: multi_head_attention_forward with need_weights=True is not lowered".into()));
    }
    let batched = shape_check(query, key, value, attn_mask, num_heads)?;
    let (query, key, value) = if batched {
        (query.shallow_clone(), key.shallow_clone(), value.shallow_clone())
    } else {
        (query.f_unsqueeze(1)?, key.f_unsqueeze(1)?, value.f_unsqueeze(1)?)
    };
    let [tgt_len, bsz, embed_dim] = dims3(&query);
    let (key_size, value_size) = (key.size(), value.size());
    let src_len = key_size[0];
    if is_causal && attn_mask.is_none() {
        return Err(Error::Runtime(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method \
             `generate_square_subsequent_mask` to create this mask."
                .into(),
        ));
    }
    // with no key padding mask and no weights, a causal hint replaces the mask
    let attn_mask = if is_causal { None } else { attn_mask.map(|m| canonical_mask(m, query.kind())).transpose()? };
    if embed_dim != embed_dim_to_check {
        return Err(Error::Assertion(format!("was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")));
    }
    let head_dim = scalar::floordiv(embed_dim, num_heads)?;
    if head_dim.checked_mul(num_heads) != Some(embed_dim) {
        return Err(Error::Assertion(format!("embed_dim {embed_dim} not divisible by num_heads {num_heads}")));
    }
    if use_separate_proj_weight {
        if key_size[..2] != value_size[..2] {
            return Err(Error::Assertion(format!(
                "key's sequence and batch dims {} do not match value's {}",
                torch_size(&key_size[..2]),
                torch_size(&value_size[..2])
            )));
        }
    } else if key_size != value_size {
        return Err(Error::Assertion(format!("key shape {} does not match value shape {}", torch_size(&key_size), torch_size(&value_size))));
    }
    let (q, k, v) = if use_separate_proj_weight {
        let missing = |name: &str| Error::Assertion(format!("use_separate_proj_weight is True but {name} is None"));
        let w_q = q_proj_weight.ok_or_else(|| missing("q_proj_weight"))?;
        let w_k = k_proj_weight.ok_or_else(|| missing("k_proj_weight"))?;
        let w_v = v_proj_weight.ok_or_else(|| missing("v_proj_weight"))?;
        let biases = in_proj_bias.map(|b| three(b.f_chunk(3, 0)?)).transpose()?;
        let bias = |i: usize| biases.as_ref().map(|b| &b[i]);
        in_projection(&query, &key, &value, [w_q, w_k, w_v], [bias(0), bias(1), bias(2)])?
    } else {
        let w = in_proj_weight.ok_or_else(|| Error::Assertion("use_separate_proj_weight is False but in_proj_weight is None".into()))?;
        in_projection_packed(&query, &key, &value, w, in_proj_bias)?
    };
    let attn_mask = match attn_mask {
        Some(mask) if mask.dim() == 2 => {
            let size = mask.size();
            if size != [tgt_len, src_len] {
                return Err(Error::Runtime(format!("The shape of the 2D attn_mask is {}, but should be ({tgt_len}, {src_len}).", torch_size(&size))));
            }
            Some(mask.f_unsqueeze(0)?)
        }
        Some(mask) => {
            let size = mask.size();
            if size != [bsz * num_heads, tgt_len, src_len] {
                return Err(Error::Runtime(format!(
                    "The shape of the 3D attn_mask is {}, but should be ({}, {tgt_len}, {src_len}).",
                    torch_size(&size),
                    bsz * num_heads
                )));
            }
            Some(mask)
        }
        None => None,
    };
    let q = q.f_view([tgt_len, bsz * num_heads, head_dim])?.f_transpose(0, 1)?;
    let k = k.f_view([k.size()[0], bsz * num_heads, head_dim])?.f_transpose(0, 1)?;
    let v = v.f_view([v.size()[0], bsz * num_heads, head_dim])?.f_transpose(0, 1)?;
    let src_len = k.size()[1];
    let dropout_p = if training { dropout_p } else { 0.0 };
    // SDPA takes [N, heads, L, S] masks: a (1, L, S) one gains a dim, a 3-D one is split by head
    let attn_mask = match attn_mask {
        Some(mask) if mask.size()[0] == 1 && mask.dim() == 3 => Some(mask.f_unsqueeze(0)?),
        Some(mask) => Some(mask.f_view([bsz, num_heads, -1, src_len])?),
        None => None,
    };
    let q = q.f_view([bsz, num_heads, tgt_len, head_dim])?;
    let k = k.f_view([bsz, num_heads, src_len, head_dim])?;
    let v = v.f_view([bsz, num_heads, src_len, head_dim])?;
    let attended = Tensor::f_scaled_dot_product_attention(&q, &k, &v, attn_mask.as_ref(), dropout_p, is_causal, None, false)?;
    drop((q, k, v));
    let merged = attended.f_permute([2, 0, 1, 3])?.f_reshape([bsz * tgt_len, embed_dim])?;
    let projected = merged.f_linear(out_proj_weight, out_proj_bias)?;
    let out_features = projected.size()[1];
    let output = projected.f_view([tgt_len, bsz, out_features])?;
    Ok((if batched { output } else { output.f_squeeze_dim(1)? }, ()))
}

/// Eager's `_mha_shape_check`: whether the query is batched, with its AssertionErrors.
fn shape_check(query: &Tensor, key: &Tensor, value: &Tensor, attn_mask: Option<&Tensor>, num_heads: i64) -> Result<bool> {
    let (form, rank) = match query.dim() {
        3 => ("batched (3-D)", 3),
        2 => ("unbatched (2-D)", 2),
        other => return Err(Error::Assertion(format!("query should be unbatched 2D or batched 3D tensor but received {other}-D query tensor"))),
    };
    if key.dim() != rank || value.dim() != rank {
        return Err(Error::Assertion(format!(
            "For {form} `query`, expected `key` and `value` to be {rank}-D but found {}-D and {}-D tensors respectively",
            key.dim(),
            value.dim()
        )));
    }
    if let Some(mask) = attn_mask {
        if !matches!(mask.dim(), 2 | 3) {
            return Err(Error::Assertion(format!("For {form} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found {}-D tensor instead", mask.dim())));
        }
        if rank == 2 && mask.dim() == 3 {
            let expected = [num_heads, query.size()[0], key.size()[0]];
            if mask.size() != expected {
                return Err(Error::Assertion(format!(
                    "Expected `attn_mask` shape to be ({}, {}, {}) but got {}",
                    expected[0],
                    expected[1],
                    expected[2],
                    torch_size(&mask.size())
                )));
            }
        }
    }
    Ok(rank == 3)
}

/// Eager's `_canonical_mask` of the attention mask: a bool mask becomes `-inf` where true.
fn canonical_mask(mask: &Tensor, target: tch::Kind) -> Result<Tensor> {
    if mask.f_kind()? == tch::Kind::Bool {
        let mut zeros = Tensor::f_zeros(mask.size(), (target, mask.device()))?;
        return Ok(zeros.f_masked_fill_(mask, f64::NEG_INFINITY)?);
    }
    if mask.f_is_floating_point()? {
        return Ok(mask.shallow_clone());
    }
    Err(Error::Assertion("only bool and floating types of attn_mask are supported".into()))
}

/// `a, b, c = t.chunk(3)`: Python's ValueError when the tensor has fewer than three chunks.
fn three(parts: Vec<Tensor>) -> Result<Vec<Tensor>> {
    match parts.len() {
        3 => Ok(parts),
        n => Err(Error::Value(format!("not enough values to unpack (expected 3, got {n})"))),
    }
}

fn dims3(t: &Tensor) -> [i64; 3] {
    let size = t.size();
    [size[0], size[1], size[2]]
}

/// Eager's `_in_projection_packed`: one product for self-attention (`q is k is v`), one for
/// the query and one for key and value when `k is v`, else three.
fn in_projection_packed(q: &Tensor, k: &Tensor, v: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<(Tensor, Tensor, Tensor)> {
    let e = *q.size().last().ok_or_else(|| Error::Runtime("Dimension specified as -1 but tensor has no dimensions".into()))?;
    // `proj.unflatten(-1, (n, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()`
    let split = |proj: Tensor, n: i64| -> Result<Tensor> {
        Ok(proj.f_unflatten(-1, [n, e])?.f_unsqueeze(0)?.f_transpose(0, -2)?.f_squeeze_dim(-2)?.f_contiguous()?)
    };
    if same_tensor(k, v) {
        if same_tensor(q, k) {
            let proj = split(q.f_linear(w, b)?, 3)?;
            return Ok((proj.f_select(0, 0)?, proj.f_select(0, 1)?, proj.f_select(0, 2)?));
        }
        let w_parts = w.f_split_with_sizes([e, e * 2], 0)?;
        let b_parts = b.map(|b| b.f_split_with_sizes([e, e * 2], 0)).transpose()?;
        let q_proj = q.f_linear(&w_parts[0], b_parts.as_ref().map(|b| &b[0]))?;
        let kv_proj = split(k.f_linear(&w_parts[1], b_parts.as_ref().map(|b| &b[1]))?, 2)?;
        return Ok((q_proj, kv_proj.f_select(0, 0)?, kv_proj.f_select(0, 1)?));
    }
    let w_parts = three(w.f_chunk(3, 0)?)?;
    let b_parts = b.map(|b| three(b.f_chunk(3, 0)?)).transpose()?;
    let bias = |i: usize| b_parts.as_ref().map(|b| &b[i]);
    Ok((q.f_linear(&w_parts[0], bias(0))?, k.f_linear(&w_parts[1], bias(1))?, v.f_linear(&w_parts[2], bias(2))?))
}

/// Eager's `_in_projection` (separate weights), with its shape AssertionErrors.
fn in_projection(q: &Tensor, k: &Tensor, v: &Tensor, w: [&Tensor; 3], b: [Option<&Tensor>; 3]) -> Result<(Tensor, Tensor, Tensor)> {
    let last = |t: &Tensor| t.size().last().copied().unwrap_or(1);
    let (eq, ek, ev) = (last(q), last(k), last(v));
    for (name, weight, expected) in [("query", w[0], [eq, eq]), ("key", w[1], [eq, ek]), ("value", w[2], [eq, ev])] {
        if weight.size() != expected {
            return Err(Error::Assertion(format!(
                "expecting {name} weights shape of ({}, {}), but got {}",
                expected[0],
                expected[1],
                torch_size(&weight.size())
            )));
        }
    }
    for (name, bias) in ["query", "key", "value"].into_iter().zip(b) {
        if let Some(bias) = bias {
            if bias.size() != [eq] {
                return Err(Error::Assertion(format!("expecting {name} bias shape of ({eq},), but got {}", torch_size(&bias.size()))));
            }
        }
    }
    Ok((q.f_linear(w[0], b[0])?, k.f_linear(w[1], b[1])?, v.f_linear(w[2], b[2])?))
}
