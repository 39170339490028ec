"""Convolution stacks as CNN code writes them, statement by statement: fused into one
`conv_chain` (the value stays in oneDNN's layout between the ops where eager runs them on
oneDNN)."""

import torch
import torch.nn.functional as F

from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu4D


def mnist_features(x: TensorF32Cpu4D, c1_w: TensorF32Cpu4D, c1_b: TensorF32Cpu1D, c2_w: TensorF32Cpu4D, c2_b: TensorF32Cpu1D) -> TensorF32Cpu4D:
    # pytorch/examples mnist/main.py, Net.forward up to the pool
    x = F.relu(F.conv2d(x, c1_w, c1_b))
    x = F.relu(F.conv2d(x, c2_w, c2_b))
    x = F.max_pool2d(x, 2)
    return x


def vgg_block(x: TensorF32Cpu4D, w1: TensorF32Cpu4D, b1: TensorF32Cpu1D, w2: TensorF32Cpu4D, b2: TensorF32Cpu1D) -> TensorF32Cpu4D:
    # two 3×3 convolutions with padding 1, each with its own local, then the pool
    h = F.relu(F.conv2d(x, w1, b1, padding=1))
    y = torch.relu(F.conv2d(h, w2, b2, stride=1, padding=1))
    out = F.max_pool2d(y, kernel_size=2, stride=2)
    return out


def lenet(x: TensorF32Cpu4D, w1: TensorF32Cpu4D, b1: TensorF32Cpu1D, w2: TensorF32Cpu4D, b2: TensorF32Cpu1D, fc_w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # one convolution and its pool, twice (LeNet-5), then the classifier
    x = F.relu(F.conv2d(x, w1, b1))
    x = F.max_pool2d(x, 2)
    x = torch.sigmoid(F.conv2d(x, w2, b2))
    x = F.max_pool2d(x, (2, 2))
    return F.linear(torch.flatten(x, 1), fc_w)


def strided_stack(x: TensorF32Cpu4D, w1: TensorF32Cpu4D, w2: TensorF32Cpu4D, w3: TensorF32Cpu4D) -> TensorF32Cpu4D:
    # no bias, strides, a dilated middle convolution and no pool
    x = F.conv2d(x, w1, None, 2, 1)
    x = F.relu(F.conv2d(x, w2, padding=2, dilation=2))
    x = F.conv2d(x, w3, stride=2)
    return x


def conv_pool(x: TensorF32Cpu4D, w: TensorF32Cpu4D) -> TensorF32Cpu4D:
    # no activation between the convolution and the pool: its -inf results reach the pool
    y = F.conv2d(x, w)
    y = F.max_pool2d(y, 2)
    return y


def sequential_features(x: TensorF32Cpu4D, w0: TensorF32Cpu4D, b0: TensorF32Cpu1D, w2: TensorF32Cpu4D, b2: TensorF32Cpu1D) -> TensorF32Cpu4D:
    # nn.Sequential(Conv2d, ReLU, Conv2d, ReLU, MaxPool2d) as the module rewrite inlines it
    return F.max_pool2d(F.relu(F.conv2d(F.relu(F.conv2d(x, w0, b0, 1, 1)), w2, b2, 1, 1)), 2, 2)


def feature_read_twice(x: TensorF32Cpu4D, w1: TensorF32Cpu4D, w2: TensorF32Cpu4D) -> tuple[TensorF32Cpu4D, TensorF32Cpu4D]:
    # the first result is read again: no chain (each convolution on its own)
    h = F.relu(F.conv2d(x, w1, padding=1))
    y = F.relu(F.conv2d(h, w2, padding=1))
    return h, y


def configurable_stack(x: TensorF32Cpu4D, w1: TensorF32Cpu4D, b1: TensorF32Cpu1D, w2: TensorF32Cpu4D, b2: TensorF32Cpu1D,
                       s1: int, p1: int, d1: int, g1: int, s2: int, p2: int, k: int) -> TensorF32Cpu4D:
    # every option of the chain from the caller (the randomized parity test's subject)
    x = F.relu(F.conv2d(x, w1, b1, s1, p1, d1, g1))
    x = F.relu(F.conv2d(x, w2, b2, s2, p2))
    x = F.max_pool2d(x, k)
    return x
