"""Policy and recommender modules as DLR-M/stable-baselines3 and facebookresearch/dlrm write
them, for torchlower.compile(module)."""

import torch
from torch import nn


# stable-baselines3 — stable_baselines3/common/torch_layers.py, MlpExtractor (net_arch=dict(pi=[64, 64], vf=[64, 64]), Tanh) (DLR-M/stable-baselines3)
class MlpExtractor(nn.Module):
    def __init__(self, feature_dim, net_arch, activation_fn):
        super().__init__()
        policy_net = []
        value_net = []
        last_layer_dim_pi = feature_dim
        last_layer_dim_vf = feature_dim

        # save dimensions of layers in policy and value nets
        if isinstance(net_arch, dict):
            # Note: if key is not specified, assume linear network
            pi_layers_dims = net_arch.get("pi", [])  # Layer sizes of the policy network
            vf_layers_dims = net_arch.get("vf", [])  # Layer sizes of the value network
        else:
            pi_layers_dims = vf_layers_dims = net_arch
        # Iterate through the policy layers and build the policy net
        for curr_layer_dim in pi_layers_dims:
            policy_net.append(nn.Linear(last_layer_dim_pi, curr_layer_dim))
            policy_net.append(activation_fn())
            last_layer_dim_pi = curr_layer_dim
        # Iterate through the value layers and build the value net
        for curr_layer_dim in vf_layers_dims:
            value_net.append(nn.Linear(last_layer_dim_vf, curr_layer_dim))
            value_net.append(activation_fn())
            last_layer_dim_vf = curr_layer_dim

        # Save dim, used to create the distributions
        self.latent_dim_pi = last_layer_dim_pi
        self.latent_dim_vf = last_layer_dim_vf

        # Create networks
        # If the list of layers is empty, the network will just act as an Identity module
        self.policy_net = nn.Sequential(*policy_net)
        self.value_net = nn.Sequential(*value_net)

    def forward(self, features):
        """
        :return: latent_policy, latent_value of the specified network.
            If all layers are shared, then ``latent_policy == latent_value``
        """
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features):
        return self.policy_net(features)

    def forward_critic(self, features):
        return self.value_net(features)


# DLRM — dlrm_s_pytorch.py, the bottom/top MLPs of DLRM_Net.create_mlp (sigmoid_layer=-1) (facebookresearch/dlrm)
def create_mlp(ln, sigmoid_layer):
    # build MLP layer by layer
    layers = nn.ModuleList()
    for i in range(0, ln.size - 1):
        n = ln[i]
        m = ln[i + 1]

        # construct fully connected operator
        LL = nn.Linear(int(n), int(m), bias=True)
        layers.append(LL)

        # construct sigmoid or relu operator
        if i == sigmoid_layer:
            layers.append(nn.Sigmoid())
        else:
            layers.append(nn.ReLU())

    # approach 1: use ModuleList
    # return layers
    # approach 2: use Sequential container to wrap all layers
    return torch.nn.Sequential(*layers)


# DLRM — dlrm_s_pytorch.py, DLRM_Net.apply_mlp (facebookresearch/dlrm)
class BottomMlp(nn.Module):
    def __init__(self, ln):
        super().__init__()
        self.bot_l = create_mlp(ln, -1)

    def forward(self, dense_x):
        return self.apply_mlp(dense_x, self.bot_l)

    def apply_mlp(self, x, layers):
        # approach 1: use ModuleList
        # for layer in layers:
        #     x = layer(x)
        # return x
        # approach 2: use Sequential container to wrap all layers
        return layers(x)


# cleanrl — cleanrl/ppo_continuous_action.py, Agent's actor_mean (layer_init: orthogonal weights, zero bias) (vwxyzjn/cleanrl)
def layer_init(layer, std=2 ** 0.5, bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


def actor_mean(obs_dim, act_dim):
    return nn.Sequential(
        layer_init(nn.Linear(obs_dim, 64)),
        nn.Tanh(),
        layer_init(nn.Linear(64, 64)),
        nn.Tanh(),
        layer_init(nn.Linear(64, act_dim), std=0.01),
    )


# stable-baselines3 — stable_baselines3/common/torch_layers.py, NatureCNN (DLR-M/stable-baselines3;
# the observation space's channel count and the flattened size, which the project reads from a
# gym space and a sample forward, are arguments; forward as the project writes it)
class NatureCNN(nn.Module):
    def __init__(self, n_input_channels, n_flatten, features_dim=512, normalized_image=False):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(n_input_channels, 32, kernel_size=8, stride=4, padding=0),
            nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=4, stride=2, padding=0),
            nn.ReLU(),
            nn.Conv2d(64, 64, kernel_size=3, stride=1, padding=0),
            nn.ReLU(),
            nn.Flatten(),
        )
        self.linear = nn.Sequential(nn.Linear(n_flatten, features_dim), nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.linear(self.cnn(observations))


EXAMPLES = {
    "MlpExtractor": (lambda: MlpExtractor(8, dict(pi=[64, 64], vf=[64, 64]), nn.Tanh), lambda: (torch.randn(4, 8),)),
    "create_mlp": (lambda: create_mlp(__import__("numpy").array([13, 64, 16]), -1), lambda: (torch.randn(4, 13),)),
    "BottomMlp": (lambda: BottomMlp(__import__("numpy").array([13, 64, 16])), lambda: (torch.randn(4, 13),)),
    "actor_mean": (lambda: actor_mean(8, 2), lambda: (torch.randn(4, 8),)),
    "NatureCNN": (lambda: NatureCNN(4, 3136), lambda: (torch.randn(2, 4, 84, 84),)),
}
