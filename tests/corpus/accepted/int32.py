# int32 tensors: GPT-2's sequence-classification pooling (int32 positions times an int32
# mask, argmax to int64 indices), torchvision's `_upcast` (`t.int()`), int32 arguments and
# eager's promotion of int32 with int32, int64, float32 and Python numbers.
import torch
from torchlower.types import TensorF32Cpu2D, TensorF32Cpu3D, TensorI32Cpu1D, TensorI32Cpu2D, TensorI64Cpu1D, TensorI64Cpu2D


def last_non_pad_logits(logits: TensorF32Cpu3D, input_ids: TensorI64Cpu2D, pad_token_id: int) -> TensorF32Cpu2D:
    batch_size, sequence_length = input_ids.shape[:2]
    non_pad_mask = (input_ids != pad_token_id).to(logits.device, torch.int32)
    token_indices = torch.arange(input_ids.shape[-1], device=logits.device, dtype=torch.int32)
    last_non_pad_token = (token_indices * non_pad_mask).argmax(-1)
    return logits[torch.arange(batch_size, device=logits.device), last_non_pad_token]


def upcast_ints(t: TensorI64Cpu2D) -> TensorI32Cpu2D:
    return (t - 3).int()


def int32_promotion(a: TensorI32Cpu2D, b: TensorI32Cpu1D, c: TensorI64Cpu1D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    same = a * b + 2  # int32
    wider = same - c  # int64
    halves = same / 2  # float32
    return x * same + wider.float() + halves + (a > 1).float()


def int32_reductions(a: TensorI32Cpu2D) -> TensorI64Cpu1D:
    # eager sums and cumsums int32 into int64
    return a.sum(1) + a.cumsum(0)[-1] + a.argmax(0)


def int32_index(x: TensorF32Cpu2D, idx: TensorI32Cpu1D) -> TensorF32Cpu2D:
    return x[idx] + x.to(torch.int32).float()
