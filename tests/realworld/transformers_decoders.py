"""Hugging Face Transformers (huggingface/transformers, Apache License 2.0) — decoder families
beyond Llama: BLOOM (ALiBi), Falcon (multi-query heads), Gemma, Mixtral (sparse MoE router),
Phi (partial rotary), OPT (learned positions) and MPT (ALiBi slopes):
src/transformers/models/{bloom,falcon,gemma,mixtral,phi,opt,mpt}/modeling_*.py.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters, `nn.Linear` calls are `F.linear`, `ACT2FN["gelu_pytorch_tanh"]` is
`F.gelu(approximate="tanh")`, `ACT2FN["silu"]` is `F.silu`, dropout is the identity of eval
mode, there is no KV cache (`past_key_values_length` stays a parameter where the project reads
it). Everything else is kept as the project writes it.
"""

import math

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu2D,
    TensorI64Cpu3D,
)


# Transformers — src/transformers/models/bloom/modeling_bloom.py, build_alibi_tensor (huggingface/transformers)
# (dtype: the model's float32)
def bloom_build_alibi_tensor(attention_mask: TensorI64Cpu2D, num_heads: int) -> TensorF32Cpu3D:
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(
        2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), device=attention_mask.device, dtype=torch.float32
    )
    powers = torch.arange(1, 1 + closest_power_of_2, device=attention_mask.device, dtype=torch.int32)
    slopes = torch.pow(base, powers)

    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(
            2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), device=attention_mask.device, dtype=torch.float32
        )
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, device=attention_mask.device, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)

    # Note: alibi will added to the attention bias that will be applied to the query, key product of attention
    # => therefore alibi will have to be of shape (batch_size, num_heads, query_length, key_length)
    # => here we set (batch_size=1, num_heads=num_heads, query_length=1, key_length=max_length)
    # => the query_length dimension will then be broadcasted correctly
    # This is more or less identical to T5's relative position bias:
    # https://github.com/huggingface/transformers/blob/f681437203baa7671de3174b0fa583c349d9d5e1/src/transformers/models/t5/modeling_t5.py#L527
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(torch.float32)


# Transformers — src/transformers/models/bloom/modeling_bloom.py, bloom_gelu_forward (huggingface/transformers)
def bloom_gelu_forward(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


# Transformers — src/transformers/models/bloom/modeling_bloom.py, dropout_add (huggingface/transformers)
def bloom_dropout_add(x: TensorF32Cpu3D, residual: TensorF32Cpu3D, prob: float, training: bool) -> TensorF32Cpu3D:
    out = F.dropout(x, p=prob, training=training)
    out = residual + out
    return out


# Transformers — src/transformers/models/bloom/modeling_bloom.py, BloomAttention._reshape (huggingface/transformers)
def bloom_reshape(
    fused_qkv: TensorF32Cpu3D, num_heads: int, head_dim: int
) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D, TensorF32Cpu4D]:
    batch_size, seq_length, three_times_hidden_size = fused_qkv.shape
    fused_qkv = fused_qkv.view(batch_size, seq_length, num_heads, 3, head_dim)
    query_layer = fused_qkv[..., 0, :].transpose(1, 2)
    key_layer = fused_qkv[..., 1, :].transpose(1, 2)
    value_layer = fused_qkv[..., 2, :].transpose(1, 2)
    return query_layer, key_layer, value_layer


# Transformers — src/transformers/models/bloom/modeling_bloom.py, BloomAttention.forward (no cache,
# the eager scores: `baddbmm` of the ALiBi bias, the causal mask added, softmax in float32) (huggingface/transformers)
def bloom_attention_scores(
    query_layer: TensorF32Cpu4D,
    key_layer: TensorF32Cpu4D,
    alibi: TensorF32Cpu3D,
    causal_mask: TensorF32Cpu4D,
    num_heads: int,
    head_dim: int,
    beta: float,
) -> TensorF32Cpu4D:
    batch_size, _, q_length, _ = query_layer.shape
    inv_norm_factor = 1.0 / math.sqrt(head_dim)
    query_layer = query_layer.reshape(batch_size * num_heads, -1, head_dim)
    key_layer = key_layer.reshape(batch_size * num_heads, -1, head_dim).transpose(-1, -2)
    # [batch_size * num_heads, q_length, kv_length]
    attention_scores = alibi.baddbmm(
        batch1=query_layer,
        batch2=key_layer,
        beta=beta,
        alpha=inv_norm_factor,
    )
    # change view to [batch_size, num_heads, q_length, kv_length]
    attn_weights = attention_scores.view(batch_size, num_heads, q_length, -1)
    causal_mask = causal_mask[:, :, :, : key_layer.shape[-1]]
    attn_weights = attn_weights + causal_mask
    # cast attention scores to fp32, compute scaled softmax and cast back to initial dtype
    attention_probs = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_layer.dtype)
    return attention_probs


