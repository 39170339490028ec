# Statements and scalar expressions outside the lowerable subset.
from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D
import torch
import torch.nn.functional as F


def with_print(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    print(x)
    return x


def nested_unpacking(x: TensorF32Cpu2D, y: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # a value reads a name the targets bind: not walked element by element
    a = y
    a, (b, c) = x, (a, y)
    return a


def try_block(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    try:
        return x.relu()
    except RuntimeError:
        return x


def loop_over_tensor(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    for row in x:
        pass
    return x


def nested_def(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    def inner(y):
        return y
    return x


def lambda_expr(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    f = lambda y: y
    return x


def global_read(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x + SCALE


def float_modulo(t: float) -> float:
    return t % 2.0


def complex_local(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    s = 0.5j
    return x


def maybe_unbound(x: TensorF32Cpu2D, c: bool) -> TensorF32Cpu2D:
    if c:
        y = x.relu()
    return y


def loop_type_change(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    h = x
    for i in range(n):
        h = h.sum(dim=1)
    return x


def huge_literal(n: int) -> int:
    return n + 100000000000000000000


def scalar_power(n: int) -> float:
    return n ** -1


def conditional_expression(x: TensorF32Cpu2D, c: bool) -> TensorF32Cpu2D:
    return x if c else 1.0


def factorial(n: int) -> int:
    return 1 if n <= 1 else n * factorial(n - 1)


def calls_factorial(n: int) -> int:
    return factorial(n) + 1


def keyword_order(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return calls_scale(by=x.relu(), h=x.sigmoid())


def calls_scale(h: TensorF32Cpu2D, by: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cumprod(h * by, dim=0)


# Only contexts that change nothing native code computes are transparent (`torch.no_grad()`,
# `torch.inference_mode()`, `torch.autocast(…, enabled=False)`): autocast on would compute
# in another dtype, `enable_grad` would record grad.
def autocast_on(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    with torch.autocast(device_type="cpu"):
        y = x @ x
    return y


def enable_grad(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    with torch.enable_grad():
        y = x * 2.0
    return y


class ShapeError(Exception):
    pass


# `raise` forms that stay Python: a class of the module, a cause, a re-raise, several arguments.
def raise_own_class(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    if n < 0:
        raise ShapeError("negative")
    return x


def raise_from(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    if n < 0:
        raise ValueError("negative") from None
    return x


def raise_two_arguments(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    if n < 0:
        raise ValueError("negative", n)
    return x


def append_to_an_alias(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # `b` sees the append in Python: the walk does not follow aliases, so it refuses
    a = []
    b = a
    a.append(x)
    return torch.cat(b + [x], dim=0)


def append_in_a_loop(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    parts = [x]
    for i in range(n):
        parts.append(x * i)
    return torch.cat(parts, dim=1)


def append_to_a_tuple(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    parts = (x,)
    parts.append(x)
    return torch.cat(parts, dim=1)


def list_plus_tuple(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # eager raises TypeError: can only concatenate list (not "tuple") to list
    parts = [x] + (x,)
    return torch.cat(parts, dim=1)


def list_where_a_tuple_is_promised(x: TensorF32Cpu2D) -> tuple[TensorF32Cpu2D, TensorF32Cpu2D]:
    return [x, x + 1]


def list_of_a_tensor(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    rows = list(x)
    return torch.cat(rows, dim=0)


def read_after_del(x: TensorF32Cpu2D, c: bool) -> TensorF32Cpu2D:
    y = x + 1
    if c:
        del y
    return y


def del_twice(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    y = x + 1
    del y
    del y
    return x


def del_an_element(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    parts = [x, x]
    del parts[0]
    return x


def del_in_a_loop(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    y = x + 1
    for i in range(n):
        del y
    return x


def writes_the_callers_list(x: TensorF32Cpu2D, sizes: list[int, int]) -> TensorF32Cpu2D:
    # the caller's list would change: only a new list is written
    sizes[0] = 1
    return x.reshape(sizes[0], -1)


def writes_a_tuple(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    sizes = (1, -1)
    sizes[0] = 2
    return x.reshape(sizes)


# `torch.tensor` of a comprehension: only `for name in range(…)` loops without `if` (TL303),
# and names no other local of the function has
def comprehension_with_if(n: int) -> TensorI64Cpu1D:
    return torch.tensor([i for i in range(n) if i % 2])


def comprehension_name_shared(n: int) -> TensorI64Cpu1D:
    i = n + 1
    return torch.tensor([i for i in range(n)]) + i


# List comprehensions are unrolled only over items known while analysing, read again freely
def comprehension_over_a_tensor(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # iterating a tensor: its rows are known only at run time
    return torch.stack([row * 2.0 for row in x])


def comprehension_of_computed_items(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # the items are computed: substituting them would compute each once per use
    return torch.cat([t + t for t in (x.relu(), x.exp())], dim=0)


def comprehension_with_run_time_filter(x: TensorF32Cpu2D, n: int) -> TensorF32Cpu2D:
    return torch.cat([x * float(i) for i in range(3) if i < n], dim=0)


def comprehension_of_two_clauses(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return torch.cat([x * float(i * j) for i in range(2) for j in range(2)], dim=0)


def comprehension_target_shadows_a_builtin(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    # `len` inside is the item, not the builtin
    return torch.cat([x * float(len) for len in (1, 2)], dim=0)


def comprehension_nested_in_a_comprehension(n: int) -> TensorI64Cpu1D:
    # the inner comprehension binds `i` again
    return torch.cat([torch.tensor([i for i in range(4)]) for i in range(2)], dim=0)
