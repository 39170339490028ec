"""PyTorch Image Models / timm (huggingface/pytorch-image-models, Apache License 2.0) —
timm/layers/activations.py, timm/layers/mlp.py, timm/layers/adaptive_avgmax_pool.py,
timm/layers/patch_embed.py, timm/layers/squeeze_excite.py, timm/models/_efficientnet_blocks.py and
timm/models/vision_transformer.py.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters, `nn.Linear` / `nn.Conv2d` / `nn.LayerNorm(eps=1e-6)` calls are `F.linear` /
`F.conv2d` / `F.layer_norm`, dropout / DropPath and `nn.Identity` placeholders (q_norm, k_norm,
the Mlp `norm`, LayerScale when init_values is None) are dropped, the attention is the
non-fused branch. Everything else is kept as the project writes it.
"""

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
)


# timm — timm/layers/activations.py, swish (huggingface/pytorch-image-models)
def swish(x: TensorF32Cpu4D, inplace: bool) -> TensorF32Cpu4D:
    """Swish - Described in: https://arxiv.org/abs/1710.05941
    """
    return x.mul_(x.sigmoid()) if inplace else x.mul(x.sigmoid())


# timm — timm/layers/activations.py, mish (huggingface/pytorch-image-models)
def mish(x: TensorF32Cpu4D, inplace: bool) -> TensorF32Cpu4D:
    """Mish: A Self Regularized Non-Monotonic Neural Activation Function - https://arxiv.org/abs/1908.08681
    NOTE: I don't have a working inplace variant
    """
    return x.mul(F.softplus(x).tanh())


# timm — timm/layers/activations.py, hard_sigmoid (huggingface/pytorch-image-models)
def hard_sigmoid(x: TensorF32Cpu4D, inplace: bool) -> TensorF32Cpu4D:
    if inplace:
        return x.add_(3.).clamp_(0., 6.).div_(6.)
    else:
        return F.relu6(x + 3.) / 6.


# timm — timm/layers/activations.py, hard_swish (huggingface/pytorch-image-models)
def hard_swish(x: TensorF32Cpu4D, inplace: bool) -> TensorF32Cpu4D:
    inner = F.relu6(x + 3.).div_(6.)
    return x.mul_(inner) if inplace else x.mul(inner)


# timm — timm/layers/activations.py, hard_mish (huggingface/pytorch-image-models)
def hard_mish(x: TensorF32Cpu2D, inplace: bool) -> TensorF32Cpu2D:
    """ Hard Mish
    Experimental, based on notes by Mish author Diganta Misra at
      https://github.com/digantamisra98/H-Mish/blob/0da20d4bc58e696b6803f2523c58d3c8a82782d0/README.md
    """
    if inplace:
        return x.mul_(0.5 * (x + 2).clamp(min=0, max=2))
    else:
        return 0.5 * x * (x + 2).clamp(min=0, max=2)


# timm — timm/layers/activations.py, gelu_tanh (huggingface/pytorch-image-models)
def gelu_tanh(x: TensorF32Cpu3D, inplace: bool) -> TensorF32Cpu3D:
    return F.gelu(x, approximate='tanh')


# timm — timm/layers/adaptive_avgmax_pool.py, adaptive_avgmax_pool2d (huggingface/pytorch-image-models)
def adaptive_avgmax_pool2d(x: TensorF32Cpu4D, output_size: int) -> TensorF32Cpu4D:
    x_avg = F.adaptive_avg_pool2d(x, output_size)
    x_max = F.adaptive_max_pool2d(x, output_size)
    return 0.5 * (x_avg + x_max)


# timm — timm/layers/adaptive_avgmax_pool.py, adaptive_catavgmax_pool2d (huggingface/pytorch-image-models)
def adaptive_catavgmax_pool2d(x: TensorF32Cpu4D, output_size: int) -> TensorF32Cpu4D:
    x_avg = F.adaptive_avg_pool2d(x, output_size)
    x_max = F.adaptive_max_pool2d(x, output_size)
    return torch.cat((x_avg, x_max), 1)


