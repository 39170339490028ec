"""Transformers — GPT-2 (huggingface/transformers, Apache License 2.0) —
src/transformers/pytorch_utils.py (`Conv1D`), src/transformers/models/gpt2/modeling_gpt2.py
(`GPT2Attention`, `GPT2MLP`, `GPT2Block`, the LM head), and sentence-transformers
(UKPLab/sentence-transformers, Apache License 2.0) — sentence_transformers/models/Pooling.py
and sentence_transformers/util.py (mean / max / CLS pooling, `normalize`, `cos_sim`).

Forward paths rewritten as annotated top-level functions: module weights (and GPT-2's
registered `bias` buffer, the bool causal mask) are explicit parameters, `nn.LayerNorm` is
`F.layer_norm`, dropout is dropped (eval mode), head counts are `int` parameters. GPT-2's
`Conv1D` is kept as Transformers writes it: `torch.addmm` over a `view` of the input, the
weight stored transposed (`[in, out]`). Everything else is kept as the projects write it.
"""

import math

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorBoolCpu4D,
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu2D,
)


# Transformers — src/transformers/pytorch_utils.py, Conv1D.forward (huggingface/transformers)
def conv1d(x: TensorF32Cpu3D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu3D:
    nf = weight.shape[1]
    size_out = x.size()[:-1] + (nf,)
    x = torch.addmm(bias, x.view(-1, x.size(-1)), weight)
    x = x.view(size_out)
    return x


# Transformers — src/transformers/activations.py, NewGELUActivation.forward (huggingface/transformers)
def new_gelu(input: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


# Transformers — src/transformers/models/gpt2/modeling_gpt2.py, GPT2MLP.forward (huggingface/transformers)
def gpt2_mlp(hidden_states: TensorF32Cpu3D, c_fc_weight: TensorF32Cpu2D, c_fc_bias: TensorF32Cpu1D,
             c_proj_weight: TensorF32Cpu2D, c_proj_bias: TensorF32Cpu1D) -> TensorF32Cpu3D:
    hidden_states = conv1d(hidden_states, c_fc_weight, c_fc_bias)
    hidden_states = new_gelu(hidden_states)
    hidden_states = conv1d(hidden_states, c_proj_weight, c_proj_bias)
    return hidden_states


# Transformers — src/transformers/models/gpt2/modeling_gpt2.py, GPT2Attention._split_heads (huggingface/transformers, v4.3x)
def _split_heads(tensor: TensorF32Cpu3D, num_heads: int, attn_head_size: int) -> TensorF32Cpu4D:
    """
    Splits hidden_size dim into attn_head_size and num_heads
    """
    new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
    tensor = tensor.view(new_shape)
    return tensor.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)


# Transformers — src/transformers/models/gpt2/modeling_gpt2.py, GPT2Attention._merge_heads (huggingface/transformers, v4.3x)
def _merge_heads(tensor: TensorF32Cpu4D, num_heads: int, attn_head_size: int) -> TensorF32Cpu3D:
    """
    Merges attn_head_size dim and num_attn_heads dim into hidden_size
    """
    tensor = tensor.permute(0, 2, 1, 3).contiguous()
    new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
    return tensor.view(new_shape)


# Transformers — src/transformers/models/gpt2/modeling_gpt2.py, GPT2Attention._attn (huggingface/transformers, v4.3x;
# scale_attn_weights=True, scale_attn_by_inverse_layer_idx=False, is_cross_attention=False, no head_mask)
def _attn(query: TensorF32Cpu4D, key: TensorF32Cpu4D, value: TensorF32Cpu4D, bias: TensorBoolCpu4D,
          attention_mask: TensorF32Cpu4D) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D]:
    attn_weights = torch.matmul(query, key.transpose(-1, -2))

    attn_weights = attn_weights / torch.full(
        [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device
    )

    # if only "normal" attention layer implements causal mask
    query_length, key_length = query.size(-2), key.size(-2)
    causal_mask = bias[:, :, key_length - query_length : key_length, :key_length]
    mask_value = torch.finfo(attn_weights.dtype).min
    # Need to be a tensor, otherwise we get error: `RuntimeError: expected scalar type float but found double`.
    # Need to be on the same device, otherwise `RuntimeError: ..., x and y to be on the same device`
    mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
    attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)

    # Apply the attention mask
    attn_weights = attn_weights + attention_mask

    attn_weights = F.softmax(attn_weights, dim=-1)

    # Downcast (if necessary) back to V's dtype (if in mixed-precision) -- No-Op otherwise
    attn_weights = attn_weights.type(value.dtype)

    attn_output = torch.matmul(attn_weights, value)

    return attn_output, attn_weights


