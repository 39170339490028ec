"""Speech encoders and the encoder-side embedding helpers around them: Hugging Face Transformers
(huggingface/transformers, Apache License 2.0) — Wav2Vec2
(src/transformers/models/wav2vec2/modeling_wav2vec2.py), RoBERTa's position ids
(src/transformers/models/roberta/modeling_roberta.py), DistilBERT's embeddings
(src/transformers/models/distilbert/modeling_distilbert.py), ViT's position-encoding
interpolation (src/transformers/models/vit/modeling_vit.py) with the `torch_int` helper it calls
(src/transformers/utils/generic.py); torchaudio (pytorch/audio, BSD 2-Clause License) — the
Conformer (src/torchaudio/models/conformer.py).

Forward paths rewritten as annotated top-level functions: module weights (and the
`position_ids` / `position_embeddings` buffers and parameters, BatchNorm running statistics)
are explicit parameters, `nn.Linear` / `nn.Conv1d` / `nn.LayerNorm` / `nn.GroupNorm` /
`nn.Embedding` calls are `F.linear` / `F.conv1d` / `F.layer_norm` / `F.group_norm` /
`F.embedding`, `nn.BatchNorm1d` in eval mode is `F.batch_norm(..., False, 0.1, 1e-5)`,
`nn.GLU(dim=1)` is `F.glu(x, dim=1)`, `nn.SiLU` is `F.silu`, `ACT2FN["gelu"]` is `F.gelu`,
the `nn.Sequential` containers are written out in order, dropout (identity in eval mode) is
dropped, self-method calls are calls of the functions of this file. Wav2Vec2's positional
convolution is wrapped in weight norm (`weight_norm(self.conv, name="weight", dim=2)`); the
weight it computes (`weight_g * weight_v / ||weight_v||`) is passed already folded as a plain
conv weight. torchaudio's `nn.MultiheadAttention(input_dim, num_heads)` (sequence-first, so
never its fast path) is the `F.multi_head_attention_forward` call it makes, with its
`in_proj_weight` / `in_proj_bias` and `out_proj` weights explicit. Wav2Vec2's conv kernels and
strides (`config.conv_kernel`, `config.conv_stride`, seven entries each) are written
`list[int, int, int, int, int, int, int]`, the precise type `torchlower.compile` specialises a
`List[int]` to. Configuration is fixed as named in the comment above each function (Wav2Vec2:
the wav2vec2-base config, `conv_bias=False`, `feat_extract_activation="gelu"`,
`hidden_act="gelu"`; the eager attention). DistilBERT's `create_sinusoidal_embeddings` is not
included: it is an init-time helper that builds the table in numpy (`np.array` of a nested
comprehension, `np.power`, `np.sin` / `np.cos`, `torch.FloatTensor(...)` written into the
weight), with no torch form to keep. Everything else is kept as the projects write it.
"""

from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from torchlower.types import (
    TensorBoolCpu2D,
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu1D,
    TensorI64Cpu2D,
)


# Transformers — src/transformers/models/wav2vec2/modeling_wav2vec2.py, Wav2Vec2GroupNormConvLayer.forward
# (layer 0 of feat_extract_norm="group": GroupNorm(num_groups=out_conv_dim, num_channels=out_conv_dim),
# conv_bias=False, feat_extract_activation="gelu") (huggingface/transformers)
def wav2vec2_group_norm_conv_layer(
    hidden_states: TensorF32Cpu3D,
    conv_weight: TensorF32Cpu3D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    conv_stride: int,
    out_conv_dim: int,
) -> TensorF32Cpu3D:
    hidden_states = F.conv1d(hidden_states, conv_weight, None, stride=conv_stride)
    hidden_states = F.group_norm(hidden_states, out_conv_dim, layer_norm_weight, layer_norm_bias, 1e-5)
    hidden_states = F.gelu(hidden_states)
    return hidden_states


# Transformers — src/transformers/models/wav2vec2/modeling_wav2vec2.py, Wav2Vec2LayerNormConvLayer.forward
# (feat_extract_norm="layer", conv_bias=True, feat_extract_activation="gelu") (huggingface/transformers)
def wav2vec2_layer_norm_conv_layer(
    hidden_states: TensorF32Cpu3D,
    conv_weight: TensorF32Cpu3D,
    conv_bias: TensorF32Cpu1D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    conv_stride: int,
    out_conv_dim: int,
) -> TensorF32Cpu3D:
    hidden_states = F.conv1d(hidden_states, conv_weight, conv_bias, stride=conv_stride)

    hidden_states = hidden_states.transpose(-2, -1)
    hidden_states = F.layer_norm(hidden_states, (out_conv_dim,), layer_norm_weight, layer_norm_bias, 1e-5)
    hidden_states = hidden_states.transpose(-2, -1)

    hidden_states = F.gelu(hidden_states)
    return hidden_states


