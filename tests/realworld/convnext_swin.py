"""ConvNeXt and Swin Transformer — torchvision (pytorch/vision, BSD 3-Clause):
torchvision/models/convnext.py and torchvision/models/swin_transformer.py; ConvNeXt and
ConvNeXt V2 (facebookresearch/ConvNeXt, facebookresearch/ConvNeXt-V2, MIT): models/convnext.py
and models/utils.py.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters, `nn.Linear` / `nn.Conv2d` / `nn.LayerNorm` / `nn.GELU` calls are `F.linear` /
`F.conv2d` / `F.layer_norm` / `F.gelu`, torchvision's `Permute` module is the `torch.permute`
it runs, StochasticDepth / DropPath (identity in eval mode) are dropped. torchvision's
`shifted_window_attention` is a plain function in the project and is kept whole, with its
`training` flag passed as `False`. A `List[int]` parameter (Swin's window and shift sizes) is
written `list[int, int]`, the precise type `torchlower.compile` specialises it to on a call, as
tensor parameters carry markers (coverage.py's `--torch-tensor` form writes `List[int]` back).
Everything else is kept as the projects write it.
"""

import math
from typing import List, Optional

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu1D,
)


# torchvision — torchvision/models/convnext.py, LayerNorm2d.forward (pytorch/vision)
def layer_norm_2d(x: TensorF32Cpu4D, weight: TensorF32Cpu1D, bias: TensorF32Cpu1D, eps: float) -> TensorF32Cpu4D:
    x = x.permute(0, 2, 3, 1)
    x = F.layer_norm(x, (weight.shape[0],), weight, bias, eps)
    x = x.permute(0, 3, 1, 2)
    return x


# torchvision — torchvision/models/convnext.py, CNBlock.forward (pytorch/vision)
def cn_block(
    input: TensorF32Cpu4D,
    dw_weight: TensorF32Cpu4D, dw_bias: TensorF32Cpu1D,
    norm_weight: TensorF32Cpu1D, norm_bias: TensorF32Cpu1D,
    fc1_weight: TensorF32Cpu2D, fc1_bias: TensorF32Cpu1D,
    fc2_weight: TensorF32Cpu2D, fc2_bias: TensorF32Cpu1D,
    layer_scale: TensorF32Cpu3D,
) -> TensorF32Cpu4D:
    # self.block = nn.Sequential(Conv2d(dim, dim, 7, padding=3, groups=dim), Permute([0, 2, 3, 1]),
    #     LayerNorm(dim, eps=1e-6), Linear(dim, 4 * dim), GELU(), Linear(4 * dim, dim), Permute([0, 3, 1, 2]))
    block = F.conv2d(input, dw_weight, dw_bias, 1, 3, 1, input.shape[1])
    block = torch.permute(block, [0, 2, 3, 1])
    block = F.layer_norm(block, (norm_weight.shape[0],), norm_weight, norm_bias, 1e-6)
    block = F.linear(block, fc1_weight, fc1_bias)
    block = F.gelu(block)
    block = F.linear(block, fc2_weight, fc2_bias)
    block = torch.permute(block, [0, 3, 1, 2])
    result = layer_scale * block
    result += input
    return result


