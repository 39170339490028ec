"""rtdl — Revisiting Deep Learning Models for Tabular Data (yandex-research/rtdl, Apache License 2.0) —
rtdl/modules.py and rtdl/functional.py (MLP, ResNet and FT-Transformer building blocks).

Forward paths rewritten as annotated top-level functions: module weights (and the
`category_offsets` buffer) are explicit parameters, `nn.Linear` / `nn.Embedding` /
`nn.LayerNorm` are `F.linear` / `F.embedding` / `F.layer_norm`, BatchNorm1d in eval mode is
`F.batch_norm(..., training=False)`, `activation` modules are the default ones of
`make_baseline` / FT-Transformer (ReLU, ReGLU), dropout is dropped. Everything else is kept as
the project writes it.
"""

import math

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorI64Cpu1D,
    TensorI64Cpu2D,
)


# rtdl — rtdl/functional.py, reglu (yandex-research/rtdl)
def reglu(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    """The ReGLU activation function from [1].

    References:

        [1] Noam Shazeer, "GLU Variants Improve Transformer", 2020
    """
    assert x.shape[-1] % 2 == 0
    a, b = x.chunk(2, dim=-1)
    return a * F.relu(b)


# rtdl — rtdl/functional.py, geglu (yandex-research/rtdl)
def geglu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """The GEGLU activation function from [1].

    References:

        [1] Noam Shazeer, "GLU Variants Improve Transformer", 2020
    """
    assert x.shape[-1] % 2 == 0
    a, b = x.chunk(2, dim=-1)
    return a * F.gelu(b)


# rtdl — rtdl/modules.py, NumericalFeatureTokenizer.forward (yandex-research/rtdl)
def numerical_feature_tokenizer(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu2D) -> TensorF32Cpu3D:
    """Perform the forward pass."""
    x = weight[None] * x[..., None]
    if bias is not None:
        x = x + bias[None]
    return x


# rtdl — rtdl/modules.py, CategoricalFeatureTokenizer.forward (yandex-research/rtdl)
def categorical_feature_tokenizer(
    x: TensorI64Cpu2D, category_offsets: TensorI64Cpu1D, embeddings_weight: TensorF32Cpu2D, bias: TensorF32Cpu2D
) -> TensorF32Cpu3D:
    """Perform the forward pass."""
    x = F.embedding(x + category_offsets[None], embeddings_weight)
    if bias is not None:
        x = x + bias[None]
    return x


# rtdl — rtdl/modules.py, AppendCLSToken.forward (yandex-research/rtdl)
def append_cls_token(x: TensorF32Cpu3D, weight: TensorF32Cpu1D) -> TensorF32Cpu3D:
    """Perform the forward pass."""
    assert x.ndim == 3
    return torch.cat([x, weight.view(1, 1, -1).repeat(len(x), 1, 1)], dim=1)


# rtdl — rtdl/modules.py, MLP.forward (two MLP.Block(Linear, ReLU) + MLP.Head) (yandex-research/rtdl)
def mlp(
    x: TensorF32Cpu2D,
    blocks_0_linear_weight: TensorF32Cpu2D,
    blocks_0_linear_bias: TensorF32Cpu1D,
    blocks_1_linear_weight: TensorF32Cpu2D,
    blocks_1_linear_bias: TensorF32Cpu1D,
    head_weight: TensorF32Cpu2D,
    head_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    """Perform the forward pass."""
    # self.blocks(x): MLP.Block.forward = self.dropout(self.activation(self.linear(x)))
    x = F.relu(F.linear(x, blocks_0_linear_weight, blocks_0_linear_bias))
    x = F.relu(F.linear(x, blocks_1_linear_weight, blocks_1_linear_bias))
    x = F.linear(x, head_weight, head_bias)
    return x


# rtdl — rtdl/modules.py, ResNet.Block.forward (BatchNorm1d, ReLU) (yandex-research/rtdl)
def resnet_block(
    x: TensorF32Cpu2D,
    normalization_weight: TensorF32Cpu1D,
    normalization_bias: TensorF32Cpu1D,
    normalization_running_mean: TensorF32Cpu1D,
    normalization_running_var: TensorF32Cpu1D,
    linear_first_weight: TensorF32Cpu2D,
    linear_first_bias: TensorF32Cpu1D,
    linear_second_weight: TensorF32Cpu2D,
    linear_second_bias: TensorF32Cpu1D,
    skip_connection: bool,
) -> TensorF32Cpu2D:
    """Perform the forward pass."""
    x_input = x
    x = F.batch_norm(x, normalization_running_mean, normalization_running_var, normalization_weight, normalization_bias, False, 0.1, 1e-5)
    x = F.linear(x, linear_first_weight, linear_first_bias)
    x = F.relu(x)
    x = F.linear(x, linear_second_weight, linear_second_bias)
    if skip_connection:
        x = x_input + x
    return x


# rtdl — rtdl/modules.py, ResNet.Head.forward (BatchNorm1d, ReLU) (yandex-research/rtdl)
def resnet_head(
    x: TensorF32Cpu2D,
    normalization_weight: TensorF32Cpu1D,
    normalization_bias: TensorF32Cpu1D,
    normalization_running_mean: TensorF32Cpu1D,
    normalization_running_var: TensorF32Cpu1D,
    linear_weight: TensorF32Cpu2D,
    linear_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    """Perform the forward pass."""
    if normalization_weight is not None:
        x = F.batch_norm(x, normalization_running_mean, normalization_running_var, normalization_weight, normalization_bias, False, 0.1, 1e-5)
    x = F.relu(x)
    x = F.linear(x, linear_weight, linear_bias)
    return x


# rtdl — rtdl/modules.py, MultiheadAttention._reshape (yandex-research/rtdl)
def _reshape(x: TensorF32Cpu3D, n_heads: int) -> TensorF32Cpu3D:
    batch_size, n_tokens, d = x.shape
    d_head = d // n_heads
    return (
        x.reshape(batch_size, n_tokens, n_heads, d_head)
        .transpose(1, 2)
        .reshape(batch_size * n_heads, n_tokens, d_head)
    )


# rtdl — rtdl/modules.py, MultiheadAttention.forward (no key/value compression, n_heads > 1);
# returns (x, attention_probs) (yandex-research/rtdl)
def multihead_attention(
    x_q: TensorF32Cpu3D,
    x_kv: TensorF32Cpu3D,
    W_q_weight: TensorF32Cpu2D,
    W_q_bias: TensorF32Cpu1D,
    W_k_weight: TensorF32Cpu2D,
    W_k_bias: TensorF32Cpu1D,
    W_v_weight: TensorF32Cpu2D,
    W_v_bias: TensorF32Cpu1D,
    W_out_weight: TensorF32Cpu2D,
    W_out_bias: TensorF32Cpu1D,
    n_heads: int,
) -> tuple[TensorF32Cpu3D, TensorF32Cpu3D]:
    """Perform the forward pass."""
    q, k, v = F.linear(x_q, W_q_weight, W_q_bias), F.linear(x_kv, W_k_weight, W_k_bias), F.linear(x_kv, W_v_weight, W_v_bias)
    for tensor in [q, k, v]:
        assert tensor.shape[-1] % n_heads == 0

    batch_size = len(q)
    d_head_key = k.shape[-1] // n_heads
    d_head_value = v.shape[-1] // n_heads
    n_q_tokens = q.shape[1]

    q = _reshape(q, n_heads)
    k = _reshape(k, n_heads)
    attention_logits = q @ k.transpose(1, 2) / math.sqrt(d_head_key)
    attention_probs = F.softmax(attention_logits, dim=-1)
    x = attention_probs @ _reshape(v, n_heads)
    x = (
        x.reshape(batch_size, n_heads, n_q_tokens, d_head_value)
        .transpose(1, 2)
        .reshape(batch_size, n_q_tokens, n_heads * d_head_value)
    )
    if W_out_weight is not None:
        x = F.linear(x, W_out_weight, W_out_bias)
    return x, attention_probs


# rtdl — rtdl/modules.py, Transformer.FFN.forward (activation ReGLU) (yandex-research/rtdl)
def ffn(
    x: TensorF32Cpu3D,
    linear_first_weight: TensorF32Cpu2D,
    linear_first_bias: TensorF32Cpu1D,
    linear_second_weight: TensorF32Cpu2D,
    linear_second_bias: TensorF32Cpu1D,
) -> TensorF32Cpu3D:
    """Perform the forward pass."""
    x = F.linear(x, linear_first_weight, linear_first_bias)
    x = reglu(x)
    x = F.linear(x, linear_second_weight, linear_second_bias)
    return x


# rtdl — rtdl/modules.py, Transformer.Head.forward (LayerNorm, ReLU) (yandex-research/rtdl)
def transformer_head(
    x: TensorF32Cpu3D,
    normalization_weight: TensorF32Cpu1D,
    normalization_bias: TensorF32Cpu1D,
    linear_weight: TensorF32Cpu2D,
    linear_bias: TensorF32Cpu1D,
    d_in: int,
) -> TensorF32Cpu2D:
    """Perform the forward pass."""
    x = x[:, -1]
    x = F.layer_norm(x, (d_in,), normalization_weight, normalization_bias, 1e-5)
    x = F.relu(x)
    x = F.linear(x, linear_weight, linear_bias)
    return x


INPUTS = {
    "reglu": lambda: (torch.randn(2, 5, 16),),
    "geglu": lambda: (torch.randn(4, 16),),
    "numerical_feature_tokenizer": lambda: (torch.randn(4, 3), torch.randn(3, 8), torch.randn(3, 8)),
    "categorical_feature_tokenizer": lambda: (
        torch.stack([torch.randint(0, 3, (4,)), torch.randint(0, 5, (4,))], dim=1), torch.tensor([0, 3]), torch.randn(8, 8), torch.randn(2, 8),
    ),
    "append_cls_token": lambda: (torch.randn(4, 5, 8), torch.randn(8)),
    "mlp": lambda: (torch.randn(4, 6), torch.randn(32, 6), torch.randn(32), torch.randn(32, 32), torch.randn(32), torch.randn(1, 32), torch.randn(1)),
    "resnet_block": lambda: (
        torch.randn(4, 16), torch.randn(16), torch.randn(16), torch.randn(16), torch.rand(16) + 0.5,
        torch.randn(32, 16), torch.randn(32), torch.randn(16, 32), torch.randn(16), True,
    ),
    "resnet_head": lambda: (
        torch.randn(4, 16), torch.randn(16), torch.randn(16), torch.randn(16), torch.rand(16) + 0.5, torch.randn(3, 16), torch.randn(3),
    ),
    "_reshape": lambda: (torch.randn(2, 5, 16), 2),
    "multihead_attention": lambda: (
        torch.randn(2, 5, 16), torch.randn(2, 5, 16),
        torch.randn(16, 16), torch.randn(16), torch.randn(16, 16), torch.randn(16), torch.randn(16, 16), torch.randn(16),
        torch.randn(16, 16), torch.randn(16), 2,
    ),
    "ffn": lambda: (torch.randn(2, 5, 16), torch.randn(42, 16), torch.randn(42), torch.randn(16, 21), torch.randn(16)),
    "transformer_head": lambda: (torch.randn(2, 5, 16), torch.randn(16), torch.randn(16), torch.randn(1, 16), torch.randn(1), 16),
}
