# YOLOv5's forms: a tuple of chunk calls unpacked into nested targets (`box_iou`), a split
# into parts of given sizes (`Detect`'s `xy, wh, conf = x.sigmoid().split((2, 2, nc + 1), 4)`),
# and coordinate grids (`_make_grid`).
import torch
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu2D


def pairwise_overlap(box1: TensorF32Cpu2D, box2: TensorF32Cpu2D) -> TensorF32Cpu2D:
    (a1, a2), (b1, b2) = box1.unsqueeze(1).chunk(2, 2), box2.unsqueeze(0).chunk(2, 2)
    return (torch.min(a2, b2) - torch.max(a1, b1)).clamp(0).prod(2)


def nested_lists(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    [p, q], r = x.chunk(2, 1), x.t()
    return p * q + r[: p.shape[0], : p.shape[1]]


def split_by_sizes(x: TensorF32Cpu3D, nc: int) -> TensorF32Cpu3D:
    xy, wh, conf = x.sigmoid().split((2, nc - 1, x.shape[2] - nc - 1), 2)
    a, b = torch.split(x, [1, x.shape[1] - 1], dim=1)
    return torch.cat((xy * 2, wh ** 2, conf), 2) + a + b[:, :1]


def grids(y: TensorF32Cpu1D, x: TensorF32Cpu1D, anchors: TensorF32Cpu2D) -> tuple[TensorF32Cpu3D, TensorF32Cpu2D]:
    yv, xv = torch.meshgrid(y, x, indexing="ij")
    grid = torch.stack((xv, yv), 2) - 0.5
    gx, gy = torch.meshgrid(x, y, indexing="xy")
    return grid, gx + gy + anchors[: gx.shape[0], : gx.shape[1]] * 0


def integer_grid(n: int) -> TensorI64Cpu2D:
    rows, cols = torch.meshgrid(torch.arange(n), torch.arange(n + 1))
    return rows * 10 + cols
