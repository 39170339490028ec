"""DETR, Segment Anything and DINOv2 — three Meta vision projects, all under the Apache License
2.0: DETR (facebookresearch/detr): models/position_encoding.py, util/box_ops.py (with the
`box_area` it imports from torchvision, pytorch/vision, BSD 3-Clause), models/detr.py,
models/backbone.py and models/transformer.py; Segment Anything (facebookresearch/segment-anything):
segment_anything/modeling/image_encoder.py, common.py, prompt_encoder.py and sam.py; DINOv2
(facebookresearch/dinov2): dinov2/layers/swiglu_ffn.py, dinov2/layers/layer_scale.py and
dinov2/models/vision_transformer.py.

Forward paths rewritten as annotated top-level functions: module weights and registered buffers
(FrozenBatchNorm2d's statistics, PositionEmbeddingRandom's `positional_encoding_gaussian_matrix`,
DINOv2's `pos_embed`) are explicit parameters, `nn.Linear` / `nn.Embedding` / `nn.LayerNorm` /
`nn.GELU` calls are `F.linear` / `F.embedding` / `F.layer_norm` / `F.gelu`, DETR's
`nn.MultiheadAttention` call is the `F.multi_head_attention_forward` call it makes for
sequence-first input, dropout is the identity of eval mode, hyper-parameters (`num_heads`,
`window_size`, `temperature`, `img_size`, `interpolate_offset`, …) are int / float / bool
parameters. DETR's NestedTensor is taken apart into its `tensors` and `mask`; PostProcess returns
its three tensors instead of building the list of dicts. A `Tuple[int, int]` parameter is written
`tuple[int, int]`. Everything else is kept as the projects write it.
"""

import math
from typing import Any, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from torchlower.types import (
    TensorBoolCpu2D,
    TensorBoolCpu3D,
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu2D,
)


# DETR — models/position_encoding.py, PositionEmbeddingSine.forward (normalize=True, scale=2 * math.pi;
# `x` and `mask` are the NestedTensor's `tensors` and `mask`) (facebookresearch/detr)
def position_embedding_sine(
    x: TensorF32Cpu4D, mask: TensorBoolCpu3D, num_pos_feats: int, temperature: int, normalize: bool, scale: float
) -> TensorF32Cpu4D:
    assert mask is not None
    not_mask = ~mask
    y_embed = not_mask.cumsum(1, dtype=torch.float32)
    x_embed = not_mask.cumsum(2, dtype=torch.float32)
    if normalize:
        eps = 1e-6
        y_embed = y_embed / (y_embed[:, -1:, :] + eps) * scale
        x_embed = x_embed / (x_embed[:, :, -1:] + eps) * scale

    dim_t = torch.arange(num_pos_feats, dtype=torch.float32, device=x.device)
    dim_t = temperature ** (2 * (dim_t // 2) / num_pos_feats)

    pos_x = x_embed[:, :, :, None] / dim_t
    pos_y = y_embed[:, :, :, None] / dim_t
    pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
    pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
    pos = torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
    return pos


# DETR — models/position_encoding.py, PositionEmbeddingLearned.forward (`x` is the NestedTensor's
# `tensors`) (facebookresearch/detr)
def position_embedding_learned(x: TensorF32Cpu4D, row_embed: TensorF32Cpu2D, col_embed: TensorF32Cpu2D) -> TensorF32Cpu4D:
    h, w = x.shape[-2:]
    i = torch.arange(w, device=x.device)
    j = torch.arange(h, device=x.device)
    x_emb = F.embedding(i, col_embed)
    y_emb = F.embedding(j, row_embed)
    pos = torch.cat([
        x_emb.unsqueeze(0).repeat(h, 1, 1),
        y_emb.unsqueeze(1).repeat(1, w, 1),
    ], dim=-1).permute(2, 0, 1).unsqueeze(0).repeat(x.shape[0], 1, 1, 1)
    return pos


# DETR — util/box_ops.py, box_cxcywh_to_xyxy (facebookresearch/detr)
def box_cxcywh_to_xyxy(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    x_c, y_c, w, h = x.unbind(-1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h),
         (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=-1)


# DETR — util/box_ops.py, box_xyxy_to_cxcywh (facebookresearch/detr)
def box_xyxy_to_cxcywh(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    x0, y0, x1, y1 = x.unbind(-1)
    b = [(x0 + x1) / 2, (y0 + y1) / 2,
         (x1 - x0), (y1 - y0)]
    return torch.stack(b, dim=-1)


# torchvision — torchvision/ops/boxes.py, box_area as of torchvision 0.6–0.8, the releases DETR was
# written against (util/box_ops.py imports it; later releases add `_upcast`) (pytorch/vision)
def box_area(boxes: TensorF32Cpu2D) -> TensorF32Cpu1D:
    """
    Computes the area of a set of bounding boxes, which are specified by its
    (x1, y1, x2, y2) coordinates.

    Arguments:
        boxes (Tensor[N, 4]): boxes for which the area will be computed. They
            are expected to be in (x1, y1, x2, y2) format

    Returns:
        area (Tensor[N]): area for each box
    """
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


# DETR — util/box_ops.py, box_iou ("modified from torchvision to also return the union") (facebookresearch/detr)
def box_iou(boxes1: TensorF32Cpu2D, boxes2: TensorF32Cpu2D) -> tuple[TensorF32Cpu2D, TensorF32Cpu2D]:
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)

    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])  # [N,M,2]
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])  # [N,M,2]

    wh = (rb - lt).clamp(min=0)  # [N,M,2]
    inter = wh[:, :, 0] * wh[:, :, 1]  # [N,M]

    union = area1[:, None] + area2 - inter

    iou = inter / union
    return iou, union


