# Seed rows "Training / autograd" and "Modules": not covered, the function stays on Python.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def backward(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    y = x.relu()
    y.backward()
    return y


def module_call(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    layer = torch.nn.Linear(4, 4)
    return layer(x)


def module_gelu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.nn.GELU()(x)


# Attention with dropout while training (random), and the averaged weights (need_weights
# defaults to True): TL201 each; the inference form is claimed.
def attention_dropout(x: TensorF32Cpu3D, w_in: TensorF32Cpu2D, w_out: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return F.multi_head_attention_forward(x, x, x, 8, 2, w_in, None, None, None, False, 0.1, w_out, None, need_weights=False)[0]


def attention_weights(x: TensorF32Cpu3D, w_in: TensorF32Cpu2D, w_out: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return F.multi_head_attention_forward(x, x, x, 8, 2, w_in, None, None, None, False, 0.0, w_out, None, training=False)[1]
