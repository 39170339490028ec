# torch.distributions forms that stay Python: a distribution used without a name inside a
# larger expression (here a `return`), one made from probabilities, a method that samples, one returned.
import torch
from torch.distributions import Categorical
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def inline_distribution(logits: TensorF32Cpu2D, action: TensorI64Cpu1D) -> TensorF32Cpu1D:
    return Categorical(logits=logits).log_prob(action)


def from_probabilities(p: TensorF32Cpu2D, action: TensorI64Cpu1D) -> TensorF32Cpu1D:
    dist = Categorical(p)
    return dist.log_prob(action)


def sampled(logits: TensorF32Cpu2D) -> TensorI64Cpu1D:
    dist = Categorical(logits=logits)
    return dist.sample()


def returns_the_distribution(logits: TensorF32Cpu2D):
    # eager returns the Categorical object itself, which has no native form
    dist = Categorical(logits=logits)
    return dist


def distribution_as_a_sequence(logits: TensorF32Cpu2D) -> int:
    # a distribution is not a sequence: `len(dist)` is eager's TypeError
    dist = Categorical(logits=logits)
    return len(dist)
