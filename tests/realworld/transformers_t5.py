"""Hugging Face Transformers (huggingface/transformers, Apache License 2.0) — T5:
src/transformers/models/t5/modeling_t5.py.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters, the bias-free `nn.Linear` calls are `F.linear`, the relative-attention-bias
`nn.Embedding` is `F.embedding`, `ACT2FN["relu"]` is `F.relu` and `ACT2FN["gelu_new"]` is the
`gelu_new` helper (NewGELUActivation, src/transformers/activations.py), dropout is dropped,
the attention is the first encoder layer's (has_relative_attention_bias=True, no cache, no
pruned heads, no head mask). Everything else is kept as the project writes it.
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
)


# Transformers — src/transformers/activations.py, NewGELUActivation.forward (huggingface/transformers)
def gelu_new(input: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


# Transformers — src/transformers/models/t5/modeling_t5.py, T5LayerNorm.forward (huggingface/transformers)
def t5_layer_norm(hidden_states: TensorF32Cpu3D, weight: TensorF32Cpu1D, variance_epsilon: float) -> TensorF32Cpu3D:
    # T5 uses a layer_norm which only scales and doesn't shift, which is also known as Root Mean
    # Square Layer Normalization https://arxiv.org/abs/1910.07467 thus variance is calculated
    # w/o mean and there is no bias. Additionally we want to make sure that the accumulation for
    # half-precision inputs is done in fp32

    variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + variance_epsilon)

    # convert into half-precision if necessary
    if weight.dtype in [torch.float16, torch.bfloat16]:
        hidden_states = hidden_states.to(weight.dtype)

    return weight * hidden_states


# Transformers — src/transformers/models/t5/modeling_t5.py, T5DenseActDense.forward (dense_act_fn="relu") (huggingface/transformers)
def t5_dense_act_dense(hidden_states: TensorF32Cpu3D, wi_weight: TensorF32Cpu2D, wo_weight: TensorF32Cpu2D) -> TensorF32Cpu3D:
    hidden_states = F.linear(hidden_states, wi_weight)
    hidden_states = F.relu(hidden_states)
    if (
        isinstance(wo_weight, torch.Tensor)
        and hidden_states.dtype != wo_weight.dtype
        and wo_weight.dtype != torch.int8
    ):
        hidden_states = hidden_states.to(wo_weight.dtype)
    hidden_states = F.linear(hidden_states, wo_weight)
    return hidden_states


# Transformers — src/transformers/models/t5/modeling_t5.py, T5DenseGatedActDense.forward (dense_act_fn="gelu_new") (huggingface/transformers)
def t5_dense_gated_act_dense(
    hidden_states: TensorF32Cpu3D, wi_0_weight: TensorF32Cpu2D, wi_1_weight: TensorF32Cpu2D, wo_weight: TensorF32Cpu2D
) -> TensorF32Cpu3D:
    hidden_gelu = gelu_new(F.linear(hidden_states, wi_0_weight))
    hidden_linear = F.linear(hidden_states, wi_1_weight)
    hidden_states = hidden_gelu * hidden_linear

    # To make 8bit quantization work for google/flan-t5-xxl, self.wo is kept in float32.
    # See https://github.com/huggingface/transformers/issues/20287
    # we also make sure the weights are not in `int8` in case users will force `_keep_in_fp32_modules` to be `None``
    if (
        isinstance(wo_weight, torch.Tensor)
        and hidden_states.dtype != wo_weight.dtype
        and wo_weight.dtype != torch.int8
    ):
        hidden_states = hidden_states.to(wo_weight.dtype)

    hidden_states = F.linear(hidden_states, wo_weight)
    return hidden_states


# Transformers — src/transformers/models/t5/modeling_t5.py, T5LayerFF.forward (gated act) (huggingface/transformers)
def t5_layer_ff(
    hidden_states: TensorF32Cpu3D,
    layer_norm_weight: TensorF32Cpu1D,
    wi_0_weight: TensorF32Cpu2D,
    wi_1_weight: TensorF32Cpu2D,
    wo_weight: TensorF32Cpu2D,
    layer_norm_epsilon: float,
) -> TensorF32Cpu3D:
    forwarded_states = t5_layer_norm(hidden_states, layer_norm_weight, layer_norm_epsilon)
    forwarded_states = t5_dense_gated_act_dense(forwarded_states, wi_0_weight, wi_1_weight, wo_weight)
    hidden_states = hidden_states + forwarded_states
    return hidden_states


# Transformers — src/transformers/models/t5/modeling_t5.py, T5Attention._relative_position_bucket (huggingface/transformers)
def _relative_position_bucket(
    relative_position: TensorI64Cpu2D, bidirectional: bool, num_buckets: int, max_distance: int
) -> TensorI64Cpu2D:
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    # now relative_position is in the range [0, inf)

    # half of the buckets are for exact increments in positions
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact

    # The other half of the buckets are for logarithmically bigger bins in positions up to max_distance
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )

    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


# Transformers — src/transformers/models/t5/modeling_t5.py, T5Attention.compute_bias (cache_position is None) (huggingface/transformers)
def compute_bias(
    query_length: int,
    key_length: int,
    relative_attention_bias: TensorF32Cpu2D,
    is_decoder: bool,
    relative_attention_num_buckets: int,
    relative_attention_max_distance: int,
) -> TensorF32Cpu4D:
    """Compute binned relative position bias"""
    device = relative_attention_bias.device
    context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None]
    memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
    relative_position = memory_position - context_position  # shape (query_length, key_length)
    relative_position_bucket = _relative_position_bucket(
        relative_position,  # shape (query_length, key_length)
        bidirectional=(not is_decoder),
        num_buckets=relative_attention_num_buckets,
        max_distance=relative_attention_max_distance,
    )
    values = F.embedding(relative_position_bucket, relative_attention_bias)  # shape (query_length, key_length, num_heads)
    values = values.permute([2, 0, 1]).unsqueeze(0)  # shape (1, num_heads, query_length, key_length)
    return values


# Transformers — src/transformers/models/t5/modeling_t5.py, T5Attention.forward, encoder self-attention of the
# first layer (position_bias computed here) (huggingface/transformers)
def t5_attention(
    hidden_states: TensorF32Cpu3D,
    mask: TensorF32Cpu4D,
    q_weight: TensorF32Cpu2D,
    k_weight: TensorF32Cpu2D,
    v_weight: TensorF32Cpu2D,
    o_weight: TensorF32Cpu2D,
    relative_attention_bias: TensorF32Cpu2D,
    n_heads: int,
    key_value_proj_dim: int,
    query_length: int,
    relative_attention_num_buckets: int,
    relative_attention_max_distance: int,
) -> tuple[TensorF32Cpu3D, TensorF32Cpu4D]:
    inner_dim = n_heads * key_value_proj_dim
    # Input is (batch_size, seq_length, dim)
    # Mask is (batch_size, 1, 1, key_length) (non-causal encoder) or (batch_size, 1, seq_length, key_length) (causal decoder)
    batch_size, seq_length = hidden_states.shape[:2]

    query_states = F.linear(hidden_states, q_weight)
    query_states = query_states.view(batch_size, -1, n_heads, key_value_proj_dim).transpose(1, 2)

    current_states = hidden_states
    key_states = F.linear(current_states, k_weight)
    value_states = F.linear(current_states, v_weight)
    key_states = key_states.view(batch_size, -1, n_heads, key_value_proj_dim).transpose(1, 2)
    value_states = value_states.view(batch_size, -1, n_heads, key_value_proj_dim).transpose(1, 2)

    # compute scores, equivalent of torch.einsum("bnqd,bnkd->bnqk", query_states, key_states), compatible with onnx op>9
    scores = torch.matmul(query_states, key_states.transpose(3, 2))

    key_length = key_states.shape[-2]
    real_seq_length = query_length
    position_bias = compute_bias(
        real_seq_length, key_length, relative_attention_bias, False,
        relative_attention_num_buckets, relative_attention_max_distance,
    )
    position_bias = position_bias[:, :, -seq_length:, :]

    if mask is not None:
        causal_mask = mask[:, :, :, : key_states.shape[-2]]
        position_bias = position_bias + causal_mask

    position_bias_masked = position_bias

    scores += position_bias_masked

    # (batch_size, n_heads, seq_length, key_length)
    attn_weights = F.softmax(scores.float(), dim=-1).type_as(scores)

    attn_output = torch.matmul(attn_weights, value_states)

    attn_output = attn_output.transpose(1, 2).contiguous()
    attn_output = attn_output.view(batch_size, -1, inner_dim)
    attn_output = F.linear(attn_output, o_weight)

    return attn_output, position_bias


INPUTS = {
    "gelu_new": lambda: (torch.randn(2, 5, 16),),
    "t5_layer_norm": lambda: (torch.randn(2, 5, 16), torch.randn(16), 1e-6),
    "t5_dense_act_dense": lambda: (torch.randn(2, 5, 16), torch.randn(64, 16), torch.randn(16, 64)),
    "t5_dense_gated_act_dense": lambda: (torch.randn(2, 5, 16), torch.randn(64, 16), torch.randn(64, 16), torch.randn(16, 64)),
    "t5_layer_ff": lambda: (torch.randn(2, 5, 16), torch.randn(16), torch.randn(64, 16), torch.randn(64, 16), torch.randn(16, 64), 1e-6),
    "_relative_position_bucket": lambda: (torch.arange(40)[None, :] - torch.arange(6)[:, None], True, 32, 128),
    "compute_bias": lambda: (5, 5, torch.randn(32, 2), False, 32, 128),
    "t5_attention": lambda: (
        torch.randn(2, 5, 16),
        (1.0 - torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.float32)[:, None, None, :]) * torch.finfo(torch.float32).min,
        torch.randn(16, 16), torch.randn(16, 16), torch.randn(16, 16), torch.randn(16, 16), torch.randn(32, 2),
        2, 8, 5, 32, 128,
    ),
}
