# torch.topk / t.topk (extension torchlower/topk): the (values, indices) pair, unpacked,
# returned or indexed, as nanoGPT's and minGPT's samplers write it.
from torchlower.types import TensorF32Cpu2D, TensorI64Cpu2D
import torch
import torch.nn.functional as F


def top_values(logits: TensorF32Cpu2D, k: int) -> TensorF32Cpu2D:
    v, _ = torch.topk(logits, k)
    return v


def bottom_pair(x: TensorF32Cpu2D) -> tuple[TensorF32Cpu2D, TensorI64Cpu2D]:
    return x.topk(2, dim=0, largest=False)


def kth_threshold(logits: TensorF32Cpu2D, k: int) -> TensorF32Cpu2D:
    return torch.topk(logits, k, dim=-1, sorted=True)[0][:, -1:]


def top_indices(x: TensorF32Cpu2D) -> TensorI64Cpu2D:
    return x.topk(3).indices


def kept_pair(x: TensorF32Cpu2D) -> tuple[TensorF32Cpu2D, TensorI64Cpu2D]:
    # eager returns `torch.return_types.topk` (with `.values` / `.indices`), kept through a
    # local and an alias; the entry builds the same record
    best = x.topk(2, dim=1)
    kept = best
    return kept


def pair_fields(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    best = torch.topk(x, 2)
    return best.values * best[1].float() + best.indices


def pair_from_helper(x: TensorF32Cpu2D) -> tuple[TensorF32Cpu2D, TensorI64Cpu2D]:
    # the helper's record is the caller's (`torch.return_types.topk` again)
    return kept_pair(x * 2.0)


def pair_as_tuple(x: TensorF32Cpu2D) -> tuple[TensorF32Cpu2D, TensorI64Cpu2D]:
    # `tuple(record)` is a plain tuple
    best = x.topk(2)
    return tuple(best)


# Mixtral's router: the top-k values are a fresh result, divided in place
def renormalized_top(router_logits: TensorF32Cpu2D, top_k: int) -> tuple[TensorF32Cpu2D, TensorI64Cpu2D]:
    routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
    routing_weights, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
    routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
    return routing_weights, selected_experts
