# torch.einsum as real code writes it: SAM's decomposed relative positions
# ("bhwc,hkc->bhwk"), rotary frequencies as an outer product ("i,j->ij", GPT-NeoX), batched
# products with an ellipsis, the implicit output form and the list-of-operands form.
import torch
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D, TensorI64Cpu2D


def decomposed_rel_pos(r_q: TensorF32Cpu4D, Rh: TensorF32Cpu3D, Rw: TensorF32Cpu3D) -> TensorF32Cpu4D:
    rel_h = torch.einsum("bhwc,hkc->bhwk", r_q, Rh)
    rel_w = torch.einsum("bhwc,wkc->bhwk", r_q, Rw)
    return rel_h + rel_w


def rotary_frequencies(t: TensorF32Cpu1D, inv_freq: TensorF32Cpu1D) -> TensorF32Cpu2D:
    freqs = torch.einsum("i,j->ij", t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos() + torch.einsum("i , j", [t, inv_freq]).sin()


def batched_products(a: TensorF32Cpu3D, b: TensorF32Cpu3D, m: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return torch.einsum("...ij,...jk->...ik", a, b) + torch.einsum("bij,jk->bik", a, m)


def traces_and_sums(m: TensorF32Cpu2D, x: TensorF32Cpu3D) -> TensorF32Cpu1D:
    # "ii->i": the diagonal; "bij->b": a sum over two dims
    return torch.einsum("ii->i", m) + torch.einsum("bij->b", x)[:1]


def integer_counts(a: TensorI64Cpu2D, b: TensorI64Cpu2D) -> TensorI64Cpu2D:
    return torch.einsum("ij,kj->ik", a, b)
