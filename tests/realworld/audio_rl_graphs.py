"""Two audio codecs / vocoders, two model-based RL agents and a graph-attention net:
HiFi-GAN (jik876/hifi-gan, MIT License) — models.py and the `get_padding` of utils.py; EnCodec
(facebookresearch/encodec, MIT License) — encodec/modules/conv.py; TD-MPC2 (nicklashansen/tdmpc2,
MIT License) — tdmpc2/common/math.py; DreamerV3 in PyTorch (NM512/dreamerv3-torch, MIT License) —
tools.py; pyGAT (Diego999/pyGAT, MIT License) — layers.py and models.py.

Forward paths rewritten as annotated top-level functions: module weights are explicit parameters
(named after the modules' state-dict keys), `nn.Conv1d` / `nn.ConvTranspose1d` / `nn.LeakyReLU`
calls are `F.conv1d` / `F.conv_transpose1d` / `F.leaky_relu` with the arguments the modules are
built with, the `nn.Sequential` containers are written out in order, dropout
(the identity in eval mode) is dropped, self-method calls are calls of the functions of this file.
Weight norm (HiFi-GAN's convolutions, EnCodec's `norm='weight_norm'`) is folded: each conv gets the
plain weight `weight_g * weight_v / ||weight_v||` it computes. A `ModuleList` of convolutions
iterated by `zip` or `for` (HiFi-GAN's ResBlock1 / ResBlock2) is a Python list, built at the top of
the function, of one `(weight, bias, dilation)` tuple per conv; its call `c(xt)` is
`F.conv1d(xt, c[0], c[1], 1, get_padding(kernel_size, c[2]), c[2])`, the conv its constructor
builds. A `ModuleList` indexed by a loop counter (the Generator's `ups` and `resblocks`) is one
Python list per weight, as in CIN (deepctr_timeseries.py). Hyper-parameters (`self.*`, TD-MPC2's
`cfg.num_bins` / `cfg.vmin` / `cfg.vmax` / `cfg.bin_size`, the HiFi-GAN config `h.*`, the conv
kernel size / stride / dilation EnCodec reads from `self.conv.conv`) are `int` / `float` / `bool`
parameters; config lists are `list[int, int]`, a `Tuple[int, int]` parameter is `tuple[int, int]`,
HiFi-GAN's nested `resblock_dilation_sizes` is one `tuple[int, int]` per entry put back in a list.
String switches are fixed to the configuration named in the comment above each function
(EnCodec's `pad_mode='reflect'`, whose `pad1d(..., mode='reflect')` branch is the body of `pad1d`;
HiFi-GAN's `h.resblock == '2'`; DreamerV3's DiscDist `transfwd=symlog`, `transbwd=symexp`).
Functions of the same name in two projects carry the project as a prefix (`tdmpc2_symlog`,
`dreamer_symlog`). TD-MPC2's functions keep the project's tab indentation. Everything else is kept
as the projects write it.
"""

import math
from typing import Optional

import torch
import torch.nn.functional as F

from torchlower.types import (
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu1D,
    TensorI64Cpu2D,
)

LRELU_SLOPE = 0.1


# HiFi-GAN — utils.py, get_padding (jik876/hifi-gan)
def get_padding(kernel_size: int, dilation: int = 1) -> int:
    return int((kernel_size*dilation - dilation)/2)


