"""torchvision (pytorch/vision, BSD 3-Clause License) — torchvision/ops/boxes.py,
torchvision/ops/_box_convert.py, torchvision/ops/misc.py, torchvision/models/resnet.py,
torchvision/models/mobilenetv2.py and torchvision/models/vision_transformer.py.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters, `nn.Conv2d` / `nn.Linear` are `F.conv2d` / `F.linear`, BatchNorm2d in eval mode is
`F.batch_norm(..., training=False)`, dropout is dropped, the `_log_api_usage_once` logging
calls are dropped. Everything else is kept as the project writes it.
"""

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu1D,
)


# torchvision — torchvision/ops/boxes.py, _upcast (pytorch/vision)
def _upcast(t: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # Protects from numerical overflows in multiplications by upcasting to the equivalent higher type
    if t.is_floating_point():
        return t if t.dtype in (torch.float32, torch.float64) else t.float()
    else:
        return t if t.dtype in (torch.int32, torch.int64) else t.int()


# torchvision — torchvision/ops/boxes.py, box_area (pytorch/vision)
def box_area(boxes: TensorF32Cpu2D) -> TensorF32Cpu1D:
    """
    Computes the area of a set of bounding boxes, which are specified by their
    (x1, y1, x2, y2) coordinates.
    """
    boxes = _upcast(boxes)
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


# torchvision — torchvision/ops/boxes.py, _box_inter_union (pytorch/vision)
def _box_inter_union(boxes1: TensorF32Cpu2D, boxes2: TensorF32Cpu2D) -> tuple[TensorF32Cpu2D, TensorF32Cpu2D]:
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)

    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])  # [N,M,2]
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])  # [N,M,2]

    wh = _upcast(rb - lt).clamp(min=0)  # [N,M,2]
    inter = wh[:, :, 0] * wh[:, :, 1]  # [N,M]

    union = area1[:, None] + area2 - inter

    return inter, union


# torchvision — torchvision/ops/boxes.py, box_iou (pytorch/vision)
def box_iou(boxes1: TensorF32Cpu2D, boxes2: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """
    Return intersection-over-union (Jaccard index) between two sets of boxes.
    """
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    return iou


# torchvision — torchvision/ops/boxes.py, generalized_box_iou (pytorch/vision)
def generalized_box_iou(boxes1: TensorF32Cpu2D, boxes2: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """
    Return generalized intersection-over-union (Jaccard index) between two sets of boxes.
    """
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union

    lti = torch.min(boxes1[:, None, :2], boxes2[:, :2])
    rbi = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])

    whi = _upcast(rbi - lti).clamp(min=0)  # [N,M,2]
    areai = whi[:, :, 0] * whi[:, :, 1]

    return iou - (areai - union) / areai