# DETR — util/box_ops.py, generalized_box_iou (facebookresearch/detr)
def generalized_box_iou(boxes1: TensorF32Cpu2D, boxes2: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """
    Generalized IoU from https://giou.stanford.edu/

    The boxes should be in [x0, y0, x1, y1] format

    Returns a [N, M] pairwise matrix, where N = len(boxes1)
    and M = len(boxes2)
    """
    # degenerate boxes gives inf / nan results
    # so do an early check
    assert (boxes1[:, 2:] >= boxes1[:, :2]).all()
    assert (boxes2[:, 2:] >= boxes2[:, :2]).all()
    iou, union = box_iou(boxes1, boxes2)

    lt = torch.min(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])

    wh = (rb - lt).clamp(min=0)  # [N,M,2]
    area = wh[:, :, 0] * wh[:, :, 1]

    return iou - (area - union) / area


# DETR — models/detr.py, MLP.forward (num_layers=3, as DETR's `bbox_embed = MLP(hidden_dim, hidden_dim, 4, 3)`;
# `self.layers`, an nn.ModuleList of nn.Linear, is the list of their (weight, bias)) (facebookresearch/detr)
def mlp(
    x: TensorF32Cpu3D,
    layer0_weight: TensorF32Cpu2D, layer0_bias: TensorF32Cpu1D,
    layer1_weight: TensorF32Cpu2D, layer1_bias: TensorF32Cpu1D,
    layer2_weight: TensorF32Cpu2D, layer2_bias: TensorF32Cpu1D,
    num_layers: int,
) -> TensorF32Cpu3D:
    layers = [(layer0_weight, layer0_bias), (layer1_weight, layer1_bias), (layer2_weight, layer2_bias)]
    for i, (weight, bias) in enumerate(layers):
        x = F.relu(F.linear(x, weight, bias)) if i < num_layers - 1 else F.linear(x, weight, bias)
    return x


