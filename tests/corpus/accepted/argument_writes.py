# Functions that write into their tensor arguments as eager does (TL212): the write is what
# they are for. Native code writes into the same tensors, in the same order.
import math

import torch
import torch.nn.functional as F
from torchlower.types import TensorBoolCpu1D, TensorBoolCpu2D, TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D, TensorI64Cpu1D, TensorI64Cpu2D


# sentence-transformers' max pooling: the padding positions of the caller's embeddings are
# overwritten before the max
def max_pooling(token_embeddings: TensorF32Cpu3D, attention_mask: TensorI64Cpu2D) -> TensorF32Cpu2D:
    input_mask_expanded = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).to(token_embeddings.dtype)
    token_embeddings[input_mask_expanded == 0] = -1e9
    return torch.max(token_embeddings, 1)[0]


# Llama's KV cache: the new keys and values go into the caller's cache, which the attention
# then reads back (through views of the written tensor)
def cached_scores(xq: TensorF32Cpu4D, xk: TensorF32Cpu4D, cache_k: TensorF32Cpu4D, start_pos: int) -> TensorF32Cpu4D:
    bsz, seqlen, _, head_dim = xq.shape
    cache_k[:bsz, start_pos : start_pos + seqlen] = xk
    keys = cache_k[:bsz, : start_pos + seqlen]
    return torch.matmul(xq.transpose(1, 2), keys.transpose(1, 2).transpose(2, 3)) / math.sqrt(head_dim)


# Llama's sampling step: the chosen tokens go into the caller's `tokens`, and `|=` (bool, in
# place) updates the caller's `eos_reached`; both come back as the same tensors
def record_step(tokens: TensorI64Cpu2D, next_token: TensorI64Cpu1D, prompt: TensorBoolCpu2D, eos_reached: TensorBoolCpu1D, cur_pos: int, eos_id: int) -> tuple[TensorI64Cpu2D, TensorBoolCpu1D]:
    next_token = torch.where(prompt[:, cur_pos], tokens[:, cur_pos], next_token)
    tokens[:, cur_pos] = next_token
    eos_reached |= (~prompt[:, cur_pos]) & (next_token == eos_id)
    return tokens, eos_reached


# in-place ops on views of an argument, and the argument returned (the same tensor object)
def clamp_columns(boxes: TensorF32Cpu2D, height: int, width: int) -> TensorF32Cpu2D:
    boxes[:, 0].clamp_(0, width)
    boxes[:, 1].clamp_(0, height)
    boxes.mul_(2.0)
    return boxes


# Moved here from rejected/in_place.py when argument writes became native (TL212): in-place
# ops, `inplace=True`, augmented operators and index writes on a parameter or a view of one.
def silu_into_parameter(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.silu(x, inplace=True)


def index_assign_parameter(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    x[:, 0] = 0.0
    return x


def view_of_parameter(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    v = x.view(-1)
    v.relu_()
    return x


def mul_assign(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    x *= y
    return x


def add_assign(x: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    x += b
    return x


def exp_(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.exp_()


def tanh_(v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return v.tanh_()


def sigmoid_(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.sigmoid_()


def relu_(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.relu_()


def relu6_in_place(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.relu6(x, inplace=True)


# YOLOv5's `clip_boxes`: run for its writes, it returns None (`-> None`; a bare `return` too)
def clip_boxes(boxes: TensorF32Cpu2D, shape: tuple[int, int]) -> None:
    if isinstance(boxes, torch.Tensor):
        boxes[..., 0].clamp_(0, shape[1])
        boxes[..., 1].clamp_(0, shape[0])
    else:
        boxes[..., [0, 2]] = boxes[..., [0, 2]].clip(0, shape[1])


def clip_or_skip(boxes: TensorF32Cpu2D, skip: bool) -> None:
    if skip:
        return
    boxes.clamp_(0.0, 1.0)
    return None


# an error after the write: eager has changed the argument and raises; native too, and auto
# mode raises it as well rather than running Python again on the changed argument
def scale_then_check(x: TensorF32Cpu2D, limit: int) -> TensorF32Cpu2D:
    x.mul_(2.0)
    if x.shape[0] > limit:
        raise ValueError("too many rows")
    return x


# meshgrid's grids are expanded views of its inputs: `+=` on one writes through to an argument
# (eager raises for a grid whose elements share memory, and writes into `i` where they do not)
def grid_update(i: TensorF32Cpu1D, j: TensorF32Cpu1D) -> TensorF32Cpu2D:
    a, b = torch.meshgrid(i, j, indexing="ij")
    a += 1.0
    return a + b
