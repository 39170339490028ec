"""Views returned by native code alias their input exactly as eager's do: the same storage,
data pointer, strides and storage offset, and a write through the native result is seen in
the input (and the reverse) exactly where eager's view sees it. Also: tuple returns, shape
queries, and view errors with eager's types and messages."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import torchlower
from test_native_cpu import REPO, import_path

VIEWS = REPO / "tests" / "corpus" / "accepted" / "views.py"


def compile_native(module, names: list[str]) -> dict:
    """``torchlower.compile`` of each named function of ``module``, each checked native."""
    compiled = {name: torchlower.compile(getattr(module, name)) for name in names}
    for name, fn in compiled.items():
        assert fn.route == "native", f"{name}: {fn.reason}"
    return compiled


@pytest.fixture(scope="module")
def views():
    module = import_path(VIEWS)
    names = ["transpose", "view", "reshape", "split_heads", "merge_heads", "shape_tuple", "unsqueezed_mask", "matrix_t", "t_views", "numbers_of_a_shape", "pair",
             "narrow_view", "select_view", "unflatten_view", "squeeze_view", "detach_view"]
    return module, compile_native(module, names)


def layout(t: torch.Tensor, base: torch.Tensor) -> tuple:
    """Where `t` lies relative to `base`'s storage."""
    return (t.untyped_storage().data_ptr() == base.untyped_storage().data_ptr(), t.data_ptr() - base.data_ptr(), t.stride(), t.storage_offset(), t.shape)


@pytest.mark.parametrize(
    "name,make,args",
    [
        ("transpose", lambda: torch.randn(4, 6), ()),
        ("view", lambda: torch.randn(4, 6), ()),
        ("reshape", lambda: torch.randn(5, 6), ()),
        ("split_heads", lambda: torch.randn(2, 3, 8), (2,)),
        ("shape_tuple", lambda: torch.randn(2, 3, 8), (4,)),
        ("unsqueezed_mask", lambda: torch.randint(0, 9, (3, 4)), ()),
        ("narrow_view", lambda: torch.randn(4, 6), (3,)),
        ("narrow_view", lambda: torch.randn(6, 4).t(), (2,)),
        ("select_view", lambda: torch.randn(3, 4, 5), ()),
        ("unflatten_view", lambda: torch.randn(3, 8), ()),
        ("squeeze_view", lambda: torch.randn(3, 1, 5), ()),
        ("squeeze_view", lambda: torch.randn(3, 5, 1).transpose(1, 2), ()),
        ("detach_view", lambda: torch.randn(3, 5), ()),
    ],
)
def test_views_alias_their_input_as_eager(views, name, make, args):
    module, compiled = views
    x_native, x_eager = make(), None
    x_eager = x_native.clone()
    native = compiled[name](x_native, *args)
    eager = getattr(module, name)(x_eager, *args)
    assert torch.equal(native, eager)
    assert layout(native, x_native) == layout(eager, x_eager)
    # a write through the result lands in the input, as with eager's view
    corner = (-1,) * native.dim()
    native[corner] = 42 if native.is_floating_point() else 7
    eager[corner] = 42 if eager.is_floating_point() else 7
    assert torch.equal(x_native, x_eager)


@pytest.mark.parametrize("make", [lambda: torch.randn(4, 6), lambda: torch.randn(6, 4).t(), lambda: torch.randn(4, 1)[1:]])
def test_t_is_eagers_view_at_rank_1_and_2(views, make):
    module, compiled = views
    w, v = make(), torch.randn(8)[::2]
    native, eager = compiled["t_views"](w, v), module.t_views(w, v)
    for n, e, base in zip(native, eager, (w, v)):
        assert torch.equal(n, e)
        assert layout(n, base) == layout(e, base)


def test_reshape_of_a_non_contiguous_input_copies_as_eager(views):
    module, compiled = views
    x = torch.randn(6, 5).t()
    native, eager = compiled["reshape"](x), module.reshape(x)
    assert torch.equal(native, eager)
    assert (native.data_ptr() == x.data_ptr()) == (eager.data_ptr() == x.data_ptr())


