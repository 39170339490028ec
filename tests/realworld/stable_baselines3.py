"""Stable-Baselines3 (DLR-RM/stable-baselines3, MIT License) — stable_baselines3/common/
distributions.py, common/torch_layers.py, common/policies.py, sac/policies.py,
td3/policies.py and dqn/policies.py.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters, each `nn.Sequential` built by `create_mlp` / `MlpExtractor` is written out layer
by layer, the distribution objects' methods are inlined where the policy calls them, the
features extractor is the default `FlattenExtractor` (`nn.Flatten()` on already-flat
observations) or `NatureCNN`, `th` is `torch` as in the project. Everything else is kept as
the project writes it.
"""

import torch as th
import torch.nn.functional as F
from torch.distributions import Categorical, Normal

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu4D,
    TensorI64Cpu1D,
)

LOG_STD_MAX = 2
LOG_STD_MIN = -20


# Stable-Baselines3 — stable_baselines3/common/distributions.py, sum_independent_dims (DLR-RM/stable-baselines3)
def sum_independent_dims(tensor: TensorF32Cpu2D) -> TensorF32Cpu1D:
    """
    Continuous actions are usually considered to be independent,
    so we can sum components of the ``log_prob`` or the entropy.

    :param tensor: shape: (n_batch, n_actions) or (n_batch,)
    :return: shape: (n_batch,)
    """
    if len(tensor.shape) > 1:
        tensor = tensor.sum(dim=1)
    else:
        tensor = tensor.sum()
    return tensor


# Stable-Baselines3 — stable_baselines3/common/distributions.py, CategoricalDistribution.proba_distribution + mode (DLR-RM/stable-baselines3)
def categorical_mode(action_logits: TensorF32Cpu2D) -> TensorI64Cpu1D:
    distribution = Categorical(logits=action_logits)
    return th.argmax(distribution.probs, dim=1)


# Stable-Baselines3 — stable_baselines3/common/distributions.py, DiagGaussianDistribution.proba_distribution + log_prob (DLR-RM/stable-baselines3)
def diag_gaussian_log_prob(mean_actions: TensorF32Cpu2D, log_std: TensorF32Cpu1D, actions: TensorF32Cpu2D) -> TensorF32Cpu1D:
    action_std = th.ones_like(mean_actions) * log_std.exp()
    distribution = Normal(mean_actions, action_std)
    log_prob = distribution.log_prob(actions)
    return sum_independent_dims(log_prob)


