# Ranks 3 and 4 (issue: the language of real inference code): every op of the surface on
# float32 CPU tensors of rank 3–4, broadcasting between any ranks, batched matmul, reductions,
# softmax and argmax over any literal dim, int64 results of rank 2–3.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D, TensorI64Cpu2D, TensorI64Cpu3D


def gpt_mlp(x: TensorF32Cpu3D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)


def attention_weights(q: TensorF32Cpu4D, k: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return torch.softmax(q @ k, dim=-1)


def rank3_broadcast(x: TensorF32Cpu3D, v: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return x + v


def rank4_chain(x: TensorF32Cpu4D, y: TensorF32Cpu2D) -> TensorF32Cpu4D:
    return (x * y).relu().exp() - y


def mean_pool(x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    return x.mean(dim=1)


def sum_keepdim(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return torch.sum(x, -3, keepdim=True)


def token_labels(x: TensorF32Cpu3D) -> TensorI64Cpu2D:
    return x.argmax(dim=-1)


def kept_labels(x: TensorF32Cpu2D) -> TensorI64Cpu2D:
    return x.argmax(dim=1, keepdim=True)


def volume_labels(x: TensorF32Cpu4D) -> TensorI64Cpu3D:
    return torch.argmax(x, 0)


def batched_vector(x: TensorF32Cpu3D, v: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x @ v


def vector_batched(v: TensorF32Cpu1D, x: TensorF32Cpu3D) -> TensorF32Cpu2D:
    return v @ x


def batched_matrix(x: TensorF32Cpu3D, w: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return torch.matmul(x, w).tanh()


def broadcast_batches(a: TensorF32Cpu4D, b: TensorF32Cpu3D) -> TensorF32Cpu4D:
    return a.matmul(b)


def head_softmax(x: TensorF32Cpu3D, w: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return F.softmax(F.linear(x, w), dim=1)


def repeat_kv(hidden_states: TensorF32Cpu4D, n_rep: int) -> TensorF32Cpu4D:
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)