def test_view_errors_are_eagers(views, native_mode):
    module, compiled = views
    x = torch.randn(6, 5).t()  # no view of this layout has shape (-1,)
    with pytest.raises(RuntimeError) as eager:
        module.view(x)
    with pytest.raises(RuntimeError) as native:
        compiled["view"](x)
    assert str(native.value) == str(eager.value)
    y = torch.randn(2, 3, 7)  # 7 // 2 heads does not fill the last dim
    with pytest.raises(RuntimeError) as eager:
        module.split_heads(y, 2)
    with pytest.raises(RuntimeError) as native:
        compiled["split_heads"](y, 2)
    assert str(native.value) == str(eager.value)


def test_tuple_returns_and_shape_numbers(views):
    module, compiled = views
    x = torch.randn(3, 4)
    native, eager = compiled["pair"](x), module.pair(x)
    assert isinstance(native, tuple) and len(native) == 2
    for a, b in zip(native, eager):
        assert torch.equal(a, b)
    y = torch.randn(2, 3, 5)
    assert compiled["numbers_of_a_shape"](y) == module.numbers_of_a_shape(y)
    assert type(compiled["numbers_of_a_shape"](y)) is int


INDEXING = REPO / "tests" / "corpus" / "accepted" / "indexing.py"


@pytest.fixture(scope="module")
def indexing():
    module = import_path(INDEXING)
    names = ["cls_token", "last_token", "first_k", "strided", "mask_4d", "window", "pick", "rotate_half", "vector_slice"]
    return module, compile_native(module, names)


@pytest.mark.parametrize(
    "name,make,args",
    [
        ("cls_token", lambda: torch.randn(2, 3, 4), ()),
        ("last_token", lambda: torch.randn(2, 3, 4), ()),
        ("first_k", lambda: torch.randn(2, 3, 4), (2,)),
        ("first_k", lambda: torch.randn(2, 3, 4), (-1,)),
        ("first_k", lambda: torch.randn(2, 3, 4), (99,)),
        ("strided", lambda: torch.randn(7, 8), ()),
        ("strided", lambda: torch.randn(7, 8).t(), ()),
        ("mask_4d", lambda: torch.randint(0, 2, (2, 5)), ()),
        ("window", lambda: torch.randn(6, 3), (1, 3)),
        ("window", lambda: torch.randn(6, 3), (-4, 100)),
        ("vector_slice", lambda: torch.randn(5), ()),
    ],
)
def test_indexing_aliases_its_input_as_eager(indexing, name, make, args):
    module, compiled = indexing
    x_native = make()
    # the same layout as the native input (a transposed view stays one)
    x_eager = x_native.t().clone().t() if not x_native.is_contiguous() else x_native.clone()
    native = compiled[name](x_native, *args)
    eager = getattr(module, name)(x_eager, *args)
    assert torch.equal(native, eager)
    assert layout(native, x_native) == layout(eager, x_eager)
    if native.numel():
        corner = (0,) * native.dim()
        native[corner] = 42 if native.is_floating_point() else 7
        eager[corner] = 42 if eager.is_floating_point() else 7
        assert torch.equal(x_native, x_eager)


@pytest.mark.parametrize("i", [3, -4, 100])
def test_index_errors_are_eagers(indexing, native_mode, i):
    module, compiled = indexing
    x = torch.randn(3, 2, 4)
    with pytest.raises(IndexError) as eager:
        module.pick(x, i)
    with pytest.raises(IndexError) as native:
        compiled["pick"](x, i)
    assert str(native.value) == str(eager.value)


def test_slice_with_a_computed_bound_matches_eager(indexing):
    module, compiled = indexing
    x = torch.randn(2, 3, 8, 6)
    native, eager = compiled["rotate_half"](x), module.rotate_half(x)
    assert torch.equal(native, eager)