# DETR — models/detr.py, PostProcess.forward (`out_logits`, `out_bbox` are outputs['pred_logits'],
# outputs['pred_boxes']; returns scores, labels, boxes instead of the list of dicts
# `[{'scores': s, 'labels': l, 'boxes': b} for s, l, b in zip(scores, labels, boxes)]`) (facebookresearch/detr)
@torch.no_grad()
def post_process(
    out_logits: TensorF32Cpu3D, out_bbox: TensorF32Cpu3D, target_sizes: TensorI64Cpu2D
) -> tuple[TensorF32Cpu2D, TensorI64Cpu2D, TensorF32Cpu3D]:
    """ Perform the computation
    Parameters:
        outputs: raw outputs of the model
        target_sizes: tensor of dimension [batch_size x 2] containing the size of each images of the batch
                      For evaluation, this must be the original image size (before any data augmentation)
                      For visualization, this should be the image size after data augment, but before padding
    """
    assert len(out_logits) == len(target_sizes)
    assert target_sizes.shape[1] == 2

    prob = F.softmax(out_logits, -1)
    scores, labels = prob[..., :-1].max(-1)

    # convert to [x0, y0, x1, y1] format
    boxes = box_cxcywh_to_xyxy(out_bbox)
    # and from relative [0, 1] to absolute [0, height] coordinates
    img_h, img_w = target_sizes.unbind(1)
    scale_fct = torch.stack([img_w, img_h, img_w, img_h], dim=1)
    boxes = boxes * scale_fct[:, None, :]

    return scores, labels, boxes


# DETR — models/backbone.py, FrozenBatchNorm2d.forward (facebookresearch/detr)
def frozen_batch_norm_2d(
    x: TensorF32Cpu4D, weight: TensorF32Cpu1D, bias: TensorF32Cpu1D, running_mean: TensorF32Cpu1D, running_var: TensorF32Cpu1D
) -> TensorF32Cpu4D:
    # move reshapes to the beginning
    # to make it fuser-friendly
    w = weight.reshape(1, -1, 1, 1)
    b = bias.reshape(1, -1, 1, 1)
    rv = running_var.reshape(1, -1, 1, 1)
    rm = running_mean.reshape(1, -1, 1, 1)
    eps = 1e-5
    scale = w * (rv + eps).rsqrt()
    bias = b - rm * scale
    return x * scale + bias


# DETR — models/transformer.py, TransformerEncoderLayer.with_pos_embed (facebookresearch/detr)
def with_pos_embed(tensor: TensorF32Cpu3D, pos: Optional[TensorF32Cpu3D]) -> TensorF32Cpu3D:
    return tensor if pos is None else tensor + pos


# DETR — models/transformer.py, TransformerEncoderLayer.forward_post (normalize_before=False,
# activation="relu": `self.activation` is F.relu) (facebookresearch/detr)
def transformer_encoder_layer_forward_post(
    src: TensorF32Cpu3D,
    in_proj_weight: TensorF32Cpu2D, in_proj_bias: TensorF32Cpu1D,
    out_proj_weight: TensorF32Cpu2D, out_proj_bias: TensorF32Cpu1D,
    linear1_weight: TensorF32Cpu2D, linear1_bias: TensorF32Cpu1D,
    linear2_weight: TensorF32Cpu2D, linear2_bias: TensorF32Cpu1D,
    norm1_weight: TensorF32Cpu1D, norm1_bias: TensorF32Cpu1D,
    norm2_weight: TensorF32Cpu1D, norm2_bias: TensorF32Cpu1D,
    nhead: int,
    src_mask: Optional[TensorF32Cpu2D] = None,
    src_key_padding_mask: Optional[TensorBoolCpu2D] = None,
    pos: Optional[TensorF32Cpu3D] = None,
) -> TensorF32Cpu3D:
    q = k = with_pos_embed(src, pos)
    # self.self_attn(q, k, value=src, attn_mask=src_mask, key_padding_mask=src_key_padding_mask)[0]:
    # nn.MultiheadAttention(d_model, nhead) in eval mode, need_weights left at its default True
    src2 = F.multi_head_attention_forward(
        q, k, src, src.shape[-1], nhead,
        in_proj_weight, in_proj_bias,
        None, None, False, 0.0,
        out_proj_weight, out_proj_bias,
        training=False, key_padding_mask=src_key_padding_mask, need_weights=True, attn_mask=src_mask,
    )[0]
    src = src + src2
    src = F.layer_norm(src, (norm1_weight.shape[0],), norm1_weight, norm1_bias, 1e-5)
    src2 = F.linear(F.relu(F.linear(src, linear1_weight, linear1_bias)), linear2_weight, linear2_bias)
    src = src + src2
    src = F.layer_norm(src, (norm2_weight.shape[0],), norm2_weight, norm2_bias, 1e-5)
    return src


