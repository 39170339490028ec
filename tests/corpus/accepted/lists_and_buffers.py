# Lists built by `.append()` (timm's VisionTransformer._pos_embed), `del` of locals (diffusers'
# Attention.get_attention_scores, which deletes its buffers to free memory early) and
# `torch.empty` buffers that are ignored (`baddbmm` with `beta=0`) or overwritten.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D, TensorI64Cpu1D


def pos_embed(x: TensorF32Cpu3D, cls_token: TensorF32Cpu3D, pos: TensorF32Cpu3D) -> TensorF32Cpu3D:
    to_cat = []
    if cls_token is not None:
        to_cat.append(cls_token.expand(x.shape[0], -1, -1))
    if to_cat:
        x = torch.cat(to_cat + [x], dim=1)
    return x + pos


def two_heads(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, w2: TensorF32Cpu2D) -> TensorF32Cpu2D:
    outs = []
    outs.append(F.linear(x, w1))
    outs.append(F.linear(x, w2).relu())
    return torch.cat(outs, dim=-1)


def nothing_appended(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    extra = []
    if extra:
        x = torch.cat(extra + [x], dim=0)
    return x + 1


def attention_probs(query: TensorF32Cpu3D, key: TensorF32Cpu3D, scale: float) -> TensorF32Cpu3D:
    baddbmm_input = torch.empty(query.shape[0], query.shape[1], key.shape[1], dtype=query.dtype, device=query.device)
    attention_scores = torch.baddbmm(baddbmm_input, query, key.transpose(-1, -2), beta=0, alpha=scale)
    del baddbmm_input
    attention_probs = attention_scores.softmax(dim=-1)
    del attention_scores
    return attention_probs


def overwritten_buffer(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    out = torch.empty(x.shape[0], x.shape[1], dtype=x.dtype)
    out[:] = x * 2
    return out


def rebound_after_del(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = x.relu()
    del h
    h = x.sigmoid()
    return h


def returns_a_list(x: TensorF32Cpu2D):
    # eager returns a list here, not a tuple: native code must too
    return [x.relu(), x + 1]


def returns_an_appended_list(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, w2: TensorF32Cpu2D):
    feats = []
    feats.append(F.linear(x, w1))
    feats.append(F.linear(x, w2))
    return feats


def list_is_not_tuple(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # `[2, 3] == (2, 3)` is False in Python, whatever the values
    if [x.shape[0], x.shape[1]] == (x.shape[0], x.shape[1]):
        return x + 1
    if list(x.shape) == [x.shape[0], x.shape[1]]:
        return x - 1
    return x * 2


# DLRM's dot interaction: the lower-triangle indices built by a comprehension of `range` loops
# (the inner bound reads the outer name), made into int64 index tensors by `torch.tensor`;
# `ni == 1` without `itself` makes an empty list (eager: float32), which native code refuses
def lower_triangle(z: TensorF32Cpu3D, itself: bool) -> TensorF32Cpu2D:
    _, ni, nj = z.shape
    offset = 1 if itself else 0
    li = torch.tensor([i for i in range(ni) for j in range(i + offset)])
    lj = torch.tensor([j for i in range(nj) for j in range(i + offset)])
    return z[:, li, lj]


def squares_and_steps(n: int) -> TensorI64Cpu1D:
    return torch.tensor([i * i - j for i in range(1, n, 2) for j in range(i, -1, -3)])


def broadcast_shape(freqs_cis: TensorF32Cpu2D, x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    # llama2.c's reshape_for_broadcast: a comprehension over the shape, unrolled
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(shape)


def heads_concatenated(x: TensorF32Cpu2D, w0: TensorF32Cpu2D, w1: TensorF32Cpu2D, scale: float) -> TensorF32Cpu2D:
    # pyGAT's heads: a comprehension over a list of parameter pairs, `if` on known values,
    # the target's name shadowing nothing outside it
    heads = [(w0, 1.0), (w1, scale)]
    i = 7
    parts = [torch.tanh(x @ w) * s for w, s in heads] + [x * float(i) for i in range(2) if i > 0]
    return torch.cat(parts, dim=1) + i
