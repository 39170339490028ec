"""CleanRL (vwxyzjn/cleanrl, MIT License) — agents of cleanrl/ppo.py, ppo_continuous_action.py,
ppo_atari.py, dqn.py, c51.py, sac_continuous_action.py and td3_continuous_action.py.

Forward paths rewritten as annotated top-level functions: module weights (and the
`action_scale` / `action_bias` / `atoms` buffers) are explicit parameters, each
`nn.Sequential` is written out layer by layer (indices as in the Sequential), `nn.Linear` /
`nn.Conv2d` are `F.linear` / `F.conv2d`. Where the project samples an action when `action is
None`, the action is an input (the `probs.sample()` branch is left out). Everything else is
kept as the project writes it.
"""

import torch
import torch.nn.functional as F
from torch.distributions.categorical import Categorical
from torch.distributions.normal import Normal

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu4D,
    TensorI64Cpu1D,
)

LOG_STD_MAX = 2
LOG_STD_MIN = -5


# CleanRL — cleanrl/ppo.py, Agent.critic (nn.Sequential of layer_init(Linear), Tanh) (vwxyzjn/cleanrl)
def ppo_critic(
    x: TensorF32Cpu2D,
    critic_0_weight: TensorF32Cpu2D,
    critic_0_bias: TensorF32Cpu1D,
    critic_2_weight: TensorF32Cpu2D,
    critic_2_bias: TensorF32Cpu1D,
    critic_4_weight: TensorF32Cpu2D,
    critic_4_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    x = F.linear(x, critic_0_weight, critic_0_bias)
    x = torch.tanh(x)
    x = F.linear(x, critic_2_weight, critic_2_bias)
    x = torch.tanh(x)
    x = F.linear(x, critic_4_weight, critic_4_bias)
    return x


# CleanRL — cleanrl/ppo.py, Agent.actor (nn.Sequential of layer_init(Linear), Tanh) (vwxyzjn/cleanrl)
def ppo_actor(
    x: TensorF32Cpu2D,
    actor_0_weight: TensorF32Cpu2D,
    actor_0_bias: TensorF32Cpu1D,
    actor_2_weight: TensorF32Cpu2D,
    actor_2_bias: TensorF32Cpu1D,
    actor_4_weight: TensorF32Cpu2D,
    actor_4_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    x = F.linear(x, actor_0_weight, actor_0_bias)
    x = torch.tanh(x)
    x = F.linear(x, actor_2_weight, actor_2_bias)
    x = torch.tanh(x)
    x = F.linear(x, actor_4_weight, actor_4_bias)
    return x


# CleanRL — cleanrl/ppo.py, Agent.get_value (vwxyzjn/cleanrl)
def ppo_get_value(
    x: TensorF32Cpu2D,
    critic_0_weight: TensorF32Cpu2D,
    critic_0_bias: TensorF32Cpu1D,
    critic_2_weight: TensorF32Cpu2D,
    critic_2_bias: TensorF32Cpu1D,
    critic_4_weight: TensorF32Cpu2D,
    critic_4_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    return ppo_critic(x, critic_0_weight, critic_0_bias, critic_2_weight, critic_2_bias, critic_4_weight, critic_4_bias)


# CleanRL — cleanrl/ppo.py, Agent.get_action_and_value (action given) (vwxyzjn/cleanrl)
def ppo_get_action_and_value(
    x: TensorF32Cpu2D,
    action: TensorI64Cpu1D,
    actor_0_weight: TensorF32Cpu2D,
    actor_0_bias: TensorF32Cpu1D,
    actor_2_weight: TensorF32Cpu2D,
    actor_2_bias: TensorF32Cpu1D,
    actor_4_weight: TensorF32Cpu2D,
    actor_4_bias: TensorF32Cpu1D,
    critic_0_weight: TensorF32Cpu2D,
    critic_0_bias: TensorF32Cpu1D,
    critic_2_weight: TensorF32Cpu2D,
    critic_2_bias: TensorF32Cpu1D,
    critic_4_weight: TensorF32Cpu2D,
    critic_4_bias: TensorF32Cpu1D,
) -> tuple[TensorI64Cpu1D, TensorF32Cpu1D, TensorF32Cpu1D, TensorF32Cpu2D]:
    logits = ppo_actor(x, actor_0_weight, actor_0_bias, actor_2_weight, actor_2_bias, actor_4_weight, actor_4_bias)
    probs = Categorical(logits=logits)
    return action, probs.log_prob(action), probs.entropy(), ppo_critic(
        x, critic_0_weight, critic_0_bias, critic_2_weight, critic_2_bias, critic_4_weight, critic_4_bias
    )


# CleanRL — cleanrl/ppo_continuous_action.py, Agent.get_action_and_value (action given) (vwxyzjn/cleanrl)
def ppo_continuous_get_action_and_value(
    x: TensorF32Cpu2D,
    action: TensorF32Cpu2D,
    actor_mean_0_weight: TensorF32Cpu2D,
    actor_mean_0_bias: TensorF32Cpu1D,
    actor_mean_2_weight: TensorF32Cpu2D,
    actor_mean_2_bias: TensorF32Cpu1D,
    actor_mean_4_weight: TensorF32Cpu2D,
    actor_mean_4_bias: TensorF32Cpu1D,
    actor_logstd: TensorF32Cpu2D,
    critic_0_weight: TensorF32Cpu2D,
    critic_0_bias: TensorF32Cpu1D,
    critic_2_weight: TensorF32Cpu2D,
    critic_2_bias: TensorF32Cpu1D,
    critic_4_weight: TensorF32Cpu2D,
    critic_4_bias: TensorF32Cpu1D,
) -> tuple[TensorF32Cpu2D, TensorF32Cpu1D, TensorF32Cpu1D, TensorF32Cpu2D]:
    # self.actor_mean(x)
    h = torch.tanh(F.linear(x, actor_mean_0_weight, actor_mean_0_bias))
    h = torch.tanh(F.linear(h, actor_mean_2_weight, actor_mean_2_bias))
    action_mean = F.linear(h, actor_mean_4_weight, actor_mean_4_bias)
    action_logstd = actor_logstd.expand_as(action_mean)
    action_std = torch.exp(action_logstd)
    probs = Normal(action_mean, action_std)
    # self.critic(x)
    v = torch.tanh(F.linear(x, critic_0_weight, critic_0_bias))
    v = torch.tanh(F.linear(v, critic_2_weight, critic_2_bias))
    v = F.linear(v, critic_4_weight, critic_4_bias)
    return action, probs.log_prob(action).sum(1), probs.entropy().sum(1), v


# CleanRL — cleanrl/dqn.py, QNetwork.forward (Linear 120, ReLU, Linear 84, ReLU, Linear n) (vwxyzjn/cleanrl)
def dqn_q_network(
    x: TensorF32Cpu2D,
    network_0_weight: TensorF32Cpu2D,
    network_0_bias: TensorF32Cpu1D,
    network_2_weight: TensorF32Cpu2D,
    network_2_bias: TensorF32Cpu1D,
    network_4_weight: TensorF32Cpu2D,
    network_4_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    x = F.linear(x, network_0_weight, network_0_bias)
    x = F.relu(x)
    x = F.linear(x, network_2_weight, network_2_bias)
    x = F.relu(x)
    x = F.linear(x, network_4_weight, network_4_bias)
    return x


# CleanRL — cleanrl/dqn.py, greedy action selection in the training loop (vwxyzjn/cleanrl)
def dqn_select_action(
    obs: TensorF32Cpu2D,
    network_0_weight: TensorF32Cpu2D,
    network_0_bias: TensorF32Cpu1D,
    network_2_weight: TensorF32Cpu2D,
    network_2_bias: TensorF32Cpu1D,
    network_4_weight: TensorF32Cpu2D,
    network_4_bias: TensorF32Cpu1D,
) -> TensorI64Cpu1D:
    q_values = dqn_q_network(obs, network_0_weight, network_0_bias, network_2_weight, network_2_bias, network_4_weight, network_4_bias)
    actions = torch.argmax(q_values, dim=1)
    return actions


# CleanRL — cleanrl/c51.py, QNetwork.get_action (action is None) (vwxyzjn/cleanrl)
def c51_get_action(
    x: TensorF32Cpu2D,
    atoms: TensorF32Cpu1D,
    network_0_weight: TensorF32Cpu2D,
    network_0_bias: TensorF32Cpu1D,
    network_2_weight: TensorF32Cpu2D,
    network_2_bias: TensorF32Cpu1D,
    network_4_weight: TensorF32Cpu2D,
    network_4_bias: TensorF32Cpu1D,
    n: int,
    n_atoms: int,
) -> tuple[TensorI64Cpu1D, TensorF32Cpu2D]:
    logits = dqn_q_network(x, network_0_weight, network_0_bias, network_2_weight, network_2_bias, network_4_weight, network_4_bias)
    # probability mass function for each action
    pmfs = torch.softmax(logits.view(len(x), n, n_atoms), dim=2)
    q_values = (pmfs * atoms).sum(2)
    action = torch.argmax(q_values, 1)
    return action, pmfs[torch.arange(len(x)), action]


# CleanRL — cleanrl/sac_continuous_action.py, Actor.forward (vwxyzjn/cleanrl)
def sac_actor_forward(
    x: TensorF32Cpu2D,
    fc1_weight: TensorF32Cpu2D,
    fc1_bias: TensorF32Cpu1D,
    fc2_weight: TensorF32Cpu2D,
    fc2_bias: TensorF32Cpu1D,
    fc_mean_weight: TensorF32Cpu2D,
    fc_mean_bias: TensorF32Cpu1D,
    fc_logstd_weight: TensorF32Cpu2D,
    fc_logstd_bias: TensorF32Cpu1D,
) -> tuple[TensorF32Cpu2D, TensorF32Cpu2D]:
    x = F.relu(F.linear(x, fc1_weight, fc1_bias))
    x = F.relu(F.linear(x, fc2_weight, fc2_bias))
    mean = F.linear(x, fc_mean_weight, fc_mean_bias)
    log_std = F.linear(x, fc_logstd_weight, fc_logstd_bias)
    log_std = torch.tanh(log_std)
    log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)  # From SpinUp / Denis Yarats

    return mean, log_std


# CleanRL — cleanrl/sac_continuous_action.py, SoftQNetwork.forward (vwxyzjn/cleanrl)
def sac_soft_q_forward(
    x: TensorF32Cpu2D,
    a: TensorF32Cpu2D,
    fc1_weight: TensorF32Cpu2D,
    fc1_bias: TensorF32Cpu1D,
    fc2_weight: TensorF32Cpu2D,
    fc2_bias: TensorF32Cpu1D,
    fc3_weight: TensorF32Cpu2D,
    fc3_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    x = torch.cat([x, a], 1)
    x = F.relu(F.linear(x, fc1_weight, fc1_bias))
    x = F.relu(F.linear(x, fc2_weight, fc2_bias))
    x = F.linear(x, fc3_weight, fc3_bias)
    return x


# CleanRL — cleanrl/td3_continuous_action.py, Actor.forward (vwxyzjn/cleanrl)
def td3_actor_forward(
    x: TensorF32Cpu2D,
    fc1_weight: TensorF32Cpu2D,
    fc1_bias: TensorF32Cpu1D,
    fc2_weight: TensorF32Cpu2D,
    fc2_bias: TensorF32Cpu1D,
    fc_mu_weight: TensorF32Cpu2D,
    fc_mu_bias: TensorF32Cpu1D,
    action_scale: TensorF32Cpu1D,
    action_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    x = F.relu(F.linear(x, fc1_weight, fc1_bias))
    x = F.relu(F.linear(x, fc2_weight, fc2_bias))
    x = torch.tanh(F.linear(x, fc_mu_weight, fc_mu_bias))
    return x * action_scale + action_bias


# CleanRL — cleanrl/ppo_atari.py, Agent.network (Nature CNN: Conv 8/4, 4/2, 3/1, Flatten, Linear 512, ReLU) (vwxyzjn/cleanrl)
def atari_network(
    x: TensorF32Cpu4D,
    conv0_weight: TensorF32Cpu4D,
    conv0_bias: TensorF32Cpu1D,
    conv2_weight: TensorF32Cpu4D,
    conv2_bias: TensorF32Cpu1D,
    conv4_weight: TensorF32Cpu4D,
    conv4_bias: TensorF32Cpu1D,
    linear7_weight: TensorF32Cpu2D,
    linear7_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    x = F.relu(F.conv2d(x, conv0_weight, conv0_bias, stride=4))
    x = F.relu(F.conv2d(x, conv2_weight, conv2_bias, stride=2))
    x = F.relu(F.conv2d(x, conv4_weight, conv4_bias, stride=1))
    x = torch.flatten(x, 1)
    x = F.relu(F.linear(x, linear7_weight, linear7_bias))
    return x


# CleanRL — cleanrl/ppo_atari.py, Agent.get_value (vwxyzjn/cleanrl)
def ppo_atari_get_value(
    x: TensorF32Cpu4D,
    conv0_weight: TensorF32Cpu4D,
    conv0_bias: TensorF32Cpu1D,
    conv2_weight: TensorF32Cpu4D,
    conv2_bias: TensorF32Cpu1D,
    conv4_weight: TensorF32Cpu4D,
    conv4_bias: TensorF32Cpu1D,
    linear7_weight: TensorF32Cpu2D,
    linear7_bias: TensorF32Cpu1D,
    critic_weight: TensorF32Cpu2D,
    critic_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    return F.linear(
        atari_network(x / 255.0, conv0_weight, conv0_bias, conv2_weight, conv2_bias, conv4_weight, conv4_bias, linear7_weight, linear7_bias),
        critic_weight,
        critic_bias,
    )


# CleanRL — cleanrl/ppo_atari.py, Agent.get_action_and_value (action given) (vwxyzjn/cleanrl)
def ppo_atari_get_action_and_value(
    x: TensorF32Cpu4D,
    action: TensorI64Cpu1D,
    conv0_weight: TensorF32Cpu4D,
    conv0_bias: TensorF32Cpu1D,
    conv2_weight: TensorF32Cpu4D,
    conv2_bias: TensorF32Cpu1D,
    conv4_weight: TensorF32Cpu4D,
    conv4_bias: TensorF32Cpu1D,
    linear7_weight: TensorF32Cpu2D,
    linear7_bias: TensorF32Cpu1D,
    actor_weight: TensorF32Cpu2D,
    actor_bias: TensorF32Cpu1D,
    critic_weight: TensorF32Cpu2D,
    critic_bias: TensorF32Cpu1D,
) -> tuple[TensorI64Cpu1D, TensorF32Cpu1D, TensorF32Cpu1D, TensorF32Cpu2D]:
    hidden = atari_network(x / 255.0, conv0_weight, conv0_bias, conv2_weight, conv2_bias, conv4_weight, conv4_bias, linear7_weight, linear7_bias)
    logits = F.linear(hidden, actor_weight, actor_bias)
    probs = Categorical(logits=logits)
    return action, probs.log_prob(action), probs.entropy(), F.linear(hidden, critic_weight, critic_bias)


INPUTS = {
    "ppo_critic": lambda: (torch.randn(3, 4), torch.randn(64, 4), torch.randn(64), torch.randn(64, 64), torch.randn(64), torch.randn(1, 64), torch.randn(1)),
    "ppo_actor": lambda: (torch.randn(3, 4), torch.randn(64, 4), torch.randn(64), torch.randn(64, 64), torch.randn(64), torch.randn(2, 64), torch.randn(2)),
    "ppo_get_value": lambda: (torch.randn(3, 4), torch.randn(64, 4), torch.randn(64), torch.randn(64, 64), torch.randn(64), torch.randn(1, 64), torch.randn(1)),
    "ppo_get_action_and_value": lambda: (
        torch.randn(3, 4), torch.randint(0, 2, (3,)),
        torch.randn(64, 4), torch.randn(64), torch.randn(64, 64), torch.randn(64), torch.randn(2, 64), torch.randn(2),
        torch.randn(64, 4), torch.randn(64), torch.randn(64, 64), torch.randn(64), torch.randn(1, 64), torch.randn(1),
    ),
    "ppo_continuous_get_action_and_value": lambda: (
        torch.randn(3, 5), torch.randn(3, 2),
        torch.randn(64, 5), torch.randn(64), torch.randn(64, 64), torch.randn(64), torch.randn(2, 64), torch.randn(2),
        torch.zeros(1, 2),
        torch.randn(64, 5), torch.randn(64), torch.randn(64, 64), torch.randn(64), torch.randn(1, 64), torch.randn(1),
    ),
    "dqn_q_network": lambda: (torch.randn(3, 4), torch.randn(120, 4), torch.randn(120), torch.randn(84, 120), torch.randn(84), torch.randn(2, 84), torch.randn(2)),
    "dqn_select_action": lambda: (torch.randn(3, 4), torch.randn(120, 4), torch.randn(120), torch.randn(84, 120), torch.randn(84), torch.randn(2, 84), torch.randn(2)),
    "c51_get_action": lambda: (
        torch.randn(3, 4), torch.linspace(-100, 100, steps=11),
        torch.randn(120, 4), torch.randn(120), torch.randn(84, 120), torch.randn(84), torch.randn(22, 84), torch.randn(22),
        2, 11,
    ),
    "sac_actor_forward": lambda: (
        torch.randn(3, 5), torch.randn(32, 5), torch.randn(32), torch.randn(32, 32), torch.randn(32),
        torch.randn(2, 32), torch.randn(2), torch.randn(2, 32), torch.randn(2),
    ),
    "sac_soft_q_forward": lambda: (
        torch.randn(3, 5), torch.randn(3, 2), torch.randn(32, 7), torch.randn(32), torch.randn(32, 32), torch.randn(32), torch.randn(1, 32), torch.randn(1),
    ),
    "td3_actor_forward": lambda: (
        torch.randn(3, 5), torch.randn(32, 5), torch.randn(32), torch.randn(32, 32), torch.randn(32), torch.randn(2, 32), torch.randn(2),
        torch.tensor([2.0, 1.0]), torch.tensor([0.0, 0.5]),
    ),
    "atari_network": lambda: (
        torch.rand(2, 4, 84, 84) * 255.0,
        torch.randn(32, 4, 8, 8) * 0.05, torch.randn(32), torch.randn(64, 32, 4, 4) * 0.05, torch.randn(64),
        torch.randn(64, 64, 3, 3) * 0.05, torch.randn(64), torch.randn(512, 64 * 7 * 7) * 0.01, torch.randn(512),
    ),
    "ppo_atari_get_value": lambda: (
        torch.rand(2, 4, 84, 84) * 255.0,
        torch.randn(32, 4, 8, 8) * 0.05, torch.randn(32), torch.randn(64, 32, 4, 4) * 0.05, torch.randn(64),
        torch.randn(64, 64, 3, 3) * 0.05, torch.randn(64), torch.randn(512, 64 * 7 * 7) * 0.01, torch.randn(512),
        torch.randn(1, 512), torch.randn(1),
    ),
    "ppo_atari_get_action_and_value": lambda: (
        torch.rand(2, 4, 84, 84) * 255.0, torch.randint(0, 6, (2,)),
        torch.randn(32, 4, 8, 8) * 0.05, torch.randn(32), torch.randn(64, 32, 4, 4) * 0.05, torch.randn(64),
        torch.randn(64, 64, 3, 3) * 0.05, torch.randn(64), torch.randn(512, 64 * 7 * 7) * 0.01, torch.randn(512),
        torch.randn(6, 512) * 0.01, torch.randn(6), torch.randn(1, 512), torch.randn(1),
    ),
}