# Segment Anything — segment_anything/modeling/image_encoder.py, window_partition (facebookresearch/segment-anything)
def window_partition(x: TensorF32Cpu4D, window_size: int) -> tuple[TensorF32Cpu4D, tuple[int, int]]:
    """
    Partition into non-overlapping windows with padding if needed.
    Args:
        x (tensor): input tokens with [B, H, W, C].
        window_size (int): window size.

    Returns:
        windows: windows after partition with [B * num_windows, window_size, window_size, C].
        (Hp, Wp): padded height and width before partition
    """
    B, H, W, C = x.shape

    pad_h = (window_size - H % window_size) % window_size
    pad_w = (window_size - W % window_size) % window_size
    if pad_h > 0 or pad_w > 0:
        x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h))
    Hp, Wp = H + pad_h, W + pad_w

    x = x.view(B, Hp // window_size, window_size, Wp // window_size, window_size, C)
    windows = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)
    return windows, (Hp, Wp)


# Segment Anything — segment_anything/modeling/image_encoder.py, window_unpartition (facebookresearch/segment-anything)
def window_unpartition(
    windows: TensorF32Cpu4D, window_size: int, pad_hw: tuple[int, int], hw: tuple[int, int]
) -> TensorF32Cpu4D:
    """
    Window unpartition into original sequences and removing padding.
    Args:
        x (tensor): input tokens with [B * num_windows, window_size, window_size, C].
        window_size (int): window size.
        pad_hw (Tuple): padded height and width (Hp, Wp).
        hw (Tuple): original height and width (H, W) before padding.

    Returns:
        x: unpartitioned sequences with [B, H, W, C].
    """
    Hp, Wp = pad_hw
    H, W = hw
    B = windows.shape[0] // (Hp * Wp // window_size // window_size)
    x = windows.view(B, Hp // window_size, Wp // window_size, window_size, window_size, -1)
    x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, Hp, Wp, -1)

    if Hp > H or Wp > W:
        x = x[:, :H, :W, :].contiguous()
    return x


# Segment Anything — segment_anything/modeling/image_encoder.py, get_rel_pos (facebookresearch/segment-anything)
def get_rel_pos(q_size: int, k_size: int, rel_pos: TensorF32Cpu2D) -> TensorF32Cpu3D:
    """
    Get relative positional embeddings according to the relative positions of
        query and key sizes.
    Args:
        q_size (int): size of query q.
        k_size (int): size of key k.
        rel_pos (Tensor): relative position embeddings (L, C).

    Returns:
        Extracted positional embeddings according to relative positions.
    """
    max_rel_dist = int(2 * max(q_size, k_size) - 1)
    # Interpolate rel pos if needed.
    if rel_pos.shape[0] != max_rel_dist:
        # Interpolate rel pos.
        rel_pos_resized = F.interpolate(
            rel_pos.reshape(1, rel_pos.shape[0], -1).permute(0, 2, 1),
            size=max_rel_dist,
            mode="linear",
        )
        rel_pos_resized = rel_pos_resized.reshape(-1, max_rel_dist).permute(1, 0)
    else:
        rel_pos_resized = rel_pos

    # Scale the coords with short length if shapes for q and k are different.
    q_coords = torch.arange(q_size)[:, None] * max(k_size / q_size, 1.0)
    k_coords = torch.arange(k_size)[None, :] * max(q_size / k_size, 1.0)
    relative_coords = (q_coords - k_coords) + (k_size - 1) * max(q_size / k_size, 1.0)

    return rel_pos_resized[relative_coords.long()]