def test_unpacking_parts_matches_eager_and_its_errors(views, native_mode):
    module, _ = views
    glu = torchlower.compile(module.glu)
    unbind = torchlower.compile(module.qkv_unbind)
    assert glu.route == "native" and unbind.route == "native"
    x = torch.randn(3, 8)
    assert torch.equal(glu(x), module.glu(x))
    for odd in (torch.randn(3, 1), torch.randn(3, 0), torch.randn(3, 3)):
        try:
            want = module.glu(odd)
        except ValueError as eager:
            with pytest.raises(ValueError) as native:
                glu(odd)
            assert str(native.value) == str(eager)
        else:
            got = glu(odd)
            assert got.shape == want.shape and torch.equal(got, want)
    y = torch.randn(4, 2, 3, 5)
    with pytest.raises(ValueError) as eager:
        module.qkv_unbind(y)
    with pytest.raises(ValueError) as native:
        unbind(y)
    assert str(native.value) == str(eager.value)
    z = torch.randn(3, 2, 3, 5)
    assert torch.equal(unbind(z), module.qkv_unbind(z))


def test_squeeze_of_a_dim_that_is_not_one_refuses_and_auto_mode_reruns_python(views, monkeypatch):
    """Eager keeps a dim of size 2 (the rank stays 3); native code refuses with a ValueError
    instead of returning a rank the annotation does not allow, and auto mode reruns Python."""
    module, compiled = views
    x = torch.randn(3, 2, 5)
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    with pytest.raises(ValueError, match="squeeze"):
        compiled["squeeze_view"](x)
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    assert torch.equal(compiled["squeeze_view"](x), module.squeeze_view(x))


def test_narrow_select_unflatten_errors_are_eagers(views, native_mode):
    module, compiled = views
    for name, x, args in [("narrow_view", torch.randn(4, 3), (5,)), ("select_view", torch.randn(3, 4, 5), ()), ("unflatten_view", torch.randn(3, 7), ())]:
        x = x if name != "select_view" else torch.randn(0, 4, 5)
        with pytest.raises(Exception) as eager:
            getattr(module, name)(x, *args)
        with pytest.raises(type(eager.value)) as native:
            compiled[name](x, *args)
        assert str(native.value) == str(eager.value)


ADVANCED = REPO / "tests" / "corpus" / "accepted" / "advanced_indexing.py"


@pytest.fixture(scope="module")
def advanced():
    module = import_path(ADVANCED)
    names = ["rows", "last_step", "pick_per_row", "gather_2d", "masked_rows", "masked_values"]
    return module, compile_native(module, names)


@pytest.mark.parametrize(
    "name,make",
    [
        ("rows", lambda: (torch.randn(5, 3), torch.tensor([4, 0, -1, 2, 2]))),
        ("rows", lambda: (torch.randn(3, 5).t(), torch.tensor([1, 1]))),
        ("last_step", lambda: (torch.randn(2, 4, 3),)),
        ("pick_per_row", lambda: (torch.randn(3, 4, 2), torch.tensor([1, 0, 3]))),
        ("gather_2d", lambda: (torch.randn(6, 2), torch.tensor([[0, 5], [-6, 3]]))),
        ("masked_rows", lambda: (torch.randn(4, 3), torch.tensor([True, False, True, True]))),
        ("masked_rows", lambda: (torch.randn(4, 3), torch.zeros(4, dtype=torch.bool))),
        ("masked_values", lambda: (torch.randn(3, 3), torch.rand(3, 3) > 0.5)),
    ],
)
def test_advanced_indexing_gathers_a_copy_as_eager(advanced, name, make):
    module, compiled = advanced
    args = make()
    native = compiled[name](*args)
    eager = getattr(module, name)(*args)
    assert torch.equal(native, eager) and native.shape == eager.shape
    # a gathered copy: writing through it leaves the input alone, as in eager
    before = args[0].clone()
    if native.numel():
        native.view(-1)[0] = 42.0
    assert torch.equal(args[0], before)


@pytest.mark.parametrize(
    "name,make",
    [
        ("rows", lambda: (torch.randn(5, 3), torch.tensor([5]))),
        ("rows", lambda: (torch.randn(5, 3), torch.tensor([-6, 0]))),
        ("pick_per_row", lambda: (torch.randn(3, 4, 2), torch.tensor([1, 0, 4]))),
        ("masked_rows", lambda: (torch.randn(4, 3), torch.tensor([True, False]))),
    ],
)
def test_advanced_index_errors_are_eagers(advanced, native_mode, name, make):
    module, compiled = advanced
    args = make()
    with pytest.raises(Exception) as eager:
        getattr(module, name)(*args)
    with pytest.raises(Exception) as native:
        compiled[name](*args)
    assert type(native.value) is type(eager.value)
    assert str(native.value).splitlines()[0] == str(eager.value).splitlines()[0]