# Transformers — src/transformers/models/gpt2/modeling_gpt2.py, GPT2Attention.forward (huggingface/transformers, v4.3x;
# self-attention, no layer_past, use_cache=False, output_attentions=False)
def gpt2_attention(hidden_states: TensorF32Cpu3D, c_attn_weight: TensorF32Cpu2D, c_attn_bias: TensorF32Cpu1D,
                   c_proj_weight: TensorF32Cpu2D, c_proj_bias: TensorF32Cpu1D, bias: TensorBoolCpu4D,
                   attention_mask: TensorF32Cpu4D, num_heads: int) -> TensorF32Cpu3D:
    embed_dim = hidden_states.size(-1)
    head_dim = embed_dim // num_heads
    split_size = embed_dim
    query, key, value = conv1d(hidden_states, c_attn_weight, c_attn_bias).split(split_size, dim=2)

    query = _split_heads(query, num_heads, head_dim)
    key = _split_heads(key, num_heads, head_dim)
    value = _split_heads(value, num_heads, head_dim)

    attn_output, attn_weights = _attn(query, key, value, bias, attention_mask)

    attn_output = _merge_heads(attn_output, num_heads, head_dim)
    attn_output = conv1d(attn_output, c_proj_weight, c_proj_bias)

    return attn_output


# Transformers — src/transformers/models/gpt2/modeling_gpt2.py, GPT2Block.forward (huggingface/transformers, v4.3x)
def gpt2_block(hidden_states: TensorF32Cpu3D, ln_1_weight: TensorF32Cpu1D, ln_1_bias: TensorF32Cpu1D,
               c_attn_weight: TensorF32Cpu2D, c_attn_bias: TensorF32Cpu1D, attn_proj_weight: TensorF32Cpu2D,
               attn_proj_bias: TensorF32Cpu1D, bias: TensorBoolCpu4D, attention_mask: TensorF32Cpu4D,
               ln_2_weight: TensorF32Cpu1D, ln_2_bias: TensorF32Cpu1D, c_fc_weight: TensorF32Cpu2D,
               c_fc_bias: TensorF32Cpu1D, mlp_proj_weight: TensorF32Cpu2D, mlp_proj_bias: TensorF32Cpu1D,
               num_heads: int, layer_norm_epsilon: float) -> TensorF32Cpu3D:
    residual = hidden_states
    hidden_states = F.layer_norm(hidden_states, (hidden_states.size(-1),), ln_1_weight, ln_1_bias, layer_norm_epsilon)
    attn_output = gpt2_attention(hidden_states, c_attn_weight, c_attn_bias, attn_proj_weight, attn_proj_bias,
                                 bias, attention_mask, num_heads)
    # residual connection
    hidden_states = attn_output + residual

    residual = hidden_states
    hidden_states = F.layer_norm(hidden_states, (hidden_states.size(-1),), ln_2_weight, ln_2_bias, layer_norm_epsilon)
    feed_forward_hidden_states = gpt2_mlp(hidden_states, c_fc_weight, c_fc_bias, mlp_proj_weight, mlp_proj_bias)
    # residual connection
    hidden_states = residual + feed_forward_hidden_states

    return hidden_states


# Transformers — src/transformers/models/gpt2/modeling_gpt2.py, GPT2Model.forward: the extended attention mask
# (huggingface/transformers, v4.3x; a [batch, seq] padding mask of ones and zeros)
def gpt2_extended_attention_mask(attention_mask: TensorF32Cpu2D, batch_size: int) -> TensorF32Cpu4D:
    attention_mask = attention_mask.view(batch_size, -1)
    # We create a 3D attention mask from a 2D tensor mask.
    # Sizes are [batch_size, 1, 1, to_seq_length]
    attention_mask = attention_mask[:, None, None, :]

    # Since attention_mask is 1.0 for positions we want to attend and 0.0 for
    # masked positions, this operation will create a tensor which is 0.0 for
    # positions we want to attend and the dtype's smallest value for masked positions.
    attention_mask = attention_mask.to(dtype=torch.float32)  # fp16 compatibility
    attention_mask = (1.0 - attention_mask) * torch.finfo(torch.float32).min
    return attention_mask


