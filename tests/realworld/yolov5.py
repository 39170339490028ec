"""YOLOv5 (ultralytics/yolov5, GNU AGPL-3.0) — models/common.py, models/yolo.py,
utils/general.py and utils/metrics.py.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters. The convolutions are YOLOv5's inference form: `DetectMultiBackend` fuses every
`Conv` with its BatchNorm (`model.fuse()`), so `Conv.forward_fuse` — `act(conv(x))` with a
biased `nn.Conv2d` and the default `nn.SiLU()` — is what runs; `nn.Conv2d` / `nn.MaxPool2d` /
`nn.Upsample` calls are `F.conv2d` / `F.max_pool2d` / `F.interpolate`, a `Conv` module call is
the `conv` helper below. `Detect.forward` loops over its levels; one level of its inference
branch is `detect_level` (the grid and anchor grid are the tensors `_make_grid` returns, and
`_make_grid` is a function of its own). Everything else is kept as the project writes it.
"""

import math

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorF32Cpu5D,
)


# YOLOv5 — models/common.py, Conv.forward_fuse (ultralytics/yolov5)
def conv(x: TensorF32Cpu4D, weight: TensorF32Cpu4D, bias: TensorF32Cpu1D, s: int, p: int, g: int) -> TensorF32Cpu4D:
    # self.conv = nn.Conv2d(c1, c2, k, s, autopad(k, p, d), groups=g, dilation=d) fused with its bn
    return F.silu(F.conv2d(x, weight, bias, s, p, 1, g))


# YOLOv5 — models/common.py, Bottleneck.forward (ultralytics/yolov5)
def bottleneck(
    x: TensorF32Cpu4D,
    cv1_w: TensorF32Cpu4D, cv1_b: TensorF32Cpu1D,
    cv2_w: TensorF32Cpu4D, cv2_b: TensorF32Cpu1D,
    add: bool,
) -> TensorF32Cpu4D:
    # self.cv1 = Conv(c1, c_, 1, 1); self.cv2 = Conv(c_, c2, 3, 1, g=g)
    return x + conv(conv(x, cv1_w, cv1_b, 1, 0, 1), cv2_w, cv2_b, 1, 1, 1) if add else conv(conv(x, cv1_w, cv1_b, 1, 0, 1), cv2_w, cv2_b, 1, 1, 1)


# YOLOv5 — models/common.py, C3.forward (ultralytics/yolov5)
def c3(
    x: TensorF32Cpu4D,
    cv1_w: TensorF32Cpu4D, cv1_b: TensorF32Cpu1D,
    cv2_w: TensorF32Cpu4D, cv2_b: TensorF32Cpu1D,
    cv3_w: TensorF32Cpu4D, cv3_b: TensorF32Cpu1D,
    m_cv1_w: TensorF32Cpu4D, m_cv1_b: TensorF32Cpu1D,
    m_cv2_w: TensorF32Cpu4D, m_cv2_b: TensorF32Cpu1D,
) -> TensorF32Cpu4D:
    # self.m = nn.Sequential(Bottleneck(c_, c_, shortcut=True, g, e=1.0)) with n = 1
    return conv(
        torch.cat((bottleneck(conv(x, cv1_w, cv1_b, 1, 0, 1), m_cv1_w, m_cv1_b, m_cv2_w, m_cv2_b, True), conv(x, cv2_w, cv2_b, 1, 0, 1)), 1),
        cv3_w, cv3_b, 1, 0, 1,
    )


