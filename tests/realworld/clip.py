"""CLIP (openai/CLIP, MIT License) — clip/model.py.

Forward paths rewritten as annotated top-level functions: module weights are explicit
parameters, `nn.Conv2d` / `nn.Linear` / `nn.Embedding` calls are `F.conv2d` / `F.linear` /
`F.embedding`, BatchNorm2d in eval mode is `F.batch_norm(..., training=False)`, the
`nn.MultiheadAttention` call is the `F.multi_head_attention_forward` call it makes for
sequence-first input, `self.dtype` is float32. Everything else is kept as the project writes it.
"""

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu2D,
)


# CLIP — clip/model.py, LayerNorm.forward (fp16-safe subclass) (openai/CLIP)
def layer_norm(x: TensorF32Cpu3D, weight: TensorF32Cpu1D, bias: TensorF32Cpu1D, width: int) -> TensorF32Cpu3D:
    orig_type = x.dtype
    ret = F.layer_norm(x.type(torch.float32), (width,), weight, bias, 1e-5)
    return ret.type(orig_type)


# CLIP — clip/model.py, QuickGELU.forward (openai/CLIP)
def quick_gelu(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return x * torch.sigmoid(1.702 * x)


# CLIP — clip/model.py, ResidualAttentionBlock.mlp (c_fc -> QuickGELU -> c_proj) (openai/CLIP)
def mlp(
    x: TensorF32Cpu3D, c_fc_weight: TensorF32Cpu2D, c_fc_bias: TensorF32Cpu1D, c_proj_weight: TensorF32Cpu2D, c_proj_bias: TensorF32Cpu1D
) -> TensorF32Cpu3D:
    return F.linear(quick_gelu(F.linear(x, c_fc_weight, c_fc_bias)), c_proj_weight, c_proj_bias)


# CLIP — clip/model.py, ResidualAttentionBlock.attention (openai/CLIP)
def attention(
    x: TensorF32Cpu3D,
    attn_mask: TensorF32Cpu2D,
    in_proj_weight: TensorF32Cpu2D,
    in_proj_bias: TensorF32Cpu1D,
    out_proj_weight: TensorF32Cpu2D,
    out_proj_bias: TensorF32Cpu1D,
    d_model: int,
    n_head: int,
) -> TensorF32Cpu3D:
    attn_mask = attn_mask.to(dtype=x.dtype, device=x.device) if attn_mask is not None else None
    return F.multi_head_attention_forward(
        x, x, x, d_model, n_head,
        in_proj_weight, in_proj_bias,
        None, None, False, 0.0,
        out_proj_weight, out_proj_bias,
        training=False, need_weights=False, attn_mask=attn_mask,
    )[0]


# CLIP — clip/model.py, ResidualAttentionBlock.forward (text transformer, causal mask) (openai/CLIP)
def residual_attention_block(
    x: TensorF32Cpu3D,
    attn_mask: TensorF32Cpu2D,
    ln_1_weight: TensorF32Cpu1D,
    ln_1_bias: TensorF32Cpu1D,
    in_proj_weight: TensorF32Cpu2D,
    in_proj_bias: TensorF32Cpu1D,
    out_proj_weight: TensorF32Cpu2D,
    out_proj_bias: TensorF32Cpu1D,
    ln_2_weight: TensorF32Cpu1D,
    ln_2_bias: TensorF32Cpu1D,
    c_fc_weight: TensorF32Cpu2D,
    c_fc_bias: TensorF32Cpu1D,
    c_proj_weight: TensorF32Cpu2D,
    c_proj_bias: TensorF32Cpu1D,
    d_model: int,
    n_head: int,
) -> TensorF32Cpu3D:
    x = x + attention(
        layer_norm(x, ln_1_weight, ln_1_bias, d_model), attn_mask,
        in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias, d_model, n_head,
    )
    x = x + mlp(layer_norm(x, ln_2_weight, ln_2_bias, d_model), c_fc_weight, c_fc_bias, c_proj_weight, c_proj_bias)
    return x


# CLIP — clip/model.py, AttentionPool2d.forward (openai/CLIP)
def attention_pool2d(
    x: TensorF32Cpu4D,
    positional_embedding: TensorF32Cpu2D,
    q_proj_weight: TensorF32Cpu2D,
    q_proj_bias: TensorF32Cpu1D,
    k_proj_weight: TensorF32Cpu2D,
    k_proj_bias: TensorF32Cpu1D,
    v_proj_weight: TensorF32Cpu2D,
    v_proj_bias: TensorF32Cpu1D,
    c_proj_weight: TensorF32Cpu2D,
    c_proj_bias: TensorF32Cpu1D,
    num_heads: int,
) -> TensorF32Cpu2D:
    x = x.reshape(x.shape[0], x.shape[1], x.shape[2] * x.shape[3]).permute(2, 0, 1)  # NCHW -> (HW)NC
    x = torch.cat([x.mean(dim=0, keepdim=True), x], dim=0)  # (HW+1)NC
    x = x + positional_embedding[:, None, :].to(x.dtype)  # (HW+1)NC
    x, _ = F.multi_head_attention_forward(
        query=x, key=x, value=x,
        embed_dim_to_check=x.shape[-1],
        num_heads=num_heads,
        q_proj_weight=q_proj_weight,
        k_proj_weight=k_proj_weight,
        v_proj_weight=v_proj_weight,
        in_proj_weight=None,
        in_proj_bias=torch.cat([q_proj_bias, k_proj_bias, v_proj_bias]),
        bias_k=None,
        bias_v=None,
        add_zero_attn=False,
        dropout_p=0,
        out_proj_weight=c_proj_weight,
        out_proj_bias=c_proj_bias,
        use_separate_proj_weight=True,
        training=False,
        need_weights=False
    )

    return x[0]


# CLIP — clip/model.py, Bottleneck.forward (ModifiedResNet block with its downsample branch) (openai/CLIP)
def bottleneck(
    x: TensorF32Cpu4D,
    conv1_weight: TensorF32Cpu4D,
    bn1_weight: TensorF32Cpu1D,
    bn1_bias: TensorF32Cpu1D,
    bn1_running_mean: TensorF32Cpu1D,
    bn1_running_var: TensorF32Cpu1D,
    conv2_weight: TensorF32Cpu4D,
    bn2_weight: TensorF32Cpu1D,
    bn2_bias: TensorF32Cpu1D,
    bn2_running_mean: TensorF32Cpu1D,
    bn2_running_var: TensorF32Cpu1D,
    conv3_weight: TensorF32Cpu4D,
    bn3_weight: TensorF32Cpu1D,
    bn3_bias: TensorF32Cpu1D,
    bn3_running_mean: TensorF32Cpu1D,
    bn3_running_var: TensorF32Cpu1D,
    downsample_conv_weight: TensorF32Cpu4D,
    downsample_bn_weight: TensorF32Cpu1D,
    downsample_bn_bias: TensorF32Cpu1D,
    downsample_bn_running_mean: TensorF32Cpu1D,
    downsample_bn_running_var: TensorF32Cpu1D,
    stride: int,
) -> TensorF32Cpu4D:
    identity = x

    out = F.relu(F.batch_norm(F.conv2d(x, conv1_weight), bn1_running_mean, bn1_running_var, bn1_weight, bn1_bias, False, 0.1, 1e-5))
    out = F.relu(F.batch_norm(F.conv2d(out, conv2_weight, padding=1), bn2_running_mean, bn2_running_var, bn2_weight, bn2_bias, False, 0.1, 1e-5))
    if stride > 1:
        out = F.avg_pool2d(out, stride)
    out = F.batch_norm(F.conv2d(out, conv3_weight), bn3_running_mean, bn3_running_var, bn3_weight, bn3_bias, False, 0.1, 1e-5)

    if downsample_conv_weight is not None:
        identity = F.batch_norm(
            F.conv2d(F.avg_pool2d(x, stride), downsample_conv_weight, stride=1),
            downsample_bn_running_mean, downsample_bn_running_var, downsample_bn_weight, downsample_bn_bias,
            False, 0.1, 1e-5,
        )

    out += identity
    out = F.relu(out)
    return out


# CLIP — clip/model.py, VisionTransformer.forward, patch embedding stem up to the transformer (openai/CLIP)
def vit_stem(
    x: TensorF32Cpu4D,
    conv1_weight: TensorF32Cpu4D,
    class_embedding: TensorF32Cpu1D,
    positional_embedding: TensorF32Cpu2D,
    ln_pre_weight: TensorF32Cpu1D,
    ln_pre_bias: TensorF32Cpu1D,
    patch_size: int,
    width: int,
) -> TensorF32Cpu3D:
    x = F.conv2d(x, conv1_weight, stride=patch_size)  # shape = [*, width, grid, grid]
    x = x.reshape(x.shape[0], x.shape[1], -1)  # shape = [*, width, grid ** 2]
    x = x.permute(0, 2, 1)  # shape = [*, grid ** 2, width]
    x = torch.cat([class_embedding.to(x.dtype) + torch.zeros(x.shape[0], 1, x.shape[-1], dtype=x.dtype, device=x.device), x], dim=1)  # shape = [*, grid ** 2 + 1, width]
    x = x + positional_embedding.to(x.dtype)
    x = layer_norm(x, ln_pre_weight, ln_pre_bias, width)

    x = x.permute(1, 0, 2)  # NLD -> LND
    return x


# CLIP — clip/model.py, VisionTransformer.forward, after the transformer (openai/CLIP)
def vit_head(
    x: TensorF32Cpu3D, ln_post_weight: TensorF32Cpu1D, ln_post_bias: TensorF32Cpu1D, proj: TensorF32Cpu2D, width: int
) -> TensorF32Cpu2D:
    x = x.permute(1, 0, 2)  # LND -> NLD

    x = layer_norm(x[:, 0, :], ln_post_weight, ln_post_bias, width)

    if proj is not None:
        x = x @ proj

    return x


# CLIP — clip/model.py, CLIP.encode_text, embedding stem up to the transformer (openai/CLIP)
def encode_text_embed(text: TensorI64Cpu2D, token_embedding: TensorF32Cpu2D, positional_embedding: TensorF32Cpu2D) -> TensorF32Cpu3D:
    dtype = torch.float32  # CLIP.dtype (visual.conv1.weight.dtype) of an fp32 model
    x = F.embedding(text, token_embedding).type(dtype)  # [batch_size, n_ctx, d_model]

    x = x + positional_embedding.type(dtype)
    x = x.permute(1, 0, 2)  # NLD -> LND
    return x


# CLIP — clip/model.py, CLIP.encode_text, after the transformer: EOT-token pooling + projection (openai/CLIP)
def encode_text_head(
    x: TensorF32Cpu3D,
    text: TensorI64Cpu2D,
    ln_final_weight: TensorF32Cpu1D,
    ln_final_bias: TensorF32Cpu1D,
    text_projection: TensorF32Cpu2D,
    transformer_width: int,
) -> TensorF32Cpu2D:
    dtype = torch.float32  # CLIP.dtype (visual.conv1.weight.dtype) of an fp32 model
    x = x.permute(1, 0, 2)  # LND -> NLD
    x = layer_norm(x, ln_final_weight, ln_final_bias, transformer_width).type(dtype)

    # x.shape = [batch_size, n_ctx, transformer.width]
    # take features from the eot embedding (eot_token is the highest number in each sequence)
    x = x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ text_projection

    return x


# CLIP — clip/model.py, CLIP.forward, after encode_image / encode_text (openai/CLIP)
def clip_logits(
    image_features: TensorF32Cpu2D, text_features: TensorF32Cpu2D, logit_scale: TensorF32Cpu1D
) -> tuple[TensorF32Cpu2D, TensorF32Cpu2D]:
    # normalized features
    image_features = image_features / image_features.norm(dim=-1, keepdim=True)
    text_features = text_features / text_features.norm(dim=-1, keepdim=True)

    # cosine similarity as logits
    logit_scale = logit_scale.exp()
    logits_per_image = logit_scale * image_features @ text_features.t()
    logits_per_text = logit_scale * text_features @ image_features.t()

    # shape = [global_batch_size, global_batch_size]
    return logits_per_image, logits_per_text


INPUTS = {
    "layer_norm": lambda: (torch.randn(5, 2, 16), torch.randn(16), torch.randn(16), 16),
    "quick_gelu": lambda: (torch.randn(5, 2, 16),),
    "mlp": lambda: (torch.randn(5, 2, 16), torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16)),
    "attention": lambda: (
        torch.randn(5, 2, 16), torch.empty(5, 5).fill_(float("-inf")).triu_(1),
        torch.randn(48, 16), torch.randn(48), torch.randn(16, 16), torch.randn(16), 16, 2,
    ),
    "residual_attention_block": lambda: (
        torch.randn(5, 2, 16), torch.empty(5, 5).fill_(float("-inf")).triu_(1),
        torch.randn(16), torch.randn(16),
        torch.randn(48, 16), torch.randn(48), torch.randn(16, 16), torch.randn(16),
        torch.randn(16), torch.randn(16),
        torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16),
        16, 2,
    ),
    "attention_pool2d": lambda: (
        torch.randn(2, 16, 3, 3), torch.randn(10, 16),
        torch.randn(16, 16), torch.randn(16), torch.randn(16, 16), torch.randn(16), torch.randn(16, 16), torch.randn(16),
        torch.randn(8, 16), torch.randn(8), 2,
    ),
    "bottleneck": lambda: (
        torch.randn(2, 8, 6, 6),
        torch.randn(4, 8, 1, 1), torch.randn(4), torch.randn(4), torch.randn(4), torch.rand(4) + 0.5,
        torch.randn(4, 4, 3, 3), torch.randn(4), torch.randn(4), torch.randn(4), torch.rand(4) + 0.5,
        torch.randn(16, 4, 1, 1), torch.randn(16), torch.randn(16), torch.randn(16), torch.rand(16) + 0.5,
        torch.randn(16, 8, 1, 1), torch.randn(16), torch.randn(16), torch.randn(16), torch.rand(16) + 0.5,
        2,
    ),
    "vit_stem": lambda: (
        torch.randn(2, 3, 8, 8), torch.randn(16, 3, 4, 4), torch.randn(16), torch.randn(5, 16), torch.randn(16), torch.randn(16), 4, 16,
    ),
    "vit_head": lambda: (torch.randn(5, 2, 16), torch.randn(16), torch.randn(16), torch.randn(16, 8), 16),
    "encode_text_embed": lambda: (torch.randint(0, 50, (2, 5)), torch.randn(50, 16), torch.randn(5, 16)),
    "encode_text_head": lambda: (
        torch.randn(5, 2, 16), torch.randint(0, 50, (2, 5)), torch.randn(16), torch.randn(16), torch.randn(16, 8), 16,
    ),
    "clip_logits": lambda: (torch.randn(3, 8), torch.randn(4, 8), torch.ones(1) * 2.6592),
}
