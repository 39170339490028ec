# Parameters that are lists or tuples of ints: a window size (torchvision's Swin passes
# `window_size: List[int]`, which `torchlower.compile` specialises to `list[int, int]` on the
# call), a pooling kernel as `tuple[int, int]`, and a helper called with a list display.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu2D, TensorF32Cpu4D, TensorI64Cpu1D


def relative_position_bias(table: TensorF32Cpu2D, index: TensorI64Cpu1D, window_size: list[int, int]) -> TensorF32Cpu4D:
    N = window_size[0] * window_size[1]
    bias = table[index].view(N, N, -1)
    return bias.permute(2, 0, 1).contiguous().unsqueeze(0)


def pool(x: TensorF32Cpu4D, kernel: tuple[int, int]) -> TensorF32Cpu4D:
    return F.max_pool2d(x, kernel, stride=kernel)


def window_area(x: TensorF32Cpu2D, window_size: list[int, int]) -> TensorF32Cpu2D:
    area = 1
    for size in window_size:
        area = area * size
    return x * area


def padded(x: TensorF32Cpu4D, window_size: tuple[int, int]) -> TensorF32Cpu4D:
    pad_r = (window_size[1] - x.shape[3] % window_size[1]) % window_size[1]
    pad_b = (window_size[0] - x.shape[2] % window_size[0]) % window_size[0]
    return F.pad(x, (0, pad_r, 0, pad_b))


def calls_with_a_list(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return window_area(x, [2, 3])


def returns_the_sizes(x: TensorF32Cpu2D, window_size: list[int, int]):
    return [window_size[1], window_size[0]]


def shifted(x: TensorF32Cpu4D, shift_size: list[int, int], window_size: list[int, int]) -> TensorF32Cpu4D:
    # Swin's copy-then-write of a list parameter (the caller's list is never written)
    _, pad_H, pad_W, _ = x.shape
    shift_size = shift_size.copy()
    if window_size[0] >= pad_H:
        shift_size[0] = 0
    if window_size[1] >= pad_W:
        shift_size[1] = 0
    if sum(shift_size) > 0:
        x = torch.roll(x, shifts=(-shift_size[0], -shift_size[1]), dims=(1, 2))
    return x


def shift_mask(x: TensorF32Cpu4D, shift_size: list[int, int], window_size: list[int, int]) -> TensorF32Cpu2D:
    # Swin's attention mask: slice bounds from tuples of tuples holding None
    _, pad_H, pad_W, _ = x.shape
    attn_mask = x.new_zeros((pad_H, pad_W))
    h_slices = ((0, -window_size[0]), (-window_size[0], -shift_size[0]), (-shift_size[0], None))
    w_slices = ((0, -window_size[1]), (-window_size[1], -shift_size[1]), (-shift_size[1], None))
    count = 0
    for h in h_slices:
        for w in w_slices:
            attn_mask[h[0] : h[1], w[0] : w[1]] = count
            count += 1
    return attn_mask.masked_fill(attn_mask != 0, float(-100.0)).masked_fill(attn_mask == 0, float(0.0))