# torchvision — torchvision/ops/_box_convert.py, _box_cxcywh_to_xyxy (pytorch/vision)
def _box_cxcywh_to_xyxy(boxes: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """
    Converts bounding boxes from (cx, cy, w, h) format to (x1, y1, x2, y2) format.
    (cx, cy) refers to center of bounding box
    (w, h) are width and height of bounding box
    """
    # We need to change all 4 of them so some temporary variable is needed.
    cx, cy, w, h = boxes.unbind(-1)
    x1 = cx - 0.5 * w
    y1 = cy - 0.5 * h
    x2 = cx + 0.5 * w
    y2 = cy + 0.5 * h

    boxes = torch.stack((x1, y1, x2, y2), dim=-1)

    return boxes


# torchvision — torchvision/ops/boxes.py, remove_small_boxes (pytorch/vision)
def remove_small_boxes(boxes: TensorF32Cpu2D, min_size: float) -> TensorI64Cpu1D:
    """
    Remove every box from ``boxes`` which contains at least one side length
    that is smaller than ``min_size``.
    """
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    keep = torch.where(keep)[0]
    return keep


# torchvision — torchvision/models/resnet.py, BasicBlock.forward (downsample is None) (pytorch/vision)
def basic_block(
    x: TensorF32Cpu4D,
    conv1_weight: TensorF32Cpu4D,
    bn1_weight: TensorF32Cpu1D,
    bn1_bias: TensorF32Cpu1D,
    bn1_running_mean: TensorF32Cpu1D,
    bn1_running_var: TensorF32Cpu1D,
    conv2_weight: TensorF32Cpu4D,
    bn2_weight: TensorF32Cpu1D,
    bn2_bias: TensorF32Cpu1D,
    bn2_running_mean: TensorF32Cpu1D,
    bn2_running_var: TensorF32Cpu1D,
) -> TensorF32Cpu4D:
    identity = x

    out = F.conv2d(x, conv1_weight, None, 1, 1)
    out = F.batch_norm(out, bn1_running_mean, bn1_running_var, bn1_weight, bn1_bias, False, 0.1, 1e-5)
    out = F.relu(out, inplace=True)

    out = F.conv2d(out, conv2_weight, None, 1, 1)
    out = F.batch_norm(out, bn2_running_mean, bn2_running_var, bn2_weight, bn2_bias, False, 0.1, 1e-5)

    out += identity
    out = F.relu(out, inplace=True)

    return out


# torchvision — torchvision/models/resnet.py, ResNet._forward_impl, stem (conv1, bn1, relu, maxpool) (pytorch/vision)
def resnet_stem(
    x: TensorF32Cpu4D,
    conv1_weight: TensorF32Cpu4D,
    bn1_weight: TensorF32Cpu1D,
    bn1_bias: TensorF32Cpu1D,
    bn1_running_mean: TensorF32Cpu1D,
    bn1_running_var: TensorF32Cpu1D,
) -> TensorF32Cpu4D:
    x = F.conv2d(x, conv1_weight, None, 2, 3)
    x = F.batch_norm(x, bn1_running_mean, bn1_running_var, bn1_weight, bn1_bias, False, 0.1, 1e-5)
    x = F.relu(x, inplace=True)
    x = F.max_pool2d(x, kernel_size=3, stride=2, padding=1)
    return x


# torchvision — torchvision/models/resnet.py, ResNet._forward_impl, head (avgpool, flatten, fc) (pytorch/vision)
def resnet_head(x: TensorF32Cpu4D, fc_weight: TensorF32Cpu2D, fc_bias: TensorF32Cpu1D) -> TensorF32Cpu2D:
    x = F.adaptive_avg_pool2d(x, (1, 1))
    x = torch.flatten(x, 1)
    x = F.linear(x, fc_weight, fc_bias)

    return x


# torchvision — torchvision/models/mobilenetv2.py, MobileNetV2._forward_impl after self.features (pytorch/vision)
def mobilenet_v2_head(x: TensorF32Cpu4D, classifier_1_weight: TensorF32Cpu2D, classifier_1_bias: TensorF32Cpu1D) -> TensorF32Cpu2D:
    # Cannot use "squeeze" as batch-size can be 1
    x = F.adaptive_avg_pool2d(x, (1, 1))
    x = torch.flatten(x, 1)
    x = F.linear(x, classifier_1_weight, classifier_1_bias)
    return x


# torchvision — torchvision/ops/misc.py, SqueezeExcitation._scale (ReLU / Sigmoid) (pytorch/vision)
def _scale(
    input: TensorF32Cpu4D, fc1_weight: TensorF32Cpu4D, fc1_bias: TensorF32Cpu1D, fc2_weight: TensorF32Cpu4D, fc2_bias: TensorF32Cpu1D
) -> TensorF32Cpu4D:
    scale = F.adaptive_avg_pool2d(input, 1)
    scale = F.conv2d(scale, fc1_weight, fc1_bias)
    scale = F.relu(scale)
    scale = F.conv2d(scale, fc2_weight, fc2_bias)
    return torch.sigmoid(scale)


# torchvision — torchvision/ops/misc.py, SqueezeExcitation.forward (pytorch/vision)
def squeeze_excitation(
    input: TensorF32Cpu4D, fc1_weight: TensorF32Cpu4D, fc1_bias: TensorF32Cpu1D, fc2_weight: TensorF32Cpu4D, fc2_bias: TensorF32Cpu1D
) -> TensorF32Cpu4D:
    scale = _scale(input, fc1_weight, fc1_bias, fc2_weight, fc2_bias)
    return scale * input


# torchvision — torchvision/models/vision_transformer.py, VisionTransformer._process_input (pytorch/vision)
def vit_process_input(
    x: TensorF32Cpu4D, conv_proj_weight: TensorF32Cpu4D, conv_proj_bias: TensorF32Cpu1D, patch_size: int, image_size: int, hidden_dim: int
) -> TensorF32Cpu3D:
    n, c, h, w = x.shape
    p = patch_size
    torch._assert(h == image_size, f"Wrong image height! Expected {image_size} but got {h}!")
    torch._assert(w == image_size, f"Wrong image width! Expected {image_size} but got {w}!")
    n_h = h // p
    n_w = w // p

    # (n, c, h, w) -> (n, hidden_dim, n_h, n_w)
    x = F.conv2d(x, conv_proj_weight, conv_proj_bias, stride=patch_size)
    # (n, hidden_dim, n_h, n_w) -> (n, hidden_dim, (n_h * n_w))
    x = x.reshape(n, hidden_dim, n_h * n_w)

    # (n, hidden_dim, (n_h * n_w)) -> (n, (n_h * n_w), hidden_dim)
    # The self attention layer expects inputs in the format (N, S, E)
    # where S is the source sequence length, N is the batch size, E is the
    # embedding dimension
    x = x.permute(0, 2, 1)

    return x


# torchvision — torchvision/models/vision_transformer.py, VisionTransformer.forward, class token before the encoder (pytorch/vision)
def vit_prepend_class_token(x: TensorF32Cpu3D, class_token: TensorF32Cpu3D) -> TensorF32Cpu3D:
    n = x.shape[0]

    # Expand the class token to the full batch
    batch_class_token = class_token.expand(n, -1, -1)
    x = torch.cat([batch_class_token, x], dim=1)
    return x


# torchvision — torchvision/models/vision_transformer.py, VisionTransformer.forward, after the encoder (pytorch/vision)
def vit_classifier_head(x: TensorF32Cpu3D, head_weight: TensorF32Cpu2D, head_bias: TensorF32Cpu1D) -> TensorF32Cpu2D:
    # Classifier "token" as used by standard language architectures
    x = x[:, 0]

    x = F.linear(x, head_weight, head_bias)

    return x


INPUTS = {
    "_upcast": lambda: (torch.rand(4, 4),),
    "box_area": lambda: (torch.tensor([[0.0, 0.0, 2.0, 3.0], [1.0, 1.0, 4.0, 2.0], [2.0, 0.5, 2.5, 6.0]]),),
    "_box_inter_union": lambda: (
        torch.tensor([[0.0, 0.0, 2.0, 3.0], [1.0, 1.0, 4.0, 2.0], [2.0, 0.5, 2.5, 6.0]]),
        torch.tensor([[0.5, 0.5, 2.5, 2.5], [3.0, 0.0, 5.0, 5.0]]),
    ),
    "box_iou": lambda: (
        torch.tensor([[0.0, 0.0, 2.0, 3.0], [1.0, 1.0, 4.0, 2.0], [2.0, 0.5, 2.5, 6.0]]),
        torch.tensor([[0.5, 0.5, 2.5, 2.5], [3.0, 0.0, 5.0, 5.0]]),
    ),
    "generalized_box_iou": lambda: (
        torch.tensor([[0.0, 0.0, 2.0, 3.0], [1.0, 1.0, 4.0, 2.0], [2.0, 0.5, 2.5, 6.0]]),
        torch.tensor([[0.5, 0.5, 2.5, 2.5], [3.0, 0.0, 5.0, 5.0]]),
    ),
    "_box_cxcywh_to_xyxy": lambda: (torch.tensor([[1.0, 1.5, 2.0, 3.0], [2.5, 1.5, 3.0, 1.0]]),),
    "remove_small_boxes": lambda: (torch.tensor([[0.0, 0.0, 2.0, 3.0], [1.0, 1.0, 4.0, 1.2], [2.0, 0.5, 2.5, 6.0]]), 0.4),
    "basic_block": lambda: (
        torch.randn(2, 8, 6, 6),
        torch.randn(8, 8, 3, 3), torch.randn(8), torch.randn(8), torch.randn(8), torch.rand(8) + 0.5,
        torch.randn(8, 8, 3, 3), torch.randn(8), torch.randn(8), torch.randn(8), torch.rand(8) + 0.5,
    ),
    "resnet_stem": lambda: (
        torch.randn(2, 3, 32, 32), torch.randn(8, 3, 7, 7), torch.randn(8), torch.randn(8), torch.randn(8), torch.rand(8) + 0.5,
    ),
    "resnet_head": lambda: (torch.randn(2, 8, 4, 4), torch.randn(10, 8), torch.randn(10)),
    "mobilenet_v2_head": lambda: (torch.randn(2, 8, 4, 4), torch.randn(10, 8), torch.randn(10)),
    "_scale": lambda: (torch.randn(2, 8, 4, 4), torch.randn(2, 8, 1, 1), torch.randn(2), torch.randn(8, 2, 1, 1), torch.randn(8)),
    "squeeze_excitation": lambda: (torch.randn(2, 8, 4, 4), torch.randn(2, 8, 1, 1), torch.randn(2), torch.randn(8, 2, 1, 1), torch.randn(8)),
    "vit_process_input": lambda: (torch.randn(2, 3, 8, 8), torch.randn(16, 3, 4, 4), torch.randn(16), 4, 8, 16),
    "vit_prepend_class_token": lambda: (torch.randn(2, 4, 16), torch.zeros(1, 1, 16)),
    "vit_classifier_head": lambda: (torch.randn(2, 5, 16), torch.randn(10, 16), torch.randn(10)),
}
