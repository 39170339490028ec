# torch.distributions as RL policy heads use them: a Categorical or Normal assigned to a name,
# then log_prob, entropy, probs, mode, mean and stddev (eager's formulas and checks).
import torch
from torch.distributions import Categorical, Normal
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def discrete_head(logits: TensorF32Cpu2D, action: TensorI64Cpu1D) -> tuple[TensorI64Cpu1D, TensorF32Cpu1D, TensorF32Cpu1D]:
    probs = Categorical(logits=logits)
    return action, probs.log_prob(action), probs.entropy()


def greedy(action_logits: TensorF32Cpu2D) -> tuple[TensorI64Cpu1D, TensorI64Cpu1D]:
    distribution = torch.distributions.Categorical(logits=action_logits)
    return torch.argmax(distribution.probs, dim=1), distribution.mode


def continuous_head(mean: TensorF32Cpu2D, logstd: TensorF32Cpu2D, action: TensorF32Cpu2D) -> tuple[TensorF32Cpu1D, TensorF32Cpu1D]:
    probs = Normal(mean, torch.exp(logstd.expand_as(mean)))
    return probs.log_prob(action).sum(1), probs.entropy().sum(1)


def gaussian_moments(mean: TensorF32Cpu2D, log_std: TensorF32Cpu1D) -> TensorF32Cpu2D:
    distribution = Normal(mean, log_std.exp())
    same = distribution
    return same.mean + distribution.stddev


# Transformers' EtaLogitsWarper: a distribution made inline and used at once
def inline_entropy(scores: TensorF32Cpu2D) -> TensorF32Cpu1D:
    entropy = torch.distributions.Categorical(logits=scores).entropy()
    probs = Categorical(logits=scores).probs
    return entropy + probs[:, 0]