# Transformers — src/transformers/models/wav2vec2/modeling_wav2vec2.py, Wav2Vec2SamePadLayer.forward
# (`self.num_pad_remove = 1 if num_conv_pos_embeddings % 2 == 0 else 0` from the constructor) (huggingface/transformers)
def wav2vec2_same_pad_layer(hidden_states: TensorF32Cpu3D, num_pad_remove: int) -> TensorF32Cpu3D:
    if num_pad_remove > 0:
        hidden_states = hidden_states[:, :, :-num_pad_remove]
    return hidden_states


# Transformers — src/transformers/models/wav2vec2/modeling_wav2vec2.py, Wav2Vec2PositionalConvEmbedding.forward
# (weight norm folded into `conv_weight`; the SamePadLayer built from num_conv_pos_embeddings;
# feat_extract_activation="gelu") (huggingface/transformers)
def wav2vec2_positional_conv_embedding(
    hidden_states: TensorF32Cpu3D,
    conv_weight: TensorF32Cpu3D,
    conv_bias: TensorF32Cpu1D,
    num_conv_pos_embeddings: int,
    num_conv_pos_embedding_groups: int,
) -> TensorF32Cpu3D:
    hidden_states = hidden_states.transpose(1, 2)

    hidden_states = F.conv1d(
        hidden_states,
        conv_weight,
        conv_bias,
        padding=num_conv_pos_embeddings // 2,
        groups=num_conv_pos_embedding_groups,
    )
    hidden_states = wav2vec2_same_pad_layer(hidden_states, 1 if num_conv_pos_embeddings % 2 == 0 else 0)
    hidden_states = F.gelu(hidden_states)

    hidden_states = hidden_states.transpose(1, 2)
    return hidden_states


# Transformers — src/transformers/models/wav2vec2/modeling_wav2vec2.py, Wav2Vec2FeatureProjection.forward
# (LayerNorm over config.conv_dim[-1]) (huggingface/transformers)
def wav2vec2_feature_projection(
    hidden_states: TensorF32Cpu3D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    projection_weight: TensorF32Cpu2D,
    projection_bias: TensorF32Cpu1D,
    conv_dim: int,
    layer_norm_eps: float,
) -> tuple[TensorF32Cpu3D, TensorF32Cpu3D]:
    # non-projected hidden states are needed for quantization
    norm_hidden_states = F.layer_norm(hidden_states, (conv_dim,), layer_norm_weight, layer_norm_bias, layer_norm_eps)
    hidden_states = F.linear(norm_hidden_states, projection_weight, projection_bias)
    return hidden_states, norm_hidden_states


# Transformers — src/transformers/models/wav2vec2/modeling_wav2vec2.py, Wav2Vec2FeedForward.forward
# (hidden_act="gelu") (huggingface/transformers)
def wav2vec2_feed_forward(
    hidden_states: TensorF32Cpu3D,
    intermediate_dense_weight: TensorF32Cpu2D,
    intermediate_dense_bias: TensorF32Cpu1D,
    output_dense_weight: TensorF32Cpu2D,
    output_dense_bias: TensorF32Cpu1D,
) -> TensorF32Cpu3D:
    hidden_states = F.linear(hidden_states, intermediate_dense_weight, intermediate_dense_bias)
    hidden_states = F.gelu(hidden_states)

    hidden_states = F.linear(hidden_states, output_dense_weight, output_dense_bias)
    return hidden_states


# Transformers — src/transformers/models/wav2vec2/modeling_wav2vec2.py, Wav2Vec2Attention._shape (huggingface/transformers)
def wav2vec2_attention_shape(tensor: TensorF32Cpu3D, seq_len: int, bsz: int, num_heads: int, head_dim: int) -> TensorF32Cpu4D:
    return tensor.view(bsz, seq_len, num_heads, head_dim).transpose(1, 2).contiguous()