# HiFi-GAN — models.py, ResBlock1.forward (weight norm folded; `self.convs1` / `self.convs2` are lists of
# (weight, bias, dilation): convs1 dilated by dilation[0..2], convs2 by 1, each padded get_padding(kernel_size,
# dilation) as the constructor builds them) (jik876/hifi-gan)
def hifigan_resblock1(
    x: TensorF32Cpu3D,
    convs1_0_weight: TensorF32Cpu3D,
    convs1_0_bias: TensorF32Cpu1D,
    convs1_1_weight: TensorF32Cpu3D,
    convs1_1_bias: TensorF32Cpu1D,
    convs1_2_weight: TensorF32Cpu3D,
    convs1_2_bias: TensorF32Cpu1D,
    convs2_0_weight: TensorF32Cpu3D,
    convs2_0_bias: TensorF32Cpu1D,
    convs2_1_weight: TensorF32Cpu3D,
    convs2_1_bias: TensorF32Cpu1D,
    convs2_2_weight: TensorF32Cpu3D,
    convs2_2_bias: TensorF32Cpu1D,
    kernel_size: int,
    dilation: tuple[int, int, int],
) -> TensorF32Cpu3D:
    convs1 = [
        (convs1_0_weight, convs1_0_bias, dilation[0]),
        (convs1_1_weight, convs1_1_bias, dilation[1]),
        (convs1_2_weight, convs1_2_bias, dilation[2]),
    ]
    convs2 = [(convs2_0_weight, convs2_0_bias, 1), (convs2_1_weight, convs2_1_bias, 1), (convs2_2_weight, convs2_2_bias, 1)]
    for c1, c2 in zip(convs1, convs2):
        xt = F.leaky_relu(x, LRELU_SLOPE)
        xt = F.conv1d(xt, c1[0], c1[1], 1, get_padding(kernel_size, c1[2]), c1[2])
        xt = F.leaky_relu(xt, LRELU_SLOPE)
        xt = F.conv1d(xt, c2[0], c2[1], 1, get_padding(kernel_size, c2[2]), c2[2])
        x = xt + x
    return x


# HiFi-GAN — models.py, ResBlock2.forward (weight norm folded; `self.convs` is a list of (weight, bias,
# dilation), dilated by dilation[0..1] and padded get_padding(kernel_size, dilation)) (jik876/hifi-gan)
def hifigan_resblock2(
    x: TensorF32Cpu3D,
    convs_0_weight: TensorF32Cpu3D,
    convs_0_bias: TensorF32Cpu1D,
    convs_1_weight: TensorF32Cpu3D,
    convs_1_bias: TensorF32Cpu1D,
    kernel_size: int,
    dilation: tuple[int, int],
) -> TensorF32Cpu3D:
    convs = [(convs_0_weight, convs_0_bias, dilation[0]), (convs_1_weight, convs_1_bias, dilation[1])]
    for c in convs:
        xt = F.leaky_relu(x, LRELU_SLOPE)
        xt = F.conv1d(xt, c[0], c[1], 1, get_padding(kernel_size, c[2]), c[2])
        x = xt + x
    return x