# timm — timm/layers/mlp.py, Mlp.forward (act_layer=nn.GELU) (huggingface/pytorch-image-models)
def mlp(
    x: TensorF32Cpu3D, fc1_weight: TensorF32Cpu2D, fc1_bias: TensorF32Cpu1D, fc2_weight: TensorF32Cpu2D, fc2_bias: TensorF32Cpu1D
) -> TensorF32Cpu3D:
    x = F.linear(x, fc1_weight, fc1_bias)
    x = F.gelu(x)
    x = F.linear(x, fc2_weight, fc2_bias)
    return x


# timm — timm/layers/mlp.py, GluMlp.forward (act_layer=nn.Sigmoid) (huggingface/pytorch-image-models)
def glu_mlp(
    x: TensorF32Cpu3D,
    fc1_weight: TensorF32Cpu2D,
    fc1_bias: TensorF32Cpu1D,
    fc2_weight: TensorF32Cpu2D,
    fc2_bias: TensorF32Cpu1D,
    chunk_dim: int,
    gate_last: bool,
) -> TensorF32Cpu3D:
    x = F.linear(x, fc1_weight, fc1_bias)
    x1, x2 = x.chunk(2, dim=chunk_dim)
    x = x1 * torch.sigmoid(x2) if gate_last else torch.sigmoid(x1) * x2
    x = F.linear(x, fc2_weight, fc2_bias)
    return x


# timm — timm/layers/mlp.py, SwiGLU.forward (act_layer=nn.SiLU) (huggingface/pytorch-image-models)
def swiglu(
    x: TensorF32Cpu3D,
    fc1_g_weight: TensorF32Cpu2D,
    fc1_g_bias: TensorF32Cpu1D,
    fc1_x_weight: TensorF32Cpu2D,
    fc1_x_bias: TensorF32Cpu1D,
    fc2_weight: TensorF32Cpu2D,
    fc2_bias: TensorF32Cpu1D,
) -> TensorF32Cpu3D:
    x_gate = F.linear(x, fc1_g_weight, fc1_g_bias)
    x = F.linear(x, fc1_x_weight, fc1_x_bias)
    x = F.silu(x_gate) * x
    x = F.linear(x, fc2_weight, fc2_bias)
    return x


# timm — timm/models/vision_transformer.py, Attention.forward, non-fused branch (huggingface/pytorch-image-models)
def attention(
    x: TensorF32Cpu3D,
    qkv_weight: TensorF32Cpu2D,
    qkv_bias: TensorF32Cpu1D,
    proj_weight: TensorF32Cpu2D,
    proj_bias: TensorF32Cpu1D,
    num_heads: int,
) -> TensorF32Cpu3D:
    B, N, C = x.shape
    head_dim = C // num_heads  # Attention.__init__: self.head_dim = dim // num_heads
    scale = head_dim ** -0.5  # Attention.__init__: self.scale = self.head_dim ** -0.5
    qkv = F.linear(x, qkv_weight, qkv_bias).reshape(B, N, 3, num_heads, head_dim).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)

    q = q * scale
    attn = q @ k.transpose(-2, -1)
    attn = attn.softmax(dim=-1)
    x = attn @ v

    x = x.transpose(1, 2).reshape(B, N, C)
    x = F.linear(x, proj_weight, proj_bias)
    return x


# timm — timm/models/vision_transformer.py, LayerScale.forward (huggingface/pytorch-image-models)
def layer_scale(x: TensorF32Cpu3D, gamma: TensorF32Cpu1D, inplace: bool) -> TensorF32Cpu3D:
    return x.mul_(gamma) if inplace else x * gamma