# Transformers — src/transformers/models/wav2vec2/modeling_wav2vec2.py, Wav2Vec2Attention.forward (eager, copied
# from BartAttention; encoder self-attention: no key_value_states, no past_key_value, is_decoder=False, no
# layer_head_mask, output_attentions=True; the `past_key_value` it returns, None here, is left out)
# (huggingface/transformers)
def wav2vec2_attention(
    hidden_states: TensorF32Cpu3D,
    attention_mask: TensorF32Cpu4D,
    q_proj_weight: TensorF32Cpu2D,
    q_proj_bias: TensorF32Cpu1D,
    k_proj_weight: TensorF32Cpu2D,
    k_proj_bias: TensorF32Cpu1D,
    v_proj_weight: TensorF32Cpu2D,
    v_proj_bias: TensorF32Cpu1D,
    out_proj_weight: TensorF32Cpu2D,
    out_proj_bias: TensorF32Cpu1D,
    embed_dim: int,
    num_heads: int,
) -> tuple[TensorF32Cpu3D, TensorF32Cpu4D]:
    """Input shape: Batch x Time x Channel"""
    # from the constructor
    head_dim = embed_dim // num_heads
    scaling = head_dim**-0.5

    bsz, tgt_len, _ = hidden_states.size()

    # get query proj
    query_states = F.linear(hidden_states, q_proj_weight, q_proj_bias) * scaling
    # self_attention
    key_states = wav2vec2_attention_shape(F.linear(hidden_states, k_proj_weight, k_proj_bias), -1, bsz, num_heads, head_dim)
    value_states = wav2vec2_attention_shape(F.linear(hidden_states, v_proj_weight, v_proj_bias), -1, bsz, num_heads, head_dim)

    proj_shape = (bsz * num_heads, -1, head_dim)
    query_states = wav2vec2_attention_shape(query_states, tgt_len, bsz, num_heads, head_dim).view(*proj_shape)
    key_states = key_states.reshape(*proj_shape)
    value_states = value_states.reshape(*proj_shape)

    src_len = key_states.size(1)
    attn_weights = torch.bmm(query_states, key_states.transpose(1, 2))

    if attn_weights.size() != (bsz * num_heads, tgt_len, src_len):
        raise ValueError(
            f"Attention weights should be of size {(bsz * num_heads, tgt_len, src_len)}, but is"
            f" {attn_weights.size()}"
        )

    if attention_mask is not None:
        if attention_mask.size() != (bsz, 1, tgt_len, src_len):
            raise ValueError(
                f"Attention mask should be of size {(bsz, 1, tgt_len, src_len)}, but is {attention_mask.size()}"
            )
        attn_weights = attn_weights.view(bsz, num_heads, tgt_len, src_len) + attention_mask
        attn_weights = attn_weights.view(bsz * num_heads, tgt_len, src_len)

    attn_weights = nn.functional.softmax(attn_weights, dim=-1)

    # this operation is a bit awkward, but it's required to
    # make sure that attn_weights keeps its gradient.
    # In order to do so, attn_weights have to be reshaped
    # twice and have to be reused in the following
    attn_weights_reshaped = attn_weights.view(bsz, num_heads, tgt_len, src_len)
    attn_weights = attn_weights_reshaped.view(bsz * num_heads, tgt_len, src_len)

    # (attn_probs = dropout(attn_weights): the identity in eval mode)
    attn_output = torch.bmm(attn_weights, value_states)

    if attn_output.size() != (bsz * num_heads, tgt_len, head_dim):
        raise ValueError(
            f"`attn_output` should be of size {(bsz * num_heads, tgt_len, head_dim)}, but is"
            f" {attn_output.size()}"
        )

    attn_output = attn_output.view(bsz, num_heads, tgt_len, head_dim)
    attn_output = attn_output.transpose(1, 2)

    # Use the `embed_dim` from the config (stored in the class) rather than `hidden_state` because `attn_output` can be
    # partitioned across GPUs when using tensor-parallelism.
    attn_output = attn_output.reshape(bsz, tgt_len, embed_dim)

    attn_output = F.linear(attn_output, out_proj_weight, out_proj_bias)

    return attn_output, attn_weights_reshaped


