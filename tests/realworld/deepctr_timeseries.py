"""DeepCTR-Torch (shenweichen/DeepCTR-Torch, Apache License 2.0) — deepctr_torch/layers/interaction.py,
sequence.py, core.py and activation.py; Time-Series-Library (thuml/Time-Series-Library, MIT License)
— layers/Autoformer_EncDec.py, layers/StandardNorm.py, layers/Embed.py and models/DLinear.py.

Forward paths rewritten as annotated top-level functions: module weights and `nn.Parameter`s are
explicit parameters (CIN's `conv1ds`, a `ModuleList` indexed by the loop counter, is a Python list
of its weights built at the top of the function), `nn.Linear` / `nn.Conv1d` / `nn.AvgPool1d`
/ `nn.ReplicationPad1d` / eval-mode `nn.BatchNorm1d` / `nn.Sigmoid` / `nn.ReLU(inplace=True)` calls
are `F.linear` / `F.conv1d` / `F.avg_pool1d` / `F.pad(mode="replicate")` / `F.batch_norm(training=
False)` / `torch.sigmoid` / `F.relu(inplace=True)`; `nn.Conv1d(padding_mode="circular")` is what its
`_conv_forward` runs, `F.conv1d(F.pad(x, (p, p), mode="circular"), weight)` with no padding of its
own. Dropout (the identity of eval mode) is dropped. Attributes a forward stores on `self`
(`self.normalized_att_score`, RevIN's `self.mean` / `self.stdev`) are locals, returned where another
method reads them. A list argument of tensors (AFM's `embeds_vec_list`) is one parameter per element
(three fields here) put back in a list; DIN's `DNN` inside LocalActivationUnit is written out layer
by layer. String switches (`parameterization`, `mode`, `activation`) and the flags whose branches
need other inputs or weights (SequencePoolingLayer's `supports_masking`, DLinear's `individual`,
RevIN's `subtract_last`) are fixed to the configuration named in the comment above each function;
other `int` / `float` / `bool` hyper-parameters are parameters, and `_sequence_mask`'s `maxlen=None`
is `Optional[int] = None` (its `dtype` argument, which the project never applies, is written in
place). Everything else is kept as the projects write it.
"""

import itertools
import math
from typing import Optional

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorBoolCpu2D,
    TensorBoolCpu3D,
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorI64Cpu2D,
)


# DeepCTR-Torch — deepctr_torch/layers/interaction.py, FM.forward (shenweichen/DeepCTR-Torch)
def fm(inputs: TensorF32Cpu3D) -> TensorF32Cpu2D:
    fm_input = inputs

    square_of_sum = torch.pow(torch.sum(fm_input, dim=1, keepdim=True), 2)
    sum_of_square = torch.sum(fm_input * fm_input, dim=1, keepdim=True)
    cross_term = square_of_sum - sum_of_square
    cross_term = 0.5 * torch.sum(cross_term, dim=2, keepdim=False)

    return cross_term


# DeepCTR-Torch — deepctr_torch/layers/interaction.py, BiInteractionPooling.forward (shenweichen/DeepCTR-Torch)
def bi_interaction_pooling(inputs: TensorF32Cpu3D) -> TensorF32Cpu3D:
    concated_embeds_value = inputs
    square_of_sum = torch.pow(
        torch.sum(concated_embeds_value, dim=1, keepdim=True), 2)
    sum_of_square = torch.sum(
        concated_embeds_value * concated_embeds_value, dim=1, keepdim=True)
    cross_term = 0.5 * (square_of_sum - sum_of_square)
    return cross_term


# DeepCTR-Torch — deepctr_torch/layers/interaction.py, CrossNet.forward, parameterization="vector"
# (DCN: `kernels` is (layer_num, in_features, 1)) (shenweichen/DeepCTR-Torch)
def cross_net_vector(inputs: TensorF32Cpu2D, kernels: TensorF32Cpu3D, bias: TensorF32Cpu3D, layer_num: int) -> TensorF32Cpu2D:
    x_0 = inputs.unsqueeze(2)
    x_l = x_0
    for i in range(layer_num):
        xl_w = torch.tensordot(x_l, kernels[i], dims=([1], [0]))
        dot_ = torch.matmul(x_0, xl_w)
        x_l = dot_ + bias[i] + x_l
    x_l = torch.squeeze(x_l, dim=2)
    return x_l


