# Seed row "Other ranks": rank-0 results and wrong linear ranks are rejected.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def dot_rank0(a: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return a @ b


def matmul_call_rank0(a: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.matmul(a, b)


def linear_1d_input(x: TensorF32Cpu1D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b)


def linear_2d_bias(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.linear(x, w, b)


# Seed row "Unsupported broadcast ranks": the seed had only rank-1/2 types. Ranks 3–4 are
# types now and broadcast as eager does, on CPU (tests/corpus/accepted/ranks_3_4.py) and on
# cuda:0 (tests/corpus/accepted/cuda_language.py); what stays outside on cuda:0 is an op
# without a kernel of ours (TL209).
from torchlower.types import TensorF32Cuda0_3D


def cuda_rank3_sin(x: TensorF32Cuda0_3D, v: TensorF32Cuda0_1D) -> TensorF32Cuda0_3D:
    return torch.sin(x + v)


# Causal attention on cuda:0: our kernels compose the plain and masked forms only (TL209).
def cuda_causal_attention(q: TensorF32Cuda0_3D, k: TensorF32Cuda0_3D, v: TensorF32Cuda0_3D) -> TensorF32Cuda0_3D:
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


# A norm of an order our kernels do not compose on cuda:0 (TL209; libtorch's on the CPU)
def cuda_norm_of_order_3(x: TensorF32Cuda0_2D) -> TensorF32Cuda0_1D:
    return torch.linalg.vector_norm(x, 3, dim=1)


# torch.mm takes two rank-2 tensors; a rank-1 side is matmul's (TL208)
def mm_of_a_vector(a: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.mm(a, v)