# Transformers — src/transformers/models/falcon/modeling_falcon.py, FalconAttention._split_heads
# (multi_query=True, new_decoder_architecture=False) (huggingface/transformers)
def falcon_split_heads(
    fused_qkv: TensorF32Cpu3D, num_heads: int, head_dim: int
) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D, TensorF32Cpu4D]:
    batch_size, seq_length, three_times_hidden_size = fused_qkv.shape
    fused_qkv = fused_qkv.view(batch_size, seq_length, num_heads + 2, head_dim)
    return fused_qkv[..., :-2, :], fused_qkv[..., [-2], :], fused_qkv[..., [-1], :]


# Transformers — src/transformers/models/gemma/modeling_gemma.py, GemmaRMSNorm._norm and forward (huggingface/transformers)
def gemma_rms_norm(x: TensorF32Cpu3D, weight: TensorF32Cpu1D, eps: float) -> TensorF32Cpu3D:
    output = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
    # Llama does x.to(float16) * w whilst Gemma is (x * w).to(float16)
    # See https://github.com/huggingface/transformers/pull/29402
    output = output * (1.0 + weight.float())
    return output.type_as(x)


# Transformers — src/transformers/models/gemma/modeling_gemma.py, GemmaMLP.forward (huggingface/transformers)
def gemma_mlp(x: TensorF32Cpu3D, gate_proj: TensorF32Cpu2D, up_proj: TensorF32Cpu2D, down_proj: TensorF32Cpu2D) -> TensorF32Cpu3D:
    down = F.linear(F.gelu(F.linear(x, gate_proj), approximate="tanh") * F.linear(x, up_proj), down_proj)
    return down


# Transformers — src/transformers/models/gemma/modeling_gemma.py, GemmaModel.forward (the embedding
# normalizer) (huggingface/transformers)
def gemma_embed(input_ids: TensorI64Cpu2D, embed_tokens: TensorF32Cpu2D, hidden_size: int) -> TensorF32Cpu3D:
    inputs_embeds = F.embedding(input_ids, embed_tokens)
    hidden_states = inputs_embeds
    # normalized
    # Gemma downcasts the below to bfloat16, i.e. sqrt(3072)=55.4256 but 55.5
    # See https://github.com/huggingface/transformers/pull/29402
    normalizer = torch.tensor(hidden_size**0.5, dtype=hidden_states.dtype)
    hidden_states = hidden_states * normalizer
    return hidden_states


# Transformers — src/transformers/models/mixtral/modeling_mixtral.py, MixtralSparseMoeBlock.forward
# (the router, up to the expert mask) (huggingface/transformers)
def mixtral_router(
    hidden_states: TensorF32Cpu3D, gate: TensorF32Cpu2D, top_k: int, num_experts: int
) -> tuple[TensorF32Cpu2D, TensorI64Cpu2D, TensorI64Cpu3D, TensorF32Cpu2D]:
    batch_size, sequence_length, hidden_dim = hidden_states.shape
    hidden_states = hidden_states.view(-1, hidden_dim)
    # router_logits: (batch * sequence_length, n_experts)
    router_logits = F.linear(hidden_states, gate)

    routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
    routing_weights, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
    routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
    # we cast back to the input dtype
    routing_weights = routing_weights.to(hidden_states.dtype)

    # One hot encode the selected experts to create an expert mask
    # this will be used to easily index which expert is going to be sollicitated
    expert_mask = torch.nn.functional.one_hot(selected_experts, num_classes=num_experts).permute(2, 1, 0)
    return routing_weights, selected_experts, expert_mask, router_logits


# Transformers — src/transformers/models/mixtral/modeling_mixtral.py, MixtralBlockSparseTop2MLP.forward (huggingface/transformers)
def mixtral_expert(hidden_states: TensorF32Cpu2D, w1: TensorF32Cpu2D, w2: TensorF32Cpu2D, w3: TensorF32Cpu2D) -> TensorF32Cpu2D:
    current_hidden_states = F.silu(F.linear(hidden_states, w1)) * F.linear(hidden_states, w3)
    current_hidden_states = F.linear(current_hidden_states, w2)
    return current_hidden_states