# DeepCTR-Torch — deepctr_torch/layers/interaction.py, CrossNet.forward, parameterization="matrix"
# (DCN-M: `kernels` is (layer_num, in_features, in_features)) (shenweichen/DeepCTR-Torch)
def cross_net_matrix(inputs: TensorF32Cpu2D, kernels: TensorF32Cpu3D, bias: TensorF32Cpu3D, layer_num: int) -> TensorF32Cpu2D:
    x_0 = inputs.unsqueeze(2)
    x_l = x_0
    for i in range(layer_num):
        xl_w = torch.matmul(kernels[i], x_l)  # W * xi  (bs, in_features, 1)
        dot_ = xl_w + bias[i]  # W * xi + b
        x_l = x_0 * dot_ + x_l  # x0 · (W * xi + b) +xl  Hadamard-product
    x_l = torch.squeeze(x_l, dim=2)
    return x_l


# DeepCTR-Torch — deepctr_torch/layers/interaction.py, CIN.forward (xDeepFM; two layers, activation='relu',
# i.e. `activation_layer('relu')` = `nn.ReLU(inplace=True)`, so the `is None or == 'linear'` branch is not
# taken) (shenweichen/DeepCTR-Torch)
def cin(
    inputs: TensorF32Cpu3D,
    conv1ds_0_weight: TensorF32Cpu3D,
    conv1ds_0_bias: TensorF32Cpu1D,
    conv1ds_1_weight: TensorF32Cpu3D,
    conv1ds_1_bias: TensorF32Cpu1D,
    layer_size: list[int, int],
    split_half: bool,
) -> TensorF32Cpu2D:
    conv1ds_weight = [conv1ds_0_weight, conv1ds_1_weight]
    conv1ds_bias = [conv1ds_0_bias, conv1ds_1_bias]
    if len(inputs.shape) != 3:
        raise ValueError(
            "Unexpected inputs dimensions %d, expect to be 3 dimensions" % (len(inputs.shape)))
    batch_size = inputs.shape[0]
    dim = inputs.shape[-1]
    hidden_nn_layers = [inputs]
    final_result = []

    for i, size in enumerate(layer_size):
        # x^(k-1) * x^0
        x = torch.einsum(
            'bhd,bmd->bhmd', hidden_nn_layers[-1], hidden_nn_layers[0])
        # x.shape = (batch_size , hi * m, dim)
        x = x.reshape(
            batch_size, hidden_nn_layers[-1].shape[1] * hidden_nn_layers[0].shape[1], dim)
        # x.shape = (batch_size , hi, dim)
        x = F.conv1d(x, conv1ds_weight[i], conv1ds_bias[i])

        curr_out = F.relu(x, inplace=True)

        if split_half:
            if i != len(layer_size) - 1:
                next_hidden, direct_connect = torch.split(
                    curr_out, 2 * [size // 2], 1)
            else:
                direct_connect = curr_out
                next_hidden = 0
        else:
            direct_connect = curr_out
            next_hidden = curr_out

        final_result.append(direct_connect)
        hidden_nn_layers.append(next_hidden)

    result = torch.cat(final_result, dim=1)
    result = torch.sum(result, -1)

    return result


# DeepCTR-Torch — deepctr_torch/layers/interaction.py, AFMLayer.forward (the list of field embeddings is
# three parameters put back in a list; `self.normalized_att_score` is a local) (shenweichen/DeepCTR-Torch)
def afm_layer(
    embeds_0: TensorF32Cpu3D,
    embeds_1: TensorF32Cpu3D,
    embeds_2: TensorF32Cpu3D,
    attention_W: TensorF32Cpu2D,
    attention_b: TensorF32Cpu1D,
    projection_h: TensorF32Cpu2D,
    projection_p: TensorF32Cpu2D,
) -> TensorF32Cpu2D:
    inputs = [embeds_0, embeds_1, embeds_2]
    embeds_vec_list = inputs
    row = []
    col = []

    for r, c in itertools.combinations(embeds_vec_list, 2):
        row.append(r)
        col.append(c)

    p = torch.cat(row, dim=1)
    q = torch.cat(col, dim=1)
    inner_product = p * q

    bi_interaction = inner_product
    attention_temp = F.relu(torch.tensordot(
        bi_interaction, attention_W, dims=([-1], [0])) + attention_b)

    normalized_att_score = F.softmax(torch.tensordot(
        attention_temp, projection_h, dims=([-1], [0])), dim=1)
    attention_output = torch.sum(
        normalized_att_score * bi_interaction, dim=1)

    afm_out = torch.tensordot(
        attention_output, projection_p, dims=([-1], [0]))
    return afm_out


# DeepCTR-Torch — deepctr_torch/layers/interaction.py, InteractingLayer.forward (AutoInt; `att_embedding_size`
# is `embedding_size // head_num`, `self.normalized_att_scores` is a local) (shenweichen/DeepCTR-Torch)
def interacting_layer(
    inputs: TensorF32Cpu3D,
    W_Query: TensorF32Cpu2D,
    W_key: TensorF32Cpu2D,
    W_Value: TensorF32Cpu2D,
    W_Res: TensorF32Cpu2D,
    att_embedding_size: int,
    use_res: bool,
    scaling: bool,
) -> TensorF32Cpu3D:

    if len(inputs.shape) != 3:
        raise ValueError(
            "Unexpected inputs dimensions %d, expect to be 3 dimensions" % (len(inputs.shape)))

    # None F D
    querys = torch.tensordot(inputs, W_Query, dims=([-1], [0]))
    keys = torch.tensordot(inputs, W_key, dims=([-1], [0]))
    values = torch.tensordot(inputs, W_Value, dims=([-1], [0]))

    # head_num None F D/head_num
    querys = torch.stack(torch.split(querys, att_embedding_size, dim=2))
    keys = torch.stack(torch.split(keys, att_embedding_size, dim=2))
    values = torch.stack(torch.split(values, att_embedding_size, dim=2))

    inner_product = torch.einsum('bnik,bnjk->bnij', querys, keys)  # head_num None F F
    if scaling:
        inner_product /= att_embedding_size ** 0.5
    normalized_att_scores = F.softmax(inner_product, dim=-1)  # head_num None F F
    result = torch.matmul(normalized_att_scores, values)  # head_num None F D/head_num

    result = torch.cat(torch.split(result, 1, ), dim=-1)
    result = torch.squeeze(result, dim=0)  # None F D
    if use_res:
        result += torch.tensordot(inputs, W_Res, dims=([-1], [0]))
    result = F.relu(result)

    return result


# DeepCTR-Torch — deepctr_torch/layers/sequence.py, SequencePoolingLayer._sequence_mask (the `dtype`
# argument is the `torch.float32` that forward passes, written in place: the project discards the
# result of `mask.type(dtype)`, so the mask stays bool) (shenweichen/DeepCTR-Torch)
def sequence_mask(lengths: TensorI64Cpu2D, maxlen: Optional[int] = None) -> TensorBoolCpu3D:
    # Returns a mask tensor representing the first N positions of each cell.
    if maxlen is None:
        maxlen = lengths.max()
    row_vector = torch.arange(0, maxlen, 1).to(lengths.device)
    matrix = torch.unsqueeze(lengths, dim=-1)
    mask = row_vector < matrix

    mask.type(torch.float32)
    return mask


# DeepCTR-Torch — deepctr_torch/layers/sequence.py, SequencePoolingLayer.forward (mode='mean',
# supports_masking=False: the mask from the lengths; `self.eps` is the `torch.FloatTensor([1e-8])` it
# holds) (shenweichen/DeepCTR-Torch)
def sequence_pooling_mean(
    uiseq_embed_list: TensorF32Cpu3D, user_behavior_length: TensorI64Cpu2D, eps: TensorF32Cpu1D
) -> TensorF32Cpu3D:
    # [B, T, E], [B, 1]
    mask = sequence_mask(user_behavior_length, maxlen=uiseq_embed_list.shape[1])  # [B, 1, maxlen]
    mask = torch.transpose(mask, 1, 2)  # [B, maxlen, 1]

    embedding_size = uiseq_embed_list.shape[-1]

    mask = torch.repeat_interleave(mask, embedding_size, dim=2)  # [B, maxlen, E]

    hist = uiseq_embed_list * mask.float()
    hist = torch.sum(hist, dim=1, keepdim=False)

    eps = eps.to(user_behavior_length.device)
    hist = torch.div(hist, user_behavior_length.type(torch.float32) + eps)

    hist = torch.unsqueeze(hist, dim=1)
    return hist


# DeepCTR-Torch — deepctr_torch/layers/sequence.py, SequencePoolingLayer.forward (mode='max',
# supports_masking=True: the [B, T] mask is given) (shenweichen/DeepCTR-Torch)
def sequence_pooling_max(uiseq_embed_list: TensorF32Cpu3D, mask: TensorBoolCpu2D) -> TensorF32Cpu3D:
    # [B, T, E], [B, 1]
    mask = mask.float()
    user_behavior_length = torch.sum(mask, dim=-1, keepdim=True)
    mask = mask.unsqueeze(2)

    embedding_size = uiseq_embed_list.shape[-1]

    mask = torch.repeat_interleave(mask, embedding_size, dim=2)  # [B, maxlen, E]

    hist = uiseq_embed_list - (1 - mask) * 1e9
    hist = torch.max(hist, dim=1, keepdim=True)[0]
    return hist


# DeepCTR-Torch — deepctr_torch/layers/core.py, LocalActivationUnit.forward (DIN; `self.dnn` is
# DNN(4 * embedding_dim, hidden_units=(80, 40), activation='sigmoid', use_bn=False) written out layer by
# layer, `self.dense` the Linear(40, 1)) (shenweichen/DeepCTR-Torch)
def local_activation_unit(
    query: TensorF32Cpu3D,
    user_behavior: TensorF32Cpu3D,
    dnn_linears_0_weight: TensorF32Cpu2D,
    dnn_linears_0_bias: TensorF32Cpu1D,
    dnn_linears_1_weight: TensorF32Cpu2D,
    dnn_linears_1_bias: TensorF32Cpu1D,
    dense_weight: TensorF32Cpu2D,
    dense_bias: TensorF32Cpu1D,
) -> TensorF32Cpu3D:
    # query ad            : size -> batch_size * 1 * embedding_size
    # user behavior       : size -> batch_size * time_seq_len * embedding_size
    user_behavior_len = user_behavior.size(1)

    queries = query.expand(-1, user_behavior_len, -1)

    attention_input = torch.cat([queries, user_behavior, queries - user_behavior, queries * user_behavior], dim=-1)   # as the source code, subtraction simulates verctors' difference
    # self.dnn(attention_input)
    deep_input = attention_input
    fc = F.linear(deep_input, dnn_linears_0_weight, dnn_linears_0_bias)
    fc = torch.sigmoid(fc)
    deep_input = fc
    fc = F.linear(deep_input, dnn_linears_1_weight, dnn_linears_1_bias)
    fc = torch.sigmoid(fc)
    deep_input = fc
    attention_output = deep_input

    attention_score = F.linear(attention_output, dense_weight, dense_bias)    # [B, T, 1]

    return attention_score


# DeepCTR-Torch — deepctr_torch/layers/sequence.py, AttentionSequencePoolingLayer.forward (DIN;
# `self.local_att` is the LocalActivationUnit above) (shenweichen/DeepCTR-Torch)
def attention_sequence_pooling(
    query: TensorF32Cpu3D,
    keys: TensorF32Cpu3D,
    keys_length: TensorI64Cpu2D,
    dnn_linears_0_weight: TensorF32Cpu2D,
    dnn_linears_0_bias: TensorF32Cpu1D,
    dnn_linears_1_weight: TensorF32Cpu2D,
    dnn_linears_1_bias: TensorF32Cpu1D,
    dense_weight: TensorF32Cpu2D,
    dense_bias: TensorF32Cpu1D,
    weight_normalization: bool,
    return_score: bool,
    supports_masking: bool,
    mask: Optional[TensorBoolCpu2D] = None,
) -> TensorF32Cpu3D:
    """
    Input shape
      - A list of three tensor: [query,keys,keys_length]

      - query is a 3D tensor with shape:  ``(batch_size, 1, embedding_size)``

      - keys is a 3D tensor with shape:   ``(batch_size, T, embedding_size)``

      - keys_length is a 2D tensor with shape: ``(batch_size, 1)``

    Output shape
      - 3D tensor with shape: ``(batch_size, 1, embedding_size)``.
    """
    batch_size, max_length, _ = keys.size()

    # Mask
    if supports_masking:
        if mask is None:
            raise ValueError("When supports_masking=True,input must support masking")
        keys_masks = mask.unsqueeze(1)
    else:
        keys_masks = torch.arange(max_length, device=keys_length.device, dtype=keys_length.dtype).repeat(batch_size,
                                                                                                         1)  # [B, T]
        keys_masks = keys_masks < keys_length.view(-1, 1)  # 0, 1 mask
        keys_masks = keys_masks.unsqueeze(1)  # [B, 1, T]

    attention_score = local_activation_unit(
        query, keys, dnn_linears_0_weight, dnn_linears_0_bias, dnn_linears_1_weight, dnn_linears_1_bias, dense_weight, dense_bias
    )  # [B, T, 1]

    outputs = torch.transpose(attention_score, 1, 2)  # [B, 1, T]

    if weight_normalization:
        paddings = torch.ones_like(outputs) * (-2 ** 32 + 1)
    else:
        paddings = torch.zeros_like(outputs)

    outputs = torch.where(keys_masks, outputs, paddings)  # [B, 1, T]

    # Scale
    # outputs = outputs / (keys.shape[-1] ** 0.05)

    if weight_normalization:
        outputs = F.softmax(outputs, dim=-1)  # [B, 1, T]

    if not return_score:
        # Weighted sum
        outputs = torch.matmul(outputs, keys)  # [B, 1, E]

    return outputs


# DeepCTR-Torch — deepctr_torch/layers/activation.py, Dice.forward (eval mode: `self.bn` is
# BatchNorm1d(emb_size, eps=epsilon) on its running statistics; dim=3, as DNN builds it with dice_dim=3,
# `alpha` is (emb_size, 1)) (shenweichen/DeepCTR-Torch)
def dice(
    x: TensorF32Cpu3D,
    alpha: TensorF32Cpu2D,
    bn_weight: TensorF32Cpu1D,
    bn_bias: TensorF32Cpu1D,
    bn_running_mean: TensorF32Cpu1D,
    bn_running_var: TensorF32Cpu1D,
    dim: int,
    epsilon: float,
) -> TensorF32Cpu3D:
    assert x.dim() == dim
    if dim == 2:
        x_p = torch.sigmoid(F.batch_norm(x, bn_running_mean, bn_running_var, bn_weight, bn_bias, False, 0.1, epsilon))
        out = alpha * (1 - x_p) * x + x_p * x
    else:
        x = torch.transpose(x, 1, 2)
        x_p = torch.sigmoid(F.batch_norm(x, bn_running_mean, bn_running_var, bn_weight, bn_bias, False, 0.1, epsilon))
        out = alpha * (1 - x_p) * x + x_p * x
        out = torch.transpose(out, 1, 2)
    return out


# Time-Series-Library — layers/Autoformer_EncDec.py, moving_avg.forward (`self.avg` is
# AvgPool1d(kernel_size, stride, padding=0)) (thuml/Time-Series-Library)
def moving_avg(x: TensorF32Cpu3D, kernel_size: int, stride: int) -> TensorF32Cpu3D:
    # padding on the both ends of time series
    front = x[:, 0:1, :].repeat(1, (kernel_size - 1) // 2, 1)
    end = x[:, -1:, :].repeat(1, (kernel_size - 1) // 2, 1)
    x = torch.cat([front, x, end], dim=1)
    x = F.avg_pool1d(x.permute(0, 2, 1), kernel_size=kernel_size, stride=stride, padding=0)
    x = x.permute(0, 2, 1)
    return x


# Time-Series-Library — layers/Autoformer_EncDec.py, series_decomp.forward (`self.moving_avg` is
# moving_avg(kernel_size, stride=1)) (thuml/Time-Series-Library)
def series_decomp(x: TensorF32Cpu3D, kernel_size: int) -> tuple[TensorF32Cpu3D, TensorF32Cpu3D]:
    moving_mean = moving_avg(x, kernel_size, 1)
    res = x - moving_mean
    return res, moving_mean


# Time-Series-Library — models/DLinear.py, Model.encoder (individual=False: one Linear(seq_len, pred_len)
# each for the seasonal and trend parts; `self.decompsition` is series_decomp(configs.moving_avg))
# (thuml/Time-Series-Library)
def dlinear_encoder(
    x: TensorF32Cpu3D,
    Linear_Seasonal_weight: TensorF32Cpu2D,
    Linear_Seasonal_bias: TensorF32Cpu1D,
    Linear_Trend_weight: TensorF32Cpu2D,
    Linear_Trend_bias: TensorF32Cpu1D,
    moving_avg_kernel: int,
) -> TensorF32Cpu3D:
    seasonal_init, trend_init = series_decomp(x, moving_avg_kernel)
    seasonal_init, trend_init = seasonal_init.permute(
        0, 2, 1), trend_init.permute(0, 2, 1)
    seasonal_output = F.linear(seasonal_init, Linear_Seasonal_weight, Linear_Seasonal_bias)
    trend_output = F.linear(trend_init, Linear_Trend_weight, Linear_Trend_bias)
    x = seasonal_output + trend_output
    return x.permute(0, 2, 1)


# Time-Series-Library — layers/StandardNorm.py, Normalize._get_statistics (RevIN, subtract_last=False;
# returns the `self.mean` and `self.stdev` it stores) (thuml/Time-Series-Library)
def normalize_get_statistics(x: TensorF32Cpu3D, eps: float) -> tuple[TensorF32Cpu3D, TensorF32Cpu3D]:
    dim2reduce = tuple(range(1, x.ndim - 1))
    mean = torch.mean(x, dim=dim2reduce, keepdim=True).detach()
    stdev = torch.sqrt(torch.var(x, dim=dim2reduce, keepdim=True, unbiased=False) + eps).detach()
    return mean, stdev


# Time-Series-Library — layers/StandardNorm.py, Normalize._normalize (subtract_last=False)
# (thuml/Time-Series-Library)
def normalize_normalize(
    x: TensorF32Cpu3D,
    mean: TensorF32Cpu3D,
    stdev: TensorF32Cpu3D,
    affine_weight: TensorF32Cpu1D,
    affine_bias: TensorF32Cpu1D,
    non_norm: bool,
    affine: bool,
) -> TensorF32Cpu3D:
    if non_norm:
        return x
    x = x - mean
    x = x / stdev
    if affine:
        x = x * affine_weight
        x = x + affine_bias
    return x


# Time-Series-Library — layers/StandardNorm.py, Normalize._denormalize (subtract_last=False)
# (thuml/Time-Series-Library)
def normalize_denormalize(
    x: TensorF32Cpu3D,
    mean: TensorF32Cpu3D,
    stdev: TensorF32Cpu3D,
    affine_weight: TensorF32Cpu1D,
    affine_bias: TensorF32Cpu1D,
    eps: float,
    non_norm: bool,
    affine: bool,
) -> TensorF32Cpu3D:
    if non_norm:
        return x
    if affine:
        x = x - affine_bias
        x = x / (affine_weight + eps * eps)
    x = x * stdev
    x = x + mean
    return x


# Time-Series-Library — layers/Embed.py, PositionalEmbedding.__init__ (the `pe` buffer, built here as
# the constructor builds it) and forward (thuml/Time-Series-Library)
def positional_embedding(x: TensorF32Cpu3D, d_model: int, max_len: int) -> TensorF32Cpu3D:
    # Compute the positional encodings once in log space.
    pe = torch.zeros(max_len, d_model).float()
    pe.require_grad = False

    position = torch.arange(0, max_len).float().unsqueeze(1)
    div_term = (torch.arange(0, d_model, 2).float()
                * -(math.log(10000.0) / d_model)).exp()

    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)

    pe = pe.unsqueeze(0)
    return pe[:, :x.size(1)]


# Time-Series-Library — layers/Embed.py, TokenEmbedding.forward (`self.tokenConv` is Conv1d(c_in, d_model,
# kernel_size=3, padding=1, padding_mode='circular', bias=False): the circular pad, then the conv with no
# padding of its own) (thuml/Time-Series-Library)
def token_embedding(x: TensorF32Cpu3D, tokenConv_weight: TensorF32Cpu3D, padding: int) -> TensorF32Cpu3D:
    x = F.conv1d(F.pad(x.permute(0, 2, 1), (padding, padding), mode="circular"), tokenConv_weight).transpose(1, 2)
    return x


# Time-Series-Library — layers/Embed.py, PatchEmbedding.forward, as models/PatchTST.py builds it
# (padding = stride; `self.padding_patch_layer` is ReplicationPad1d((0, padding)), `self.value_embedding`
# Linear(patch_len, d_model, bias=False), `self.position_embedding` PositionalEmbedding(d_model))
# (thuml/Time-Series-Library)
def patch_embedding(
    x: TensorF32Cpu3D,
    value_embedding_weight: TensorF32Cpu2D,
    patch_len: int,
    stride: int,
    padding: int,
    d_model: int,
    max_len: int,
) -> tuple[TensorF32Cpu3D, int]:
    # do patching
    n_vars = x.shape[1]
    x = F.pad(x, (0, padding), mode="replicate")
    x = x.unfold(dimension=-1, size=patch_len, step=stride)
    x = torch.reshape(x, (x.shape[0] * x.shape[1], x.shape[2], x.shape[3]))
    # Input encoding
    x = F.linear(x, value_embedding_weight) + positional_embedding(x, d_model, max_len)
    return x, n_vars


INPUTS = {
    "fm": lambda: (torch.randn(3, 5, 8),),
    "bi_interaction_pooling": lambda: (torch.randn(3, 5, 8),),
    "cross_net_vector": lambda: (torch.randn(3, 12), torch.randn(2, 12, 1) * 0.3, torch.randn(2, 12, 1) * 0.1, 2),
    "cross_net_matrix": lambda: (torch.randn(3, 12), torch.randn(2, 12, 12) * 0.3, torch.randn(2, 12, 1) * 0.1, 2),
    "cin": lambda: (
        torch.randn(3, 3, 8), torch.randn(4, 9, 1), torch.randn(4), torch.randn(4, 6, 1), torch.randn(4), [4, 4], True,
    ),
    "afm_layer": lambda: (
        torch.randn(3, 1, 8), torch.randn(3, 1, 8), torch.randn(3, 1, 8),
        torch.randn(8, 4), torch.zeros(4), torch.randn(4, 1), torch.randn(8, 1),
    ),
    "interacting_layer": lambda: (
        torch.randn(3, 5, 8), torch.randn(8, 8) * 0.05, torch.randn(8, 8) * 0.05, torch.randn(8, 8) * 0.05,
        torch.randn(8, 8) * 0.05, 4, True, True,
    ),
    "sequence_mask": lambda: (torch.tensor([[2], [5], [1]]), 6),
    "sequence_pooling_mean": lambda: (torch.randn(3, 6, 8), torch.tensor([[2], [5], [1]]), torch.FloatTensor([1e-8])),
    "sequence_pooling_max": lambda: (
        torch.randn(3, 6, 8), torch.arange(6).repeat(3, 1) < torch.tensor([[2], [5], [1]]),
    ),
    "local_activation_unit": lambda: (
        torch.randn(3, 1, 8), torch.randn(3, 6, 8),
        torch.randn(16, 32) * 0.1, torch.randn(16), torch.randn(8, 16) * 0.1, torch.randn(8), torch.randn(1, 8), torch.randn(1),
    ),
    "attention_sequence_pooling": lambda: (
        torch.randn(3, 1, 8), torch.randn(3, 6, 8), torch.tensor([[2], [5], [1]]),
        torch.randn(16, 32) * 0.1, torch.randn(16), torch.randn(8, 16) * 0.1, torch.randn(8), torch.randn(1, 8), torch.randn(1),
        True, False, False,
    ),
    "dice": lambda: (
        torch.randn(3, 6, 16), torch.randn(16, 1) * 0.1, torch.rand(16) + 0.5, torch.randn(16) * 0.1,
        torch.randn(16) * 0.1, torch.rand(16) + 0.5, 3, 1e-8,
    ),
    "moving_avg": lambda: (torch.randn(2, 24, 3), 5, 1),
    "series_decomp": lambda: (torch.randn(2, 24, 3), 5),
    "dlinear_encoder": lambda: (
        torch.randn(2, 24, 3), torch.full((12, 24), 1 / 24), torch.randn(12) * 0.1, torch.full((12, 24), 1 / 24),
        torch.randn(12) * 0.1, 5,
    ),
    "normalize_get_statistics": lambda: (torch.randn(2, 24, 3), 1e-5),
    "normalize_normalize": lambda: (
        torch.randn(2, 24, 3), torch.randn(2, 1, 3), torch.rand(2, 1, 3) + 0.5, torch.ones(3), torch.zeros(3), False, True,
    ),
    "normalize_denormalize": lambda: (
        torch.randn(2, 12, 3), torch.randn(2, 1, 3), torch.rand(2, 1, 3) + 0.5, torch.ones(3), torch.zeros(3), 1e-5, False, True,
    ),
    "positional_embedding": lambda: (torch.randn(2, 24, 16), 16, 64),
    "token_embedding": lambda: (torch.randn(2, 24, 3), torch.randn(16, 3, 3) * 0.3, 1),
    "patch_embedding": lambda: (torch.randn(2, 3, 24), torch.randn(16, 8) * 0.3, 8, 4, 4, 16, 64),
}