# Transformers — src/transformers/models/wav2vec2/modeling_wav2vec2.py, Wav2Vec2PreTrainedModel._get_feat_extract_output_lengths
# (`add_adapter` passed explicitly, so the `self.config.add_adapter if add_adapter is None` default is not
# taken; config.conv_kernel / conv_stride / num_adapter_layers / adapter_stride as parameters) (huggingface/transformers)
def wav2vec2_get_feat_extract_output_lengths(
    input_lengths: TensorI64Cpu1D,
    conv_kernel: list[int, int, int, int, int, int, int],
    conv_stride: list[int, int, int, int, int, int, int],
    num_adapter_layers: int,
    adapter_stride: int,
    add_adapter: bool,
) -> TensorI64Cpu1D:
    """
    Computes the output length of the convolutional layers
    """

    def _conv_out_length(input_length, kernel_size, stride):
        # 1D convolutional layer output length formula taken
        # from https://pytorch.org/docs/stable/generated/torch.nn.Conv1d.html
        return torch.div(input_length - kernel_size, stride, rounding_mode="floor") + 1

    for kernel_size, stride in zip(conv_kernel, conv_stride):
        input_lengths = _conv_out_length(input_lengths, kernel_size, stride)

    if add_adapter:
        for _ in range(num_adapter_layers):
            input_lengths = _conv_out_length(input_lengths, 1, adapter_stride)

    return input_lengths


# Transformers — src/transformers/models/wav2vec2/modeling_wav2vec2.py, Wav2Vec2PreTrainedModel._get_feature_vector_attention_mask
# (huggingface/transformers)
def wav2vec2_get_feature_vector_attention_mask(
    feature_vector_length: int,
    attention_mask: TensorI64Cpu2D,
    conv_kernel: list[int, int, int, int, int, int, int],
    conv_stride: list[int, int, int, int, int, int, int],
    num_adapter_layers: int,
    adapter_stride: int,
    add_adapter: bool,
) -> TensorBoolCpu2D:
    # Effectively attention_mask.sum(-1), but not inplace to be able to run
    # on inference mode.
    non_padded_lengths = attention_mask.cumsum(dim=-1)[:, -1]

    output_lengths = wav2vec2_get_feat_extract_output_lengths(
        non_padded_lengths, conv_kernel, conv_stride, num_adapter_layers, adapter_stride, add_adapter=add_adapter
    )
    output_lengths = output_lengths.to(torch.long)

    batch_size = attention_mask.shape[0]

    attention_mask = torch.zeros(
        (batch_size, feature_vector_length), dtype=attention_mask.dtype, device=attention_mask.device
    )
    # these two operations makes sure that all values before the output lengths idxs are attended to
    attention_mask[(torch.arange(attention_mask.shape[0], device=attention_mask.device), output_lengths - 1)] = 1
    attention_mask = attention_mask.flip([-1]).cumsum(-1).flip([-1]).bool()
    return attention_mask


# Transformers — src/transformers/models/roberta/modeling_roberta.py, create_position_ids_from_input_ids (huggingface/transformers)
def create_position_ids_from_input_ids(
    input_ids: TensorI64Cpu2D, padding_idx: int, past_key_values_length: int = 0
) -> TensorI64Cpu2D:
    """
    Replace non-padding symbols with their position numbers. Position numbers begin at padding_idx+1. Padding symbols
    are ignored. This is modified from fairseq's `utils.make_positions`.

    Args:
        x: torch.Tensor x:

    Returns: torch.Tensor
    """
    # The series of casts and type-conversions here are carefully balanced to both work with ONNX export and XLA.
    mask = input_ids.ne(padding_idx).int()
    incremental_indices = (torch.cumsum(mask, dim=1).type_as(mask) + past_key_values_length) * mask
    return incremental_indices.long() + padding_idx


# Transformers — src/transformers/models/distilbert/modeling_distilbert.py, Embeddings.forward (the registered
# `position_ids` buffer is present, so its branch is taken; learned positions, sinusoidal_pos_embds=False)
# (huggingface/transformers)
def distilbert_embeddings(
    input_ids: TensorI64Cpu2D,
    position_ids_buffer: TensorI64Cpu2D,
    word_embeddings_weight: TensorF32Cpu2D,
    position_embeddings_weight: TensorF32Cpu2D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    dim: int,
) -> TensorF32Cpu3D:
    """
    Parameters:
        input_ids: torch.tensor(bs, max_seq_length) The token ids to embed.
    Returns: torch.tensor(bs, max_seq_length, dim) The embedded tokens (plus position embeddings, no token_type
    embeddings)
    """
    seq_length = input_ids.size(1)

    # Setting the position-ids to the registered buffer in constructor, it helps
    # when tracing the model without passing position-ids, solves
    # isues similar to issue #5664
    position_ids = position_ids_buffer[:, :seq_length]

    word_embeddings = F.embedding(input_ids, word_embeddings_weight)  # (bs, max_seq_length, dim)
    position_embeddings = F.embedding(position_ids, position_embeddings_weight)  # (bs, max_seq_length, dim)

    embeddings = word_embeddings + position_embeddings  # (bs, max_seq_length, dim)
    embeddings = F.layer_norm(embeddings, (dim,), layer_norm_weight, layer_norm_bias, 1e-12)  # (bs, max_seq_length, dim)
    return embeddings


