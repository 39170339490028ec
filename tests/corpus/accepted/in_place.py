# In-place ops that cannot be observed (issue: the language of real inference code): on a
# local whose storage is provably not a parameter's — a fresh result of a claimed op, or a
# view of one — they are made in place, as eager makes them.
import torch
import torch.nn.functional as F
from torchlower.types import TensorBoolCpu1D, TensorBoolCpu2D, TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def fresh_updates(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = F.linear(x, w)
    h += b
    h *= 0.5
    h.relu_()
    y = F.relu(h, inplace=True)
    h.mul_(y)
    h /= 2
    h -= 1.0
    return h.sub_(b)


def loop_update(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, n: int) -> TensorF32Cpu2D:
    h = x @ w
    for _ in range(n):
        h += b
    return h


def view_of_fresh(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = x * 2.0
    v = h.view(-1)
    v.relu_()
    return h


# An in-place write into an argument on a branch taken only for some arguments (timm's
# activations): deferred — native code refuses when the branch is reached, and auto mode
# reruns Python, which writes as eager does; the other branch runs natively.
def swish(x: TensorF32Cpu2D, inplace: bool) -> TensorF32Cpu2D:
    return x.mul_(x.sigmoid()) if inplace else x.mul(x.sigmoid())


def hard_sigmoid(x: TensorF32Cpu2D, inplace: bool) -> TensorF32Cpu2D:
    if inplace:
        return x.add_(3.).clamp_(0., 6.).div_(6.)
    else:
        return F.relu6(x + 3.) / 6.


def scale_maybe_in_place(x: TensorF32Cpu2D, y: TensorF32Cpu2D, inplace: bool) -> TensorF32Cpu2D:
    if inplace:
        x -= y
        x[0] = 1.0
        F.relu(x, inplace=True)
    return x + 1


# A helper returns new tensors or its arguments (or views of them): given only fresh tensors,
# its result aliases no parameter of the caller (stable-baselines3's log-prob correction).
def sum_rows(t: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return t.sum(dim=1)


def corrected(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu1D:
    log_prob = sum_rows(x * 2.0)
    log_prob -= torch.sum(y, dim=1)
    return log_prob


# Activations written into a fresh local with `inplace=True` (timm's SqueezeExcite, torchvision's
# blocks built with `inplace=True`): eager's in-place kernels, under the op's own rule.
def silu_in_place(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = x * 2.0
    h = F.silu(h, inplace=True)
    return h


def hardswish_result_and_input(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = x + 1.0
    y = F.hardswish(h, inplace=True)
    return h + y


def activations_for_their_effect(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = x - 1.0
    F.mish(h, inplace=True)
    g = x * 3.0
    F.relu6(g, inplace=True)
    F.hardsigmoid(g, inplace=True)
    F.selu(h, inplace=True)
    return h * g


# Any claimed op's in-place method on a tensor the function made: computed out of place, then
# written into the local's storage (a view taken before sees the write, as in eager)
def writes_into_fresh(x: TensorF32Cpu2D, m: TensorBoolCpu2D) -> TensorF32Cpu2D:
    y = x * 2
    v = y[0]
    y.clamp_(min=-1.0, max=1.0)
    z = x.clone()
    z[0].zero_()
    z.masked_fill_(m, 0.5)
    w = x + 0
    w.fill_(3)
    w.sigmoid_()
    return y + v + z + w


# Transformers' TypicalLogitsWarper: an int64 count clamped in place
def clamp_int_counts(x: TensorF32Cpu2D, mass: float) -> TensorI64Cpu1D:
    last_ind = (x.softmax(dim=-1).cumsum(dim=-1) < mass).sum(dim=1)
    last_ind.clamp_(max=x.shape[-1] - 2)
    return last_ind + last_ind.clamp(0, 1) + torch.clamp(last_ind, min=1)


# the bitwise operators on int64 (and bool) tensors: Transformers' `unfinished & ~is_done`
def bitwise_flags(unfinished: TensorI64Cpu1D, done: TensorBoolCpu1D, ids: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return (unfinished & ~done) | (ids ^ unfinished) + (done & done).long()


# `|=`, `&=`, `^=` of bool tensors on a fresh local: eager's in-place bitwise kernels
def finished_flags(done: TensorBoolCpu1D, hit: TensorBoolCpu1D, keep: TensorBoolCpu1D) -> TensorBoolCpu1D:
    flags = done.clone()
    flags |= hit
    flags &= keep
    flags ^= hit
    return flags