# Segment Anything — segment_anything/modeling/image_encoder.py, add_decomposed_rel_pos (facebookresearch/segment-anything)
def add_decomposed_rel_pos(
    attn: TensorF32Cpu3D,
    q: TensorF32Cpu3D,
    rel_pos_h: TensorF32Cpu2D,
    rel_pos_w: TensorF32Cpu2D,
    q_size: tuple[int, int],
    k_size: tuple[int, int],
) -> TensorF32Cpu3D:
    """
    Calculate decomposed Relative Positional Embeddings from :paper:`mvitv2`.
    https://github.com/facebookresearch/mvit/blob/19786631e330df9f3622e5402b4a419a263a2c80/mvit/models/attention.py   # noqa B950
    Args:
        attn (Tensor): attention map.
        q (Tensor): query q in the attention layer with shape (B, q_h * q_w, C).
        rel_pos_h (Tensor): relative position embeddings (Lh, C) for height axis.
        rel_pos_w (Tensor): relative position embeddings (Lw, C) for width axis.
        q_size (Tuple): spatial sequence size of query q with (q_h, q_w).
        k_size (Tuple): spatial sequence size of key k with (k_h, k_w).

    Returns:
        attn (Tensor): attention map with added relative positional embeddings.
    """
    q_h, q_w = q_size
    k_h, k_w = k_size
    Rh = get_rel_pos(q_h, k_h, rel_pos_h)
    Rw = get_rel_pos(q_w, k_w, rel_pos_w)

    B, _, dim = q.shape
    r_q = q.reshape(B, q_h, q_w, dim)
    rel_h = torch.einsum("bhwc,hkc->bhwk", r_q, Rh)
    rel_w = torch.einsum("bhwc,wkc->bhwk", r_q, Rw)

    attn = (
        attn.view(B, q_h, q_w, k_h, k_w) + rel_h[:, :, :, :, None] + rel_w[:, :, :, None, :]
    ).view(B, q_h * q_w, k_h * k_w)

    return attn


# Segment Anything — segment_anything/modeling/image_encoder.py, Attention.forward (use_rel_pos=True)
# (facebookresearch/segment-anything)
def attention(
    x: TensorF32Cpu4D,
    qkv_weight: TensorF32Cpu2D, qkv_bias: TensorF32Cpu1D,
    proj_weight: TensorF32Cpu2D, proj_bias: TensorF32Cpu1D,
    rel_pos_h: TensorF32Cpu2D, rel_pos_w: TensorF32Cpu2D,
    num_heads: int,
    use_rel_pos: bool,
) -> TensorF32Cpu4D:
    head_dim = x.shape[-1] // num_heads  # Attention.__init__: head_dim = dim // num_heads
    scale = head_dim**-0.5  # Attention.__init__: self.scale = head_dim**-0.5
    B, H, W, _ = x.shape
    # qkv with shape (3, B, nHead, H * W, C)
    qkv = F.linear(x, qkv_weight, qkv_bias).reshape(B, H * W, 3, num_heads, -1).permute(2, 0, 3, 1, 4)
    # q, k, v with shape (B * nHead, H * W, C)
    q, k, v = qkv.reshape(3, B * num_heads, H * W, -1).unbind(0)

    attn = (q * scale) @ k.transpose(-2, -1)

    if use_rel_pos:
        attn = add_decomposed_rel_pos(attn, q, rel_pos_h, rel_pos_w, (H, W), (H, W))

    attn = attn.softmax(dim=-1)
    x = (attn @ v).view(B, num_heads, H, W, -1).permute(0, 2, 3, 1, 4).reshape(B, H, W, -1)
    x = F.linear(x, proj_weight, proj_bias)

    return x