# Transformers — src/transformers/utils/generic.py, torch_int (torch is imported, so the leading
# `if not is_torch_available(): return int(x)` is not taken) (huggingface/transformers)
def torch_int(x: float) -> int:
    """
    Casts an input to a torch int64 tensor if we are in a tracing context, otherwise to a Python int.
    """
    import torch

    return x.to(torch.int64) if torch.jit.is_tracing() and isinstance(x, torch.Tensor) else int(x)


# Transformers — src/transformers/models/vit/modeling_vit.py, ViTEmbeddings.interpolate_pos_encoding (huggingface/transformers)
def vit_interpolate_pos_encoding(
    embeddings: TensorF32Cpu3D, position_embeddings: TensorF32Cpu3D, height: int, width: int, patch_size: int
) -> TensorF32Cpu3D:
    """
    This method allows to interpolate the pre-trained position encodings, to be able to use the model on higher resolution
    images. This method is also adapted to support torch.jit tracing.

    Adapted from:
    - https://github.com/facebookresearch/dino/blob/de9ee3df6cf39fac952ab558447af1fa1365362a/vision_transformer.py#L174-L194, and
    - https://github.com/facebookresearch/dinov2/blob/e1277af2ba9496fbadf7aec6eba56e8d882d1e35/dinov2/models/vision_transformer.py#L179-L211
    """

    num_patches = embeddings.shape[1] - 1
    num_positions = position_embeddings.shape[1] - 1

    # always interpolate when tracing to ensure the exported model works for dynamic input shapes
    if not torch.jit.is_tracing() and num_patches == num_positions and height == width:
        return position_embeddings

    class_pos_embed = position_embeddings[:, :1]
    patch_pos_embed = position_embeddings[:, 1:]

    dim = embeddings.shape[-1]

    new_height = height // patch_size
    new_width = width // patch_size

    sqrt_num_positions = torch_int(num_positions**0.5)
    patch_pos_embed = patch_pos_embed.reshape(1, sqrt_num_positions, sqrt_num_positions, dim)
    patch_pos_embed = patch_pos_embed.permute(0, 3, 1, 2)

    patch_pos_embed = nn.functional.interpolate(
        patch_pos_embed,
        size=(new_height, new_width),
        mode="bicubic",
        align_corners=False,
    )

    patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)

    return torch.cat((class_pos_embed, patch_pos_embed), dim=1)


# torchaudio — src/torchaudio/models/conformer.py, _lengths_to_padding_mask (pytorch/audio)
def _lengths_to_padding_mask(lengths: TensorI64Cpu1D) -> TensorBoolCpu2D:
    batch_size = lengths.shape[0]
    max_length = int(torch.max(lengths).item())
    padding_mask = torch.arange(max_length, device=lengths.device, dtype=lengths.dtype).expand(
        batch_size, max_length
    ) >= lengths.unsqueeze(1)
    return padding_mask


# torchaudio — src/torchaudio/models/conformer.py, _ConvolutionModule.forward (bias=True as ConformerLayer builds
# it, use_group_norm=False: BatchNorm1d in eval mode; the nn.Sequential written out) (pytorch/audio)
def conformer_convolution_module(
    input: TensorF32Cpu3D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    pointwise_conv1_weight: TensorF32Cpu3D,
    pointwise_conv1_bias: TensorF32Cpu1D,
    depthwise_conv_weight: TensorF32Cpu3D,
    depthwise_conv_bias: TensorF32Cpu1D,
    batch_norm_running_mean: TensorF32Cpu1D,
    batch_norm_running_var: TensorF32Cpu1D,
    batch_norm_weight: TensorF32Cpu1D,
    batch_norm_bias: TensorF32Cpu1D,
    pointwise_conv2_weight: TensorF32Cpu3D,
    pointwise_conv2_bias: TensorF32Cpu1D,
    input_dim: int,
    num_channels: int,
    depthwise_kernel_size: int,
) -> TensorF32Cpu3D:
    r"""
    Args:
        input (torch.Tensor): with shape `(B, T, D)`.

    Returns:
        torch.Tensor: output, with shape `(B, T, D)`.
    """
    x = F.layer_norm(input, (input_dim,), layer_norm_weight, layer_norm_bias, 1e-5)
    x = x.transpose(1, 2)
    # self.sequential(x)
    x = F.conv1d(x, pointwise_conv1_weight, pointwise_conv1_bias, stride=1, padding=0)
    x = F.glu(x, dim=1)
    x = F.conv1d(
        x,
        depthwise_conv_weight,
        depthwise_conv_bias,
        stride=1,
        padding=(depthwise_kernel_size - 1) // 2,
        groups=num_channels,
    )
    x = F.batch_norm(x, batch_norm_running_mean, batch_norm_running_var, batch_norm_weight, batch_norm_bias, False, 0.1, 1e-5)
    x = F.silu(x)
    x = F.conv1d(x, pointwise_conv2_weight, pointwise_conv2_bias, stride=1, padding=0)
    return x.transpose(1, 2)


