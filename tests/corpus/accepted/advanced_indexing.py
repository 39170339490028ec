# Advanced indexing on the CPU (extension torchlower/tensor-advanced-indexing): int64 index
# tensors (broadcasting together), lists of ints and bool masks, beside basic items; the
# result is eager's gathered copy.
from torchlower.types import TensorBoolCpu1D, TensorBoolCpu2D, TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorI64Cpu1D, TensorI64Cpu2D
import torch


def rows(x: TensorF32Cpu2D, idx: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return x[idx]


def last_step(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x[:, [-1], :]


def pick_per_row(pmfs: TensorF32Cpu3D, action: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return pmfs[torch.arange(len(action)), action]


def gather_2d(x: TensorF32Cpu2D, idx: TensorI64Cpu2D) -> TensorF32Cpu3D:
    return x[idx]


def masked_rows(x: TensorF32Cpu2D, keep: TensorBoolCpu1D) -> TensorF32Cpu2D:
    return x[keep]


def masked_values(x: TensorF32Cpu2D, mask: TensorBoolCpu2D) -> TensorF32Cpu1D:
    return x[mask] * 2.0