# timm — timm/models/vision_transformer.py, Block.forward (init_values set: LayerScale) (huggingface/pytorch-image-models)
def block(
    x: TensorF32Cpu3D,
    norm1_weight: TensorF32Cpu1D,
    norm1_bias: TensorF32Cpu1D,
    qkv_weight: TensorF32Cpu2D,
    qkv_bias: TensorF32Cpu1D,
    proj_weight: TensorF32Cpu2D,
    proj_bias: TensorF32Cpu1D,
    ls1_gamma: TensorF32Cpu1D,
    norm2_weight: TensorF32Cpu1D,
    norm2_bias: TensorF32Cpu1D,
    fc1_weight: TensorF32Cpu2D,
    fc1_bias: TensorF32Cpu1D,
    fc2_weight: TensorF32Cpu2D,
    fc2_bias: TensorF32Cpu1D,
    ls2_gamma: TensorF32Cpu1D,
    dim: int,
    num_heads: int,
) -> TensorF32Cpu3D:
    x = x + layer_scale(
        attention(F.layer_norm(x, (dim,), norm1_weight, norm1_bias, 1e-6), qkv_weight, qkv_bias, proj_weight, proj_bias, num_heads),
        ls1_gamma, False,
    )
    x = x + layer_scale(
        mlp(F.layer_norm(x, (dim,), norm2_weight, norm2_bias, 1e-6), fc1_weight, fc1_bias, fc2_weight, fc2_bias),
        ls2_gamma, False,
    )
    return x


# timm — timm/layers/patch_embed.py, PatchEmbed.forward (flatten=True, norm Identity) (huggingface/pytorch-image-models)
def patch_embed(x: TensorF32Cpu4D, proj_weight: TensorF32Cpu4D, proj_bias: TensorF32Cpu1D, patch_size: int) -> TensorF32Cpu3D:
    B, C, H, W = x.shape
    x = F.conv2d(x, proj_weight, proj_bias, stride=patch_size)
    x = x.flatten(2).transpose(1, 2)  # NCHW -> NLC
    return x


# timm — timm/models/vision_transformer.py, VisionTransformer._pos_embed (class token, no register
# tokens, no_embed_class=False, static image size) (huggingface/pytorch-image-models)
def _pos_embed(x: TensorF32Cpu3D, cls_token: TensorF32Cpu3D, pos_embed: TensorF32Cpu3D) -> TensorF32Cpu3D:
    to_cat = []
    if cls_token is not None:
        to_cat.append(cls_token.expand(x.shape[0], -1, -1))

    # original timm, JAX, and deit vit impl
    # pos_embed has entry for class token, concat then add
    if to_cat:
        x = torch.cat(to_cat + [x], dim=1)
    x = x + pos_embed

    return x


# timm — timm/models/vision_transformer.py, VisionTransformer.forward_head with global_pool_nlc
# (global_pool='avg', fc_norm=LayerNorm) (huggingface/pytorch-image-models)
def forward_head(
    x: TensorF32Cpu3D,
    fc_norm_weight: TensorF32Cpu1D,
    fc_norm_bias: TensorF32Cpu1D,
    head_weight: TensorF32Cpu2D,
    head_bias: TensorF32Cpu1D,
    num_prefix_tokens: int,
    embed_dim: int,
    pre_logits: bool,
) -> TensorF32Cpu2D:
    x = x[:, num_prefix_tokens:]
    x = x.mean(dim=1)
    x = F.layer_norm(x, (embed_dim,), fc_norm_weight, fc_norm_bias, 1e-6)
    return x if pre_logits else F.linear(x, head_weight, head_bias)



# timm — timm/layers/squeeze_excite.py, SEModule.forward (use_bn=False: bn is nn.Identity;
# act_layer=nn.ReLU created inplace; gate 'sigmoid') (huggingface/pytorch-image-models)
def se_module(
    x: TensorF32Cpu4D,
    fc1_weight: TensorF32Cpu4D,
    fc1_bias: TensorF32Cpu1D,
    fc2_weight: TensorF32Cpu4D,
    fc2_bias: TensorF32Cpu1D,
) -> TensorF32Cpu4D:
    x_se = x.mean((2, 3), keepdim=True)
    x_se = F.conv2d(x_se, fc1_weight, fc1_bias)
    x_se = F.relu(x_se, inplace=True)
    x_se = F.conv2d(x_se, fc2_weight, fc2_bias)
    return x * x_se.sigmoid()