# torchaudio — src/torchaudio/models/conformer.py, _FeedForwardModule.forward (the nn.Sequential of LayerNorm,
# Linear, SiLU, Linear written out) (pytorch/audio)
def conformer_feed_forward_module(
    input: TensorF32Cpu3D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    linear1_weight: TensorF32Cpu2D,
    linear1_bias: TensorF32Cpu1D,
    linear2_weight: TensorF32Cpu2D,
    linear2_bias: TensorF32Cpu1D,
    input_dim: int,
) -> TensorF32Cpu3D:
    r"""
    Args:
        input (torch.Tensor): with shape `(*, D)`.

    Returns:
        torch.Tensor: output, with shape `(*, D)`.
    """
    return F.linear(
        F.silu(F.linear(F.layer_norm(input, (input_dim,), layer_norm_weight, layer_norm_bias, 1e-5), linear1_weight, linear1_bias)),
        linear2_weight,
        linear2_bias,
    )


# torchaudio — src/torchaudio/models/conformer.py, ConformerLayer._apply_convolution (pytorch/audio)
def conformer_apply_convolution(
    input: TensorF32Cpu3D,
    layer_norm_weight: TensorF32Cpu1D,
    layer_norm_bias: TensorF32Cpu1D,
    pointwise_conv1_weight: TensorF32Cpu3D,
    pointwise_conv1_bias: TensorF32Cpu1D,
    depthwise_conv_weight: TensorF32Cpu3D,
    depthwise_conv_bias: TensorF32Cpu1D,
    batch_norm_running_mean: TensorF32Cpu1D,
    batch_norm_running_var: TensorF32Cpu1D,
    batch_norm_weight: TensorF32Cpu1D,
    batch_norm_bias: TensorF32Cpu1D,
    pointwise_conv2_weight: TensorF32Cpu3D,
    pointwise_conv2_bias: TensorF32Cpu1D,
    input_dim: int,
    depthwise_conv_kernel_size: int,
) -> TensorF32Cpu3D:
    residual = input
    input = input.transpose(0, 1)
    input = conformer_convolution_module(
        input,
        layer_norm_weight, layer_norm_bias,
        pointwise_conv1_weight, pointwise_conv1_bias,
        depthwise_conv_weight, depthwise_conv_bias,
        batch_norm_running_mean, batch_norm_running_var, batch_norm_weight, batch_norm_bias,
        pointwise_conv2_weight, pointwise_conv2_bias,
        input_dim, input_dim, depthwise_conv_kernel_size,
    )
    input = input.transpose(0, 1)
    input = residual + input
    return input