# torchvision — torchvision/models/convnext.py, ConvNeXt._forward_impl after the features (pytorch/vision)
def convnext_head(
    x: TensorF32Cpu4D,
    norm_weight: TensorF32Cpu1D, norm_bias: TensorF32Cpu1D,
    fc_weight: TensorF32Cpu2D, fc_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    # self.avgpool = nn.AdaptiveAvgPool2d(1); self.classifier = nn.Sequential(norm_layer(lastconv_output_channels),
    #     nn.Flatten(1), nn.Linear(lastconv_output_channels, num_classes))
    x = F.adaptive_avg_pool2d(x, 1)
    x = layer_norm_2d(x, norm_weight, norm_bias, 1e-6)
    x = torch.flatten(x, 1)
    return F.linear(x, fc_weight, fc_bias)


# ConvNeXt — models/convnext.py, LayerNorm.forward, data_format="channels_first" (facebookresearch/ConvNeXt)
def layer_norm_channels_first(x: TensorF32Cpu4D, weight: TensorF32Cpu1D, bias: TensorF32Cpu1D, eps: float) -> TensorF32Cpu4D:
    u = x.mean(1, keepdim=True)
    s = (x - u).pow(2).mean(1, keepdim=True)
    x = (x - u) / torch.sqrt(s + eps)
    x = weight[:, None, None] * x + bias[:, None, None]
    return x


# ConvNeXt — models/convnext.py, Block.forward (facebookresearch/ConvNeXt)
def block(
    x: TensorF32Cpu4D,
    dw_weight: TensorF32Cpu4D, dw_bias: TensorF32Cpu1D,
    norm_weight: TensorF32Cpu1D, norm_bias: TensorF32Cpu1D,
    pw1_weight: TensorF32Cpu2D, pw1_bias: TensorF32Cpu1D,
    pw2_weight: TensorF32Cpu2D, pw2_bias: TensorF32Cpu1D,
    gamma: TensorF32Cpu1D,  # Optional: None when layer_scale_init_value is 0
) -> TensorF32Cpu4D:
    input = x
    x = F.conv2d(x, dw_weight, dw_bias, 1, 3, 1, x.shape[1])  # self.dwconv: depthwise conv
    x = x.permute(0, 2, 3, 1)  # (N, C, H, W) -> (N, H, W, C)
    x = F.layer_norm(x, (norm_weight.shape[0],), norm_weight, norm_bias, 1e-6)
    x = F.linear(x, pw1_weight, pw1_bias)  # pointwise/1x1 convs, implemented with linear layers
    x = F.gelu(x)
    x = F.linear(x, pw2_weight, pw2_bias)
    if gamma is not None:
        x = gamma * x
    x = x.permute(0, 3, 1, 2)  # (N, H, W, C) -> (N, C, H, W)

    x = input + x
    return x


# ConvNeXt — models/convnext.py, ConvNeXt.forward_features + head (facebookresearch/ConvNeXt)
def convnext_forward_head(
    x: TensorF32Cpu4D,
    norm_weight: TensorF32Cpu1D, norm_bias: TensorF32Cpu1D,
    head_weight: TensorF32Cpu2D, head_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    x = F.layer_norm(x.mean([-2, -1]), (norm_weight.shape[0],), norm_weight, norm_bias, 1e-6)  # global average pooling, (N, C, H, W) -> (N, C)
    return F.linear(x, head_weight, head_bias)


# ConvNeXt V2 — models/utils.py, GRN.forward (facebookresearch/ConvNeXt-V2)
def grn(x: TensorF32Cpu4D, gamma: TensorF32Cpu4D, beta: TensorF32Cpu4D) -> TensorF32Cpu4D:
    """ GRN (Global Response Normalization) layer
    """
    Gx = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
    Nx = Gx / (Gx.mean(dim=-1, keepdim=True) + 1e-6)
    return gamma * (x * Nx) + beta + x


# torchvision — torchvision/models/swin_transformer.py, _patch_merging_pad (pytorch/vision)
def _patch_merging_pad(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    H, W, _ = x.shape[-3:]
    x = F.pad(x, (0, 0, 0, W % 2, 0, H % 2))
    x0 = x[..., 0::2, 0::2, :]  # ... H/2 W/2 C
    x1 = x[..., 1::2, 0::2, :]  # ... H/2 W/2 C
    x2 = x[..., 0::2, 1::2, :]  # ... H/2 W/2 C
    x3 = x[..., 1::2, 1::2, :]  # ... H/2 W/2 C
    x = torch.cat([x0, x1, x2, x3], -1)  # ... H/2 W/2 4*C
    return x


# torchvision — torchvision/models/swin_transformer.py, PatchMerging.forward (pytorch/vision)
def patch_merging(
    x: TensorF32Cpu4D, norm_weight: TensorF32Cpu1D, norm_bias: TensorF32Cpu1D, reduction_weight: TensorF32Cpu2D
) -> TensorF32Cpu4D:
    """
    Args:
        x (Tensor): input tensor with expected layout of [..., H, W, C]
    Returns:
        Tensor with layout of [..., H/2, W/2, 2*C]
    """
    # self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False); self.norm = norm_layer(4 * dim)
    x = _patch_merging_pad(x)
    x = F.layer_norm(x, (norm_weight.shape[0],), norm_weight, norm_bias, 1e-5)
    x = F.linear(x, reduction_weight)  # ... H/2 W/2 2*C
    return x


# torchvision — torchvision/models/swin_transformer.py, _get_relative_position_bias (pytorch/vision)
def _get_relative_position_bias(
    relative_position_bias_table: TensorF32Cpu2D, relative_position_index: TensorI64Cpu1D, window_size: list[int, int]
) -> TensorF32Cpu4D:
    N = window_size[0] * window_size[1]
    relative_position_bias = relative_position_bias_table[relative_position_index]  # type: ignore[index]
    relative_position_bias = relative_position_bias.view(N, N, -1)
    relative_position_bias = relative_position_bias.permute(2, 0, 1).contiguous().unsqueeze(0)
    return relative_position_bias


# torchvision — torchvision/models/swin_transformer.py, shifted_window_attention (pytorch/vision)
def shifted_window_attention(
    input: TensorF32Cpu4D,
    qkv_weight: TensorF32Cpu2D,
    proj_weight: TensorF32Cpu2D,
    relative_position_bias: TensorF32Cpu4D,
    window_size: list[int, int],
    num_heads: int,
    shift_size: list[int, int],
    attention_dropout: float = 0.0,
    dropout: float = 0.0,
    qkv_bias: TensorF32Cpu1D = None,
    proj_bias: TensorF32Cpu1D = None,
    logit_scale: Optional[TensorF32Cpu3D] = None,
    training: bool = True,
) -> TensorF32Cpu4D:
    """
    Window based multi-head self attention (W-MSA) module with relative position bias.
    It supports both of shifted and non-shifted window.
    Args:
        input (Tensor[N, H, W, C]): The input tensor or 4-dimensions.
        qkv_weight (Tensor[in_dim, out_dim]): The weight tensor of query, key, value.
        proj_weight (Tensor[out_dim, out_dim]): The weight tensor of projection.
        relative_position_bias (Tensor): The learned relative position bias added to attention.
        window_size (List[int]): Window size.
        num_heads (int): Number of attention heads.
        shift_size (List[int]): Shift size for shifted window attention.
        attention_dropout (float): Dropout ratio of attention weight. Default: 0.0.
        dropout (float): Dropout ratio of output. Default: 0.0.
        qkv_bias (Tensor[out_dim], optional): The bias tensor of query, key, value. Default: None.
        proj_bias (Tensor[out_dim], optional): The bias tensor of projection. Default: None.
        logit_scale (Tensor[out_dim], optional): Logit scale of cosine attention for Swin Transformer V2. Default: None.
        training (bool, optional): Training flag used by the dropout parameters. Default: True.
    Returns:
        Tensor[N, H, W, C]: The output tensor after shifted window attention.
    """
    B, H, W, C = input.shape
    # pad feature maps to multiples of window size
    pad_r = (window_size[1] - W % window_size[1]) % window_size[1]
    pad_b = (window_size[0] - H % window_size[0]) % window_size[0]
    x = F.pad(input, (0, 0, 0, pad_r, 0, pad_b))
    _, pad_H, pad_W, _ = x.shape

    shift_size = shift_size.copy()
    # If window size is larger than feature size, there is no need to shift window
    if window_size[0] >= pad_H:
        shift_size[0] = 0
    if window_size[1] >= pad_W:
        shift_size[1] = 0

    # cyclic shift
    if sum(shift_size) > 0:
        x = torch.roll(x, shifts=(-shift_size[0], -shift_size[1]), dims=(1, 2))

    # partition windows
    num_windows = (pad_H // window_size[0]) * (pad_W // window_size[1])
    x = x.view(B, pad_H // window_size[0], window_size[0], pad_W // window_size[1], window_size[1], C)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(B * num_windows, window_size[0] * window_size[1], C)  # B*nW, Ws*Ws, C

    # multi-head attention
    if logit_scale is not None and qkv_bias is not None:
        qkv_bias = qkv_bias.clone()
        length = qkv_bias.numel() // 3
        qkv_bias[length : 2 * length].zero_()
    qkv = F.linear(x, qkv_weight, qkv_bias)
    qkv = qkv.reshape(x.size(0), x.size(1), 3, num_heads, C // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    if logit_scale is not None:
        # cosine attention
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        logit_scale = torch.clamp(logit_scale, max=math.log(100.0)).exp()
        attn = attn * logit_scale
    else:
        q = q * (C // num_heads) ** -0.5
        attn = q.matmul(k.transpose(-2, -1))
    # add relative position bias
    attn = attn + relative_position_bias

    if sum(shift_size) > 0:
        # generate attention mask
        attn_mask = x.new_zeros((pad_H, pad_W))
        h_slices = ((0, -window_size[0]), (-window_size[0], -shift_size[0]), (-shift_size[0], None))
        w_slices = ((0, -window_size[1]), (-window_size[1], -shift_size[1]), (-shift_size[1], None))
        count = 0
        for h in h_slices:
            for w in w_slices:
                attn_mask[h[0] : h[1], w[0] : w[1]] = count
                count += 1
        attn_mask = attn_mask.view(pad_H // window_size[0], window_size[0], pad_W // window_size[1], window_size[1])
        attn_mask = attn_mask.permute(0, 2, 1, 3).reshape(num_windows, window_size[0] * window_size[1])
        attn_mask = attn_mask.unsqueeze(1) - attn_mask.unsqueeze(2)
        attn_mask = attn_mask.masked_fill(attn_mask != 0, float(-100.0)).masked_fill(attn_mask == 0, float(0.0))
        attn = attn.view(x.size(0) // num_windows, num_windows, num_heads, x.size(1), x.size(1))
        attn = attn + attn_mask.unsqueeze(1).unsqueeze(0)
        attn = attn.view(-1, num_heads, x.size(1), x.size(1))

    attn = F.softmax(attn, dim=-1)
    attn = F.dropout(attn, p=attention_dropout, training=training)

    x = attn.matmul(v).transpose(1, 2).reshape(x.size(0), x.size(1), C)
    x = F.linear(x, proj_weight, proj_bias)
    x = F.dropout(x, p=dropout, training=training)

    # reverse windows
    x = x.view(B, pad_H // window_size[0], pad_W // window_size[1], window_size[0], window_size[1], C)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(B, pad_H, pad_W, C)

    # reverse cyclic shift
    if sum(shift_size) > 0:
        x = torch.roll(x, shifts=(shift_size[0], shift_size[1]), dims=(1, 2))

    # unpad features
    x = x[:, :H, :W, :].contiguous()
    return x


# torchvision — torchvision/models/swin_transformer.py, ShiftedWindowAttention.forward (pytorch/vision)
def shifted_window_attention_forward(
    x: TensorF32Cpu4D,
    qkv_weight: TensorF32Cpu2D, qkv_bias: TensorF32Cpu1D,
    proj_weight: TensorF32Cpu2D, proj_bias: TensorF32Cpu1D,
    relative_position_bias_table: TensorF32Cpu2D, relative_position_index: TensorI64Cpu1D,
    window_size: list[int, int], shift_size: list[int, int], num_heads: int,
) -> TensorF32Cpu4D:
    # self.get_relative_position_bias()
    relative_position_bias = _get_relative_position_bias(relative_position_bias_table, relative_position_index, window_size)
    return shifted_window_attention(
        x,
        qkv_weight,
        proj_weight,
        relative_position_bias,
        window_size,
        num_heads,
        shift_size=shift_size,
        attention_dropout=0.0,
        dropout=0.0,
        qkv_bias=qkv_bias,
        proj_bias=proj_bias,
        training=False,
    )


# torchvision — torchvision/models/swin_transformer.py, SwinTransformerBlock.forward with its MLP (pytorch/vision)
def swin_block(
    x: TensorF32Cpu4D,
    norm1_weight: TensorF32Cpu1D, norm1_bias: TensorF32Cpu1D,
    qkv_weight: TensorF32Cpu2D, qkv_bias: TensorF32Cpu1D,
    proj_weight: TensorF32Cpu2D, proj_bias: TensorF32Cpu1D,
    relative_position_bias_table: TensorF32Cpu2D, relative_position_index: TensorI64Cpu1D,
    norm2_weight: TensorF32Cpu1D, norm2_bias: TensorF32Cpu1D,
    fc1_weight: TensorF32Cpu2D, fc1_bias: TensorF32Cpu1D,
    fc2_weight: TensorF32Cpu2D, fc2_bias: TensorF32Cpu1D,
    window_size: list[int, int], shift_size: list[int, int], num_heads: int,
) -> TensorF32Cpu4D:
    # self.norm1 = norm_layer(dim); self.mlp = MLP(dim, [int(dim * mlp_ratio), dim], activation_layer=nn.GELU)
    x = x + shifted_window_attention_forward(
        F.layer_norm(x, (norm1_weight.shape[0],), norm1_weight, norm1_bias, 1e-5),
        qkv_weight, qkv_bias, proj_weight, proj_bias, relative_position_bias_table, relative_position_index,
        window_size, shift_size, num_heads,
    )
    x = x + F.linear(F.gelu(F.linear(F.layer_norm(x, (norm2_weight.shape[0],), norm2_weight, norm2_bias, 1e-5), fc1_weight, fc1_bias)), fc2_weight, fc2_bias)
    return x


# SwinTransformerBlock's `relative_position_index` buffer, as ShiftedWindowAttention.define_relative_position_index
# builds it (coords of a window, their pairwise differences, shifted to start from 0 and flattened)
_window_coords = lambda ws: torch.flatten(torch.stack(torch.meshgrid(torch.arange(ws[0]), torch.arange(ws[1]), indexing="ij")), 1)
_relative_coords = lambda ws: (_window_coords(ws)[:, :, None] - _window_coords(ws)[:, None, :]).permute(1, 2, 0)
_relative_position_index = lambda ws: (
    (_relative_coords(ws)[:, :, 0] + ws[0] - 1) * (2 * ws[1] - 1) + _relative_coords(ws)[:, :, 1] + ws[1] - 1
).flatten()


INPUTS = {
    "layer_norm_2d": lambda: (torch.randn(2, 8, 5, 6), torch.randn(8), torch.randn(8), 1e-6),
    "cn_block": lambda: (
        torch.randn(2, 8, 5, 6), torch.randn(8, 1, 7, 7), torch.randn(8), torch.randn(8), torch.randn(8),
        torch.randn(32, 8), torch.randn(32), torch.randn(8, 32), torch.randn(8), torch.full((8, 1, 1), 1e-6),
    ),
    "convnext_head": lambda: (torch.randn(2, 8, 5, 6), torch.randn(8), torch.randn(8), torch.randn(10, 8), torch.randn(10)),
    "layer_norm_channels_first": lambda: (torch.randn(2, 8, 5, 6), torch.randn(8), torch.randn(8), 1e-6),
    "block": lambda: (
        torch.randn(2, 8, 5, 6), torch.randn(8, 1, 7, 7), torch.randn(8), torch.randn(8), torch.randn(8),
        torch.randn(32, 8), torch.randn(32), torch.randn(8, 32), torch.randn(8), torch.full((8,), 1e-6),
    ),
    "convnext_forward_head": lambda: (torch.randn(2, 8, 5, 6), torch.randn(8), torch.randn(8), torch.randn(10, 8), torch.randn(10)),
    "grn": lambda: (torch.randn(2, 5, 6, 8), torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)),
    "_patch_merging_pad": lambda: (torch.randn(2, 5, 6, 4),),
    "patch_merging": lambda: (torch.randn(2, 5, 6, 4), torch.randn(16), torch.randn(16), torch.randn(8, 16)),
    "_get_relative_position_bias": lambda: (torch.randn(25, 2), _relative_position_index([3, 3]), [3, 3]),
    "shifted_window_attention": lambda: (
        torch.randn(2, 7, 8, 8), torch.randn(24, 8), torch.randn(8, 8),
        _get_relative_position_bias(torch.randn(25, 2), _relative_position_index([3, 3]), [3, 3]), [3, 3], 2, [1, 1],
        0.0, 0.0, torch.randn(24), torch.randn(8), None, False,
    ),
    "shifted_window_attention_forward": lambda: (
        torch.randn(2, 7, 8, 8), torch.randn(24, 8), torch.randn(24), torch.randn(8, 8), torch.randn(8),
        torch.randn(25, 2), _relative_position_index([3, 3]), [3, 3], [1, 1], 2,
    ),
    "swin_block": lambda: (
        torch.randn(2, 7, 8, 8),
        torch.randn(8), torch.randn(8),
        torch.randn(24, 8), torch.randn(24), torch.randn(8, 8), torch.randn(8),
        torch.randn(25, 2), _relative_position_index([3, 3]),
        torch.randn(8), torch.randn(8),
        torch.randn(32, 8), torch.randn(32), torch.randn(8, 32), torch.randn(8),
        [3, 3], [1, 1], 2,
    ),
}
