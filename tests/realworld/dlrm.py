"""DLRM (facebookresearch/dlrm, MIT License) — dlrm_s_pytorch.py, DLRM_Net.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters, the `nn.Sequential` MLPs built by `create_mlp` are written out layer by layer,
`nn.EmbeddingBag(mode="sum")` is `F.embedding_bag(..., mode="sum")`. The list of sparse
embedding outputs `ly` is built from one parameter per embedding table (three tables here).
Everything else is kept as the project writes it.
"""

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorI64Cpu1D,
)


# DLRM — dlrm_s_pytorch.py, DLRM_Net.apply_mlp(dense_x, self.bot_l): create_mlp(ln_bot, sigmoid_bot=-1),
# three Linear + ReLU layers (facebookresearch/dlrm)
def bottom_mlp(
    x: TensorF32Cpu2D,
    bot_l_0_weight: TensorF32Cpu2D,
    bot_l_0_bias: TensorF32Cpu1D,
    bot_l_2_weight: TensorF32Cpu2D,
    bot_l_2_bias: TensorF32Cpu1D,
    bot_l_4_weight: TensorF32Cpu2D,
    bot_l_4_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    x = F.linear(x, bot_l_0_weight, bot_l_0_bias)
    x = F.relu(x)
    x = F.linear(x, bot_l_2_weight, bot_l_2_bias)
    x = F.relu(x)
    x = F.linear(x, bot_l_4_weight, bot_l_4_bias)
    x = F.relu(x)
    return x


# DLRM — dlrm_s_pytorch.py, DLRM_Net.apply_mlp(z, self.top_l): create_mlp(ln_top, sigmoid_top=ln_top.size - 2),
# Linear + ReLU, Linear + Sigmoid (facebookresearch/dlrm)
def top_mlp(
    x: TensorF32Cpu2D,
    top_l_0_weight: TensorF32Cpu2D,
    top_l_0_bias: TensorF32Cpu1D,
    top_l_2_weight: TensorF32Cpu2D,
    top_l_2_bias: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    x = F.linear(x, top_l_0_weight, top_l_0_bias)
    x = F.relu(x)
    x = F.linear(x, top_l_2_weight, top_l_2_bias)
    x = torch.sigmoid(x)
    return x


# DLRM — dlrm_s_pytorch.py, DLRM_Net.apply_emb, one lookup of one table (facebookresearch/dlrm)
def embedding_bag_lookup(
    sparse_index_group_batch: TensorI64Cpu1D, sparse_offset_group_batch: TensorI64Cpu1D, emb_weight: TensorF32Cpu2D
) -> TensorF32Cpu2D:
    # embedding lookup
    # We are using EmbeddingBag, which implicitly uses sum operator.
    # The embeddings are represented as tall matrices, with sum
    # happening vertically across 0 axis, resulting in a row vector
    V = F.embedding_bag(sparse_index_group_batch, emb_weight, sparse_offset_group_batch, mode="sum")
    return V


# DLRM — dlrm_s_pytorch.py, DLRM_Net.interact_features, arch_interaction_op == "dot" (facebookresearch/dlrm)
def interact_features_dot(
    x: TensorF32Cpu2D, ly_0: TensorF32Cpu2D, ly_1: TensorF32Cpu2D, ly_2: TensorF32Cpu2D, arch_interaction_itself: bool
) -> TensorF32Cpu2D:
    ly = [ly_0, ly_1, ly_2]
    # concatenate dense and sparse features
    (batch_size, d) = x.shape
    T = torch.cat([x] + ly, dim=1).view((batch_size, -1, d))
    # perform a dot product
    Z = torch.bmm(T, torch.transpose(T, 1, 2))
    # append dense feature with the interactions (into a row vector)
    # approach 1: all
    # Zflat = Z.view((batch_size, -1))
    # approach 2: unique
    _, ni, nj = Z.shape
    # approach 1: tril_indices
    # offset = 0 if self.arch_interaction_itself else -1
    # li, lj = torch.tril_indices(ni, nj, offset=offset)
    # approach 2: custom
    offset = 1 if arch_interaction_itself else 0
    li = torch.tensor([i for i in range(ni) for j in range(i + offset)])
    lj = torch.tensor([j for i in range(nj) for j in range(i + offset)])
    Zflat = Z[:, li, lj]
    # concatenate dense features and interactions
    R = torch.cat([x] + [Zflat], dim=1)
    return R


# DLRM — dlrm_s_pytorch.py, DLRM_Net.interact_features, arch_interaction_op == "cat" (facebookresearch/dlrm)
def interact_features_cat(x: TensorF32Cpu2D, ly_0: TensorF32Cpu2D, ly_1: TensorF32Cpu2D, ly_2: TensorF32Cpu2D) -> TensorF32Cpu2D:
    ly = [ly_0, ly_1, ly_2]
    # concatenation features (into a row vector)
    R = torch.cat([x] + ly, dim=1)
    return R


# DLRM — dlrm_s_pytorch.py, DLRM_Net.sequential_forward (dot interaction, three embedding tables) (facebookresearch/dlrm)
def sequential_forward(
    dense_x: TensorF32Cpu2D,
    lS_o_0: TensorI64Cpu1D,
    lS_i_0: TensorI64Cpu1D,
    lS_o_1: TensorI64Cpu1D,
    lS_i_1: TensorI64Cpu1D,
    lS_o_2: TensorI64Cpu1D,
    lS_i_2: TensorI64Cpu1D,
    emb_l_0_weight: TensorF32Cpu2D,
    emb_l_1_weight: TensorF32Cpu2D,
    emb_l_2_weight: TensorF32Cpu2D,
    bot_l_0_weight: TensorF32Cpu2D,
    bot_l_0_bias: TensorF32Cpu1D,
    bot_l_2_weight: TensorF32Cpu2D,
    bot_l_2_bias: TensorF32Cpu1D,
    bot_l_4_weight: TensorF32Cpu2D,
    bot_l_4_bias: TensorF32Cpu1D,
    top_l_0_weight: TensorF32Cpu2D,
    top_l_0_bias: TensorF32Cpu1D,
    top_l_2_weight: TensorF32Cpu2D,
    top_l_2_bias: TensorF32Cpu1D,
    arch_interaction_itself: bool,
    loss_threshold: float,
) -> TensorF32Cpu2D:
    # process dense features (using bottom mlp), resulting in a row vector
    x = bottom_mlp(dense_x, bot_l_0_weight, bot_l_0_bias, bot_l_2_weight, bot_l_2_bias, bot_l_4_weight, bot_l_4_bias)

    # process sparse features(using embeddings), resulting in a list of row vectors
    ly_0 = embedding_bag_lookup(lS_i_0, lS_o_0, emb_l_0_weight)
    ly_1 = embedding_bag_lookup(lS_i_1, lS_o_1, emb_l_1_weight)
    ly_2 = embedding_bag_lookup(lS_i_2, lS_o_2, emb_l_2_weight)

    # interact features (dense and sparse)
    z = interact_features_dot(x, ly_0, ly_1, ly_2, arch_interaction_itself)

    # obtain probability of a click (using top mlp)
    p = top_mlp(z, top_l_0_weight, top_l_0_bias, top_l_2_weight, top_l_2_bias)

    # clamp output if needed
    if 0.0 < loss_threshold and loss_threshold < 1.0:
        z = torch.clamp(p, min=loss_threshold, max=(1.0 - loss_threshold))
    else:
        z = p

    return z


INPUTS = {
    "bottom_mlp": lambda: (
        torch.randn(3, 13), torch.randn(32, 13), torch.randn(32), torch.randn(16, 32), torch.randn(16), torch.randn(8, 16), torch.randn(8),
    ),
    "top_mlp": lambda: (torch.randn(3, 14), torch.randn(16, 14), torch.randn(16), torch.randn(1, 16), torch.randn(1)),
    "embedding_bag_lookup": lambda: (torch.tensor([1, 4, 2, 7, 0, 3]), torch.tensor([0, 2, 5]), torch.randn(10, 8)),
    "interact_features_dot": lambda: (torch.randn(3, 8), torch.randn(3, 8), torch.randn(3, 8), torch.randn(3, 8), False),
    "interact_features_cat": lambda: (torch.randn(3, 8), torch.randn(3, 8), torch.randn(3, 8), torch.randn(3, 8)),
    "sequential_forward": lambda: (
        torch.randn(3, 13),
        torch.tensor([0, 2, 5]), torch.tensor([1, 4, 2, 7, 0, 3]),
        torch.tensor([0, 1, 2]), torch.tensor([5, 5, 1]),
        torch.tensor([0, 3, 4]), torch.tensor([0, 1, 2, 3, 4, 5]),
        torch.randn(10, 8), torch.randn(6, 8), torch.randn(7, 8),
        torch.randn(32, 13), torch.randn(32), torch.randn(16, 32), torch.randn(16), torch.randn(8, 16), torch.randn(8),
        torch.randn(16, 14), torch.randn(16), torch.randn(1, 16), torch.randn(1),
        False, 0.0,
    ),
}