# Segment Anything — segment_anything/modeling/common.py, LayerNorm2d.forward (facebookresearch/segment-anything)
def layer_norm_2d(x: TensorF32Cpu4D, weight: TensorF32Cpu1D, bias: TensorF32Cpu1D, eps: float) -> TensorF32Cpu4D:
    u = x.mean(1, keepdim=True)
    s = (x - u).pow(2).mean(1, keepdim=True)
    x = (x - u) / torch.sqrt(s + eps)
    x = weight[:, None, None] * x + bias[:, None, None]
    return x


# Segment Anything — segment_anything/modeling/common.py, MLPBlock.forward (act=nn.GELU, as the image
# encoder's Block builds it) (facebookresearch/segment-anything)
def mlp_block(
    x: TensorF32Cpu4D, lin1_weight: TensorF32Cpu2D, lin1_bias: TensorF32Cpu1D, lin2_weight: TensorF32Cpu2D, lin2_bias: TensorF32Cpu1D
) -> TensorF32Cpu4D:
    return F.linear(F.gelu(F.linear(x, lin1_weight, lin1_bias)), lin2_weight, lin2_bias)


# Segment Anything — segment_anything/modeling/prompt_encoder.py, PositionEmbeddingRandom._pe_encoding
# (facebookresearch/segment-anything)
def _pe_encoding(coords: TensorF32Cpu3D, positional_encoding_gaussian_matrix: TensorF32Cpu2D) -> TensorF32Cpu3D:
    """Positionally encode points that are normalized to [0,1]."""
    # assuming coords are in [0, 1]^2 square and have d_1 x ... x d_n x 2 shape
    coords = 2 * coords - 1
    coords = coords @ positional_encoding_gaussian_matrix
    coords = 2 * np.pi * coords
    # outputs d_1 x ... x d_n x C shape
    return torch.cat([torch.sin(coords), torch.cos(coords)], dim=-1)


# Segment Anything — segment_anything/modeling/prompt_encoder.py, PositionEmbeddingRandom.forward
# (facebookresearch/segment-anything)
def position_embedding_random(size: tuple[int, int], positional_encoding_gaussian_matrix: TensorF32Cpu2D) -> TensorF32Cpu3D:
    """Generate positional encoding for a grid of the specified size."""
    h, w = size
    device: Any = positional_encoding_gaussian_matrix.device
    grid = torch.ones((h, w), device=device, dtype=torch.float32)
    y_embed = grid.cumsum(dim=0) - 0.5
    x_embed = grid.cumsum(dim=1) - 0.5
    y_embed = y_embed / h
    x_embed = x_embed / w

    pe = _pe_encoding(torch.stack([x_embed, y_embed], dim=-1), positional_encoding_gaussian_matrix)
    return pe.permute(2, 0, 1)  # C x H x W


# Segment Anything — segment_anything/modeling/sam.py, Sam.postprocess_masks (`img_size` is
# self.image_encoder.img_size) (facebookresearch/segment-anything)
def postprocess_masks(
    masks: TensorF32Cpu4D,
    input_size: tuple[int, int],
    original_size: tuple[int, int],
    img_size: int,
) -> TensorF32Cpu4D:
    """
    Remove padding and upscale masks to the original image size.

    Arguments:
      masks (torch.Tensor): Batched masks from the mask_decoder,
        in BxCxHxW format.
      input_size (tuple(int, int)): The size of the image input to the
        model, in (H, W) format. Used to remove padding.
      original_size (tuple(int, int)): The original size of the image
        before resizing for input to the model, in (H, W) format.

    Returns:
      (torch.Tensor): Batched masks in BxCxHxW format, where (H, W)
        is given by original_size.
    """
    masks = F.interpolate(
        masks,
        (img_size, img_size),
        mode="bilinear",
        align_corners=False,
    )
    masks = masks[..., : input_size[0], : input_size[1]]
    masks = F.interpolate(masks, original_size, mode="bilinear", align_corners=False)
    return masks


