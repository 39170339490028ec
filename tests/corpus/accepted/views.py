# Views and reshapes (issue: the language of real inference code): each result aliases its
# input exactly as eager's does; shapes from Python ints, tuples and `.shape` / `.size()`.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D, TensorI64Cpu2D


def transpose(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.transpose(0, 1)


def view(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.view(-1)


def reshape(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.reshape(-1, x.size(0))


def split_heads(x: TensorF32Cpu3D, n_head: int) -> TensorF32Cpu4D:
    B, T, C = x.size()
    return x.view(B, T, n_head, C // n_head).transpose(1, 2)


def merge_heads(y: TensorF32Cpu4D) -> TensorF32Cpu3D:
    B, H, T, D = y.shape
    return y.transpose(1, 2).contiguous().view(B, T, H * D)


def shape_tuple(x: TensorF32Cpu3D, heads: int) -> TensorF32Cpu4D:
    new_shape = x.size()[:-1] + (heads, x.shape[-1] // heads)
    x = x.view(new_shape)
    return x.permute(0, 2, 1, 3)


def flatten_head(x: TensorF32Cpu4D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.linear(torch.flatten(x, start_dim=2).sum(dim=-1), w) + x.flatten(1).mean(dim=1, keepdim=True)


def unsqueezed_mask(m: TensorI64Cpu2D) -> TensorI64Cpu2D:
    return m.unsqueeze(1).unsqueeze(-1).view(-1, m.size(-1))


def matrix_t(w: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return w.t() @ v.t()


def t_views(w: TensorF32Cpu2D, v: TensorF32Cpu1D) -> tuple[TensorF32Cpu2D, TensorF32Cpu1D]:
    return w.t(), torch.t(v)


def numbers_of_a_shape(x: TensorF32Cpu3D) -> int:
    return len(x) + x.dim() * 100 + x.ndim + x.numel() - x.size(1)


def swap(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    a, b = b, a
    return a - b


def pair(x: TensorF32Cpu2D) -> tuple[TensorF32Cpu2D, TensorF32Cpu1D]:
    h = x.relu()
    return h, h.sum(dim=1)


def glu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    a, b = x.chunk(2, dim=-1)
    return a * torch.sigmoid(b)


def qkv_split(x: TensorF32Cpu3D, w: TensorF32Cpu2D, n_embd: int) -> TensorF32Cpu3D:
    q, k, v = F.linear(x, w).split(n_embd, dim=2)
    return q + k - v


def qkv_unbind(qkv: TensorF32Cpu4D) -> TensorF32Cpu3D:
    q, k, v = qkv.unbind(0)
    return q * k + v[0]


def joined(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu3D:
    both = (x, y)
    wide = torch.cat([x, y], dim=-1)
    return torch.stack(both, dim=1) + torch.cat((x, x), 1)[:, : x.size(1)].unsqueeze(1) + wide[:, None, :1]


def broadcasts(x: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return b.expand(x.size(0), -1) + b.expand_as(x) - x.unsqueeze(0).expand(2, -1, -1)


def transposes(q: TensorF32Cpu3D, w: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return (q @ q.mT) @ w.T - -q


def narrow_select_unflatten(x: TensorF32Cpu3D, k: int) -> TensorF32Cpu3D:
    first = x.narrow(1, 0, k)
    heads = torch.unflatten(first, -1, (1, -1))
    return heads.select(2, -1) + torch.narrow(x, -1, 1, 2).unflatten(1, [x.shape[1], 1]).select(2, 0)


def value_head(h: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return F.linear(h, w).squeeze(-1) + torch.squeeze(h[:, :1], 1).detach()


def narrow_view(x: TensorF32Cpu2D, k: int) -> TensorF32Cpu2D:
    return x.narrow(1, 1, k)


def select_view(x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    return x.select(0, -1)


def unflatten_view(x: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return x.unflatten(1, (2, -1))


def squeeze_view(x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    return x.squeeze(1)


def detach_view(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.detach()


def append_cls_token(x: TensorF32Cpu3D, weight: TensorF32Cpu1D) -> TensorF32Cpu3D:
    assert x.ndim == 3
    return torch.cat([x, weight.view(1, 1, -1).repeat(len(x), 1, 1)], dim=1) + x.repeat((1, 1, 1)).sum(dim=1, keepdim=True) * 0.0


def rotate_half(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q: TensorF32Cpu4D, cos: TensorF32Cpu3D, sin: TensorF32Cpu3D, unsqueeze_dim: int) -> TensorF32Cpu4D:
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = torch.unsqueeze(sin, dim=unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin)


def glu_mlp(x: TensorF32Cpu2D, fc1_weight: TensorF32Cpu2D, fc2_weight: TensorF32Cpu2D, chunk_dim: int, gate_last: bool) -> TensorF32Cpu2D:
    x = F.linear(x, fc1_weight)
    x1, x2 = x.chunk(2, dim=chunk_dim)
    x = x1 * torch.sigmoid(x2) if gate_last else torch.sigmoid(x1) * x2
    return F.linear(x, fc2_weight)


def split_on(x: TensorF32Cpu3D, d: int) -> TensorF32Cpu2D:
    a, b = torch.unbind(x[:2], d - 3)
    c, e = x[:2].split(1, dim=d - 3)
    return a + b + c[0] - e[0]


# `view_as` / `reshape_as` take the other tensor's shape (its rank); `swapaxes` / `swapdims`
# are `transpose` under NumPy's names.
def as_the_other(x: TensorF32Cpu2D, y: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.view_as(y) + x.t().reshape_as(y)


def swapped(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x.swapaxes(0, 2) * torch.swapdims(x, -1, 0)


def sequence_forms(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    # the method takes the sizes one by one; torch.reshape takes one tuple
    y = torch.reshape(x, (-1,)) + x.reshape(-1)
    return F.log_softmax(y, 0, 3)
