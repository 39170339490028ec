"""`torch.Tensor` annotations postponed (PEP 563) and spelled through an alias of torch, as
Stable-Baselines3 writes them (`th.Tensor`)."""

from __future__ import annotations

import torch as th
import torch.nn.functional as F


def swiglu(x: th.Tensor, w1: th.Tensor, w3: th.Tensor) -> th.Tensor:
    return F.silu(x @ w1) * (x @ w3)


def value_and_features(obs: th.Tensor, w: th.Tensor, b: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
    features = th.tanh(F.linear(obs, w, b))
    return features.sum(dim=1), features
