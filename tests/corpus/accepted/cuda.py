# cuda:0 tensors get the same claim surface (extension torchlower/ext-cuda0-full-surface);
# emitted code calls tl::cuda::ops.
from torchlower.types import TensorF32Cuda0_1D, TensorF32Cuda0_2D, TensorF32Cuda0_3D, TensorF32Cuda0_4D
import torch
import torch.nn.functional as F


def cuda_seed_slice(x: TensorF32Cuda0_2D, w: TensorF32Cuda0_2D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_1D:
    h = x @ w
    h = h + b
    h = h.relu()
    return h.mean(dim=1)


def cuda_surface(x: TensorF32Cuda0_2D, w: TensorF32Cuda0_2D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_2D:
    h = F.linear(x, w, b)
    h = F.gelu(h) * torch.sigmoid(h)
    h = b - h
    return torch.softmax(h / h.exp(), dim=-1)


# LLaMA's SwiGLU MLP: silu is an element function of ours on cuda:0 too (kernel tl_silu)
def cuda_swiglu(x: TensorF32Cuda0_2D, w1: TensorF32Cuda0_2D, w2: TensorF32Cuda0_2D, w3: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:
    return F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2)


# BERT's head: LayerNorm as a block reduction of ours on cuda:0 (kernel tl_layer_norm)
def cuda_layer_norm_head(x: TensorF32Cuda0_2D, g: TensorF32Cuda0_1D, b: TensorF32Cuda0_1D, w: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:
    h = F.layer_norm(x, (x.size(-1),), g, b, 1e-12)
    return torch.tanh(F.linear(h, w))


# LLaMA's RMSNorm on a (batch, seq, hidden) activation (kernel tl_rms_norm)
def cuda_rms_norm(h: TensorF32Cuda0_3D, weight: TensorF32Cuda0_1D) -> TensorF32Cuda0_3D:
    return F.rms_norm(h, (h.shape[-1],), weight, 1e-6) + F.rms_norm(h, h.shape[-1:])


# Reductions over tuples of dims on cuda:0: moved last by our copy kernel, then one line
# kernel (tl_sum, tl_amax, tl_amin, tl_var, tl_logsumexp)
def cuda_mean_over_dims(x: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:
    return x.mean((0, 1), keepdim=True)


def cuda_reductions(h: TensorF32Cuda0_3D) -> TensorF32Cuda0_1D:
    spread = h.amax(dim=(1, 2)) - torch.amin(h, dim=(-1, 1))
    scale = torch.std(h, dim=(1, 2), unbiased=False) + h.var(dim=-1).mean(-1)
    return spread / scale + torch.logsumexp(h, dim=(1, 2)) - h.sum(dim=(1, 2))


# Multi-head attention on cuda:0, composed from our matmul, scale, add and softmax kernels;
# is_causal stays CPU-only so far (TL209, corpus rejected/other_ranks.py)
def cuda_attention(q: TensorF32Cuda0_4D, k: TensorF32Cuda0_4D, v: TensorF32Cuda0_4D, bias: TensorF32Cuda0_4D) -> TensorF32Cuda0_4D:
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    return out + F.scaled_dot_product_attention(q, k, v, scale=0.125)


# LLaMA's RMSNorm as the reference code writes it (rsqrt of the mean square), on cuda:0
def cuda_llama_rms_norm(x: TensorF32Cuda0_3D, weight: TensorF32Cuda0_1D) -> TensorF32Cuda0_3D:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight


# GPT-2's new_gelu through F.gelu's tanh form, MobileNetV3's hardswish head, an MNIST
# classifier's log_softmax: the activations with kernels of ours on cuda:0
def cuda_gpt2_mlp(x: TensorF32Cuda0_2D, w_fc: TensorF32Cuda0_2D, w_proj: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:
    return F.linear(F.gelu(F.linear(x, w_fc), approximate="tanh"), w_proj)


def cuda_mobilenet_head(x: TensorF32Cuda0_2D, w1: TensorF32Cuda0_2D, w2: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:
    return F.log_softmax(F.linear(F.hardswish(F.linear(x, w1)), w2), dim=1)


def cuda_activations(x: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:
    h = F.leaky_relu(x, 0.2) + F.elu(x) + F.selu(x) + F.softplus(x) + F.mish(x)
    h = h + F.relu6(x) + F.hardtanh(x, -2.0, 2.0) + F.hardsigmoid(x)
    return h + torch.erf(x) + torch.log1p(x.abs()) + torch.expm1(x)


# A CNN's pooling tail (ResNet's stem pooling, an average pool, global pooling, the
# classifier): pooling kernels of ours on cuda:0; convolution stays TL209 there
def cuda_pooling_head(x: TensorF32Cuda0_4D, w: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:
    y = F.avg_pool2d(F.max_pool2d(x, kernel_size=3, stride=2, padding=1), 2, ceil_mode=True)
    return F.linear(torch.flatten(F.adaptive_avg_pool2d(y, 1) + F.adaptive_max_pool2d(y, (1, 1)), 1), w)


def cuda_sequence_pools(h: TensorF32Cuda0_3D) -> TensorF32Cuda0_3D:
    return F.max_pool1d(h, 2) + F.avg_pool1d(h, 2) + F.adaptive_avg_pool1d(h, h.shape[-1] // 2)


# pytorch/examples' MNIST net on cuda:0: direct convolution, pooling, the classifier
def cuda_mnist_net(x: TensorF32Cuda0_4D, c1_w: TensorF32Cuda0_4D, c1_b: TensorF32Cuda0_1D, c2_w: TensorF32Cuda0_4D, c2_b: TensorF32Cuda0_1D,
                   f1_w: TensorF32Cuda0_2D, f1_b: TensorF32Cuda0_1D, f2_w: TensorF32Cuda0_2D, f2_b: TensorF32Cuda0_1D) -> TensorF32Cuda0_2D:
    x = F.relu(F.conv2d(x, c1_w, c1_b))
    x = F.relu(F.conv2d(x, c2_w, c2_b))
    x = F.max_pool2d(x, 2)
    x = torch.flatten(x, 1)
    x = F.relu(F.linear(x, f1_w, f1_b))
    x = F.linear(x, f2_w, f2_b)
    return F.log_softmax(x, dim=1)


# a depthwise-separable block and a 1-D conv (MobileNet, a temporal conv net)
def cuda_depthwise_block(x: TensorF32Cuda0_4D, dw: TensorF32Cuda0_4D, pw: TensorF32Cuda0_4D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_4D:
    return F.hardswish(F.conv2d(F.relu6(F.conv2d(x, dw, stride=2, padding=1, groups=x.shape[1])), pw, b))


def cuda_temporal_conv(h: TensorF32Cuda0_3D, w: TensorF32Cuda0_3D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_3D:
    return F.relu(F.conv1d(h, w, b, padding=2, dilation=2))


# torchvision's ResNet BasicBlock in eval (batch norm with running statistics), on cuda:0
def cuda_basic_block(x: TensorF32Cuda0_4D, w1: TensorF32Cuda0_4D, m1: TensorF32Cuda0_1D, v1: TensorF32Cuda0_1D, g1: TensorF32Cuda0_1D, b1: TensorF32Cuda0_1D,
                     w2: TensorF32Cuda0_4D, m2: TensorF32Cuda0_1D, v2: TensorF32Cuda0_1D, g2: TensorF32Cuda0_1D, b2: TensorF32Cuda0_1D) -> TensorF32Cuda0_4D:
    out = F.relu(F.batch_norm(F.conv2d(x, w1, padding=1), m1, v1, g1, b1, False, 0.1, 1e-5))
    out = F.batch_norm(F.conv2d(out, w2, padding=1), m2, v2, g2, b2, training=False, eps=1e-5)
    return F.relu(out + x)


# A diffusion UNet's normalization (GroupNorm(32) then SiLU), on cuda:0
def cuda_group_norm_silu(h: TensorF32Cuda0_4D, gamma: TensorF32Cuda0_1D, beta: TensorF32Cuda0_1D) -> TensorF32Cuda0_4D:
    return F.silu(F.group_norm(h, 32, gamma, beta, eps=1e-6))


# CLIP's embedding normalization and a two-tower cosine score, on cuda:0 (orders 1 and 2)
def cuda_cosine_scores(image: TensorF32Cuda0_2D, text: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:
    image = image / image.norm(dim=-1, keepdim=True)
    text = F.normalize(text, dim=-1)
    return (image @ text.t()) / torch.linalg.vector_norm(image, 1, dim=(0, 1), keepdim=True)


# A gated linear unit (language-model convolutions), a product of gates, reshape_as
def cuda_gates(h: TensorF32Cuda0_3D, g: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:
    gated = F.glu(h, dim=-1)
    return gated.prod(dim=1).reshape_as(g) * g
