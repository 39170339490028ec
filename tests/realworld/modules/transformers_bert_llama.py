"""BERT and LLaMA modules as huggingface/transformers writes them (configs become constructor
arguments; ACT2FN's classes as transformers defines them), for torchlower.compile(module)."""

import math
from typing import Optional, Tuple

import torch
from torch import nn


# transformers — src/transformers/activations.py, GELUActivation (huggingface/transformers)
class GELUActivation(nn.Module):
    """
    Original Implementation of the GELU activation function in Google BERT repo when initially created. For
    information: OpenAI GPT's GELU is slightly different (and gives slightly different results): 0.5 * x * (1 +
    torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3)))) This is now written in C in nn.functional
    Also see the Gaussian Error Linear Units paper: https://huggingface.co/papers/1606.08415
    """

    def __init__(self, use_gelu_python: bool = False):
        super().__init__()
        self.act = nn.functional.gelu

    def forward(self, input):
        return self.act(input)


# transformers — models/bert/modeling_bert.py, BertSelfOutput (huggingface/transformers)
class BertSelfOutput(nn.Module):
    def __init__(self, hidden_size, layer_norm_eps=1e-12, hidden_dropout_prob=0.1):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=layer_norm_eps)
        self.dropout = nn.Dropout(hidden_dropout_prob)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.LayerNorm(hidden_states + input_tensor)
        return hidden_states


# transformers — models/bert/modeling_bert.py, BertIntermediate (hidden_act="gelu") (huggingface/transformers)
class BertIntermediate(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.dense = nn.Linear(hidden_size, intermediate_size)
        self.intermediate_act_fn = GELUActivation()

    def forward(self, hidden_states):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.intermediate_act_fn(hidden_states)
        return hidden_states


# transformers — models/bert/modeling_bert.py, BertOutput (huggingface/transformers)
class BertOutput(nn.Module):
    def __init__(self, hidden_size, intermediate_size, layer_norm_eps=1e-12, hidden_dropout_prob=0.1):
        super().__init__()
        self.dense = nn.Linear(intermediate_size, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=layer_norm_eps)
        self.dropout = nn.Dropout(hidden_dropout_prob)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.LayerNorm(hidden_states + input_tensor)
        return hidden_states


# transformers — models/bert/modeling_bert.py, BertPooler (huggingface/transformers)
class BertPooler(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        # We "pool" the model by simply taking the hidden state corresponding
        # to the first token.
        first_token_tensor = hidden_states[:, 0]
        pooled_output = self.dense(first_token_tensor)
        pooled_output = self.activation(pooled_output)
        return pooled_output


# transformers — models/bert/modeling_bert.py, BertPredictionHeadTransform (huggingface/transformers)
class BertPredictionHeadTransform(nn.Module):
    def __init__(self, hidden_size, layer_norm_eps=1e-12):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.transform_act_fn = GELUActivation()
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=layer_norm_eps)

    def forward(self, hidden_states):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.transform_act_fn(hidden_states)
        hidden_states = self.LayerNorm(hidden_states)
        return hidden_states


# transformers — models/llama/modeling_llama.py, LlamaRMSNorm (huggingface/transformers)
class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        """
        LlamaRMSNorm is equivalent to T5LayerNorm
        """
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


# transformers — models/llama/modeling_llama.py, LlamaMLP (hidden_act="silu", mlp_bias=False) (huggingface/transformers)
class LlamaMLP(nn.Module):
    def __init__(self, hidden_size, intermediate_size, mlp_bias=False):
        super().__init__()
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=mlp_bias)
        self.up_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=mlp_bias)
        self.down_proj = nn.Linear(self.intermediate_size, self.hidden_size, bias=mlp_bias)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


# transformers — models/bert/modeling_bert.py, BertSelfAttention (absolute positions, no cross-attention, no cache) (huggingface/transformers)
class BertSelfAttention(nn.Module):
    def __init__(self, hidden_size, num_attention_heads, attention_probs_dropout_prob=0.1):
        super().__init__()
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = int(hidden_size / num_attention_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size

        self.query = nn.Linear(hidden_size, self.all_head_size)
        self.key = nn.Linear(hidden_size, self.all_head_size)
        self.value = nn.Linear(hidden_size, self.all_head_size)

        self.dropout = nn.Dropout(attention_probs_dropout_prob)

    def transpose_for_scores(self, x: torch.Tensor) -> torch.Tensor:
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: Optional[torch.FloatTensor] = None,
    ) -> Tuple[torch.Tensor]:
        mixed_query_layer = self.query(hidden_states)

        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)

        # Take the dot product between "query" and "key" to get the raw attention scores.
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))

        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        if attention_mask is not None:
            # Apply the attention mask is (precomputed for all layers in BertModel forward() function)
            attention_scores = attention_scores + attention_mask

        # Normalize the attention scores to probabilities.
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)

        # This is actually dropping out entire tokens to attend to, which might
        # seem a bit unusual, but is taken from the original Transformer paper.
        attention_probs = self.dropout(attention_probs)

        context_layer = torch.matmul(attention_probs, value_layer)

        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(new_context_layer_shape)

        outputs = (context_layer,)
        return outputs


def _bert_mask(batch, seq):
    """BertModel's extended additive mask: 0 where attended, the dtype's minimum elsewhere."""
    keep = torch.rand(batch, seq) > 0.3
    return (1.0 - keep[:, None, None, :].float()) * torch.finfo(torch.float32).min


EXAMPLES = {
    "GELUActivation": (lambda: GELUActivation(), lambda: (torch.randn(2, 5, 16),)),
    "BertSelfOutput": (lambda: BertSelfOutput(16), lambda: (torch.randn(2, 5, 16), torch.randn(2, 5, 16))),
    "BertIntermediate": (lambda: BertIntermediate(16, 64), lambda: (torch.randn(2, 5, 16),)),
    "BertOutput": (lambda: BertOutput(16, 64), lambda: (torch.randn(2, 5, 64), torch.randn(2, 5, 16))),
    "BertPooler": (lambda: BertPooler(16), lambda: (torch.randn(2, 5, 16),)),
    "BertPredictionHeadTransform": (lambda: BertPredictionHeadTransform(16), lambda: (torch.randn(2, 5, 16),)),
    "LlamaRMSNorm": (lambda: LlamaRMSNorm(16), lambda: (torch.randn(2, 5, 16),)),
    "LlamaMLP": (lambda: LlamaMLP(16, 48), lambda: (torch.randn(2, 5, 16),)),
    "BertSelfAttention": (lambda: BertSelfAttention(16, 4), lambda: (torch.randn(2, 5, 16),)),
    "BertSelfAttention+mask": (lambda: BertSelfAttention(16, 4), lambda: (torch.randn(2, 5, 16), _bert_mask(2, 5))),
}