# torchaudio — src/torchaudio/models/conformer.py, ConformerLayer.forward (self_attn: nn.MultiheadAttention(input_dim,
# num_attention_heads), sequence-first, as the F.multi_head_attention_forward call it makes in eval mode) (pytorch/audio)
def conformer_layer(
    input: TensorF32Cpu3D,
    key_padding_mask: Optional[TensorBoolCpu2D],
    ffn1_layer_norm_weight: TensorF32Cpu1D,
    ffn1_layer_norm_bias: TensorF32Cpu1D,
    ffn1_linear1_weight: TensorF32Cpu2D,
    ffn1_linear1_bias: TensorF32Cpu1D,
    ffn1_linear2_weight: TensorF32Cpu2D,
    ffn1_linear2_bias: TensorF32Cpu1D,
    self_attn_layer_norm_weight: TensorF32Cpu1D,
    self_attn_layer_norm_bias: TensorF32Cpu1D,
    in_proj_weight: TensorF32Cpu2D,
    in_proj_bias: TensorF32Cpu1D,
    out_proj_weight: TensorF32Cpu2D,
    out_proj_bias: TensorF32Cpu1D,
    conv_layer_norm_weight: TensorF32Cpu1D,
    conv_layer_norm_bias: TensorF32Cpu1D,
    pointwise_conv1_weight: TensorF32Cpu3D,
    pointwise_conv1_bias: TensorF32Cpu1D,
    depthwise_conv_weight: TensorF32Cpu3D,
    depthwise_conv_bias: TensorF32Cpu1D,
    batch_norm_running_mean: TensorF32Cpu1D,
    batch_norm_running_var: TensorF32Cpu1D,
    batch_norm_weight: TensorF32Cpu1D,
    batch_norm_bias: TensorF32Cpu1D,
    pointwise_conv2_weight: TensorF32Cpu3D,
    pointwise_conv2_bias: TensorF32Cpu1D,
    ffn2_layer_norm_weight: TensorF32Cpu1D,
    ffn2_layer_norm_bias: TensorF32Cpu1D,
    ffn2_linear1_weight: TensorF32Cpu2D,
    ffn2_linear1_bias: TensorF32Cpu1D,
    ffn2_linear2_weight: TensorF32Cpu2D,
    ffn2_linear2_bias: TensorF32Cpu1D,
    final_layer_norm_weight: TensorF32Cpu1D,
    final_layer_norm_bias: TensorF32Cpu1D,
    input_dim: int,
    num_attention_heads: int,
    depthwise_conv_kernel_size: int,
    convolution_first: bool,
) -> TensorF32Cpu3D:
    r"""
    Args:
        input (torch.Tensor): input, with shape `(T, B, D)`.
        key_padding_mask (torch.Tensor or None): key padding mask to use in self attention layer.

    Returns:
        torch.Tensor: output, with shape `(T, B, D)`.
    """
    residual = input
    x = conformer_feed_forward_module(
        input, ffn1_layer_norm_weight, ffn1_layer_norm_bias, ffn1_linear1_weight, ffn1_linear1_bias,
        ffn1_linear2_weight, ffn1_linear2_bias, input_dim,
    )
    x = x * 0.5 + residual

    if convolution_first:
        x = conformer_apply_convolution(
            x, conv_layer_norm_weight, conv_layer_norm_bias, pointwise_conv1_weight, pointwise_conv1_bias,
            depthwise_conv_weight, depthwise_conv_bias, batch_norm_running_mean, batch_norm_running_var,
            batch_norm_weight, batch_norm_bias, pointwise_conv2_weight, pointwise_conv2_bias,
            input_dim, depthwise_conv_kernel_size,
        )

    residual = x
    x = F.layer_norm(x, (input_dim,), self_attn_layer_norm_weight, self_attn_layer_norm_bias, 1e-5)
    x, _ = F.multi_head_attention_forward(
        x, x, x, input_dim, num_attention_heads,
        in_proj_weight, in_proj_bias,
        None, None, False,
        0.0, out_proj_weight, out_proj_bias,
        training=False,
        key_padding_mask=key_padding_mask,
        need_weights=False,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    )
    x = x + residual

    if not convolution_first:
        x = conformer_apply_convolution(
            x, conv_layer_norm_weight, conv_layer_norm_bias, pointwise_conv1_weight, pointwise_conv1_bias,
            depthwise_conv_weight, depthwise_conv_bias, batch_norm_running_mean, batch_norm_running_var,
            batch_norm_weight, batch_norm_bias, pointwise_conv2_weight, pointwise_conv2_bias,
            input_dim, depthwise_conv_kernel_size,
        )

    residual = x
    x = conformer_feed_forward_module(
        x, ffn2_layer_norm_weight, ffn2_layer_norm_bias, ffn2_linear1_weight, ffn2_linear1_bias,
        ffn2_linear2_weight, ffn2_linear2_bias, input_dim,
    )
    x = x * 0.5 + residual

    x = F.layer_norm(x, (input_dim,), final_layer_norm_weight, final_layer_norm_bias, 1e-5)
    return x