# YOLOv5 — models/common.py, SPPF.forward (ultralytics/yolov5)
def sppf(
    x: TensorF32Cpu4D,
    cv1_w: TensorF32Cpu4D, cv1_b: TensorF32Cpu1D,
    cv2_w: TensorF32Cpu4D, cv2_b: TensorF32Cpu1D,
    k: int,
) -> TensorF32Cpu4D:
    # self.m = nn.MaxPool2d(kernel_size=k, stride=1, padding=k // 2)
    x = conv(x, cv1_w, cv1_b, 1, 0, 1)
    y1 = F.max_pool2d(x, k, 1, k // 2)
    y2 = F.max_pool2d(y1, k, 1, k // 2)
    return conv(torch.cat((x, y1, y2, F.max_pool2d(y2, k, 1, k // 2)), 1), cv2_w, cv2_b, 1, 0, 1)


# YOLOv5 — models/common.py, Focus.forward (ultralytics/yolov5)
def focus(x: TensorF32Cpu4D, weight: TensorF32Cpu4D, bias: TensorF32Cpu1D) -> TensorF32Cpu4D:
    # x(b,c,w,h) -> y(b,4c,w/2,h/2); self.conv = Conv(c1 * 4, c2, k=1)
    return conv(torch.cat((x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]), 1), weight, bias, 1, 0, 1)


# YOLOv5 — models/common.py, Contract.forward (ultralytics/yolov5)
def contract(x: TensorF32Cpu4D, gain: int) -> TensorF32Cpu4D:
    # Contract width-height into channels, i.e. x(1,64,80,80) to x(1,256,40,40)
    b, c, h, w = x.size()  # assert (h / s == 0) and (W / s == 0), 'Indivisible gain'
    s = gain
    x = x.view(b, c, h // s, s, w // s, s)  # x(1,64,40,2,40,2)
    x = x.permute(0, 3, 5, 1, 2, 4).contiguous()  # x(1,2,2,64,40,40)
    return x.view(b, c * s * s, h // s, w // s)  # x(1,256,40,40)


# YOLOv5 — models/common.py, Expand.forward (ultralytics/yolov5)
def expand(x: TensorF32Cpu4D, gain: int) -> TensorF32Cpu4D:
    # Expand channels into width-height, i.e. x(1,64,80,80) to x(1,16,160,160)
    b, c, h, w = x.size()  # assert C / s ** 2 == 0, 'Indivisible gain'
    s = gain
    x = x.view(b, s, s, c // s ** 2, h, w)  # x(1,2,2,16,80,80)
    x = x.permute(0, 3, 4, 1, 5, 2).contiguous()  # x(1,16,80,2,80,2)
    return x.view(b, c // s ** 2, h * s, w * s)  # x(1,16,160,160)


# YOLOv5 — models/common.py, Concat.forward and nn.Upsample(None, 2, 'nearest') of the PANet neck (ultralytics/yolov5)
def upsample_concat(x: TensorF32Cpu4D, skip: TensorF32Cpu4D, d: int) -> TensorF32Cpu4D:
    return torch.cat([F.interpolate(x, None, 2, "nearest"), skip], d)


# YOLOv5 — models/yolo.py, Detect._make_grid (ultralytics/yolov5)
def _make_grid(anchors: TensorF32Cpu2D, stride: float, na: int, nx: int, ny: int) -> tuple[TensorF32Cpu5D, TensorF32Cpu5D]:
    # anchors is self.anchors[i] (na, 2); stride is self.stride[i]
    d = anchors.device
    t = anchors.dtype
    shape = 1, na, ny, nx, 2  # grid shape
    y, x = torch.arange(ny, device=d, dtype=t), torch.arange(nx, device=d, dtype=t)
    yv, xv = torch.meshgrid(y, x, indexing='ij')
    grid = torch.stack((xv, yv), 2).expand(shape) - 0.5  # add grid offset, i.e. y = 2.0 * x - 0.5
    anchor_grid = (anchors * stride).view((1, na, 1, 1, 2)).expand(shape)
    return grid, anchor_grid


# YOLOv5 — models/yolo.py, Detect.forward, one level of the inference branch (ultralytics/yolov5)
def detect_level(
    xi: TensorF32Cpu4D,
    weight: TensorF32Cpu4D,
    bias: TensorF32Cpu1D,
    grid: TensorF32Cpu5D,
    anchor_grid: TensorF32Cpu5D,
    stride: float,
    na: int,
    nc: int,
) -> tuple[TensorF32Cpu3D, TensorF32Cpu5D]:
    no = nc + 5  # number of outputs per anchor
    xi = F.conv2d(xi, weight, bias)  # self.m[i] = nn.Conv2d(x, self.no * self.na, 1)
    bs, _, ny, nx = xi.shape  # x(bs,255,20,20) to x(bs,3,20,20,85)
    xi = xi.view(bs, na, no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
    xy, wh, conf = xi.sigmoid().split((2, 2, nc + 1), 4)
    xy = (xy * 2 + grid) * stride  # xy
    wh = (wh * 2) ** 2 * anchor_grid  # wh
    y = torch.cat((xy, wh, conf), 4)
    return y.view(bs, na * nx * ny, no), xi


# YOLOv5 — utils/general.py, xywh2xyxy (ultralytics/yolov5)
def xywh2xyxy(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # Convert nx4 boxes from [x, y, w, h] to [x1, y1, x2, y2] where xy1=top-left, xy2=bottom-right
    y = x.clone() if isinstance(x, torch.Tensor) else np.copy(x)
    y[..., 0] = x[..., 0] - x[..., 2] / 2  # top left x
    y[..., 1] = x[..., 1] - x[..., 3] / 2  # top left y
    y[..., 2] = x[..., 0] + x[..., 2] / 2  # bottom right x
    y[..., 3] = x[..., 1] + x[..., 3] / 2  # bottom right y
    return y


# YOLOv5 — utils/general.py, xyxy2xywh (ultralytics/yolov5)
def xyxy2xywh(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # Convert nx4 boxes from [x1, y1, x2, y2] to [x, y, w, h] where xy1=top-left, xy2=bottom-right
    y = x.clone() if isinstance(x, torch.Tensor) else np.copy(x)
    y[..., 0] = (x[..., 0] + x[..., 2]) / 2  # x center
    y[..., 1] = (x[..., 1] + x[..., 3]) / 2  # y center
    y[..., 2] = x[..., 2] - x[..., 0]  # width
    y[..., 3] = x[..., 3] - x[..., 1]  # height
    return y


# YOLOv5 — utils/general.py, clip_boxes (ultralytics/yolov5)
def clip_boxes(boxes: TensorF32Cpu2D, shape: tuple[int, int]) -> None:
    # Clip boxes (xyxy) to image shape (height, width)
    if isinstance(boxes, torch.Tensor):  # faster individually
        boxes[..., 0].clamp_(0, shape[1])  # x1
        boxes[..., 1].clamp_(0, shape[0])  # y1
        boxes[..., 2].clamp_(0, shape[1])  # x2
        boxes[..., 3].clamp_(0, shape[0])  # y2
    else:  # np.array (faster grouped)
        boxes[..., [0, 2]] = boxes[..., [0, 2]].clip(0, shape[1])  # x1, x2
        boxes[..., [1, 3]] = boxes[..., [1, 3]].clip(0, shape[0])  # y1, y2


# YOLOv5 — utils/metrics.py, box_iou (ultralytics/yolov5)
def box_iou(box1: TensorF32Cpu2D, box2: TensorF32Cpu2D, eps: float = 1e-7) -> TensorF32Cpu2D:
    # https://github.com/pytorch/vision/blob/master/torchvision/ops/boxes.py
    """
    Return intersection-over-union (Jaccard index) of boxes.
    Both sets of boxes are expected to be in (x1, y1, x2, y2) format.
    Arguments:
        box1 (Tensor[N, 4])
        box2 (Tensor[M, 4])
    Returns:
        iou (Tensor[N, M]): the NxM matrix containing the pairwise
            IoU values for every element in boxes1 and boxes2
    """

    # inter(N,M) = (rb(N,M,2) - lt(N,M,2)).clamp(0).prod(2)
    (a1, a2), (b1, b2) = box1.unsqueeze(1).chunk(2, 2), box2.unsqueeze(0).chunk(2, 2)
    inter = (torch.min(a2, b2) - torch.max(a1, b1)).clamp(0).prod(2)

    # IoU = inter / (area1 + area2 - inter)
    return inter / ((a2 - a1).prod(2) + (b2 - b1).prod(2) - inter + eps)


# YOLOv5 — utils/metrics.py, bbox_iou (ultralytics/yolov5)
def bbox_iou(
    box1: TensorF32Cpu2D, box2: TensorF32Cpu2D, xywh: bool = True, GIoU: bool = False, DIoU: bool = False, CIoU: bool = False, eps: float = 1e-7
) -> TensorF32Cpu2D:
    # Returns Intersection over Union (IoU) of box1(1,4) to box2(n,4)

    # Get the coordinates of bounding boxes
    if xywh:  # transform from xywh to xyxy
        (x1, y1, w1, h1), (x2, y2, w2, h2) = box1.chunk(4, -1), box2.chunk(4, -1)
        w1_, h1_, w2_, h2_ = w1 / 2, h1 / 2, w2 / 2, h2 / 2
        b1_x1, b1_x2, b1_y1, b1_y2 = x1 - w1_, x1 + w1_, y1 - h1_, y1 + h1_
        b2_x1, b2_x2, b2_y1, b2_y2 = x2 - w2_, x2 + w2_, y2 - h2_, y2 + h2_
    else:  # x1, y1, x2, y2 = box1
        b1_x1, b1_y1, b1_x2, b1_y2 = box1.chunk(4, -1)
        b2_x1, b2_y1, b2_x2, b2_y2 = box2.chunk(4, -1)
        w1, h1 = b1_x2 - b1_x1, (b1_y2 - b1_y1).clamp(eps)
        w2, h2 = b2_x2 - b2_x1, (b2_y2 - b2_y1).clamp(eps)

    # Intersection area
    inter = (b1_x2.minimum(b2_x2) - b1_x1.maximum(b2_x1)).clamp(0) * \
            (b1_y2.minimum(b2_y2) - b1_y1.maximum(b2_y1)).clamp(0)

    # Union Area
    union = w1 * h1 + w2 * h2 - inter + eps

    # IoU
    iou = inter / union
    if CIoU or DIoU or GIoU:
        cw = b1_x2.maximum(b2_x2) - b1_x1.minimum(b2_x1)  # convex (smallest enclosing box) width
        ch = b1_y2.maximum(b2_y2) - b1_y1.minimum(b2_y1)  # convex height
        if CIoU or DIoU:  # Distance or Complete IoU https://arxiv.org/abs/1911.08287v1
            c2 = cw ** 2 + ch ** 2 + eps  # convex diagonal squared
            rho2 = ((b2_x1 + b2_x2 - b1_x1 - b1_x2) ** 2 + (b2_y1 + b2_y2 - b1_y1 - b1_y2) ** 2) / 4  # center dist ** 2
            if CIoU:  # https://github.com/Zzh-tju/DIoU-SSD-pytorch/blob/master/utils/box/box_utils.py#L47
                v = (4 / math.pi ** 2) * (torch.atan(w2 / h2) - torch.atan(w1 / h1)).pow(2)
                with torch.no_grad():
                    alpha = v / (v - iou + (1 + eps))
                return iou - (rho2 / c2 + v * alpha)  # CIoU
            return iou - rho2 / c2  # DIoU
        c_area = cw * ch + eps  # convex area
        return iou - (c_area - union) / c_area  # GIoU https://arxiv.org/pdf/1902.09630.pdf
    return iou  # IoU


# example boxes in (x1, y1, x2, y2) form, x2 > x1 and y2 > y1
_boxes = lambda n: (lambda xy: torch.cat([xy, xy + torch.rand(n, 2) * 5 + 0.5], 1))(torch.rand(n, 2) * 10)


INPUTS = {
    "conv": lambda: (torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3), torch.randn(8), 1, 1, 1),
    "bottleneck": lambda: (torch.randn(2, 8, 6, 6), torch.randn(8, 8, 1, 1), torch.randn(8), torch.randn(8, 8, 3, 3), torch.randn(8), True),
    "c3": lambda: (
        torch.randn(2, 8, 6, 6),
        torch.randn(4, 8, 1, 1), torch.randn(4),
        torch.randn(4, 8, 1, 1), torch.randn(4),
        torch.randn(8, 8, 1, 1), torch.randn(8),
        torch.randn(4, 4, 1, 1), torch.randn(4),
        torch.randn(4, 4, 3, 3), torch.randn(4),
    ),
    "sppf": lambda: (torch.randn(2, 8, 7, 7), torch.randn(4, 8, 1, 1), torch.randn(4), torch.randn(8, 16, 1, 1), torch.randn(8), 5),
    "focus": lambda: (torch.randn(2, 3, 8, 8), torch.randn(8, 12, 1, 1), torch.randn(8)),
    "contract": lambda: (torch.randn(2, 4, 6, 8), 2),
    "expand": lambda: (torch.randn(2, 8, 3, 4), 2),
    "upsample_concat": lambda: (torch.randn(2, 4, 3, 5), torch.randn(2, 6, 6, 10), 1),
    "_make_grid": lambda: (torch.rand(3, 2) * 4, 8.0, 3, 5, 4),
    "detect_level": lambda: (
        torch.randn(2, 8, 4, 5), torch.randn(3 * 7, 8, 1, 1), torch.randn(3 * 7),
        torch.randn(1, 3, 4, 5, 2), torch.rand(1, 3, 4, 5, 2) * 30, 8.0, 3, 2,
    ),
    "xywh2xyxy": lambda: (torch.rand(6, 4) * 10,),
    "xyxy2xywh": lambda: (_boxes(6),),
    "clip_boxes": lambda: (_boxes(6), (8, 9)),
    "box_iou": lambda: (_boxes(5), _boxes(7)),
    "bbox_iou": lambda: (torch.rand(1, 4) * 10 + 1, torch.rand(6, 4) * 10 + 1, True, False, False, True),
}
