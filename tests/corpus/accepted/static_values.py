# Static values of real code (issue: the language of real inference code): a tensor's dtype
# and device are known from its annotation, so `dtype = x.dtype`, `x.to(dtype)` back to its
# own dtype, `device=x.device`, `x.device.type != "mps"` and string locals are decided while
# analysing and leave no code behind.
import torch
import torch.nn.functional as F
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cpu4D, TensorI64Cpu1D, TensorI64Cpu2D


def rms_norm(hidden: TensorF32Cpu2D, weight: TensorF32Cpu2D, eps: float) -> TensorF32Cpu2D:
    input_dtype = hidden.dtype
    hidden = hidden.to(torch.float32)
    variance = hidden.pow(2).mean(-1, keepdim=True)
    hidden = hidden * torch.rsqrt(variance + eps)
    return weight * hidden.to(input_dtype)


def same_device_and_dtype(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    y = y.to(dtype=x.dtype, device=x.device)
    device = x.device
    return x + y.to(device)


def device_branch(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    if x.device.type != "mps":
        return F.gelu(x)
    return F.gelu(x.float()).to(dtype=x.dtype)


def string_locals(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    approximate = "none"
    if x.is_cuda:
        approximate = "tanh"
    return F.gelu(x, approximate=approximate)


def dtype_membership_and_isinstance(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    if w.dtype in [torch.float16, torch.bfloat16]:
        x = x.to(w.dtype)
    if isinstance(w, torch.Tensor) and x.dtype != w.dtype and w.dtype not in (torch.int8,):
        x = x.to(w.dtype)
    return x.type(torch.float32) @ w.type(x.dtype)


def float_of_strings(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.clamp(float("-inf"), float(" 1e3 ")) * float("1.5")


def upcast(t: TensorF32Cpu2D) -> TensorF32Cpu2D:
    if t.is_floating_point():
        return t if t.dtype in (torch.float32, torch.float64) else t.float()
    else:
        return t if t.dtype in (torch.int32, torch.int64) else t.int()


def sum_independent_dims(tensor: TensorF32Cpu2D) -> TensorF32Cpu1D:
    if len(tensor.shape) > 1:
        tensor = tensor.sum(dim=1)
    else:
        tensor = tensor.sum()
    return tensor


def tanh_bijector_inverse(y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    eps = torch.finfo(y.dtype).eps
    y = y.clamp(min=-1.0 + eps, max=1.0 - eps)
    return 0.5 * (y.log1p() - (-y).log1p()) + torch.finfo(torch.float32).min * 0.0


def checked_patches(x: TensorF32Cpu2D, image_size: int) -> TensorF32Cpu2D:
    h, w = x.shape
    torch._assert(h == image_size, f"Wrong image height! Expected {image_size} but got {h}!")
    return x


def extended_attention_mask(attention_mask: TensorI64Cpu2D) -> TensorF32Cpu4D:
    dtype = torch.float32
    extended = attention_mask[:, None, None, :]
    extended = extended.to(dtype=dtype)
    return (1.0 - extended) * torch.finfo(dtype).min


def conversions(x: TensorF32Cpu2D, labels: TensorI64Cpu1D) -> TensorF32Cpu2D:
    as_int = x.long()
    flags = x.bool()
    back = as_int.float() + flags.to(torch.float32) + flags.type(torch.float32) + labels.type_as(x)
    return back + (x > 0).to(x.dtype) + x.to(device=x.device, dtype=torch.float32)


# LLaMA's rotary embedding: a static string tested with `isinstance(…, str)` and `and`, a block
# under `torch.autocast(…, enabled=False)` (native code computes in the annotated dtypes, as
# eager does with autocast off), a shape built with `*` from another.
def rotary_like(x: TensorF32Cpu2D, inv_freq: TensorF32Cpu1D) -> TensorF32Cpu2D:
    device_type = x.device.type
    device_type = device_type if isinstance(device_type, str) and device_type != "mps" else "cpu"
    with torch.autocast(device_type=device_type, enabled=False):
        freqs = x * inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
    with torch.no_grad():
        shape = (*x.shape[:-1], -1, 2)
    return emb.cos().view(shape).sum(dim=-1)


def to_another_tensor(cache: TensorF32Cpu2D, x: TensorF32Cpu2D, ids: TensorI64Cpu1D) -> TensorF32Cpu2D:
    # Llama's `cache_k.to(xq)`: the other tensor's dtype and device (itself when they match)
    cache = cache.to(x)
    return cache + ids.to(x) + (x > 0).to(cache)