# Transformers — src/transformers/models/gpt2/modeling_gpt2.py, GPT2Model.forward: the embedding stem
# (huggingface/transformers, v4.3x; no past, position_ids from arange)
def gpt2_embeddings(input_ids: TensorI64Cpu2D, wte: TensorF32Cpu2D, wpe: TensorF32Cpu2D) -> TensorF32Cpu3D:
    input_shape = input_ids.size()
    input_ids = input_ids.view(-1, input_shape[-1])
    past_length = 0
    position_ids = torch.arange(past_length, input_shape[-1] + past_length, dtype=torch.long, device=input_ids.device)
    position_ids = position_ids.unsqueeze(0)
    inputs_embeds = F.embedding(input_ids, wte)
    position_embeds = F.embedding(position_ids, wpe)
    hidden_states = inputs_embeds + position_embeds
    return hidden_states


# Transformers — src/transformers/models/gpt2/modeling_gpt2.py, GPT2LMHeadModel.forward after the transformer
# (huggingface/transformers, v4.3x; the final ln_f, then the tied lm_head without bias)
def gpt2_lm_logits(hidden_states: TensorF32Cpu3D, ln_f_weight: TensorF32Cpu1D, ln_f_bias: TensorF32Cpu1D,
                   wte: TensorF32Cpu2D, layer_norm_epsilon: float) -> TensorF32Cpu3D:
    hidden_states = F.layer_norm(hidden_states, (hidden_states.size(-1),), ln_f_weight, ln_f_bias, layer_norm_epsilon)
    lm_logits = F.linear(hidden_states, wte)
    return lm_logits


# Transformers — src/transformers/models/gpt2/modeling_gpt2.py, GPT2ForSequenceClassification.forward: the
# pooled logits at each row's last non-pad token (huggingface/transformers, v4.4x)
def gpt2_sequence_logits(logits: TensorF32Cpu3D, input_ids: TensorI64Cpu2D, pad_token_id: int) -> TensorF32Cpu2D:
    batch_size, sequence_length = input_ids.shape[:2]
    # To handle both left- and right- padding, we take the rightmost token that is not equal to pad_token_id
    non_pad_mask = (input_ids != pad_token_id).to(logits.device, torch.int32)
    token_indices = torch.arange(input_ids.shape[-1], device=logits.device, dtype=torch.int32)
    last_non_pad_token = (token_indices * non_pad_mask).argmax(-1)
    pooled_logits = logits[torch.arange(batch_size, device=logits.device), last_non_pad_token]
    return pooled_logits


# sentence-transformers — sentence_transformers/models/Pooling.py, Pooling.forward, pooling_mode_mean_tokens
# (UKPLab/sentence-transformers; the README's `mean_pooling` helper)
def mean_pooling(token_embeddings: TensorF32Cpu3D, attention_mask: TensorI64Cpu2D) -> TensorF32Cpu2D:
    input_mask_expanded = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).float()
    return torch.sum(token_embeddings * input_mask_expanded, 1) / torch.clamp(input_mask_expanded.sum(1), min=1e-9)


# sentence-transformers — sentence_transformers/models/Pooling.py, Pooling.forward, pooling_mode_max_tokens
# (UKPLab/sentence-transformers)
def max_pooling(token_embeddings: TensorF32Cpu3D, attention_mask: TensorI64Cpu2D) -> TensorF32Cpu2D:
    input_mask_expanded = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).to(token_embeddings.dtype)
    token_embeddings[input_mask_expanded == 0] = -1e9  # Set padding tokens to large negative value
    max_over_time = torch.max(token_embeddings, 1)[0]
    return max_over_time


# sentence-transformers — sentence_transformers/models/Pooling.py, Pooling.forward, pooling_mode_cls_token and
# the Normalize module (UKPLab/sentence-transformers)
def cls_pooling_normalized(token_embeddings: TensorF32Cpu3D) -> TensorF32Cpu2D:
    cls_token = token_embeddings[:, 0]  # Take first token by default
    return F.normalize(cls_token, p=2, dim=1)