# HiFi-GAN — models.py, Generator.forward (h.resblock == '2', two upsampling layers and two resblock
# kernels: `self.ups` and `self.resblocks` are lists of their weights indexed as the project indexes the
# ModuleLists; `self.conv_pre` is Conv1d(80, upsample_initial_channel, 7, 1, padding=3), `self.ups[i]`
# ConvTranspose1d(.., k, u, padding=(k-u)//2) for (u, k) of h.upsample_rates / h.upsample_kernel_sizes,
# resblock i*num_kernels+j built with h.resblock_kernel_sizes[j] / h.resblock_dilation_sizes[j],
# `self.conv_post` Conv1d(ch, 1, 7, 1, padding=3); weight norm folded) (jik876/hifi-gan)
def hifigan_generator(
    x: TensorF32Cpu3D,
    conv_pre_weight: TensorF32Cpu3D,
    conv_pre_bias: TensorF32Cpu1D,
    ups_0_weight: TensorF32Cpu3D,
    ups_0_bias: TensorF32Cpu1D,
    ups_1_weight: TensorF32Cpu3D,
    ups_1_bias: TensorF32Cpu1D,
    resblocks_0_convs_0_weight: TensorF32Cpu3D,
    resblocks_0_convs_0_bias: TensorF32Cpu1D,
    resblocks_0_convs_1_weight: TensorF32Cpu3D,
    resblocks_0_convs_1_bias: TensorF32Cpu1D,
    resblocks_1_convs_0_weight: TensorF32Cpu3D,
    resblocks_1_convs_0_bias: TensorF32Cpu1D,
    resblocks_1_convs_1_weight: TensorF32Cpu3D,
    resblocks_1_convs_1_bias: TensorF32Cpu1D,
    resblocks_2_convs_0_weight: TensorF32Cpu3D,
    resblocks_2_convs_0_bias: TensorF32Cpu1D,
    resblocks_2_convs_1_weight: TensorF32Cpu3D,
    resblocks_2_convs_1_bias: TensorF32Cpu1D,
    resblocks_3_convs_0_weight: TensorF32Cpu3D,
    resblocks_3_convs_0_bias: TensorF32Cpu1D,
    resblocks_3_convs_1_weight: TensorF32Cpu3D,
    resblocks_3_convs_1_bias: TensorF32Cpu1D,
    conv_post_weight: TensorF32Cpu3D,
    conv_post_bias: TensorF32Cpu1D,
    upsample_rates: list[int, int],
    upsample_kernel_sizes: list[int, int],
    resblock_kernel_sizes: list[int, int],
    resblock_dilation_sizes_0: tuple[int, int],
    resblock_dilation_sizes_1: tuple[int, int],
    num_kernels: int,
    num_upsamples: int,
) -> TensorF32Cpu3D:
    ups_weight = [ups_0_weight, ups_1_weight]
    ups_bias = [ups_0_bias, ups_1_bias]
    resblocks_convs_0_weight = [
        resblocks_0_convs_0_weight, resblocks_1_convs_0_weight, resblocks_2_convs_0_weight, resblocks_3_convs_0_weight
    ]
    resblocks_convs_0_bias = [resblocks_0_convs_0_bias, resblocks_1_convs_0_bias, resblocks_2_convs_0_bias, resblocks_3_convs_0_bias]
    resblocks_convs_1_weight = [
        resblocks_0_convs_1_weight, resblocks_1_convs_1_weight, resblocks_2_convs_1_weight, resblocks_3_convs_1_weight
    ]
    resblocks_convs_1_bias = [resblocks_0_convs_1_bias, resblocks_1_convs_1_bias, resblocks_2_convs_1_bias, resblocks_3_convs_1_bias]
    resblock_dilation_sizes = [resblock_dilation_sizes_0, resblock_dilation_sizes_1]

    x = F.conv1d(x, conv_pre_weight, conv_pre_bias, 1, 3)
    for i in range(num_upsamples):
        x = F.leaky_relu(x, LRELU_SLOPE)
        x = F.conv_transpose1d(
            x, ups_weight[i], ups_bias[i], upsample_rates[i], (upsample_kernel_sizes[i] - upsample_rates[i]) // 2
        )
        xs = None
        for j in range(num_kernels):
            if xs is None:
                xs = hifigan_resblock2(
                    x,
                    resblocks_convs_0_weight[i*num_kernels+j], resblocks_convs_0_bias[i*num_kernels+j],
                    resblocks_convs_1_weight[i*num_kernels+j], resblocks_convs_1_bias[i*num_kernels+j],
                    resblock_kernel_sizes[j], resblock_dilation_sizes[j],
                )
            else:
                xs += hifigan_resblock2(
                    x,
                    resblocks_convs_0_weight[i*num_kernels+j], resblocks_convs_0_bias[i*num_kernels+j],
                    resblocks_convs_1_weight[i*num_kernels+j], resblocks_convs_1_bias[i*num_kernels+j],
                    resblock_kernel_sizes[j], resblock_dilation_sizes[j],
                )
        x = xs / num_kernels
    x = F.leaky_relu(x)
    x = F.conv1d(x, conv_post_weight, conv_post_bias, 1, 3)
    x = torch.tanh(x)

    return x


# EnCodec — encodec/modules/conv.py, get_extra_padding_for_conv1d (facebookresearch/encodec)
def get_extra_padding_for_conv1d(x: TensorF32Cpu3D, kernel_size: int, stride: int,
                                 padding_total: int = 0) -> int:
    """See `pad_for_conv1d`.
    """
    length = x.shape[-1]
    n_frames = (length - kernel_size + padding_total) / stride + 1
    ideal_length = (math.ceil(n_frames) - 1) * stride + (kernel_size - padding_total)
    return ideal_length - length


# EnCodec — encodec/modules/conv.py, pad1d (mode='reflect', as SConv1d calls it with its default
# pad_mode='reflect': the `if mode == 'reflect':` branch) (facebookresearch/encodec)
def pad1d(x: TensorF32Cpu3D, paddings: tuple[int, int], value: float = 0.) -> TensorF32Cpu3D:
    """Tiny wrapper around F.pad, just to allow for reflect padding on small input.
    If this is the case, we insert extra 0 padding to the right before the reflection happen.
    """
    length = x.shape[-1]
    padding_left, padding_right = paddings
    assert padding_left >= 0 and padding_right >= 0, (padding_left, padding_right)
    max_pad = max(padding_left, padding_right)
    extra_pad = 0
    if length <= max_pad:
        extra_pad = max_pad - length + 1
        x = F.pad(x, (0, extra_pad))
    padded = F.pad(x, paddings, 'reflect', value)
    end = padded.shape[-1] - extra_pad
    return padded[..., :end]


