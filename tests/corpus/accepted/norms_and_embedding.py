# Inference batch norm (running statistics), group norm, and embedding lookups.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D, TensorI64Cpu1D, TensorI64Cpu2D

EPS = 1e-5


def conv_bn(x: TensorF32Cpu4D, w: TensorF32Cpu4D, mean: TensorF32Cpu1D, var: TensorF32Cpu1D, g: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu4D:
    return F.relu(F.batch_norm(F.conv2d(x, w, padding=2), mean, var, g, b, False, 0.1, EPS))


def bn_features(x: TensorF32Cpu2D, mean: TensorF32Cpu1D, var: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.batch_norm(x, mean, var, training=False, eps=1e-3)


def gn(x: TensorF32Cpu3D, w: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.silu(F.group_norm(x, 1, w, b, eps=1e-6))


def token_and_position(idx: TensorI64Cpu2D, wte: TensorF32Cpu2D, pos: TensorI64Cpu1D, wpe: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return F.embedding(idx, wte) + F.embedding(pos, wpe)


def clip_logits(image_features: TensorF32Cpu2D, text_features: TensorF32Cpu2D, logit_scale: TensorF32Cpu1D) -> TensorF32Cpu2D:
    image_features = image_features / image_features.norm(dim=1, keepdim=True)
    text_features = text_features / text_features.norm(p="fro", dim=-1, keepdim=True)
    return logit_scale.exp() * image_features @ text_features.t()


def vector_norms(x: TensorF32Cpu3D) -> TensorF32Cpu1D:
    return torch.linalg.vector_norm(x, dim=(1, 2)) + torch.norm(x, 1, (0, 2)) + x.norm(float("inf"), dim=[1, 2])


def normalized(q: TensorF32Cpu3D, k: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.normalize(q, dim=-1) + F.normalize(k, p=1.0, dim=1, eps=1e-6)


# Llama's prompt log-probs: the loss per token, the classes in dim 1.
def token_logprobs(logits: TensorF32Cpu3D, tokens: TensorI64Cpu2D, pad_id: int) -> TensorF32Cpu2D:
    return -F.cross_entropy(input=logits.transpose(1, 2), target=tokens, reduction="none", ignore_index=pad_id)


def smoothed_loss(scores: TensorF32Cpu2D, labels: TensorI64Cpu1D) -> TensorF32Cpu1D:
    return F.cross_entropy(scores, labels, reduction="none", label_smoothing=0.1)