# sentence-transformers — sentence_transformers/util.py, cos_sim (UKPLab/sentence-transformers; tensor inputs)
def cos_sim(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """
    Computes the cosine similarity cos_sim(a[i], b[j]) for all i and j.

    :return: Matrix with res[i][j]  = cos_sim(a[i], b[j])
    """
    if not isinstance(a, torch.Tensor):
        a = torch.tensor(a)

    if not isinstance(b, torch.Tensor):
        b = torch.tensor(b)

    if len(a.shape) == 1:
        a = a.unsqueeze(0)

    if len(b.shape) == 1:
        b = b.unsqueeze(0)

    a_norm = torch.nn.functional.normalize(a, p=2, dim=1)
    b_norm = torch.nn.functional.normalize(b, p=2, dim=1)
    return torch.mm(a_norm, b_norm.transpose(0, 1))


# sentence-transformers — sentence_transformers/util.py, dot_score (UKPLab/sentence-transformers; tensor inputs)
def dot_score(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    if len(a.shape) == 1:
        a = a.unsqueeze(0)

    if len(b.shape) == 1:
        b = b.unsqueeze(0)

    return torch.mm(a, b.transpose(0, 1))


D, H, T, B = 16, 2, 5, 2
CAUSAL = torch.tril(torch.ones(8, 8, dtype=torch.bool)).view(1, 1, 8, 8)  # GPT-2's `bias` buffer (n_positions 8)
PADDING = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]])  # a tokenizer's attention_mask
ADDITIVE = (1.0 - PADDING[:, None, None, :].float()) * torch.finfo(torch.float32).min
ATTENTION_WEIGHTS = (torch.randn(D, 3 * D) / 4, torch.randn(3 * D), torch.randn(D, D) / 4, torch.randn(D))
LN = (1 + 0.1 * torch.randn(D), 0.1 * torch.randn(D))
MLP_WEIGHTS = (torch.randn(D, 4 * D) / 4, torch.randn(4 * D), torch.randn(4 * D, D) / 8, torch.randn(D))

INPUTS = {
    "conv1d": lambda: (torch.randn(2, 5, 16), torch.randn(16, 48) / 4, torch.randn(48)),
    "new_gelu": lambda: (torch.randn(2, 5, 16),),
    "gpt2_mlp": lambda: (torch.randn(2, 5, 16), torch.randn(16, 64) / 4, torch.randn(64), torch.randn(64, 16) / 8, torch.randn(16)),
    "_split_heads": lambda: (torch.randn(2, 5, 16), 2, 8),
    "_merge_heads": lambda: (torch.randn(2, 2, 5, 8), 2, 8),
    "_attn": lambda: (torch.randn(B, H, T, 8), torch.randn(B, H, T, 8), torch.randn(B, H, T, 8), CAUSAL, ADDITIVE),
    "gpt2_attention": lambda: (torch.randn(B, T, D), *ATTENTION_WEIGHTS, CAUSAL, ADDITIVE, H),
    "gpt2_block": lambda: (torch.randn(B, T, D), *LN, *ATTENTION_WEIGHTS, CAUSAL, ADDITIVE, *LN, *MLP_WEIGHTS, H, 1e-5),
    "gpt2_extended_attention_mask": lambda: (PADDING.float(), B),
    "gpt2_embeddings": lambda: (torch.randint(0, 50, (2, 5)), torch.randn(50, 16), torch.randn(8, 16)),
    "gpt2_lm_logits": lambda: (torch.randn(2, 5, 16), 1 + 0.1 * torch.randn(16), 0.1 * torch.randn(16), torch.randn(50, 16), 1e-5),
    "gpt2_sequence_logits": lambda: (torch.randn(2, 5, 3), torch.tensor([[5, 7, 9, 0, 0], [3, 3, 3, 3, 0]]), 0),
    "mean_pooling": lambda: (torch.randn(2, 5, 16), PADDING),
    "max_pooling": lambda: (torch.randn(2, 5, 16), PADDING),
    "cls_pooling_normalized": lambda: (torch.randn(2, 5, 16),),
    "cos_sim": lambda: (torch.randn(3, 16), torch.randn(4, 16)),
    "dot_score": lambda: (torch.randn(3, 16), torch.randn(4, 16)),
}