# Stable-Baselines3 — stable_baselines3/common/distributions.py, TanhBijector.atanh (DLR-RM/stable-baselines3)
def atanh(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """
    Inverse of Tanh

    Taken from Pyro: https://github.com/pyro-ppl/pyro
    0.5 * torch.log((1 + x ) / (1 - x))
    """
    return 0.5 * (x.log1p() - (-x).log1p())


# Stable-Baselines3 — stable_baselines3/common/distributions.py, TanhBijector.inverse (DLR-RM/stable-baselines3)
def tanh_bijector_inverse(y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    """
    Inverse tanh.

    :param y:
    :return:
    """
    eps = th.finfo(y.dtype).eps
    # Clip the action to avoid NaN
    return atanh(y.clamp(min=-1.0 + eps, max=1.0 - eps))


# Stable-Baselines3 — stable_baselines3/common/distributions.py, SquashedDiagGaussianDistribution.log_prob
# (gaussian_actions is None) (DLR-RM/stable-baselines3)
def squashed_diag_gaussian_log_prob(
    mean_actions: TensorF32Cpu2D, log_std: TensorF32Cpu2D, actions: TensorF32Cpu2D, epsilon: float
) -> TensorF32Cpu1D:
    # Inverse tanh
    # Naive implementation (not stable): 0.5 * torch.log((1 + x) / (1 - x))
    # We use numpy to avoid numerical instability
    # It will be clipped to avoid NaN when inversing tanh
    gaussian_actions = tanh_bijector_inverse(actions)

    # Log likelihood for a Gaussian distribution
    action_std = th.ones_like(mean_actions) * log_std.exp()
    distribution = Normal(mean_actions, action_std)
    log_prob = sum_independent_dims(distribution.log_prob(gaussian_actions))
    # Squash correction (from original SAC implementation)
    # this comes from the fact that tanh is bijective and differentiable
    log_prob -= th.sum(th.log(1 - actions**2 + epsilon), dim=1)
    return log_prob


# Stable-Baselines3 — stable_baselines3/common/torch_layers.py, MlpExtractor.forward (net_arch=[64, 64], Tanh) (DLR-RM/stable-baselines3)
def mlp_extractor(
    features: TensorF32Cpu2D,
    policy_net_0_weight: TensorF32Cpu2D,
    policy_net_0_bias: TensorF32Cpu1D,
    policy_net_2_weight: TensorF32Cpu2D,
    policy_net_2_bias: TensorF32Cpu1D,
    value_net_0_weight: TensorF32Cpu2D,
    value_net_0_bias: TensorF32Cpu1D,
    value_net_2_weight: TensorF32Cpu2D,
    value_net_2_bias: TensorF32Cpu1D,
) -> tuple[TensorF32Cpu2D, TensorF32Cpu2D]:
    """
    :return: latent_policy, latent_value of the specified network.
        If all layers are shared, then ``latent_policy == latent_value``
    """
    # self.forward_actor(features)
    latent_pi = th.tanh(F.linear(features, policy_net_0_weight, policy_net_0_bias))
    latent_pi = th.tanh(F.linear(latent_pi, policy_net_2_weight, policy_net_2_bias))
    # self.forward_critic(features)
    latent_vf = th.tanh(F.linear(features, value_net_0_weight, value_net_0_bias))
    latent_vf = th.tanh(F.linear(latent_vf, value_net_2_weight, value_net_2_bias))
    return latent_pi, latent_vf


# Stable-Baselines3 — stable_baselines3/common/policies.py, ActorCriticPolicy.forward (Discrete action space,
# deterministic=True, FlattenExtractor, net_arch=[64, 64]) (DLR-RM/stable-baselines3)
def actor_critic_forward(
    obs: TensorF32Cpu2D,
    policy_net_0_weight: TensorF32Cpu2D,
    policy_net_0_bias: TensorF32Cpu1D,
    policy_net_2_weight: TensorF32Cpu2D,
    policy_net_2_bias: TensorF32Cpu1D,
    value_net_0_weight: TensorF32Cpu2D,
    value_net_0_bias: TensorF32Cpu1D,
    value_net_2_weight: TensorF32Cpu2D,
    value_net_2_bias: TensorF32Cpu1D,
    action_net_weight: TensorF32Cpu2D,
    action_net_bias: TensorF32Cpu1D,
    value_net_weight: TensorF32Cpu2D,
    value_net_bias: TensorF32Cpu1D,
) -> tuple[TensorI64Cpu1D, TensorF32Cpu2D, TensorF32Cpu1D]:
    # Preprocess the observation if needed
    features = th.flatten(obs, 1)
    latent_pi, latent_vf = mlp_extractor(
        features,
        policy_net_0_weight, policy_net_0_bias, policy_net_2_weight, policy_net_2_bias,
        value_net_0_weight, value_net_0_bias, value_net_2_weight, value_net_2_bias,
    )
    # Evaluate the values for the given observations
    values = F.linear(latent_vf, value_net_weight, value_net_bias)
    # self._get_action_dist_from_latent(latent_pi)
    mean_actions = F.linear(latent_pi, action_net_weight, action_net_bias)
    distribution = Categorical(logits=mean_actions)
    # distribution.get_actions(deterministic=True) -> mode()
    actions = th.argmax(distribution.probs, dim=1)
    log_prob = distribution.log_prob(actions)
    actions = actions.reshape((-1,))  # type: ignore[misc]
    return actions, values, log_prob


# Stable-Baselines3 — stable_baselines3/common/torch_layers.py, NatureCNN.forward (DLR-RM/stable-baselines3)
def nature_cnn(
    observations: TensorF32Cpu4D,
    cnn_0_weight: TensorF32Cpu4D,
    cnn_0_bias: TensorF32Cpu1D,
    cnn_2_weight: TensorF32Cpu4D,
    cnn_2_bias: TensorF32Cpu1D,
    cnn_4_weight: TensorF32Cpu4D,
    cnn_4_bias: TensorF32Cpu1D,
    linear_0_weight: TensorF32Cpu2D,
    linear_0_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    # self.cnn(observations)
    x = F.relu(F.conv2d(observations, cnn_0_weight, cnn_0_bias, stride=4, padding=0))
    x = F.relu(F.conv2d(x, cnn_2_weight, cnn_2_bias, stride=2, padding=0))
    x = F.relu(F.conv2d(x, cnn_4_weight, cnn_4_bias, stride=1, padding=0))
    x = th.flatten(x, 1)
    # self.linear(...)
    return F.relu(F.linear(x, linear_0_weight, linear_0_bias))


# Stable-Baselines3 — stable_baselines3/dqn/policies.py, QNetwork.forward + DQNPolicy._predict (net_arch=[64, 64]) (DLR-RM/stable-baselines3)
def dqn_predict(
    observation: TensorF32Cpu2D,
    q_net_0_weight: TensorF32Cpu2D,
    q_net_0_bias: TensorF32Cpu1D,
    q_net_2_weight: TensorF32Cpu2D,
    q_net_2_bias: TensorF32Cpu1D,
    q_net_4_weight: TensorF32Cpu2D,
    q_net_4_bias: TensorF32Cpu1D,
) -> TensorI64Cpu1D:
    features = th.flatten(observation, 1)
    q_values = F.linear(F.relu(F.linear(F.relu(F.linear(features, q_net_0_weight, q_net_0_bias)), q_net_2_weight, q_net_2_bias)), q_net_4_weight, q_net_4_bias)
    # Greedy action
    action = q_values.argmax(dim=1).reshape(-1)
    return action


# Stable-Baselines3 — stable_baselines3/sac/policies.py, Actor.get_action_dist_params + Actor.forward
# (use_sde=False, deterministic=True) (DLR-RM/stable-baselines3)
def sac_actor_forward(
    obs: TensorF32Cpu2D,
    latent_pi_0_weight: TensorF32Cpu2D,
    latent_pi_0_bias: TensorF32Cpu1D,
    latent_pi_2_weight: TensorF32Cpu2D,
    latent_pi_2_bias: TensorF32Cpu1D,
    mu_weight: TensorF32Cpu2D,
    mu_bias: TensorF32Cpu1D,
    log_std_weight: TensorF32Cpu2D,
    log_std_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    features = th.flatten(obs, 1)
    latent_pi = F.relu(F.linear(F.relu(F.linear(features, latent_pi_0_weight, latent_pi_0_bias)), latent_pi_2_weight, latent_pi_2_bias))
    mean_actions = F.linear(latent_pi, mu_weight, mu_bias)

    # Unstructured exploration (Original implementation)
    log_std = F.linear(latent_pi, log_std_weight, log_std_bias)  # type: ignore[operator]
    # Original Implementation to cap the standard deviation
    log_std = th.clamp(log_std, LOG_STD_MIN, LOG_STD_MAX)
    # Note: the action is squashed
    # self.action_dist.actions_from_params(mean_actions, log_std, deterministic=True):
    # SquashedDiagGaussianDistribution.proba_distribution, then .mode()
    action_std = th.ones_like(mean_actions) * log_std.exp()
    distribution = Normal(mean_actions, action_std)
    gaussian_actions = distribution.mean
    return th.tanh(gaussian_actions)


# Stable-Baselines3 — stable_baselines3/td3/policies.py, Actor.forward (mu = create_mlp(..., squash_output=True)) (DLR-RM/stable-baselines3)
def td3_actor_forward(
    obs: TensorF32Cpu2D,
    mu_0_weight: TensorF32Cpu2D,
    mu_0_bias: TensorF32Cpu1D,
    mu_2_weight: TensorF32Cpu2D,
    mu_2_bias: TensorF32Cpu1D,
    mu_4_weight: TensorF32Cpu2D,
    mu_4_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    # assert deterministic, 'The TD3 actor only outputs deterministic actions'
    features = th.flatten(obs, 1)
    x = F.relu(F.linear(features, mu_0_weight, mu_0_bias))
    x = F.relu(F.linear(x, mu_2_weight, mu_2_bias))
    x = F.linear(x, mu_4_weight, mu_4_bias)
    return th.tanh(x)


# Stable-Baselines3 — stable_baselines3/common/policies.py, ContinuousCritic.q1_forward (DLR-RM/stable-baselines3)
def continuous_critic_q1_forward(
    obs: TensorF32Cpu2D,
    actions: TensorF32Cpu2D,
    qf0_0_weight: TensorF32Cpu2D,
    qf0_0_bias: TensorF32Cpu1D,
    qf0_2_weight: TensorF32Cpu2D,
    qf0_2_bias: TensorF32Cpu1D,
    qf0_4_weight: TensorF32Cpu2D,
    qf0_4_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    features = th.flatten(obs, 1)
    qvalue_input = th.cat([features, actions], dim=1)
    x = F.relu(F.linear(qvalue_input, qf0_0_weight, qf0_0_bias))
    x = F.relu(F.linear(x, qf0_2_weight, qf0_2_bias))
    return F.linear(x, qf0_4_weight, qf0_4_bias)


INPUTS = {
    "sum_independent_dims": lambda: (th.randn(3, 2),),
    "categorical_mode": lambda: (th.randn(3, 4),),
    "diag_gaussian_log_prob": lambda: (th.randn(3, 2), th.randn(2), th.randn(3, 2)),
    "atanh": lambda: (th.rand(3, 2) * 1.8 - 0.9,),
    "tanh_bijector_inverse": lambda: (th.rand(3, 2) * 2.0 - 1.0,),
    "squashed_diag_gaussian_log_prob": lambda: (th.randn(3, 2), th.clamp(th.randn(3, 2), -20, 2), th.rand(3, 2) * 1.8 - 0.9, 1e-6),
    "mlp_extractor": lambda: (
        th.randn(3, 8), th.randn(64, 8), th.randn(64), th.randn(64, 64), th.randn(64),
        th.randn(64, 8), th.randn(64), th.randn(64, 64), th.randn(64),
    ),
    "actor_critic_forward": lambda: (
        th.randn(3, 8), th.randn(64, 8), th.randn(64), th.randn(64, 64), th.randn(64),
        th.randn(64, 8), th.randn(64), th.randn(64, 64), th.randn(64),
        th.randn(4, 64), th.randn(4), th.randn(1, 64), th.randn(1),
    ),
    "nature_cnn": lambda: (
        th.rand(2, 4, 36, 36),
        th.randn(32, 4, 8, 8) * 0.05, th.randn(32), th.randn(64, 32, 4, 4) * 0.05, th.randn(64),
        th.randn(64, 64, 3, 3) * 0.05, th.randn(64), th.randn(512, 64) * 0.05, th.randn(512),
    ),
    "dqn_predict": lambda: (
        th.randn(3, 8), th.randn(64, 8), th.randn(64), th.randn(64, 64), th.randn(64), th.randn(4, 64), th.randn(4),
    ),
    "sac_actor_forward": lambda: (
        th.randn(3, 8), th.randn(256, 8), th.randn(256), th.randn(256, 256), th.randn(256),
        th.randn(2, 256), th.randn(2), th.randn(2, 256), th.randn(2),
    ),
    "td3_actor_forward": lambda: (
        th.randn(3, 8), th.randn(400, 8), th.randn(400), th.randn(300, 400), th.randn(300), th.randn(2, 300), th.randn(2),
    ),
    "continuous_critic_q1_forward": lambda: (
        th.randn(3, 8), th.randn(3, 2), th.randn(400, 10), th.randn(400), th.randn(300, 400), th.randn(300),
        th.randn(1, 300), th.randn(1),
    ),
}