# timm — timm/models/_efficientnet_blocks.py, SqueezeExcite.forward (EfficientNet: act_layer=nn.SiLU
# created inplace, gate nn.Sigmoid) (huggingface/pytorch-image-models)
def squeeze_excite(
    x: TensorF32Cpu4D,
    conv_reduce_weight: TensorF32Cpu4D,
    conv_reduce_bias: TensorF32Cpu1D,
    conv_expand_weight: TensorF32Cpu4D,
    conv_expand_bias: TensorF32Cpu1D,
) -> TensorF32Cpu4D:
    x_se = x.mean((2, 3), keepdim=True)
    x_se = F.conv2d(x_se, conv_reduce_weight, conv_reduce_bias)
    x_se = F.silu(x_se, inplace=True)
    x_se = F.conv2d(x_se, conv_expand_weight, conv_expand_bias)
    return x * torch.sigmoid(x_se)

INPUTS = {
    "se_module": lambda: (torch.randn(2, 16, 5, 5), torch.randn(4, 16, 1, 1), torch.randn(4), torch.randn(16, 4, 1, 1), torch.randn(16)),
    "squeeze_excite": lambda: (torch.randn(2, 16, 5, 5), torch.randn(4, 16, 1, 1), torch.randn(4), torch.randn(16, 4, 1, 1), torch.randn(16)),
    "swish": lambda: (torch.randn(2, 8, 4, 4), False),
    "mish": lambda: (torch.randn(2, 8, 4, 4), False),
    "hard_sigmoid": lambda: (torch.randn(2, 8, 4, 4), False),
    "hard_swish": lambda: (torch.randn(2, 8, 4, 4), False),
    "hard_mish": lambda: (torch.randn(4, 16), False),
    "gelu_tanh": lambda: (torch.randn(2, 5, 16), False),
    "adaptive_avgmax_pool2d": lambda: (torch.randn(2, 8, 5, 5), 1),
    "adaptive_catavgmax_pool2d": lambda: (torch.randn(2, 8, 5, 5), 1),
    "mlp": lambda: (torch.randn(2, 5, 16), torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16)),
    "glu_mlp": lambda: (torch.randn(2, 5, 16), torch.randn(64, 16), torch.randn(64), torch.randn(16, 32), torch.randn(16), -1, True),
    "swiglu": lambda: (
        torch.randn(2, 5, 16), torch.randn(64, 16), torch.randn(64), torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16),
    ),
    "attention": lambda: (torch.randn(2, 5, 16), torch.randn(48, 16), torch.randn(48), torch.randn(16, 16), torch.randn(16), 2),
    "layer_scale": lambda: (torch.randn(2, 5, 16), torch.full((16,), 1e-5), False),
    "block": lambda: (
        torch.randn(2, 5, 16),
        torch.randn(16), torch.randn(16),
        torch.randn(48, 16), torch.randn(48), torch.randn(16, 16), torch.randn(16),
        torch.full((16,), 1e-5),
        torch.randn(16), torch.randn(16),
        torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16),
        torch.full((16,), 1e-5),
        16, 2,
    ),
    "patch_embed": lambda: (torch.randn(2, 3, 8, 8), torch.randn(16, 3, 4, 4), torch.randn(16), 4),
    "_pos_embed": lambda: (torch.randn(2, 4, 16), torch.randn(1, 1, 16), torch.randn(1, 5, 16)),
    "forward_head": lambda: (torch.randn(2, 5, 16), torch.randn(16), torch.randn(16), torch.randn(10, 16), torch.randn(10), 1, 16, False),
}