# EnCodec — encodec/modules/conv.py, unpad1d (facebookresearch/encodec)
def unpad1d(x: TensorF32Cpu3D, paddings: tuple[int, int]) -> TensorF32Cpu3D:
    """Remove padding from x, handling properly zero padding. Only for 1d!"""
    padding_left, padding_right = paddings
    assert padding_left >= 0 and padding_right >= 0, (padding_left, padding_right)
    assert (padding_left + padding_right) <= x.shape[-1]
    end = x.shape[-1] - padding_right
    return x[..., padding_left: end]


# EnCodec — encodec/modules/conv.py, SConv1d.forward (norm='weight_norm' folded, so NormConv1d's norm is
# nn.Identity; pad_mode='reflect'; the conv's kernel_size / stride / dilation / groups, which the forward
# reads from `self.conv.conv`, are int parameters) (facebookresearch/encodec)
def sconv1d(
    x: TensorF32Cpu3D,
    conv_weight: TensorF32Cpu3D,
    conv_bias: TensorF32Cpu1D,
    kernel_size: int,
    stride: int,
    dilation: int,
    groups: int,
    causal: bool,
) -> TensorF32Cpu3D:
    B, C, T = x.shape
    padding_total = (kernel_size - 1) * dilation - (stride - 1)
    extra_padding = get_extra_padding_for_conv1d(x, kernel_size, stride, padding_total)
    if causal:
        # Left padding for causal
        x = pad1d(x, (padding_total, extra_padding))
    else:
        # Asymmetric padding required for odd strides
        padding_right = padding_total // 2
        padding_left = padding_total - padding_right
        x = pad1d(x, (padding_left, padding_right + extra_padding))
    return F.conv1d(x, conv_weight, conv_bias, stride, 0, dilation, groups)


# EnCodec — encodec/modules/conv.py, SConvTranspose1d.forward (norm='weight_norm' folded; the kernel_size /
# stride read from `self.convtr.convtr` are int parameters) (facebookresearch/encodec)
def sconv_transpose1d(
    x: TensorF32Cpu3D,
    convtr_weight: TensorF32Cpu3D,
    convtr_bias: TensorF32Cpu1D,
    kernel_size: int,
    stride: int,
    causal: bool,
    trim_right_ratio: float,
) -> TensorF32Cpu3D:
    padding_total = kernel_size - stride

    y = F.conv_transpose1d(x, convtr_weight, convtr_bias, stride)

    # We will only trim fixed padding. Extra padding from `pad_for_conv1d` would be
    # removed at the very end, when keeping only the right length for the output,
    # as removing it here would require also passing the length at the matching layer
    # in the encoder.
    if causal:
        # Trim the padding on the right according to the specified ratio
        # if trim_right_ratio = 1.0, trim everything from right
        padding_right = math.ceil(padding_total * trim_right_ratio)
        padding_left = padding_total - padding_right
        y = unpad1d(y, (padding_left, padding_right))
    else:
        # Asymmetric padding required for odd strides
        padding_right = padding_total // 2
        padding_left = padding_total - padding_right
        y = unpad1d(y, (padding_left, padding_right))
    return y