# DINOv2 — dinov2/layers/swiglu_ffn.py, SwiGLUFFN.forward (facebookresearch/dinov2)
def swiglu_ffn(
    x: TensorF32Cpu3D, w12_weight: TensorF32Cpu2D, w12_bias: TensorF32Cpu1D, w3_weight: TensorF32Cpu2D, w3_bias: TensorF32Cpu1D
) -> TensorF32Cpu3D:
    x12 = F.linear(x, w12_weight, w12_bias)
    x1, x2 = x12.chunk(2, dim=-1)
    hidden = F.silu(x1) * x2
    return F.linear(hidden, w3_weight, w3_bias)


# DINOv2 — dinov2/layers/layer_scale.py, LayerScale.forward (facebookresearch/dinov2)
def layer_scale(x: TensorF32Cpu3D, gamma: TensorF32Cpu1D, inplace: bool) -> TensorF32Cpu3D:
    return x.mul_(gamma) if inplace else x * gamma


# DINOv2 — dinov2/models/vision_transformer.py, DinoVisionTransformer.interpolate_pos_encoding
# (`pos_embed` is the model's parameter; `patch_size`, `interpolate_offset`, `interpolate_antialias`
# its constructor arguments) (facebookresearch/dinov2)
def interpolate_pos_encoding(
    x: TensorF32Cpu3D,
    w: int,
    h: int,
    pos_embed: TensorF32Cpu3D,
    patch_size: int,
    interpolate_offset: float,
    interpolate_antialias: bool,
) -> TensorF32Cpu3D:
    previous_dtype = x.dtype
    npatch = x.shape[1] - 1
    N = pos_embed.shape[1] - 1
    if npatch == N and w == h:
        return pos_embed
    pos_embed = pos_embed.float()
    class_pos_embed = pos_embed[:, 0]
    patch_pos_embed = pos_embed[:, 1:]
    dim = x.shape[-1]
    w0 = w // patch_size
    h0 = h // patch_size
    M = int(math.sqrt(N))  # Recover the number of patches in each dimension
    assert N == M * M
    kwargs = {}
    if interpolate_offset:
        # Historical kludge: add a small number to avoid floating point error in the interpolation, see https://github.com/facebookresearch/dino/issues/8
        # Note: still needed for backward-compatibility, the underlying operators are using both output size and scale factors
        sx = float(w0 + interpolate_offset) / M
        sy = float(h0 + interpolate_offset) / M
        kwargs["scale_factor"] = (sx, sy)
    else:
        # Simply specify an output size instead of a scale factor
        kwargs["size"] = (w0, h0)
    patch_pos_embed = nn.functional.interpolate(
        patch_pos_embed.reshape(1, M, M, dim).permute(0, 3, 1, 2),
        mode="bicubic",
        antialias=interpolate_antialias,
        **kwargs,
    )
    assert (w0, h0) == patch_pos_embed.shape[-2:]
    patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
    return torch.cat((class_pos_embed.unsqueeze(0), patch_pos_embed), dim=1).to(previous_dtype)


# A DETR padding mask (True where padded): image 0 fills the batch, image 1 is 4 x 4 of 5 x 6
_padding_mask = lambda: torch.tensor(
    [[[False] * 6] * 5, [[False] * 4 + [True] * 2] * 4 + [[True] * 6]]
)
# xyxy boxes with x1 >= x0 and y1 >= y0, as generalized_box_iou asserts
_boxes = lambda n: box_cxcywh_to_xyxy(torch.cat([torch.rand(n, 2), torch.rand(n, 2) * 0.5 + 0.1], dim=1))


