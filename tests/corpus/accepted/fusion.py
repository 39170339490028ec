# Forms the analyzer's fusion pass (analyzer-wasm/src/fuse.rs) turns into one tl::fused
# call, and near misses it must leave op by op. Parity with eager: tests/python/test_native_cpu.py
# (this corpus) and tests/python/test_fusion_pass.py (sizes, special values, errors).
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu3D, TensorF32Cpu4D
import math

import torch
import torch.nn.functional as F


def linear_relu_mean(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1)


def linear_no_bias_gelu_tanh_sum(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.tanh(F.gelu(F.linear(x, w))).sum(dim=-1, keepdim=True)


def matmul_bias_sigmoid(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return (x @ w + b).sigmoid()


def matmul_bias(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x @ w + b


def matmul_exp_log_colsum(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.matmul(x, w).exp().log().sum(dim=0, keepdim=True)


def matmul_vector_abs_mean(x: TensorF32Cpu2D, v: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return (x @ v).abs().mean(dim=0, keepdim=True)


def nested_epilogues(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return (F.linear(x, w, b).relu() @ w + b).neg().square()


def lone_sum(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.sum(dim=0)


# near miss (for epilogues): the bias first is no epilogue (its fallback would swap the sizes
# in add's broadcasting error), but an elementwise chain over the computed product
def bias_first_relu(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return (b + x @ w).relu()


# near miss (for epilogues): a bias that is itself an op is no epilogue bias (evaluation order
# of failing ops); the chain over the product runs on the elementwise kernel
def computed_bias_relu(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return (x @ w + b.exp()).relu()


def alternating(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, depth: int, phase: int) -> TensorF32Cpu1D:
    hidden = x
    for layer in range(depth):
        if (layer + phase) % 2 == 0:
            even = hidden @ w + b
            hidden = even.relu()
        else:
            odd = hidden @ w + b
            hidden = odd.sigmoid()
    return hidden.mean(dim=1, keepdim=False)


def one_statement_loop(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, depth: int) -> TensorF32Cpu2D:
    h = x
    for step in range(1, depth + 1, 2):
        if step > 2 and step // 2 != 7:
            h = F.gelu((h @ w + b).tanh())
        else:
            h = h @ w + b
    return h


def loop_then_sum(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, depth: int) -> TensorF32Cpu1D:
    h = x
    for i in range(depth):
        h = (h @ w + b).tanh()
    total = h.sum(dim=0)
    return total.relu()


def elementwise_chain(a: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return ((a + b).relu() * a - b / a).sigmoid()


def unary_chain(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sqrt(torch.tanh(x.abs())).neg().exp()


# The hand-written RMSNorm (LLaMA's `_norm(x) * weight`, Hugging Face's two statements).
def rms_norm_weighted(x: TensorF32Cpu2D, g: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g


def rms_norm_weight_first(x: TensorF32Cpu3D, g: TensorF32Cpu1D, eps: float) -> TensorF32Cpu3D:
    return g * (x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps))


def rms_norm_two_statements(hidden_states: TensorF32Cpu3D, weight: TensorF32Cpu1D, variance_epsilon: float) -> TensorF32Cpu3D:
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + variance_epsilon)
    return weight * hidden_states


# near miss (for RMSNorm): the mean of squares is read again, so it stays a tensor
def rms_norm_variance_live(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    variance = x.pow(2).mean(-1, keepdim=True)
    return x * torch.rsqrt(variance + 1e-6) + variance


# near miss (for RMSNorm): the next statement writes `h` before its RMSNorm reads it, so the
# mean of squares (of `h` before the write) stays its own statement
def rms_norm_input_written_between(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = x * 1.0
    variance = h.pow(2).mean(-1, keepdim=True)
    return h.mul_(2) + h * torch.rsqrt(variance + 1e-6)


# near miss (for RMSNorm): squares of another tensor
def rms_norm_other_input(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-6)


# near miss (for epilogues): `* b` is no bias; an elementwise chain over the computed product
def chain_over_product(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return ((x @ w) * b).relu()


# Chains over computed tensors: LLaMA's SwiGLU and a residual connection.
def swiglu(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, w3: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.silu(F.linear(x, w1)) * F.linear(x, w3)


def residual(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x + F.linear(x, w, b)


# near miss (for elementwise chains): `a + b` may raise before the product is computed, so the
# product is not evaluated ahead of it
def binary_before_product(a: TensorF32Cpu2D, b: TensorF32Cpu2D, x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return (a + b) * (x @ w)


# near miss (for the reduction): the loop's result is read again after its sum
def loop_result_live_after_sum(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, depth: int) -> TensorF32Cpu1D:
    h = x
    for i in range(depth):
        h = (h @ w + b).relu()
    total = h.sum(dim=1)
    return total + h.mean(dim=1)


# near miss: the loop variable is read after the loop
def loop_variable_live_after(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, depth: int) -> int:
    h = x
    i = 0
    for i in range(depth):
        h = (h @ w + b).relu()
    return i


# near miss: the weight changes inside the loop
def weight_reassigned(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, depth: int) -> TensorF32Cpu2D:
    h = x
    for i in range(depth):
        t = h @ w + b
        h = t.relu()
        w = w.abs()
    return h


# A lone binary op: one-step `tl::fused::elementwise` programs, our loop up to 2^11 result
# elements and libtorch's kernel above (same shape and a broadcast row).
def lone_mul(a: TensorF32Cpu2D, b: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return a * b


def lone_row_sub(a: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return a - b


# A product times or divided by a Python number, scaled in place on the product's fresh
# result: nanoGPT's attention scores, Hugging Face's `/ math.sqrt(head_dim)`, an int, a
# number on the left that cannot fail.
def scaled_scores(q: TensorF32Cpu3D, k: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))


def scores_over_sqrt(q: TensorF32Cpu3D, k: TensorF32Cpu3D, head_dim: int) -> TensorF32Cpu3D:
    return torch.matmul(q, k.transpose(1, 2)) / math.sqrt(head_dim)


def number_times_linear(x: TensorF32Cpu2D, w: TensorF32Cpu2D, scale: float) -> TensorF32Cpu2D:
    return scale * F.linear(x, w).relu()


def linear_times_int(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, n: int) -> TensorF32Cpu2D:
    return F.linear(x, w, b) * n


# near miss (for scale): Python evaluates a number on the left, which may raise, before the
# product
def failing_number_first(x: TensorF32Cpu2D, w: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return (1.0 / n) * (x @ w)


# Elementwise chains at ranks 3–4 whose broadcast merges into a 2-D one: a transformer's
# residual with a layer scale, SqueezeExcitation's gate over a feature map.
def residual_layer_scale(x: TensorF32Cpu3D, h: TensorF32Cpu3D, gamma: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return x + h * gamma


def gated_feature_map(x: TensorF32Cpu4D, scale: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return x * torch.sigmoid(scale) + x


# A lone op of a per-row gate and a feature map (torchvision's SqueezeExcitation returns
# `scale * input`), the gate on either side: one pass above libtorch's size too.
def gate_times_map(scale: TensorF32Cpu4D, x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return scale * x


def map_minus_gate(x: TensorF32Cpu4D, scale: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return x - scale


def gate_over_rows(scale: TensorF32Cpu2D, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return scale / x


def rows_plus_gate(x: TensorF32Cpu2D, scale: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x + scale
