# Import and annotation spellings: module aliases, from-imports of functions, fully dotted markers.
import torch as t
import torchlower.types as T
import rextio_torch.types
from torch import matmul, relu as r
from torch.nn import functional as G
from torch.nn.functional import linear
from torchlower import types as tt


def aliases(x: T.TensorF32Cpu2D, w: rextio_torch.types.TensorF32Cpu2D, b: tt.TensorF32Cpu1D) -> T.TensorF32Cpu1D:
    h = linear(x, w, b)
    h = r(h)
    h = G.gelu(h)
    h = matmul(h, w)
    return t.nn.functional.softmax(h, dim=1).sum(dim=0)