ASSIGNMENT = REPO / "tests" / "corpus" / "accepted" / "index_assignment.py"


@pytest.fixture(scope="module")
def assignment():
    module = import_path(ASSIGNMENT)
    names = ["top_k_filter", "zero_first_column", "copy_rows", "mask_fill_by_index"]
    return module, compile_native(module, names)


@pytest.mark.parametrize(
    "name,make",
    [
        ("top_k_filter", lambda: (torch.randn(3, 10), 0.7, 4)),
        ("top_k_filter", lambda: (torch.randn(3, 10), 1.0, 50)),
        ("zero_first_column", lambda: (torch.randn(4, 3).t(),)),
        ("copy_rows", lambda: (torch.randn(5, 3), torch.tensor([4, 0]), torch.randn(2, 3))),
        ("copy_rows", lambda: (torch.randn(5, 3), torch.tensor([1, 1]), torch.randn(1, 3))),
        ("mask_fill_by_index", lambda: (torch.randn(3, 3), torch.rand(3, 3) > 0.5)),
    ],
)
def test_index_assignment_matches_eager_and_leaves_inputs_alone(assignment, name, make):
    module, compiled = assignment
    args = make()
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    native = compiled[name](*args)
    for a, b in zip(args, before):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a, b), "input mutated"
    assert torch.equal(native, getattr(module, name)(*args))


@pytest.mark.parametrize(
    "make",
    [
        lambda: (torch.randn(5, 3), torch.tensor([5]), torch.randn(1, 3)),
        lambda: (torch.randn(5, 3), torch.tensor([1, 2]), torch.randn(3, 3)),
    ],
)
def test_index_assignment_errors_are_eagers(assignment, native_mode, make):
    module, compiled = assignment
    args = make()
    with pytest.raises(Exception) as eager:
        module.copy_rows(*args)
    with pytest.raises(Exception) as native:
        compiled["copy_rows"](*args)
    assert type(native.value) is type(eager.value)
    assert str(native.value).splitlines()[0] == str(eager.value).splitlines()[0]


CLONES = REPO / "tests" / "corpus" / "accepted" / "sorting_and_scatter.py"


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.randn(3, 4),
        lambda: torch.randn(4, 3).t(),  # dense, transposed: eager's clone keeps the strides
        lambda: torch.randn(3, 1).expand(3, 4),  # overlapping: a contiguous copy
        lambda: torch.randn(3, 8)[:, ::2],  # not dense: a contiguous copy
    ],
)
def test_clone_is_a_fresh_copy_with_eagers_layout(make, native_mode):
    """`t.clone()` (torchlower/clone): new storage, eager's `preserve_format` strides, so a
    `.view()` after it succeeds or raises exactly as on eager's clone; writing into the
    copy leaves the input alone."""
    source = (
        "import torch\nfrom torchlower.types import TensorF32Cpu2D\n\n"
        "def copy(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x.clone()\n\n"
        "def copy_then_view(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    y = x.clone()\n    y[0, 0] = 7.0\n    return y.view(-1, 2)\n"
    )
    module = import_path(_write(source, "clones"))
    copy, copy_then_view = compile_native(module, ["copy", "copy_then_view"]).values()
    x = make()
    before = x.clone()
    native, eager = copy(x), module.copy(x)
    assert native.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert native.stride() == eager.stride() and torch.equal(native, eager)
    try:
        want = module.copy_then_view(x)
    except RuntimeError as error:
        with pytest.raises(RuntimeError) as raised:
            copy_then_view(x)
        assert str(raised.value) == str(error)
    else:
        got = copy_then_view(x)
        assert torch.equal(got, want) and got.stride() == want.stride()
    assert torch.equal(x, before), "the input was written"


def _write(source: str, stem: str) -> Path:
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="tl_clone_"))
    path = folder / f"{stem}.py"
    path.write_text(source)
    return path
