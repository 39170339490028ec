# Convolution, pooling and padding (the vision ops): bound by their Python signatures, sizes as
# ints or tuples, options positional or by keyword; libtorch's kernels.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D

STRIDE = 2


def conv_block(x: TensorF32Cpu4D, w: TensorF32Cpu4D, b: TensorF32Cpu1D) -> TensorF32Cpu4D:
    return F.relu(F.conv2d(x, w, b, stride=STRIDE, padding=(1, 1)))


def conv_positional(x: TensorF32Cpu4D, w: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.conv2d(x, w, None, 1, 2, 1, 1)


def depthwise(x: TensorF32Cpu4D, w: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return torch.conv2d(x, w, padding=2, groups=x.shape[1] // w.shape[1])


def conv_1d(x: TensorF32Cpu3D, w: TensorF32Cpu3D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.gelu(F.conv1d(x, w, b, padding=1))


def pools(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    y = F.max_pool2d(x, kernel_size=3, stride=2, padding=1)
    return F.avg_pool2d(y, 2, ceil_mode=True) + F.adaptive_avg_pool2d(y, (1, 1)) + F.adaptive_max_pool2d(y, 1)


# Max pooling of contiguous input runs our own loop (any window, padding, dilation, ceil
# mode), other layouts libtorch's kernel; both give eager's elements
def max_pools(x: TensorF32Cpu4D) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D, TensorF32Cpu4D, TensorF32Cpu4D, TensorF32Cpu4D, TensorF32Cpu3D, TensorF32Cpu3D]:
    plain = F.max_pool2d(x, 2), F.max_pool2d(x, (3, 2), stride=(1, 2)), F.max_pool2d(x, 3, 3)
    padded = F.max_pool2d(x, 3, 2, 1), F.max_pool2d(x, 3, stride=1, padding=1, dilation=2, ceil_mode=True)
    return plain[0], plain[1], plain[2], padded[0], padded[1], F.max_pool1d(x[0], 4, 3), F.max_pool1d(x[0], 2, padding=1, ceil_mode=True)


def pools_1d(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.max_pool1d(x, 2) + F.avg_pool1d(x, 2, stride=2) + F.adaptive_avg_pool1d(x, 1)


def global_pool_head(x: TensorF32Cpu4D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1), w, b)


def padding(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.pad(x, (1, 2), mode="reflect") + F.pad(x, (2, 1), "replicate") + F.pad(x, (0, 3), value=0.5)


def same_padding(x: TensorF32Cpu4D, w: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.conv2d(x, w, padding="same")


def valid_padding(x: TensorF32Cpu4D, w: TensorF32Cpu4D, v: TensorF32Cpu3D, u: TensorF32Cpu3D) -> tuple[TensorF32Cpu4D, TensorF32Cpu3D]:
    return F.conv2d(x, w, None, 1, "valid"), F.conv1d(v, u, padding="same")


def upsample(x: TensorF32Cpu4D, w: TensorF32Cpu4D, b: TensorF32Cpu1D) -> TensorF32Cpu4D:
    up = F.interpolate(x, scale_factor=2.0, mode="nearest")
    smooth = F.interpolate(x, size=(2 * x.shape[2], 2 * x.shape[3]), mode="bilinear", align_corners=False)
    return F.conv2d(up + smooth, w, b, padding=1)


def transposed(x: TensorF32Cpu4D, w: TensorF32Cpu4D, b: TensorF32Cpu1D) -> TensorF32Cpu4D:
    return F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)


def transposed_1d(x: TensorF32Cpu3D, w: TensorF32Cpu3D, b: TensorF32Cpu1D, u: int) -> TensorF32Cpu3D:
    # a vocoder's upsampling: stride u, kernel 2u (HiFi-GAN writes `padding=(k - u) // 2`)
    up = F.conv_transpose1d(x, w, b, u, (2 * u - u) // 2)
    return F.leaky_relu(up, 0.1) + torch.conv_transpose1d(x[0], w, None, stride=(u,), padding=(u // 2,), output_padding=0, dilation=1)


def gpt2_conv1d(x: TensorF32Cpu3D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu3D:
    size_out = x.size()[:-1] + (weight.size(-1),)
    x = torch.addmm(bias, x.view(-1, x.size(-1)), weight)
    return x.view(size_out)


def attention_scores(q: TensorF32Cpu3D, k: TensorF32Cpu3D, scores: TensorF32Cpu3D, scale: float) -> TensorF32Cpu3D:
    return torch.baddbmm(scores, q, k.transpose(-1, -2), beta=0, alpha=scale).softmax(dim=-1)


# the method forms: BLOOM's ALiBi scores (`alibi.baddbmm(batch1=…, batch2=…, beta=…, alpha=…)`)
def alibi_scores(alibi: TensorF32Cpu3D, q: TensorF32Cpu3D, k: TensorF32Cpu3D, beta: float, inv_norm_factor: float) -> TensorF32Cpu3D:
    return alibi.baddbmm(batch1=q, batch2=k.transpose(-1, -2), beta=beta, alpha=inv_norm_factor)


def bias_addmm(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return bias.addmm(x, weight)