INPUTS = {
    "wav2vec2_group_norm_conv_layer": lambda: (
        torch.randn(2, 1, 400), torch.randn(8, 1, 10), torch.randn(8), torch.randn(8), 5, 8,
    ),
    "wav2vec2_layer_norm_conv_layer": lambda: (
        torch.randn(2, 8, 79), torch.randn(8, 8, 3), torch.randn(8), torch.randn(8), torch.randn(8), 2, 8,
    ),
    "wav2vec2_same_pad_layer": lambda: (torch.randn(2, 16, 11), 1),
    "wav2vec2_positional_conv_embedding": lambda: (torch.randn(2, 10, 16), torch.randn(16, 4, 4), torch.randn(16), 4, 4),
    "wav2vec2_feature_projection": lambda: (
        torch.randn(2, 10, 8), torch.randn(8), torch.randn(8), torch.randn(16, 8), torch.randn(16), 8, 1e-5,
    ),
    "wav2vec2_feed_forward": lambda: (torch.randn(2, 10, 16), torch.randn(32, 16), torch.randn(32), torch.randn(16, 32), torch.randn(16)),
    "wav2vec2_attention_shape": lambda: (torch.randn(2, 10, 16), -1, 2, 2, 8),
    "wav2vec2_attention": lambda: (
        torch.randn(2, 10, 16),
        torch.cat([torch.zeros(2, 1, 10, 8), torch.full((2, 1, 10, 2), torch.finfo(torch.float32).min)], dim=-1),
        torch.randn(16, 16), torch.randn(16), torch.randn(16, 16), torch.randn(16),
        torch.randn(16, 16), torch.randn(16), torch.randn(16, 16), torch.randn(16),
        16, 2,
    ),
    "wav2vec2_get_feat_extract_output_lengths": lambda: (
        torch.tensor([16000, 12345, 800]), [10, 3, 3, 3, 3, 2, 2], [5, 2, 2, 2, 2, 2, 2], 3, 2, False,
    ),
    "wav2vec2_get_feature_vector_attention_mask": lambda: (
        2,
        torch.cat([torch.ones(2, 640, dtype=torch.long), torch.tensor([[1], [0]]).expand(2, 160)], dim=1),
        [10, 3, 3, 3, 3, 2, 2], [5, 2, 2, 2, 2, 2, 2], 3, 2, False,
    ),
    "create_position_ids_from_input_ids": lambda: (torch.tensor([[0, 5, 6, 7, 2, 1, 1], [0, 8, 9, 2, 1, 1, 1]]), 1, 0),
    "distilbert_embeddings": lambda: (
        torch.randint(0, 50, (2, 7)), torch.arange(12).expand((1, -1)), torch.randn(50, 16), torch.randn(12, 16),
        torch.randn(16), torch.randn(16), 16,
    ),
    "torch_int": lambda: (16**0.5,),
    "vit_interpolate_pos_encoding": lambda: (torch.randn(2, 25, 8), torch.randn(1, 17, 8), 24, 16, 4),
    "_lengths_to_padding_mask": lambda: (torch.tensor([6, 4, 5]),),
    "conformer_convolution_module": lambda: (
        torch.randn(2, 6, 16),
        torch.randn(16), torch.randn(16), torch.randn(32, 16, 1), torch.randn(32), torch.randn(16, 1, 3), torch.randn(16),
        torch.randn(16), torch.rand(16) + 0.5, torch.randn(16), torch.randn(16), torch.randn(16, 16, 1), torch.randn(16),
        16, 16, 3,
    ),
    "conformer_feed_forward_module": lambda: (
        torch.randn(6, 2, 16), torch.randn(16), torch.randn(16), torch.randn(32, 16), torch.randn(32), torch.randn(16, 32), torch.randn(16), 16,
    ),
    "conformer_apply_convolution": lambda: (
        torch.randn(6, 2, 16),
        torch.randn(16), torch.randn(16), torch.randn(32, 16, 1), torch.randn(32), torch.randn(16, 1, 3), torch.randn(16),
        torch.randn(16), torch.rand(16) + 0.5, torch.randn(16), torch.randn(16), torch.randn(16, 16, 1), torch.randn(16),
        16, 3,
    ),
    "conformer_layer": lambda: (
        torch.randn(6, 2, 16),
        torch.tensor([[False] * 6, [False] * 4 + [True] * 2]),
        torch.randn(16), torch.randn(16), torch.randn(32, 16), torch.randn(32), torch.randn(16, 32), torch.randn(16),
        torch.randn(16), torch.randn(16),
        torch.randn(48, 16), torch.randn(48), torch.randn(16, 16), torch.randn(16),
        torch.randn(16), torch.randn(16), torch.randn(32, 16, 1), torch.randn(32), torch.randn(16, 1, 3), torch.randn(16),
        torch.randn(16), torch.rand(16) + 0.5, torch.randn(16), torch.randn(16), torch.randn(16, 16, 1), torch.randn(16),
        torch.randn(16), torch.randn(16), torch.randn(32, 16), torch.randn(32), torch.randn(16, 32), torch.randn(16),
        torch.randn(16), torch.randn(16),
        16, 2, 3, False,
    ),
}