# TD-MPC2 — tdmpc2/common/math.py, symlog (nicklashansen/tdmpc2)
def tdmpc2_symlog(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
	"""
	Symmetric logarithmic function.
	Adapted from https://github.com/danijar/dreamerv3.
	"""
	return torch.sign(x) * torch.log(1 + torch.abs(x))


# TD-MPC2 — tdmpc2/common/math.py, symexp (nicklashansen/tdmpc2)
def tdmpc2_symexp(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
	"""
	Symmetric exponential function.
	Adapted from https://github.com/danijar/dreamerv3.
	"""
	return torch.sign(x) * (torch.exp(torch.abs(x)) - 1)


# TD-MPC2 — tdmpc2/common/math.py, two_hot (cfg.num_bins, cfg.vmin, cfg.vmax, cfg.bin_size as parameters)
# (nicklashansen/tdmpc2)
def two_hot(x: TensorF32Cpu2D, num_bins: int, vmin: float, vmax: float, bin_size: float) -> TensorF32Cpu2D:
	"""Converts a batch of scalars to soft two-hot encoded targets for discrete regression."""
	if num_bins == 0:
		return x
	elif num_bins == 1:
		return tdmpc2_symlog(x)
	x = torch.clamp(tdmpc2_symlog(x), vmin, vmax).squeeze(1)
	bin_idx = torch.floor((x - vmin) / bin_size)
	bin_offset = ((x - vmin) / bin_size - bin_idx).unsqueeze(-1)
	soft_two_hot = torch.zeros(x.shape[0], num_bins, device=x.device, dtype=x.dtype)
	bin_idx = bin_idx.long()
	soft_two_hot = soft_two_hot.scatter(1, bin_idx.unsqueeze(1), 1 - bin_offset)
	soft_two_hot = soft_two_hot.scatter(1, (bin_idx.unsqueeze(1) + 1) % num_bins, bin_offset)
	return soft_two_hot


# TD-MPC2 — tdmpc2/common/math.py, two_hot_inv (cfg.num_bins, cfg.vmin, cfg.vmax as parameters)
# (nicklashansen/tdmpc2)
def two_hot_inv(x: TensorF32Cpu2D, num_bins: int, vmin: float, vmax: float) -> TensorF32Cpu2D:
	"""Converts a batch of soft two-hot encoded vectors to scalars."""
	if num_bins == 0:
		return x
	elif num_bins == 1:
		return tdmpc2_symexp(x)
	dreg_bins = torch.linspace(vmin, vmax, num_bins, device=x.device, dtype=x.dtype)
	x = F.softmax(x, dim=-1)
	x = torch.sum(x * dreg_bins, dim=-1, keepdim=True)
	return tdmpc2_symexp(x)


# TD-MPC2 — tdmpc2/common/math.py, soft_ce (cfg.num_bins, cfg.vmin, cfg.vmax, cfg.bin_size as parameters,
# passed on to two_hot) (nicklashansen/tdmpc2)
def soft_ce(
	pred: TensorF32Cpu2D, target: TensorF32Cpu2D, num_bins: int, vmin: float, vmax: float, bin_size: float
) -> TensorF32Cpu2D:
	"""Computes the cross entropy loss between predictions and soft targets."""
	pred = F.log_softmax(pred, dim=-1)
	target = two_hot(target, num_bins, vmin, vmax, bin_size)
	return -(target * pred).sum(-1, keepdim=True)


# TD-MPC2 — tdmpc2/common/math.py, int_to_one_hot (nicklashansen/tdmpc2)
def int_to_one_hot(x: TensorI64Cpu2D, num_classes: int) -> TensorF32Cpu3D:
	"""
	Converts an integer tensor to a one-hot tensor.
	Supports batched inputs.
	"""
	one_hot = torch.zeros(*x.shape, num_classes, device=x.device)
	one_hot.scatter_(-1, x.unsqueeze(-1), 1)
	return one_hot


# DreamerV3 (PyTorch) — tools.py, symlog (NM512/dreamerv3-torch)
def dreamer_symlog(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.sign(x) * torch.log(torch.abs(x) + 1.0)


# DreamerV3 (PyTorch) — tools.py, symexp (NM512/dreamerv3-torch)
def dreamer_symexp(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.sign(x) * (torch.exp(torch.abs(x)) - 1.0)


# DreamerV3 (PyTorch) — tools.py, DiscDist.mean (with the `self.probs` / `self.buckets` its constructor
# computes from `logits`, `low=-20.0`, `high=20.0`; transbwd=symexp; the constructor's `device`, the
# device the MLP head's logits are on, is `logits.device`) (NM512/dreamerv3-torch)
def disc_dist_mean(logits: TensorF32Cpu3D, low: float = -20.0, high: float = 20.0) -> TensorF32Cpu3D:
    # from the constructor
    probs = torch.softmax(logits, -1)
    buckets = torch.linspace(low, high, steps=255, device=logits.device)

    _mean = probs * buckets
    return dreamer_symexp(torch.sum(_mean, dim=-1, keepdim=True))


# DreamerV3 (PyTorch) — tools.py, DiscDist.log_prob (with the `self.buckets` its constructor computes;
# transfwd=symlog; `device` is `logits.device` as in disc_dist_mean) (NM512/dreamerv3-torch)
def disc_dist_log_prob(
    logits: TensorF32Cpu3D, x: TensorF32Cpu3D, low: float = -20.0, high: float = 20.0
) -> TensorF32Cpu2D:
    # from the constructor
    buckets = torch.linspace(low, high, steps=255, device=logits.device)

    x = dreamer_symlog(x)
    # x(time, batch, 1)
    below = torch.sum((buckets <= x[..., None]).to(torch.int32), dim=-1) - 1
    above = len(buckets) - torch.sum(
        (buckets > x[..., None]).to(torch.int32), dim=-1
    )
    # this is implemented using clip at the original repo as the gradients are not backpropagated for the out of limits.
    below = torch.clip(below, 0, len(buckets) - 1)
    above = torch.clip(above, 0, len(buckets) - 1)
    equal = below == above

    dist_to_below = torch.where(equal, 1, torch.abs(buckets[below] - x))
    dist_to_above = torch.where(equal, 1, torch.abs(buckets[above] - x))
    total = dist_to_below + dist_to_above
    weight_below = dist_to_above / total
    weight_above = dist_to_below / total
    target = (
        F.one_hot(below, num_classes=len(buckets)) * weight_below[..., None]
        + F.one_hot(above, num_classes=len(buckets)) * weight_above[..., None]
    )
    log_pred = logits - torch.logsumexp(logits, -1, keepdim=True)
    target = target.squeeze(-2)

    return (target * log_pred).sum(-1)


# pyGAT — layers.py, GraphAttentionLayer.forward (`self.leakyrelu` is nn.LeakyReLU(alpha), written
# F.leaky_relu(..., alpha); `self.W` / `self.a` explicit; dropout of the attention dropped) (Diego999/pyGAT)
def graph_attention_layer(
    input: TensorF32Cpu2D, adj: TensorF32Cpu2D, W: TensorF32Cpu2D, a: TensorF32Cpu2D, out_features: int, alpha: float, concat: bool
) -> TensorF32Cpu2D:
    h = torch.mm(input, W)
    N = h.size()[0]

    a_input = torch.cat([h.repeat(1, N).view(N * N, -1), h.repeat(N, 1)], dim=1).view(N, -1, 2 * out_features)
    e = F.leaky_relu(torch.matmul(a_input, a).squeeze(2), alpha)

    zero_vec = -9e15*torch.ones_like(e)
    attention = torch.where(adj > 0, e, zero_vec)
    attention = F.softmax(attention, dim=1)
    h_prime = torch.matmul(attention, h)

    if concat:
        return F.elu(h_prime)
    else:
        return h_prime


# pyGAT — models.py, GAT.forward (nheads=2: `self.attentions` is the list of the heads' (W, a); `self.out_att`
# the GraphAttentionLayer(nhid * nheads, nclass, concat=False); the two dropouts dropped) (Diego999/pyGAT)
def gat(
    x: TensorF32Cpu2D,
    adj: TensorF32Cpu2D,
    attention_0_W: TensorF32Cpu2D,
    attention_0_a: TensorF32Cpu2D,
    attention_1_W: TensorF32Cpu2D,
    attention_1_a: TensorF32Cpu2D,
    out_att_W: TensorF32Cpu2D,
    out_att_a: TensorF32Cpu2D,
    nhid: int,
    nclass: int,
    alpha: float,
) -> TensorF32Cpu2D:
    attentions = [(attention_0_W, attention_0_a), (attention_1_W, attention_1_a)]
    x = torch.cat([graph_attention_layer(x, adj, att[0], att[1], nhid, alpha, True) for att in attentions], dim=1)
    x = F.elu(graph_attention_layer(x, adj, out_att_W, out_att_a, nclass, alpha, False))
    return F.log_softmax(x)


INPUTS = {
    "get_padding": lambda: (7, 3),
    "hifigan_resblock1": lambda: (
        torch.randn(2, 8, 16),
        torch.randn(8, 8, 3) * 0.2, torch.randn(8), torch.randn(8, 8, 3) * 0.2, torch.randn(8),
        torch.randn(8, 8, 3) * 0.2, torch.randn(8), torch.randn(8, 8, 3) * 0.2, torch.randn(8),
        torch.randn(8, 8, 3) * 0.2, torch.randn(8), torch.randn(8, 8, 3) * 0.2, torch.randn(8),
        3, (1, 3, 5),
    ),
    "hifigan_resblock2": lambda: (
        torch.randn(2, 8, 16), torch.randn(8, 8, 3) * 0.2, torch.randn(8), torch.randn(8, 8, 3) * 0.2, torch.randn(8), 3, (1, 3),
    ),
    "hifigan_generator": lambda: (
        torch.randn(2, 80, 8),
        torch.randn(16, 80, 7) * 0.05, torch.randn(16),
        torch.randn(16, 8, 4) * 0.2, torch.randn(8), torch.randn(8, 4, 4) * 0.2, torch.randn(4),
        torch.randn(8, 8, 3) * 0.2, torch.randn(8), torch.randn(8, 8, 3) * 0.2, torch.randn(8),
        torch.randn(8, 8, 5) * 0.2, torch.randn(8), torch.randn(8, 8, 5) * 0.2, torch.randn(8),
        torch.randn(4, 4, 3) * 0.2, torch.randn(4), torch.randn(4, 4, 3) * 0.2, torch.randn(4),
        torch.randn(4, 4, 5) * 0.2, torch.randn(4), torch.randn(4, 4, 5) * 0.2, torch.randn(4),
        torch.randn(1, 4, 7) * 0.2, torch.randn(1),
        [2, 2], [4, 4], [3, 5], (1, 2), (2, 6), 2, 2,
    ),
    "get_extra_padding_for_conv1d": lambda: (torch.randn(2, 4, 15), 4, 2, 2),
    "pad1d": lambda: (torch.randn(2, 4, 3), (4, 2), 0.0),
    "unpad1d": lambda: (torch.randn(2, 4, 12), (1, 2)),
    "sconv1d": lambda: (torch.randn(2, 4, 15), torch.randn(8, 4, 4) * 0.3, torch.randn(8), 4, 2, 1, 1, False),
    "sconv_transpose1d": lambda: (torch.randn(2, 8, 6), torch.randn(8, 4, 4) * 0.3, torch.randn(4), 4, 2, True, 0.5),
    "tdmpc2_symlog": lambda: (torch.randn(2, 8) * 5,),
    "tdmpc2_symexp": lambda: (torch.randn(2, 8),),
    "two_hot": lambda: (torch.randn(4, 1) * 20, 16, -10.0, 10.0, 20.0 / 15),
    "two_hot_inv": lambda: (torch.randn(4, 16), 16, -10.0, 10.0),
    "soft_ce": lambda: (torch.randn(4, 16), torch.randn(4, 1) * 20, 16, -10.0, 10.0, 20.0 / 15),
    "int_to_one_hot": lambda: (torch.randint(0, 6, (2, 5)), 6),
    "dreamer_symlog": lambda: (torch.randn(2, 3, 8) * 5,),
    "dreamer_symexp": lambda: (torch.randn(2, 3, 8),),
    "disc_dist_mean": lambda: (torch.randn(2, 3, 255), -20.0, 20.0),
    "disc_dist_log_prob": lambda: (torch.randn(2, 3, 255), torch.randn(2, 3, 1) * 50, -20.0, 20.0),
    "graph_attention_layer": lambda: (torch.randn(6, 8), (torch.eye(6) + torch.diag(torch.ones(5), 1) + torch.diag(torch.ones(5), -1)) / 3, torch.randn(8, 4) * 0.5, torch.randn(8, 1) * 0.5, 4, 0.2, True),
    "gat": lambda: (
        torch.randn(6, 8), (torch.eye(6) + torch.diag(torch.ones(5), 1) + torch.diag(torch.ones(5), -1)) / 3,
        torch.randn(8, 4) * 0.5, torch.randn(8, 1) * 0.5, torch.randn(8, 4) * 0.5, torch.randn(8, 1) * 0.5,
        torch.randn(8, 3) * 0.5, torch.randn(6, 1) * 0.5,
        4, 3, 0.2,
    ),
}