INPUTS = {
    "position_embedding_sine": lambda: (torch.randn(2, 8, 5, 6), _padding_mask(), 4, 10000, True, 2 * math.pi),
    "position_embedding_learned": lambda: (torch.randn(2, 8, 5, 6), torch.rand(50, 4), torch.rand(50, 4)),
    "box_cxcywh_to_xyxy": lambda: (torch.rand(6, 4),),
    "box_xyxy_to_cxcywh": lambda: (_boxes(6),),
    "box_area": lambda: (_boxes(6),),
    "box_iou": lambda: (_boxes(6), _boxes(4)),
    "generalized_box_iou": lambda: (_boxes(6), _boxes(4)),
    "mlp": lambda: (
        torch.randn(2, 5, 16), torch.randn(16, 16), torch.randn(16), torch.randn(16, 16), torch.randn(16),
        torch.randn(4, 16), torch.randn(4), 3,
    ),
    "post_process": lambda: (torch.randn(2, 5, 8), torch.rand(2, 5, 4), torch.tensor([[480, 640], [600, 400]])),
    "frozen_batch_norm_2d": lambda: (
        torch.randn(2, 8, 5, 6), torch.randn(8), torch.randn(8), torch.randn(8), torch.rand(8) + 0.5,
    ),
    "with_pos_embed": lambda: (torch.randn(30, 2, 16), torch.randn(30, 2, 16)),
    "transformer_encoder_layer_forward_post": lambda: (
        torch.randn(30, 2, 16),
        torch.randn(48, 16), torch.randn(48), torch.randn(16, 16), torch.randn(16),
        torch.randn(32, 16), torch.randn(32), torch.randn(16, 32), torch.randn(16),
        torch.randn(16), torch.randn(16), torch.randn(16), torch.randn(16),
        2,
        None, _padding_mask().flatten(1), torch.randn(30, 2, 16),
    ),
    "window_partition": lambda: (torch.randn(2, 5, 6, 8), 4),
    "window_unpartition": lambda: (torch.randn(8, 4, 4, 8), 4, (8, 8), (5, 6)),
    "get_rel_pos": lambda: (4, 4, torch.randn(5, 8)),
    "add_decomposed_rel_pos": lambda: (
        torch.randn(4, 16, 16), torch.randn(4, 16, 8), torch.randn(7, 8), torch.randn(7, 8), (4, 4), (4, 4),
    ),
    "attention": lambda: (
        torch.randn(2, 4, 4, 16), torch.randn(48, 16), torch.randn(48), torch.randn(16, 16), torch.randn(16),
        torch.randn(7, 8), torch.randn(7, 8), 2, True,
    ),
    "layer_norm_2d": lambda: (torch.randn(2, 8, 5, 6), torch.randn(8), torch.randn(8), 1e-6),
    "mlp_block": lambda: (torch.randn(2, 4, 4, 16), torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16)),
    "_pe_encoding": lambda: (torch.rand(2, 3, 2), torch.randn(2, 8)),
    "position_embedding_random": lambda: ((4, 5), torch.randn(2, 8)),
    "postprocess_masks": lambda: (torch.randn(1, 3, 8, 8), (16, 12), (24, 18), 16),
    "swiglu_ffn": lambda: (torch.randn(2, 5, 16), torch.randn(64, 16), torch.randn(64), torch.randn(16, 32), torch.randn(16)),
    "layer_scale": lambda: (torch.randn(2, 5, 16), torch.full((16,), 1e-5), False),
    "interpolate_pos_encoding": lambda: (torch.randn(2, 1 + 6 * 5, 8), 84, 70, torch.randn(1, 1 + 16, 8), 14, 0.1, False),
}
