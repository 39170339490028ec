"""The functions and shapes of ``torchlower bench --sweep``: every claimed op alone and every
fused pattern, over a grid of shapes, native against eager.

Each function is ordinary annotated PyTorch code (``torchlower.compile`` analyzes this file
like any user module). ``OPS`` says which op of the op table (``native-backend/ops``) each
single-op function measures; a test checks that every op of the table has its row here, so an
op added to the surface comes with its sweep rows. Shapes are ``(rows, cols)``; for products
the weight is ``cols × cols`` and the grid stops at 1024 columns (above that one call is a
GEMM of seconds, where only the BLAS matters).
"""

import torch
import torch.nn.functional as F
from torch.distributions import Categorical, Normal

from torchlower.types import (
    TensorBoolCpu2D,
    TensorF32Cpu0D,
    TensorF32Cpu1D,
    TensorF32Cpu2D,
    TensorF32Cpu3D,
    TensorF32Cpu4D,
    TensorI64Cpu0D,
    TensorI64Cpu1D,
    TensorI64Cpu2D,
)

# --- one op ------------------------------------------------------------------------------------


def relu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.relu()


def sigmoid(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sigmoid(x)


def tanh(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.tanh(x)


def gelu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x)


def abs_(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.abs(x)


def neg(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.neg(x)


def square(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.square(x)


def exp(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.exp(x)


def log(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.log(x)


def sqrt(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sqrt(x)


def add(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x + y


def sub(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x - y


def mul(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x * y


def div(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x / y


def add_row(x: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return x + b


def linear(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b)


def matmul(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x @ w


def sum_rows(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.sum(dim=1)


def sum_cols(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.sum(dim=0)


def mean_rows(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.mean(dim=1)


def mean_cols(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.mean(dim=0)


def softmax(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.softmax(dim=1)


def argmax(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return x.argmax(dim=1)


def mul_scalar(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x * 0.5


def rsub_scalar(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return 1.0 - x


def pow_number(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x ** 2


def clamp(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.clamp(-1.0, 1.0)


def clamp_min(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.clamp_min(0.0)


def clamp_max(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.clamp_max(6.0)


def layer_norm(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.layer_norm(x, (x.size(-1),), b, b, 1e-5)


def silu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.silu(x)


def rsqrt(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.rsqrt(x)


def erf(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.erf(x)


def softplus(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.softplus(x)


def maximum(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.maximum(x, y)


def minimum(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.minimum(x, y)


def bmm(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return torch.bmm(x.unsqueeze(0), w.unsqueeze(0))


def mm(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.mm(x, w)


# --- views (metadata only, except reshape/contiguous copies): the boundary's own cost ---------


def view(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.view(-1)


def reshape(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.reshape(x.size(1), -1)


def permute(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.permute(1, 0)


def transpose(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.transpose(0, 1)


def t(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.t()


def unsqueeze(x: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return x.unsqueeze(0)


def flatten(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.flatten()


def contiguous(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.t().contiguous()


def index(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x[:, 0]


def expand(x: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return x.expand(2, -1, -1)


def expand_as(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x[:1].expand_as(y)


def view_as(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.view_as(y)


def reshape_as(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.t().reshape_as(y)


def cat(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat([x, y], dim=-1)


def stack(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return torch.stack([x, y], dim=0)


def chunk(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    a, b = x.chunk(2, dim=0)
    return b


def split(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    a, b = x.split(1, dim=0)
    return b


def unbind(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    a, b = x.unbind(0)
    return b


# --- fused patterns ----------------------------------------------------------------------------


def linear_tanh(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.tanh(F.linear(x, w, b))


def linear_silu(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.silu(F.linear(x, w, b))


def swiglu_mlp(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, w2: TensorF32Cpu2D, w3: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2)


def linear_gelu(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.gelu(F.linear(x, w, b))


def linear_relu_mean(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1)


def matmul_bias_relu(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return (x @ w + b).relu()


def chain(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return (x + y).relu() * y - x


def layer_loop(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D, depth: int) -> TensorF32Cpu2D:
    h = x
    for _ in range(depth):
        h = torch.tanh(h @ w + b)
    return h


def gpt_mlp(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = F.gelu(F.linear(x, w1, b1))
    return F.linear(h, w2, b2)


def tanh_policy(x: TensorF32Cpu2D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D,
                w3: TensorF32Cpu2D, b3: TensorF32Cpu1D) -> TensorF32Cpu2D:
    h = torch.tanh(F.linear(x, w1, b1))
    h = torch.tanh(F.linear(h, w2, b2))
    return F.linear(h, w3, b3)



# --- the op families (libtorch's kernels): one call each ----------------------------------------


def log1p(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.log1p(x)


def expm1(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.expm1(x)


def sin(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sin(x)


def cos(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cos(x)


def relu6(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.relu6(x)


def hardswish(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.hardswish(x)


def hardsigmoid(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.hardsigmoid(x)


def mish(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.mish(x)


def selu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.selu(x)


def elu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.elu(x)


def leaky_relu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.leaky_relu(x, 0.2)


def hardtanh(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.hardtanh(x, -2.0, 2.0)


def gelu_tanh(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.gelu(x, approximate="tanh")


def glu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.glu(x, dim=-1)


def log_softmax(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.log_softmax(x, dim=-1)


def sum_dims(x: TensorF32Cpu3D) -> TensorF32Cpu1D:
    return x.sum(dim=(1, 2))


def mean_dims(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return x.mean((2, 3), keepdim=True)


def amax(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.amax(dim=-1)


def amin(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.amin(dim=-1)


def logsumexp(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.logsumexp(x, dim=-1)


def var(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.var(-1, unbiased=False)


def std(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.std(dim=-1)


def prod(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.prod(dim=-1)


def argmin(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return x.argmin(dim=-1)


def all_(m: TensorBoolCpu2D) -> TensorBoolCpu2D:
    return m.all(dim=-1, keepdim=True)


def any_(m: TensorBoolCpu2D) -> TensorBoolCpu2D:
    return m.any(dim=-1, keepdim=True)


def norm(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.norm(dim=-1, keepdim=True)


def vector_norm(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return torch.linalg.vector_norm(x, dim=-1)


def normalize(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.normalize(x, dim=-1)


def rms_norm(x: TensorF32Cpu2D, w: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.rms_norm(x, (x.shape[-1],), w, 1e-6)


def batch_norm(x: TensorF32Cpu2D, mean: TensorF32Cpu1D, var: TensorF32Cpu1D, w: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.batch_norm(x, mean, var, w, b, False, 0.1, 1e-5)


def group_norm(x: TensorF32Cpu3D, w: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.group_norm(x, 4, w, b)


def eq(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorBoolCpu2D:
    return x == y


def ne(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorBoolCpu2D:
    return x != y


def lt(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorBoolCpu2D:
    return x < y


def le(x: TensorF32Cpu2D) -> TensorBoolCpu2D:
    return x <= 0.5


def gt(x: TensorF32Cpu2D) -> TensorBoolCpu2D:
    return x > 0


def ge(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorBoolCpu2D:
    return torch.ge(x, y)


def masked_fill(x: TensorF32Cpu2D, m: TensorBoolCpu2D) -> TensorF32Cpu2D:
    return x.masked_fill(m, float("-inf"))


def where_(m: TensorBoolCpu2D, x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.where(m, x, y)


def tril(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.tril(x)


def triu(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.triu(x, diagonal=1)


def gather(x: TensorF32Cpu2D, i: TensorI64Cpu2D) -> TensorF32Cpu2D:
    return x.gather(1, i)


def index_select(x: TensorF32Cpu2D, i: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return x.index_select(0, i)


def one_hot(i: TensorI64Cpu1D) -> TensorI64Cpu2D:
    return F.one_hot(i, 16)


def scatter(x: TensorF32Cpu2D, i: TensorI64Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.scatter(1, i, y)


def isin(i: TensorI64Cpu2D, t: TensorI64Cpu1D) -> TensorBoolCpu2D:
    return torch.isin(i, t)


def sort(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sort(x, descending=True)[0]


def argsort(x: TensorF32Cpu2D) -> TensorI64Cpu2D:
    return x.argsort(dim=-1)


def cumsum(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.softmax(-1).cumsum(dim=-1)


def nansum(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.nansum(-1)


def clone(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.clone()


def roll(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.roll(x, shifts=(1, -1), dims=(0, 1))


def einsum(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.einsum("bi,oi->bo", x, w)


def flip(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.flip(-1)


def repeat_interleave(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.repeat_interleave(x, 2, dim=0)


def tensordot(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.tensordot(x, w, dims=([1], [0]))


def div_mode(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x // 0.25


def sum_all(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.sum()


def mean_all(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.mean()


def max_all(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.max()


def min_all(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return torch.min(x)


def argmax_all(x: TensorF32Cpu2D) -> TensorI64Cpu0D:
    return x.argmax()


def argmin_all(x: TensorF32Cpu2D) -> TensorI64Cpu0D:
    return x.argmin()


def prod_all(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.prod()


def std_all(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.std()


def var_all(x: TensorF32Cpu2D) -> TensorF32Cpu0D:
    return x.var(unbiased=False)


def unfold(x: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return x.unfold(1, 16, 8)


def meshgrid(y: TensorF32Cpu1D, x: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.meshgrid(y, x, indexing="ij")[0]


def atan(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.atan(x)


def sign(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.sign(x)


def floor(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.floor()


def outer(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.outer(x[0], x[-1])


def conv_transpose1d(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.conv_transpose1d(x.unsqueeze(0), x[:, :3].unsqueeze(1).contiguous(), stride=2)[0]


def remainder(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x % 0.75


def linspace(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x + torch.linspace(-1.0, 1.0, x.shape[-1])


def where_nonzero(x: TensorF32Cpu1D) -> TensorI64Cpu1D:
    return torch.where(x > 0)[0]


def tensor_of_ints(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    # DLRM's lower-triangle indices over the rows: r (r + 1) / 2 ints
    n = x.shape[0]
    return torch.tensor([i for i in range(n) for j in range(i + 1)])


def embedding_bag(ids: TensorI64Cpu1D, table: TensorF32Cpu2D, offsets: TensorI64Cpu1D) -> TensorF32Cpu2D:
    return F.embedding_bag(ids, table, offsets, mode="sum")


def multinomial(p: TensorF32Cpu2D) -> TensorI64Cpu2D:
    return torch.multinomial(p, 1)


def cross_entropy(x: TensorF32Cpu2D, t: TensorI64Cpu1D) -> TensorF32Cpu1D:
    return F.cross_entropy(x, t, reduction="none")


def embedding(i: TensorI64Cpu1D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.embedding(i, w)


def arange(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return torch.arange(x.shape[1])


def zeros(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.zeros(x.shape[0], x.shape[1])


def ones(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.ones(x.shape)


def empty(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # a buffer filled after it is made (its own values are unspecified, as eager's)
    out = torch.empty(x.shape[0], x.shape[1])
    out[:] = x
    return out


def full(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.full(x.shape, 0.5)


def zeros_like(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.zeros_like(x)


def ones_like(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.ones_like(x)


def full_like(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.full_like(x, 2.0)


def narrow(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.narrow(1, 0, 8)


def select(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.select(1, 0)


def unflatten(x: TensorF32Cpu2D) -> TensorF32Cpu3D:
    return x.unflatten(1, (2, -1))


def squeeze(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x[:, :1].squeeze(1)


def detach(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.detach()


def dropout_eval(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return F.dropout(x, 0.1, training=False)


def conv1d(x: TensorF32Cpu3D, w: TensorF32Cpu3D, b: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.conv1d(x, w, b, padding=1)


def conv2d(x: TensorF32Cpu4D, w: TensorF32Cpu4D, b: TensorF32Cpu1D) -> TensorF32Cpu4D:
    return F.conv2d(x, w, b, padding=1)


def conv2d_relu(x: TensorF32Cpu4D, w: TensorF32Cpu4D, b: TensorF32Cpu1D) -> TensorF32Cpu4D:
    return F.relu(F.conv2d(x, w, b, padding=1))


def max_pool1d(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.max_pool1d(x, 2)


def max_pool2d(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.max_pool2d(x, kernel_size=3, stride=2, padding=1)


def max_pool2d_plain(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    # MNIST's pooling: a plain window, our own loop (the padded form above is libtorch's)
    return F.max_pool2d(x, 2)


def avg_pool1d(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.avg_pool1d(x, 2)


def avg_pool2d(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.avg_pool2d(x, 2)


def adaptive_avg_pool1d(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.adaptive_avg_pool1d(x, 1)


def adaptive_avg_pool2d(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.adaptive_avg_pool2d(x, (1, 1))


def adaptive_max_pool2d(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.adaptive_max_pool2d(x, 1)


def pad(x: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.pad(x, (1, 1), mode="reflect")


def sdpa(q: TensorF32Cpu4D, k: TensorF32Cpu4D, v: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def mha(x: TensorF32Cpu3D, w_in: TensorF32Cpu2D, b_in: TensorF32Cpu1D, w_out: TensorF32Cpu2D, b_out: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return F.multi_head_attention_forward(
        x, x, x, x.shape[-1], 4, w_in, b_in, None, None, False, 0.0, w_out, b_out, training=False, need_weights=False
    )[0]



# --- later ops: products with an input, the convolution overloads, resizing, conversions,
# distributions (each measured alone) ------------------------------------------------------

def addmm(b: TensorF32Cpu1D, x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.addmm(b, x, w)


def baddbmm(s: TensorF32Cpu3D, q: TensorF32Cpu3D, k: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return torch.baddbmm(s, q, k, beta=0, alpha=0.125)


def attention_scores(q: TensorF32Cpu4D, k: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return q @ k.transpose(-2, -1)


def attention_values(p: TensorF32Cpu4D, v: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return p @ v


def residual_rank3(x: TensorF32Cpu3D, h: TensorF32Cpu3D, gamma: TensorF32Cpu1D) -> TensorF32Cpu3D:
    return x + h * gamma


def channel_gate(x: TensorF32Cpu4D, scale: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return x * torch.sigmoid(scale)


def conv1d_same(x: TensorF32Cpu3D, w: TensorF32Cpu3D) -> TensorF32Cpu3D:
    return F.conv1d(x, w, padding="same")


def conv2d_same(x: TensorF32Cpu4D, w: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.conv2d(x, w, padding="same")


def conv_transpose2d(x: TensorF32Cpu4D, w: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.conv_transpose2d(x, w, stride=2)


def interpolate(x: TensorF32Cpu4D) -> TensorF32Cpu4D:
    return F.interpolate(x, scale_factor=2.0, mode="nearest")


def to_dtype(x: TensorF32Cpu2D) -> TensorI64Cpu2D:
    return x.long()


def repeat(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.repeat(2, 1)


def clamp_tensor(x: TensorF32Cpu2D, lo: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.clamp(x, min=lo)


def scalar_tensor(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x * torch.tensor(0.5, dtype=x.dtype)


def pow_tensor(x: TensorF32Cpu2D, e: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.pow(x, e)


def max_dim(x: TensorF32Cpu2D) -> TensorF32Cpu1D:
    return x.max(dim=-1)[0]


def min_dim(x: TensorF32Cpu2D) -> TensorI64Cpu1D:
    return x.min(dim=-1).indices


def topk(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.topk(x, 8)[0]


def logical_and(m: TensorBoolCpu2D, n: TensorBoolCpu2D) -> TensorBoolCpu2D:
    return m & n


def logical_or(m: TensorBoolCpu2D, n: TensorBoolCpu2D) -> TensorBoolCpu2D:
    return m | n


def logical_xor(m: TensorBoolCpu2D, n: TensorBoolCpu2D) -> TensorBoolCpu2D:
    return m ^ n


def logical_not(m: TensorBoolCpu2D) -> TensorBoolCpu2D:
    return ~m


def categorical(logits: TensorF32Cpu2D) -> TensorF32Cpu2D:
    d = Categorical(logits=logits)
    return d.logits


def categorical_probs(logits: TensorF32Cpu2D) -> TensorF32Cpu2D:
    d = Categorical(logits=logits)
    return d.probs


def categorical_log_prob(logits: TensorF32Cpu2D, action: TensorI64Cpu1D) -> TensorF32Cpu1D:
    d = Categorical(logits=logits)
    return d.log_prob(action)


def categorical_entropy(logits: TensorF32Cpu2D) -> TensorF32Cpu1D:
    d = Categorical(logits=logits)
    return d.entropy()


def categorical_mode(logits: TensorF32Cpu2D) -> TensorI64Cpu1D:
    d = Categorical(logits=logits)
    return d.mode


def normal(mean: TensorF32Cpu2D, std: TensorF32Cpu2D) -> TensorF32Cpu2D:
    d = Normal(mean, std)
    return d.mean


def normal_log_prob(mean: TensorF32Cpu2D, std: TensorF32Cpu2D, action: TensorF32Cpu2D) -> TensorF32Cpu2D:
    d = Normal(mean, std)
    return d.log_prob(action)


def normal_entropy(mean: TensorF32Cpu2D, std: TensorF32Cpu2D) -> TensorF32Cpu2D:
    d = Normal(mean, std)
    return d.entropy()


def normal_stddev(mean: TensorF32Cpu2D, std: TensorF32Cpu2D) -> TensorF32Cpu2D:
    d = Normal(mean, std)
    return d.stddev


#: The op of the op table each single-op function measures (the table's backend names).
OPS = {
    "relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "gelu": "gelu", "abs_": "abs", "neg": "neg",
    "square": "square", "exp": "exp", "log": "log", "sqrt": "sqrt", "add": "add", "sub": "sub", "mul": "mul",
    "div": "div", "linear": "linear", "matmul": "matmul", "sum_rows": "sum_dim", "mean_rows": "mean_dim",
    "softmax": "softmax", "argmax": "argmax", "view": "view", "reshape": "reshape", "permute": "permute",
    "transpose": "transpose", "t": "t", "unsqueeze": "unsqueeze", "flatten": "flatten", "contiguous": "contiguous",
    "index": "index", "chunk": "chunk", "split": "split", "unbind": "unbind", "pow_number": "pow",
    "clamp": "clamp", "clamp_min": "clamp_min", "clamp_max": "clamp_max", "maximum": "maximum",
    "minimum": "minimum", "bmm": "bmm", "mm": "mm", "cat": "cat", "stack": "stack",
    "expand": "expand", "expand_as": "expand_as", "view_as": "view_as", "reshape_as": "reshape_as", "silu": "silu", "rsqrt": "rsqrt", "erf": "erf",
    "softplus": "softplus", "layer_norm": "layer_norm",
    "log1p": "log1p", "expm1": "expm1", "sin": "sin", "cos": "cos", "relu6": "relu6", "hardswish": "hardswish", "hardsigmoid": "hardsigmoid", "mish": "mish", "selu": "selu", "elu": "elu", "leaky_relu": "leaky_relu", "hardtanh": "hardtanh", "gelu_tanh": "gelu_tanh", "glu": "glu", "log_softmax": "log_softmax", "sum_dims": "sum_dims", "mean_dims": "mean_dims", "amax": "amax", "amin": "amin", "logsumexp": "logsumexp", "var": "var", "std": "std", "prod": "prod", "argmin": "argmin", "all_": "all", "any_": "any", "norm": "norm", "vector_norm": "vector_norm", "normalize": "normalize", "rms_norm": "rms_norm", "batch_norm": "batch_norm", "group_norm": "group_norm", "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "masked_fill": "masked_fill", "where_": "where_", "tril": "tril", "triu": "triu", "gather": "gather", "index_select": "index_select", "one_hot": "one_hot", "cross_entropy": "cross_entropy", "where_nonzero": "where_nonzero", "tensor_of_ints": "tensor_of_ints", "multinomial": "multinomial", "embedding": "embedding", "embedding_bag": "embedding_bag", "arange": "arange", "zeros": "zeros", "empty": "empty", "ones": "ones", "full": "full", "zeros_like": "zeros_like", "ones_like": "ones_like", "full_like": "full_like", "narrow": "narrow", "select": "select", "unflatten": "unflatten", "squeeze": "squeeze", "detach": "detach", "dropout_eval": "dropout", "conv1d": "conv1d", "conv2d": "conv2d", "max_pool1d": "max_pool1d", "max_pool2d": "max_pool2d", "avg_pool1d": "avg_pool1d", "avg_pool2d": "avg_pool2d", "adaptive_avg_pool1d": "adaptive_avg_pool1d", "adaptive_avg_pool2d": "adaptive_avg_pool2d", "adaptive_max_pool2d": "adaptive_max_pool2d", "pad": "pad", "sdpa": "scaled_dot_product_attention", "mha": "multi_head_attention_forward",
    "addmm": "addmm", "baddbmm": "baddbmm", "attention_scores": "matmul", "attention_values": "matmul", "residual_rank3": "add", "channel_gate": "mul", "conv1d_same": "conv1d_padding", "conv2d_same": "conv2d_padding", "conv_transpose2d": "conv_transpose2d", "interpolate": "interpolate", "to_dtype": "to_dtype", "repeat": "repeat", "clamp_tensor": "clamp_tensor", "max_dim": "max_dim", "min_dim": "min_dim", "topk": "topk", "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor", "logical_not": "logical_not", "categorical": "categorical", "categorical_probs": "categorical_probs", "categorical_log_prob": "categorical_log_prob", "categorical_entropy": "categorical_entropy", "categorical_mode": "categorical_mode", "normal": "normal", "normal_log_prob": "normal_log_prob", "normal_entropy": "normal_entropy", "normal_stddev": "normal_stddev",
    "scalar_tensor": "scalar_tensor", "pow_tensor": "pow_tensor", "scatter": "scatter", "isin": "isin", "sort": "sort", "argsort": "argsort", "cumsum": "cumsum", "nansum": "nansum", "clone": "clone", "roll": "roll", "atan": "atan", "meshgrid": "meshgrid", "einsum": "einsum",
    "flip": "flip", "repeat_interleave": "repeat_interleave", "tensordot": "tensordot", "div_mode": "div_mode", "unfold": "unfold",
    "sum_all": "sum_all", "mean_all": "mean_all", "max_all": "max_all", "min_all": "min_all", "argmax_all": "argmax_all",
    "argmin_all": "argmin_all", "prod_all": "prod_all", "std_all": "std_all", "var_all": "var_all",
    "sign": "sign", "floor": "floor", "outer": "outer", "linspace": "linspace", "remainder": "remainder", "conv_transpose1d": "conv_transpose1d",
}

ELEMENTWISE = ["relu", "sigmoid", "tanh", "gelu", "abs_", "neg", "square", "exp", "log", "sqrt",
               "add", "sub", "mul", "div", "add_row", "sum_rows", "sum_cols", "mean_rows", "mean_cols",
               "softmax", "argmax", "chain"]
#: Python-number operands and views, on a smaller grid (their cost is the call, not the data).
SMALL_GRID = ["mul_scalar", "rsub_scalar", "silu", "rsqrt", "erf", "softplus", "pow_number", "clamp", "clamp_min", "clamp_max", "maximum", "minimum", "cat", "stack", "expand", "expand_as", "view_as", "reshape_as", "view", "reshape", "permute", "transpose", "t", "unsqueeze", "flatten", "contiguous", "index"]
#: Two-part splits: the rows must be 2.
PARTS = ["chunk", "split", "unbind"]
SMALL_ROWS, SMALL_COLS = [1, 64, 1024], [64, 1024]
#: The op families on libtorch's kernels: the call is what native code adds, on a small grid
#: (rows × cols of the 2-D input; the other shapes follow from it in ``inputs``).
FAMILIES = ["log1p", "expm1", "sin", "cos", "relu6", "hardswish", "hardsigmoid", "mish", "selu", "elu", "leaky_relu", "hardtanh", "gelu_tanh", "glu", "log_softmax", "amax", "amin", "logsumexp", "var", "std", "prod", "argmin", "all_", "any_", "norm", "vector_norm", "normalize", "rms_norm", "batch_norm", "group_norm", "eq", "ne", "lt", "le", "gt", "ge", "masked_fill", "where_", "tril", "triu", "gather", "index_select", "one_hot", "cross_entropy", "where_nonzero", "tensor_of_ints", "multinomial", "embedding", "embedding_bag", "arange", "zeros", "empty", "ones", "full", "zeros_like", "ones_like", "full_like", "narrow", "select", "unflatten", "squeeze", "detach", "dropout_eval", "conv1d", "conv2d", "conv2d_relu", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "pad", "sdpa", "mha"]
FAMILIES += ["topk", "sum_dims", "mean_dims", "max_pool2d_plain"]
FAMILIES += ["addmm", "baddbmm", "attention_scores", "attention_values", "residual_rank3", "channel_gate", "conv1d_same", "conv2d_same", "conv_transpose2d", "interpolate", "to_dtype", "repeat", "clamp_tensor", "max_dim", "min_dim", "logical_and", "logical_or", "logical_xor", "logical_not", "categorical", "categorical_probs", "categorical_log_prob", "categorical_entropy", "categorical_mode", "normal", "normal_log_prob", "normal_entropy", "normal_stddev"]
FAMILIES += ["scalar_tensor", "pow_tensor"]
FAMILIES += ["scatter", "isin", "sort", "argsort", "cumsum", "nansum", "clone", "roll", "atan", "meshgrid", "einsum"]
FAMILIES += ["flip", "repeat_interleave", "tensordot", "div_mode", "unfold"]
FAMILIES += ["sum_all", "mean_all", "max_all", "min_all", "argmax_all", "argmin_all", "prod_all", "std_all", "var_all"]
FAMILIES += ["sign", "floor", "outer", "linspace", "remainder", "conv_transpose1d"]
FAMILY_ROWS, FAMILY_COLS = [1, 64], [64, 256]
PRODUCTS = ["linear", "matmul", "mm", "bmm", "layer_norm", "linear_tanh", "linear_silu", "linear_gelu", "linear_relu_mean", "matmul_bias_relu", "layer_loop"]

ROWS = [1, 8, 64, 256, 1024]
COLS = [16, 64, 256, 1024, 4096]
PRODUCT_ROWS = [1, 8, 64, 256]
PRODUCT_COLS = [16, 64, 256, 1024]
#: A GPT-style MLP block (d → 4d → d) at these batches and model widths d.
MLP_ROWS, MLP_WIDTHS = [1, 8, 64], [64, 128, 256]
#: A reinforcement-learning tanh policy, 17 → 64 → 64 → 6, at these batches.
POLICY_BATCHES = [1, 8, 64, 256]
QUICK_ROWS, QUICK_COLS = [1, 64], [64, 1024]


def cells(quick: bool = False) -> list[tuple[str, str, tuple]]:
    """Every cell as (id, function, shape), elementwise grid then products then the policy."""
    rows, cols = (QUICK_ROWS, QUICK_COLS) if quick else (ROWS, COLS)
    product_rows, product_cols = (QUICK_ROWS, QUICK_COLS) if quick else (PRODUCT_ROWS, PRODUCT_COLS)
    out = []
    for function in ELEMENTWISE:
        out += [(f"{function}@{r}x{c}", function, (r, c)) for r in rows for c in cols]
    small_rows, small_cols = (QUICK_ROWS[:1], QUICK_COLS[:1]) if quick else (SMALL_ROWS, SMALL_COLS)
    for function in SMALL_GRID:
        out += [(f"{function}@{r}x{c}", function, (r, c)) for r in small_rows for c in small_cols]
    for function in PARTS:
        out += [(f"{function}@2x{c}", function, (2, c)) for c in small_cols]
    family_rows, family_cols = (FAMILY_ROWS[:1], FAMILY_COLS[:1]) if quick else (FAMILY_ROWS, FAMILY_COLS)
    for function in FAMILIES:
        out += [(f"{function}@{r}x{c}", function, (r, c)) for r in family_rows for c in family_cols]
    for function in PRODUCTS:
        out += [(f"{function}@{r}x{c}", function, (r, c)) for r in product_rows for c in product_cols]
    mlp_rows, mlp_widths = (MLP_ROWS[:2], MLP_WIDTHS[:1]) if quick else (MLP_ROWS, MLP_WIDTHS)
    out += [(f"gpt_mlp@{r}x{d}", "gpt_mlp", (r, d)) for r in mlp_rows for d in mlp_widths]
    out += [(f"swiglu_mlp@{r}x{d}", "swiglu_mlp", (r, d)) for r in mlp_rows for d in mlp_widths]
    out += [(f"tanh_policy@{r}x17", "tanh_policy", (r, 17)) for r in (POLICY_BATCHES[:2] if quick else POLICY_BATCHES)]
    return out


def inputs(function: str, shape: tuple, generator: torch.Generator) -> tuple:
    """Deterministic arguments; weights scaled by 1/sqrt(fan-in), positive inputs for log/sqrt."""
    rows, cols = shape

    def randn(*size):
        return torch.randn(*size, generator=generator)

    def layer(fan_in, fan_out):
        return randn(fan_out, fan_in) / fan_in**0.5, randn(fan_out)

    x = randn(rows, cols)
    if function in FAMILY_INPUTS:
        return FAMILY_INPUTS[function](rows, cols, randn, generator)
    if function in ("log", "sqrt", "rsqrt"):
        return (x.abs() + 0.5,)
    if function in ("add", "sub", "mul", "div", "chain", "maximum", "minimum", "cat", "stack", "expand_as", "view_as", "reshape_as"):
        y = randn(rows, cols)
        return (x, y.abs() + 0.5 if function == "div" else y)
    if function == "add_row":
        return (x, randn(cols))
    if function in ("linear", "linear_tanh", "linear_silu", "linear_gelu", "linear_relu_mean", "layer_norm"):
        return (x, *layer(cols, cols))
    if function in ("matmul", "matmul_bias_relu", "layer_loop", "bmm", "mm"):
        w = randn(cols, cols) / cols**0.5
        rest = (randn(cols),) if function not in ("matmul", "bmm", "mm") else ()
        return (x, w, *rest, 4) if function == "layer_loop" else (x, w, *rest)
    if function == "gpt_mlp":
        return (x, *layer(cols, 4 * cols), *layer(4 * cols, cols))
    if function == "swiglu_mlp":
        hidden = 8 * cols // 3
        return (x, randn(hidden, cols) / cols**0.5, randn(cols, hidden) / hidden**0.5, randn(hidden, cols) / cols**0.5)
    if function == "tanh_policy":
        return (x, *layer(17, 64), *layer(64, 64), *layer(64, 6))
    return (x,)


def _family_inputs() -> dict:
    """The arguments of the op-family functions for a (rows, cols) cell."""
    channels = 8

    def ids(rows, count, generator):
        return torch.randint(0, count, (rows,), generator=generator)

    return {
        "log1p": lambda r, c, randn, g: (randn(r, c).abs(),),
        "rms_norm": lambda r, c, randn, g: (randn(r, c), randn(c)),
        "batch_norm": lambda r, c, randn, g: (randn(r, c), randn(c), randn(c).abs() + 0.5, randn(c), randn(c)),
        "group_norm": lambda r, c, randn, g: (randn(r, channels, c), randn(channels), randn(channels)),
        "sum_dims": lambda r, c, randn, g: (randn(r, channels, c),),
        "mean_dims": lambda r, c, randn, g: (randn(r, channels, 4, c // 4),),
        "eq": lambda r, c, randn, g: (randn(r, c).round(), randn(r, c).round()),
        "ne": lambda r, c, randn, g: (randn(r, c).round(), randn(r, c).round()),
        "lt": lambda r, c, randn, g: (randn(r, c), randn(r, c)),
        "ge": lambda r, c, randn, g: (randn(r, c), randn(r, c)),
        "all_": lambda r, c, randn, g: (randn(r, c) > -2,),
        "any_": lambda r, c, randn, g: (randn(r, c) > 2,),
        "masked_fill": lambda r, c, randn, g: (randn(r, c), randn(r, c) > 0),
        "where_": lambda r, c, randn, g: (randn(r, c) > 0, randn(r, c), randn(r, c)),
        "gather": lambda r, c, randn, g: (randn(r, c), torch.randint(0, c, (r, c), generator=g)),
        "index_select": lambda r, c, randn, g: (randn(r, c), ids(r, r, g)),
        # a permutation per row (top-p's sorted indices): no two writes meet
        "scatter": lambda r, c, randn, g: (randn(r, c), torch.argsort(randn(r, c), dim=1), randn(r, c)),
        "meshgrid": lambda r, c, randn, g: (randn(r), randn(c)),
        "einsum": lambda r, c, randn, g: (randn(r, c), randn(c, c) / c**0.5),
        "tensordot": lambda r, c, randn, g: (randn(r, c), randn(c, c) / c**0.5),
        "isin": lambda r, c, randn, g: (torch.randint(0, 1000, (r, c), generator=g), torch.randint(0, 1000, (16,), generator=g)),
        "one_hot": lambda r, c, randn, g: (ids(r * c // 16 or 1, 16, g),),
        "cross_entropy": lambda r, c, randn, g: (randn(r, c), ids(r, c, g)),
        "where_nonzero": lambda r, c, randn, g: (randn(r * c),),
        "tensor_of_ints": lambda r, c, randn, g: (randn(r, c),),
        "multinomial": lambda r, c, randn, g: (randn(r, c).softmax(dim=-1),),
        "embedding": lambda r, c, randn, g: (ids(r, 1000, g), randn(1000, c)),
        # r bags of 4 ids each into a 1000-row table (DLRM's lookup)
        "embedding_bag": lambda r, c, randn, g: (ids(4 * r, 1000, g), randn(1000, c), torch.arange(0, 4 * r, 4)),
        "conv1d": lambda r, c, randn, g: (randn(r, channels, c), randn(channels, channels, 3) / 5, randn(channels)),
        "conv2d": lambda r, c, randn, g: (randn(r, channels, 16, c // 16), randn(channels, channels, 3, 3) / 8, randn(channels)),
        "conv2d_relu": lambda r, c, randn, g: (randn(r, channels, 16, c // 16), randn(channels, channels, 3, 3) / 8, randn(channels)),
        "max_pool1d": lambda r, c, randn, g: (randn(r, channels, c),),
        "avg_pool1d": lambda r, c, randn, g: (randn(r, channels, c),),
        "adaptive_avg_pool1d": lambda r, c, randn, g: (randn(r, channels, c),),
        "pad": lambda r, c, randn, g: (randn(r, channels, c),),
        "max_pool2d": lambda r, c, randn, g: (randn(r, channels, 16, c // 16),),
        "max_pool2d_plain": lambda r, c, randn, g: (randn(r, channels, 16, c // 16),),
        "avg_pool2d": lambda r, c, randn, g: (randn(r, channels, 16, c // 16),),
        "adaptive_avg_pool2d": lambda r, c, randn, g: (randn(r, channels, 16, c // 16),),
        "adaptive_max_pool2d": lambda r, c, randn, g: (randn(r, channels, 16, c // 16),),
        "sdpa": lambda r, c, randn, g: tuple(randn(r, 4, 16, c // 4) for _ in range(3)),
        # sequence 16 (first), batch r, width c / 4 over four heads
        "mha": lambda r, c, randn, g: (
            randn(16, r, c // 4), randn(3 * (c // 4), c // 4) / (c // 4) ** 0.5, randn(3 * (c // 4)), randn(c // 4, c // 4) / (c // 4) ** 0.5, randn(c // 4)
        ),
        "addmm": lambda r, c, randn, g: (randn(c), randn(r, c), randn(c, c) / c**0.5),
        "baddbmm": lambda r, c, randn, g: (randn(r, 16, 16), randn(r, 16, c // 4), randn(r, c // 4, 16)),
        # four heads of sequence 16 (the products of attention by hand)
        "attention_scores": lambda r, c, randn, g: (randn(r, 4, 16, c // 4), randn(r, 4, 16, c // 4)),
        "attention_values": lambda r, c, randn, g: (randn(r, 4, 16, 16).softmax(dim=-1), randn(r, 4, 16, c // 4)),
        # a residual over sequence 16, and an 8-channel gate over 16-row feature maps
        "residual_rank3": lambda r, c, randn, g: (randn(r, 16, c), randn(r, 16, c), randn(c)),
        "channel_gate": lambda r, c, randn, g: (randn(r, channels, 16, c // 16), randn(r, channels, 1, 1)),
        "conv1d_same": lambda r, c, randn, g: (randn(r, channels, c), randn(channels, channels, 3) / 5),
        "conv2d_same": lambda r, c, randn, g: (randn(r, channels, 16, c // 16), randn(channels, channels, 3, 3) / 8),
        "conv_transpose2d": lambda r, c, randn, g: (randn(r, channels, 16, c // 16), randn(channels, channels, 2, 2) / 4),
        "interpolate": lambda r, c, randn, g: (randn(r, channels, 16, c // 16),),
        "clamp_tensor": lambda r, c, randn, g: (randn(r, c), randn(r, c)),
        "pow_tensor": lambda r, c, randn, g: (randn(r, c).abs() + 0.5, randn(r, c)),
        "logical_and": lambda r, c, randn, g: (randn(r, c) > 0, randn(r, c) > 0),
        "logical_or": lambda r, c, randn, g: (randn(r, c) > 0, randn(r, c) > 0),
        "logical_xor": lambda r, c, randn, g: (randn(r, c) > 0, randn(r, c) > 0),
        "logical_not": lambda r, c, randn, g: (randn(r, c) > 0,),
        "categorical_log_prob": lambda r, c, randn, g: (randn(r, c), ids(r, c, g)),
        "normal": lambda r, c, randn, g: (randn(r, c), randn(r, c).abs() + 0.1),
        "normal_log_prob": lambda r, c, randn, g: (randn(r, c), randn(r, c).abs() + 0.1, randn(r, c)),
        "normal_entropy": lambda r, c, randn, g: (randn(r, c), randn(r, c).abs() + 0.1),
        "normal_stddev": lambda r, c, randn, g: (randn(r, c), randn(r, c).abs() + 0.1),
    }


FAMILY_INPUTS = _family_inputs()
