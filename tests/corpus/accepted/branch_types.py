# A local whose type differs between the branches of an `if` and that the code after it reads
# (T5's `_relative_position_bucket`: `relative_buckets` is the int 0 on one path and an int64
# tensor on the other, and `relative_buckets += …` follows): the rest of the block is walked
# once per branch with that branch's types, as if each branch held its own copy of it.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D, TensorI64Cpu1D, TensorI64Cpu2D


def relative_buckets(relative_position: TensorI64Cpu2D, bidirectional: bool, num_buckets: int) -> TensorI64Cpu2D:
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    is_small = relative_position < num_buckets // 2
    large = torch.max(relative_position, torch.full_like(relative_position, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, large)
    return relative_buckets


def scale_or_tensor(x: TensorF32Cpu2D, per_row: bool) -> TensorF32Cpu2D:
    if per_row:
        scale = x.abs().amax(dim=1, keepdim=True)
    elif x.shape[0] > 4:
        scale = 2.0
    else:
        scale = 0.5
    y = x / scale
    return y.relu()


def int64_sign_forms(a: TensorI64Cpu2D, b: TensorI64Cpu2D) -> TensorI64Cpu2D:
    return torch.minimum(a.abs(), -b).neg() + torch.maximum(a, b)


def int64_abs_method(labels: TensorI64Cpu1D) -> TensorI64Cpu1D:
    return labels.abs()


# A return whose rank depends on a run-time int (diffusers' `Attention.head_to_batch_dim`):
# the path that breaks the annotation raises the refusal (TL404), which auto mode answers by
# running Python; the annotated path is native.
def head_to_batch_dim(tensor: TensorF32Cpu3D, heads: int, out_dim: int = 3) -> TensorF32Cpu3D:
    head_size = heads
    batch_size, seq_len, dim = tensor.shape
    tensor = tensor.reshape(batch_size, seq_len, head_size, dim // head_size)
    tensor = tensor.permute(0, 2, 1, 3)

    if out_dim == 3:
        tensor = tensor.reshape(batch_size * head_size, seq_len, dim // head_size)

    return tensor


def causal_mask(tokens: TensorI64Cpu2D, emb: TensorF32Cpu2D, start_pos: int) -> tuple[TensorF32Cpu3D, TensorF32Cpu4D]:
    # Llama's embed-and-mask: `mask` stays None for one token, a path native code refuses
    # (TL404: auto mode runs Python, which returns `(h, None)`)
    _bsz, seqlen = tokens.shape
    h = F.embedding(tokens, emb)
    mask = None
    if seqlen > 1:
        mask = torch.full((1, 1, seqlen, seqlen), float("-inf"), device=tokens.device)
        mask = torch.triu(mask, diagonal=start_pos + 1).type_as(h)
    return h, mask


def optional_bias(x: TensorF32Cpu2D, use_bias: bool) -> TensorF32Cpu2D:
    # a local that is None on one path: the code after the `if` is walked once per path
    bias = None
    if use_bias:
        bias = x.mean(0)
    if bias is not None:
        x = x + bias
    return x


def norm_or_pair(x: TensorF32Cpu3D, residual: TensorF32Cpu3D, normed_only: bool = True) -> TensorF32Cpu3D:
    # Mamba's layer_norm_ref (`return out if not prenorm else (out, x)`): a tensor, or a pair
    # when asked; the pair (which the annotation does not describe) is refused at run time,
    # and auto mode runs Python
    x = x + residual
    out = F.layer_norm(x, x.shape[-1:])
    return out if normed_only else (out, x)