# Transformers — src/transformers/models/phi/modeling_phi.py, rotate_half (huggingface/transformers)
def phi_rotate_half(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


# Transformers — src/transformers/models/phi/modeling_phi.py, PhiAttention.forward (the partial
# rotary step: rotate the first `rotary_ndims` dims, pass the rest) (huggingface/transformers)
def phi_partial_rotary(
    query_states: TensorF32Cpu4D, key_states: TensorF32Cpu4D, cos: TensorF32Cpu3D, sin: TensorF32Cpu3D, rotary_ndims: int
) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D]:
    # Partial rotary embedding
    query_rot, query_pass = (
        query_states[..., :rotary_ndims],
        query_states[..., rotary_ndims:],
    )
    key_rot, key_pass = (
        key_states[..., :rotary_ndims],
        key_states[..., rotary_ndims:],
    )
    # [batch_size, seq_length, num_heads, head_dim // config.partial_rotary_factor]
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    query_rot = (query_rot * cos) + (phi_rotate_half(query_rot) * sin)
    key_rot = (key_rot * cos) + (phi_rotate_half(key_rot) * sin)

    # [batch_size, seq_length, num_heads, head_dim]
    query_states = torch.cat((query_rot, query_pass), dim=-1)
    key_states = torch.cat((key_rot, key_pass), dim=-1)
    return query_states, key_states


# Transformers — src/transformers/models/opt/modeling_opt.py, OPTLearnedPositionalEmbedding.forward
# (offset 2) (huggingface/transformers)
def opt_learned_positions(attention_mask: TensorI64Cpu2D, weight: TensorF32Cpu2D, past_key_values_length: int) -> TensorF32Cpu3D:
    """`input_ids_shape` is expected to be [bsz x seqlen]."""
    attention_mask = attention_mask.long()

    # create positions depending on attention_mask
    positions = (torch.cumsum(attention_mask, dim=1).type_as(attention_mask) * attention_mask).long() - 1

    # cut positions if `past_key_values_length` is > 0
    positions = positions[:, past_key_values_length:]

    return F.embedding(positions + 2, weight)


# Transformers — src/transformers/models/mpt/modeling_mpt.py, build_mpt_alibi_tensor (huggingface/transformers)
def mpt_build_alibi_tensor(num_heads: int, sequence_length: int, alibi_bias_max: int) -> TensorF32Cpu3D:
    alibi = torch.arange(1 - sequence_length, 1, dtype=torch.int32).view(1, 1, 1, sequence_length)
    num_heads_power_of_2 = 2 ** math.ceil(math.log2(num_heads))

    base = torch.arange(1, num_heads_power_of_2 + 1, dtype=torch.int64).float()
    base = base * (alibi_bias_max / num_heads_power_of_2)

    slopes = 1.0 / torch.pow(2, base)
    slopes = slopes.view(1, num_heads_power_of_2, 1, 1)

    if num_heads_power_of_2 != num_heads:
        slopes = torch.concat([slopes[:, 1::2, ...], slopes[:, ::2, ...]], dim=1)[:, :num_heads, ...]

    alibi = alibi * slopes
    return alibi.squeeze(0)


INPUTS = {
    "bloom_build_alibi_tensor": lambda: (torch.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]]), 6),
    "bloom_gelu_forward": lambda: (torch.randn(2, 5, 16),),
    "bloom_dropout_add": lambda: (torch.randn(2, 5, 16), torch.randn(2, 5, 16), 0.1, False),
    "bloom_reshape": lambda: (torch.randn(2, 5, 48), 2, 8),
    "bloom_attention_scores": lambda: (
        torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8), torch.randn(4, 1, 5),
        torch.triu(torch.full((5, 5), float("-inf")), diagonal=1)[None, None].expand(2, 1, 5, 5),
        2, 8, 1.0,
    ),
    "falcon_split_heads": lambda: (torch.randn(2, 5, 48), 4, 8),
    "gemma_rms_norm": lambda: (torch.randn(2, 5, 16), torch.randn(16), 1e-6),
    "gemma_mlp": lambda: (torch.randn(2, 5, 16), torch.randn(32, 16), torch.randn(32, 16), torch.randn(16, 32)),
    "gemma_embed": lambda: (torch.randint(0, 50, (2, 5)), torch.randn(50, 16), 16),
    "mixtral_router": lambda: (torch.randn(2, 5, 16), torch.randn(8, 16), 2, 8),
    "mixtral_expert": lambda: (torch.randn(10, 16), torch.randn(32, 16), torch.randn(16, 32), torch.randn(32, 16)),
    "phi_rotate_half": lambda: (torch.randn(2, 4, 5, 8),),
    "phi_partial_rotary": lambda: (torch.randn(2, 4, 5, 16), torch.randn(2, 4, 5, 16), torch.randn(2, 5, 8), torch.randn(2, 5, 8), 8),
    "opt_learned_positions": lambda: (torch.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]]), torch.randn(9, 16), 0),
    "mpt_build_alibi_tensor": lambda: (6, 5, 8),
}
