"""Hugging Face Transformers (huggingface/transformers, Apache License 2.0) — BERT:
src/transformers/models/bert/modeling_bert.py (eager attention path) and the extended
attention mask of src/transformers/modeling_utils.py.

Forward paths rewritten as annotated top-level functions: module weights (and the
`position_ids` buffer) are explicit parameters, `nn.Linear` / `nn.Embedding` / `nn.LayerNorm`
calls are `F.linear` / `F.embedding` / `F.layer_norm`, `ACT2FN["gelu"]` is `F.gelu`, dropout
is dropped, config switches are fixed to the default BERT config (absolute position
embeddings, encoder, no cache, no head mask). Everything else is kept as the project writes it.
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


# Transformers — src/transformers/models/bert/modeling_bert.py, BertEmbeddings.forward (huggingface/transformers)
def bert_embeddings(
    input_ids: TensorI64Cpu2D,
    token_type_ids: TensorI64Cpu2D,
    position_ids_buffer: TensorI64Cpu2D,
    word_embeddings: TensorF32Cpu2D,
    position_embeddings_weight: TensorF32Cpu2D,
    token_type_embeddings_weight: TensorF32Cpu2D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    hidden_size: int,
    layer_norm_eps: float,
    past_key_values_length: int,
) -> TensorF32Cpu3D:
    input_shape = input_ids.size()

    seq_length = input_shape[1]

    position_ids = position_ids_buffer[:, past_key_values_length : seq_length + past_key_values_length]

    inputs_embeds = F.embedding(input_ids, word_embeddings)
    token_type_embeddings = F.embedding(token_type_ids, token_type_embeddings_weight)

    embeddings = inputs_embeds + token_type_embeddings
    position_embeddings = F.embedding(position_ids, position_embeddings_weight)
    embeddings += position_embeddings
    embeddings = F.layer_norm(embeddings, (hidden_size,), layer_norm_weight, layer_norm_bias, layer_norm_eps)
    return embeddings


# Transformers — src/transformers/models/bert/modeling_bert.py, BertSelfAttention.transpose_for_scores (huggingface/transformers)
def transpose_for_scores(x: TensorF32Cpu3D, num_attention_heads: int, attention_head_size: int) -> TensorF32Cpu4D:
    new_x_shape = x.size()[:-1] + (num_attention_heads, attention_head_size)
    x = x.view(new_x_shape)
    return x.permute(0, 2, 1, 3)


# Transformers — src/transformers/models/bert/modeling_bert.py, BertSelfAttention.forward, self-attention path (huggingface/transformers)
def bert_self_attention(
    hidden_states: TensorF32Cpu3D,
    attention_mask: TensorF32Cpu4D,
    query_weight: TensorF32Cpu2D,
    query_bias: TensorF32Cpu1D,
    key_weight: TensorF32Cpu2D,
    key_bias: TensorF32Cpu1D,
    value_weight: TensorF32Cpu2D,
    value_bias: TensorF32Cpu1D,
    num_attention_heads: int,
    attention_head_size: int,
) -> TensorF32Cpu3D:
    all_head_size = num_attention_heads * attention_head_size
    mixed_query_layer = F.linear(hidden_states, query_weight, query_bias)

    key_layer = transpose_for_scores(F.linear(hidden_states, key_weight, key_bias), num_attention_heads, attention_head_size)
    value_layer = transpose_for_scores(F.linear(hidden_states, value_weight, value_bias), num_attention_heads, attention_head_size)

    query_layer = transpose_for_scores(mixed_query_layer, num_attention_heads, attention_head_size)

    # Take the dot product between "query" and "key" to get the raw attention scores.
    attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))

    attention_scores = attention_scores / math.sqrt(attention_head_size)
    if attention_mask is not None:
        # Apply the attention mask is (precomputed for all layers in BertModel forward() function)
        attention_scores = attention_scores + attention_mask

    # Normalize the attention scores to probabilities.
    attention_probs = F.softmax(attention_scores, dim=-1)

    context_layer = torch.matmul(attention_probs, value_layer)

    context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
    new_context_layer_shape = context_layer.size()[:-2] + (all_head_size,)
    context_layer = context_layer.view(new_context_layer_shape)
    return context_layer


# Transformers — src/transformers/models/bert/modeling_bert.py, BertSelfOutput.forward (huggingface/transformers)
def bert_self_output(
    hidden_states: TensorF32Cpu3D,
    input_tensor: TensorF32Cpu3D,
    dense_weight: TensorF32Cpu2D,
    dense_bias: TensorF32Cpu1D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    hidden_size: int,
    layer_norm_eps: float,
) -> TensorF32Cpu3D:
    hidden_states = F.linear(hidden_states, dense_weight, dense_bias)
    hidden_states = F.layer_norm(hidden_states + input_tensor, (hidden_size,), layer_norm_weight, layer_norm_bias, layer_norm_eps)
    return hidden_states


# Transformers — src/transformers/models/bert/modeling_bert.py, BertIntermediate.forward (hidden_act="gelu") (huggingface/transformers)
def bert_intermediate(hidden_states: TensorF32Cpu3D, dense_weight: TensorF32Cpu2D, dense_bias: TensorF32Cpu1D) -> TensorF32Cpu3D:
    hidden_states = F.linear(hidden_states, dense_weight, dense_bias)
    hidden_states = F.gelu(hidden_states)
    return hidden_states


# Transformers — src/transformers/models/bert/modeling_bert.py, BertOutput.forward (huggingface/transformers)
def bert_output(
    hidden_states: TensorF32Cpu3D,
    input_tensor: TensorF32Cpu3D,
    dense_weight: TensorF32Cpu2D,
    dense_bias: TensorF32Cpu1D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    hidden_size: int,
    layer_norm_eps: float,
) -> TensorF32Cpu3D:
    hidden_states = F.linear(hidden_states, dense_weight, dense_bias)
    hidden_states = F.layer_norm(hidden_states + input_tensor, (hidden_size,), layer_norm_weight, layer_norm_bias, layer_norm_eps)
    return hidden_states


# Transformers — src/transformers/models/bert/modeling_bert.py, BertLayer.feed_forward_chunk (huggingface/transformers)
def feed_forward_chunk(
    attention_output: TensorF32Cpu3D,
    intermediate_weight: TensorF32Cpu2D,
    intermediate_bias: TensorF32Cpu1D,
    output_weight: TensorF32Cpu2D,
    output_bias: TensorF32Cpu1D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    hidden_size: int,
    layer_norm_eps: float,
) -> TensorF32Cpu3D:
    intermediate_output = bert_intermediate(attention_output, intermediate_weight, intermediate_bias)
    layer_output = bert_output(
        intermediate_output, attention_output, output_weight, output_bias,
        layer_norm_weight, layer_norm_bias, hidden_size, layer_norm_eps,
    )
    return layer_output


# Transformers — src/transformers/models/bert/modeling_bert.py, BertPooler.forward (huggingface/transformers)
def bert_pooler(hidden_states: TensorF32Cpu3D, dense_weight: TensorF32Cpu2D, dense_bias: TensorF32Cpu1D) -> TensorF32Cpu2D:
    # We "pool" the model by simply taking the hidden state corresponding
    # to the first token.
    first_token_tensor = hidden_states[:, 0]
    pooled_output = F.linear(first_token_tensor, dense_weight, dense_bias)
    pooled_output = torch.tanh(pooled_output)
    return pooled_output


# Transformers — src/transformers/models/bert/modeling_bert.py, BertForSequenceClassification.forward,
# classifier on the pooled output (single-label, no labels) (huggingface/transformers)
def sequence_classifier_logits(
    pooled_output: TensorF32Cpu2D, classifier_weight: TensorF32Cpu2D, classifier_bias: TensorF32Cpu1D
) -> TensorF32Cpu2D:
    logits = F.linear(pooled_output, classifier_weight, classifier_bias)
    return logits


# Transformers — src/transformers/models/bert/modeling_bert.py, BertLMPredictionHead.forward with
# BertPredictionHeadTransform.forward (hidden_act="gelu") (huggingface/transformers)
def lm_prediction_head(
    hidden_states: TensorF32Cpu3D,
    transform_dense_weight: TensorF32Cpu2D,
    transform_dense_bias: TensorF32Cpu1D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    decoder_weight: TensorF32Cpu2D,
    bias: TensorF32Cpu1D,
    hidden_size: int,
    layer_norm_eps: float,
) -> TensorF32Cpu3D:
    hidden_states = F.linear(hidden_states, transform_dense_weight, transform_dense_bias)
    hidden_states = F.gelu(hidden_states)
    hidden_states = F.layer_norm(hidden_states, (hidden_size,), layer_norm_weight, layer_norm_bias, layer_norm_eps)
    hidden_states = F.linear(hidden_states, decoder_weight, bias)
    return hidden_states


# Transformers — src/transformers/modeling_utils.py, ModuleUtilsMixin.get_extended_attention_mask,
# 2-D encoder mask, dtype = float32 (huggingface/transformers)
def get_extended_attention_mask(attention_mask: TensorI64Cpu2D) -> TensorF32Cpu4D:
    dtype = torch.float32
    # We can provide a self-attention mask of dimensions [batch_size, from_seq_length, to_seq_length]
    # ourselves in which case we just need to make it broadcastable to all heads.
    extended_attention_mask = attention_mask[:, None, None, :]

    # Since attention_mask is 1.0 for positions we want to attend and 0.0 for
    # masked positions, this operation will create a tensor which is 0.0 for
    # positions we want to attend and the dtype's smallest value for masked positions.
    extended_attention_mask = extended_attention_mask.to(dtype=dtype)  # fp16 compatibility
    extended_attention_mask = (1.0 - extended_attention_mask) * torch.finfo(dtype).min
    return extended_attention_mask


INPUTS = {
    "bert_embeddings": lambda: (
        torch.randint(0, 50, (2, 5)), torch.randint(0, 2, (2, 5)), torch.arange(32).expand((1, -1)),
        torch.randn(50, 16), torch.randn(32, 16), torch.randn(2, 16), torch.randn(16), torch.randn(16),
        16, 1e-12, 0,
    ),
    "transpose_for_scores": lambda: (torch.randn(2, 5, 16), 2, 8),
    "bert_self_attention": lambda: (
        torch.randn(2, 5, 16),
        (1.0 - torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.float32)[:, None, None, :]) * -1e9,
        torch.randn(16, 16), torch.randn(16), torch.randn(16, 16), torch.randn(16), torch.randn(16, 16), torch.randn(16),
        2, 8,
    ),
    "bert_self_output": lambda: (
        torch.randn(2, 5, 16), torch.randn(2, 5, 16), torch.randn(16, 16), torch.randn(16), torch.randn(16), torch.randn(16),
        16, 1e-12,
    ),
    "bert_intermediate": lambda: (torch.randn(2, 5, 16), torch.randn(64, 16), torch.randn(64)),
    "bert_output": lambda: (
        torch.randn(2, 5, 64), torch.randn(2, 5, 16), torch.randn(16, 64), torch.randn(16), torch.randn(16), torch.randn(16),
        16, 1e-12,
    ),
    "feed_forward_chunk": lambda: (
        torch.randn(2, 5, 16), torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16),
        torch.randn(16), torch.randn(16), 16, 1e-12,
    ),
    "bert_pooler": lambda: (torch.randn(2, 5, 16), torch.randn(16, 16), torch.randn(16)),
    "sequence_classifier_logits": lambda: (torch.randn(2, 16), torch.randn(3, 16), torch.randn(3)),
    "lm_prediction_head": lambda: (
        torch.randn(2, 5, 16), torch.randn(16, 16), torch.randn(16), torch.randn(16), torch.randn(16),
        torch.randn(50, 16), torch.randn(50), 16, 1e-12,
    ),
    "get_extended_attention_mask": lambda: (torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]),),
}
