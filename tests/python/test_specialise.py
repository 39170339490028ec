"""Unannotated functions through torchlower.compile: specialised on each call's argument types
(torchlower._specialise), routed native where the annotated version would be, equal to eager
on every call, and bounded in how many specialisations one function gets."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch

import torchlower
from torchlower import _specialise
from test_native_cpu import assert_matches_eager, import_path

CASES = Path(__file__).resolve().parent / "native_cases"


@pytest.fixture(scope="module")
def module():
    return import_path(CASES / "unannotated.py")


def mlp_inputs(*batch):
    return (torch.randn(*batch, 8), torch.randn(16, 8), torch.randn(16), torch.randn(8, 16), torch.randn(8))


def test_an_unannotated_function_is_specialised_per_argument_types(module):
    compiled = torchlower.compile(module.gelu_mlp)
    assert compiled.route == "specialising"
    for batch in [(4,), (2, 3), (4,)]:
        args = mlp_inputs(*batch)
        assert_matches_eager(compiled(*args), module.gelu_mlp(*args))
        assert_matches_eager(compiled(*args, scale=0.25), module.gelu_mlp(*args, scale=0.25))
    routes = {key: routed.route for key, routed in compiled.specialisations.items()}
    # rank 2 and rank 3 inputs: one specialisation each (the default `scale` is a float)
    assert routes == {
        ("TensorF32Cpu2D", "TensorF32Cpu2D", "TensorF32Cpu1D", "TensorF32Cpu2D", "TensorF32Cpu1D", "float"): "native",
        ("TensorF32Cpu3D", "TensorF32Cpu2D", "TensorF32Cpu1D", "TensorF32Cpu2D", "TensorF32Cpu1D", "float"): "native",
    }, routes


def test_python_scalars_specialise_by_their_own_type(module):
    compiled = torchlower.compile(module.scaled)
    x = torch.randn(3, 4)
    for n, flag in [(2, True), (2.5, False), (3, False)]:
        assert_matches_eager(compiled(x, n, flag), module.scaled(x, n, flag))
    # an int and a float `n` are two specialisations (`bool` would be a third: `x * True` is
    # rejected, TL242, so its specialisation would fall back)
    assert {key[1:] for key in compiled.specialisations} == {("int", "bool"), ("float", "bool")}
    assert all(routed.route == "native" for routed in compiled.specialisations.values())


def test_unannotated_helpers_are_specialised_too(module):
    compiled = torchlower.compile(module.norm_then_helper)
    x, weight = torch.randn(2, 5, 16), torch.randn(16)
    assert_matches_eager(compiled(x, weight), module.norm_then_helper(x, weight))
    (routed,) = compiled.specialisations.values()
    assert routed.route == "native", routed.reason


def test_arguments_no_annotation_describes_run_as_python(module, monkeypatch):
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    compiled = torchlower.compile(module.gelu_mlp)
    args = [a.double() for a in mlp_inputs(4)]
    assert_matches_eager(compiled(*args), module.gelu_mlp(*args))
    routed = compiled.specialisations[(None, None, None, None, None, "float")]
    assert routed.route == "fallback" and "x=Tensor(torch.float64, cpu, rank 2)" in routed.reason


def test_only_the_unannotated_parameters_are_specialised(module):
    compiled = torchlower.compile(module.partly_annotated)
    x, w = torch.randn(3, 4), torch.randn(4, 5)
    assert_matches_eager(compiled(x, w), module.partly_annotated(x, w))
    assert list(compiled.specialisations) == [("TensorF32Cpu2D",)]


def test_specialisations_are_bounded(module, monkeypatch):
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    monkeypatch.setattr(_specialise, "MAX_SPECIALISATIONS", 2)
    compiled = torchlower.compile(module.scaled)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for rank in range(1, 5):
            x = torch.randn(*(2,) * rank)
            assert_matches_eager(compiled(x, 2, False), module.scaled(x, 2, False))
    assert len(compiled.specialisations) == 2
    # one warning, at the first combination past the bound (builds may warn of other things)
    assert sum(w.category is _specialise.SpecialisationWarning for w in caught) == 1, [str(w.message) for w in caught]


def test_annotate_inserts_annotations_without_moving_lines():
    source = "import torch\n\n@deco\ndef f(x, n=3, *, k):\n    return x\n"
    annotated = _specialise.annotate(source, "f", 3, {"x": "TensorF32Cpu2D", "n": "int"})
    lines = annotated.splitlines()
    assert lines[3] == "def f(x: TensorF32Cpu2D, n: int=3, *, k):"
    assert lines[:3] == source.splitlines()[:3] and lines[4] == "    return x"
    assert lines[-1] == "from torchlower.types import TensorF32Cpu2D"
    assert _specialise.annotate(source, "g", 3, {}) is None


def test_the_c_fast_path_tries_the_last_specialisation_and_specialises_again(module, monkeypatch):
    """After a native call, positional calls go in C to that specialisation's native function,
    whose boundary is the key check: other types (another rank, a float64 tensor, an int for a
    float) come back to the Python router, which specialises or runs Python; keywords,
    autocast and the fallback mode take the Python router too."""
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    compiled = torchlower.compile(module.gelu_mlp)
    assert type(compiled).__name__ == "Specialising" and compiled.__name__ == "gelu_mlp"
    assert compiled.__doc__ == module.gelu_mlp.__doc__ and compiled.__wrapped__ is module.gelu_mlp
    two, three = mlp_inputs(4), mlp_inputs(2, 3)
    for args in [two, two, three, two, three]:
        assert_matches_eager(compiled(*args, 0.5), module.gelu_mlp(*args, 0.5))
    assert len(compiled.specialisations) == 2
    doubled = tuple(a.double() for a in two)
    out = compiled(*doubled, 0.5)  # no marker describes float64: Python
    assert out.dtype == torch.float64 and torch.equal(out, module.gelu_mlp(*doubled, 0.5))
    assert_matches_eager(compiled(*two, 2), module.gelu_mlp(*two, 2))  # an int scale: its own key
    assert len(compiled.specialisations) == 4
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, eager = compiled(*two, 0.5), module.gelu_mlp(*two, 0.5)
    assert out.dtype == eager.dtype == torch.bfloat16 and torch.equal(out, eager)
    monkeypatch.setenv("TORCHLOWER_MODE", "fallback")
    x = two[0].clone().requires_grad_()
    assert compiled(x, *two[1:], 0.5).requires_grad  # Python ran: eager's graph


# --- `torch.Tensor` annotations, as real projects write them -----------------------------------


@pytest.fixture(scope="module")
def as_written():
    return import_path(CASES / "torch_tensor.py"), import_path(CASES / "torch_tensor_postponed.py")


@pytest.mark.parametrize(
    "file,name,make",
    [
        (0, "rotate_half", lambda: (torch.randn(2, 4, 5, 8),)),
        (0, "apply_rotary_pos_emb", lambda: (torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 8))),
        (0, "rms_norm", lambda: (torch.randn(2, 5, 16), torch.randn(16))),
        (0, "maybe_scaled", lambda: (torch.randn(3, 4), 0.5)),
        (1, "swiglu", lambda: (torch.randn(3, 8), torch.randn(8, 16), torch.randn(8, 16))),
        (1, "value_and_features", lambda: (torch.randn(4, 6), torch.randn(5, 6), torch.randn(5))),
    ],
)
def test_torch_tensor_parameters_are_specialised_and_route_native(as_written, file, name, make):
    module = as_written[file]
    compiled = torchlower.compile(getattr(module, name))
    assert compiled.route == "specialising"
    for _ in range(2):
        args = make()
        native, eager = compiled(*args), getattr(module, name)(*args)
        for n, e in zip(native, eager) if isinstance(eager, tuple) else [(native, eager)]:
            assert_matches_eager(n, e)
    (routed,) = compiled.specialisations.values()
    assert routed.route == "native", routed.reason


def test_optional_tensors_specialise_on_none_and_on_tensors(as_written):
    module = as_written[0]
    attention = torchlower.compile(module.eager_attention_forward)
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8)
    mask = torch.zeros(2, 1, 5, 6).masked_fill(torch.rand(2, 1, 5, 6) > 0.7, float("-inf"))
    for args in [(q, q, q, None, 0.35), (q, k, v, mask, 0.35, 0.0, 2), (q, k, v, None, 0.35, 0.0, 2)]:
        for n, e in zip(attention(*args), module.eager_attention_forward(*args)):
            assert_matches_eager(n, e)
    routes = {key[3]: routed.route for key, routed in attention.specialisations.items()}
    assert routes == {"None": "native", "TensorF32Cpu4D": "native"}, routes

    linear = torchlower.compile(module.linear_maybe_bias)
    x, w, b = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5)
    for args, kwargs in [((x, w), {}), ((x, w, b), {}), ((x, w), {"scale": 0.5}), ((x, w, None, 2.0), {}), ((x, w, b, 2), {})]:
        assert_matches_eager(linear(*args, **kwargs), module.linear_maybe_bias(*args, **kwargs))
    assert {key[2:]: routed.route for key, routed in linear.specialisations.items()} == {
        ("None", "None"): "native",
        ("TensorF32Cpu1D", "None"): "native",
        ("None", "float"): "native",
        ("TensorF32Cpu1D", "int"): "native",
    }
    # the boundary of a None parameter refuses anything else (TORCHLOWER_MODE=native here: no
    # rerun; in auto mode the specialising callable specialises again)
    native = linear.specialisations[("TensorF32Cpu2D", "TensorF32Cpu2D", "None", "None")]
    with pytest.raises(TypeError, match="torchlower: parameter 'bias' expects None, got Tensor"):
        native(x, w, b, None)


def test_optional_numbers_dispatch_or_specialise(tmp_path, monkeypatch):
    """`maxlen: Optional[int] = None` (and `"float | None"`): the analyzer walks a copy for None
    and one for the number, and the function is native as written; with a `torch.Tensor`
    parameter beside it (another open parameter) each call specialises both, the number's
    annotation `int`, `float` or `None` as the argument says."""
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    path = tmp_path / "optional_numbers.py"
    path.write_text(
        "from typing import Optional\nimport torch\nfrom torchlower.types import TensorF32Cpu2D\n\n"
        "def head(x: TensorF32Cpu2D, n: Optional[int] = None) -> TensorF32Cpu2D:\n"
        "    if n is None:\n        n = x.shape[0] // 2\n    return x[:n] * 2.0\n\n"
        "def scaled(x: torch.Tensor, s: 'float | None' = None) -> torch.Tensor:\n"
        "    return x if s is None else x * s\n"
    )
    module = import_path(path)
    entries = {f["name"]: f for f in torchlower.analyze(path.read_text())["functions"]}
    assert entries["head"]["route"] == "native", entries["head"]["diagnostics"]
    assert [p["type"] for p in entries["head"]["params"] if p["name"] == "n"] == ["Optional[int]"]
    assert _specialise.unannotated(module.head) == ["n"]
    assert _specialise.unannotated(module.scaled) == ["x", "s"]
    x = torch.randn(6, 3)
    head = torchlower.compile(module.head)
    assert head.route == "native", head.reason
    for args in [(x,), (x, None), (x, 4), (x, -1)]:
        assert_matches_eager(head(*args), module.head(*args))
    scaled = torchlower.compile(module.scaled)
    for args in [(x,), (x, 0.5)]:
        assert_matches_eager(scaled(*args), module.scaled(*args))
    routes = {key: fn.route for key, fn in scaled.specialisations.items()}
    assert routes == {("TensorF32Cpu2D", "None"): "native", ("TensorF32Cpu2D", "float"): "native"}, routes


def test_optional_markers_dispatch_on_none_and_on_the_tensor(tmp_path, monkeypatch):
    """`bias: Optional[TensorF32Cpu1D] = None` (and `"TensorF32Cpu1D | None"`): None or the
    tensor, only the call says which. The analyzer walks a copy for each and the function is
    native as written, its entry running the copy for the argument; when a copy falls back
    (`x + bias` with None) the parameter stays open (TL101, saying why) and each call
    specialises on its argument as `Optional[torch.Tensor]` does."""
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    path = tmp_path / "optional_markers.py"
    path.write_text(
        "from typing import Optional\nimport torch\nfrom torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D\n\n"
        "def add_bias(x: TensorF32Cpu2D, bias: Optional[TensorF32Cpu1D] = None) -> TensorF32Cpu2D:\n"
        "    if bias is not None:\n        x = x + bias\n    return x.relu()\n\n"
        "def scale(x: TensorF32Cpu2D, s: 'TensorF32Cpu1D | None' = None) -> TensorF32Cpu2D:\n"
        "    return x if s is None else x * s\n\n"
        "def needs_bias(x: TensorF32Cpu2D, bias: Optional[TensorF32Cpu1D] = None) -> TensorF32Cpu2D:\n"
        "    return x + bias\n"
    )
    module = import_path(path)
    report = torchlower.analyze(path.read_text())
    entries = {f["name"]: f for f in report["functions"]}
    for name, param in [("add_bias", "bias"), ("scale", "s")]:
        assert entries[name]["route"] == "native", entries[name]["diagnostics"]
        assert [p["type"] for p in entries[name]["params"] if p["name"] == param] == ["Optional[TensorF32Cpu1D]"]
        assert len(entries[name]["specialisations"]) == 2
    (note,) = [d for d in entries["needs_bias"]["diagnostics"] if d["code"] == "TL101"]
    assert "with bias None" in note["message"], note
    assert _specialise.unannotated(module.add_bias) == ["bias"]
    x, b = torch.randn(3, 4), torch.randn(4)
    for name in ["add_bias", "scale"]:
        fn = getattr(module, name)
        compiled = torchlower.compile(fn)
        assert compiled.route == "native", compiled.reason
        assert_matches_eager(compiled(x), fn(x))
        assert_matches_eager(compiled(x, b), fn(x, b))
        assert_matches_eager(compiled(x, None), fn(x, None))
    compiled = torchlower.compile(module.needs_bias)
    assert compiled.route == "specialising", compiled.reason
    assert_matches_eager(compiled(x, b), module.needs_bias(x, b))
    with pytest.raises(TypeError):
        compiled(x)  # eager's TypeError, from the Python function
    routes = {key[-1]: routed.route for key, routed in compiled.specialisations.items()}
    assert routes == {"None": "fallback", "TensorF32Cpu1D": "native"}, routes


def test_int_lists_and_tuples_specialise_on_their_length(tmp_path, monkeypatch):
    """`window_size: List[int]` (torchvision's Swin), `Sequence[int]`, `Tuple[int, ...]` and a
    postponed `"list[int]"`: open (TL101) until a call says how many ints; each length and kind
    is its own specialisation (`list[int, int]`, `tuple[int, int]`), and the boundary refuses a
    list of another length, of bools or a tuple where a list was specialised (the C fast path
    then specialises again). A list the function copies and writes stays the caller's."""
    path = tmp_path / "int_lists.py"
    path.write_text(
        "from typing import List, Sequence, Tuple\nimport torch\nfrom torchlower.types import TensorF32Cpu2D\n\n"
        "def window(x: TensorF32Cpu2D, window_size: List[int]) -> TensorF32Cpu2D:\n"
        "    shift = window_size.copy()\n    if x.shape[0] < 4:\n        shift[0] = 0\n"
        "    return x.reshape(window_size[0] * window_size[1], -1) * sum(shift)\n\n"
        "def sizes(x: TensorF32Cpu2D, s: Sequence[int], t: Tuple[int, ...], u: 'list[int]'):\n"
        "    return [x.view(s[0], -1), len(t) + u[-1]]\n"
    )
    module = import_path(path)
    report = torchlower.analyze(path.read_text())
    codes = {f["name"]: [d["code"] for d in f["diagnostics"]] for f in report["functions"]}
    assert codes["window"][:1] == ["TL101"], codes
    assert _specialise.unannotated(module.window) == ["window_size"]
    assert _specialise.unannotated(module.sizes) == ["s", "t", "u"]
    compiled = torchlower.compile(module.window)
    assert compiled.route == "specialising", compiled.reason
    for x, ws in [(torch.randn(3, 4), [2, 6]), (torch.randn(6, 4), [4, 6]), (torch.randn(4, 6), [2, 3, 4])]:
        before = list(ws)
        assert_matches_eager(compiled(x, ws), module.window(x, ws))
        assert ws == before
    routes = {key: routed.route for key, routed in compiled.specialisations.items()}
    assert routes == {("list[int, int]",): "native", ("list[int, int, int]",): "native"}, routes
    # a tuple has no `.copy()` (AttributeError): its specialisation runs as Python
    with pytest.raises(torchlower.BuildError, match=r"`.copy\(\)` on a tuple of 2 is not lowered"):
        compiled(torch.randn(6, 4), (3, 8))
    # a list of bools or of one int has no specialisation: Python runs it
    assert _specialise.type_name([True, 2]) is None and _specialise.type_name([2]) is None
    assert _specialise.type_name(torch.Size([2, 3])) == "tuple[int, int]"
    assert _specialise.type_name(torch.zeros(2, 3, dtype=torch.int32)) == "TensorI32Cpu2D"
    assert _specialise.type_name(torch.zeros(2, 3, dtype=torch.int16)) is None
    # the native entry of the list specialisation refuses what it was not made for
    native = compiled.specialisations[("list[int, int]",)].native_entry
    for bad, message in [([2], "expects a list of 2 ints, got list of 1"), ((2, 6), "expects a list of 2 ints, got tuple of 2"), ([2, True], "got one holding bool")]:
        with pytest.raises(TypeError, match=message):
            native(torch.randn(3, 4), bad)
    sizes = torchlower.compile(module.sizes)
    x = torch.randn(4, 6)
    native_out, eager_out = sizes(x, [2, 12], (1, 2, 3), [5, 7]), module.sizes(x, [2, 12], (1, 2, 3), [5, 7])
    assert type(native_out) is list
    assert_matches_eager(native_out, eager_out)
    (routed,) = sizes.specialisations.values()
    assert routed.route == "native", routed.reason


def test_a_return_that_breaks_its_torch_tensor_annotation_runs_as_python(as_written, monkeypatch):
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    module = as_written[0]
    compiled = torchlower.compile(module.says_a_pair_returns_one)
    x = torch.randn(3, 4)
    assert_matches_eager(compiled(x), module.says_a_pair_returns_one(x))
    (routed,) = compiled.specialisations.values()
    assert routed.route == "fallback" and "[TL401]" in routed.reason, routed.reason
    assert "the annotation says tuple[torch.Tensor, torch.Tensor]" in routed.reason


def test_open_tensor_annotations_are_found_by_name_not_evaluated(as_written):
    _, postponed = as_written
    assert _specialise.unannotated(postponed.swiglu) == ["x", "w1", "w3"]

    # postponed annotations are their text; `open("x")` must not run
    namespace = {"th": torch, "torch": torch, "Tensor": torch.Tensor}
    source = "from __future__ import annotations\ndef f(x: th.Tensor, y: torch.Tensor, n: int, z: Tensor, w: open('x'), v: 'Tensor'): pass\n"
    exec(source, namespace)  # noqa: S102 - a fixed test source
    assert _specialise.unannotated(namespace["f"]) == ["x", "y", "z", "v"]


def test_annotate_replaces_torch_tensor_annotations_in_place():
    source = "import torch\ndef f(x: torch.Tensor, n: int, y) -> torch.Tensor:\n    return x\n"
    text = _specialise.annotate(source, "f", 2, {"x": "TensorF32Cpu2D", "y": "TensorF32Cpu1D"})
    assert text.splitlines()[:3] == [
        "import torch",
        "def f(x: TensorF32Cpu2D, n: int, y: TensorF32Cpu1D) -> torch.Tensor:",
        "    return x",
    ]
    assert text.endswith("from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D\n")


def test_a_return_rank_chosen_at_run_time_is_native_on_the_first_path(as_written, monkeypatch):
    """diffusers' `head_to_batch_dim` as written: rank 3 for `out_dim == 3` (native), rank 4
    otherwise (TL404: refused, so auto mode runs Python). Both give eager's tensor."""
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    module = as_written[0]
    compiled = torchlower.compile(module.head_to_batch_dim)
    for shape in [(2, 5, 16), (2, 3, 5, 16)]:
        x = torch.randn(*shape)
        for args in [(x, 4), (x, 4, 3), (x, 2, 4)]:
            assert_matches_eager(compiled(*args), module.head_to_batch_dim(*args))
    routes = {key[0]: routed.route for key, routed in compiled.specialisations.items()}
    assert routes == {"TensorF32Cpu3D": "native", "TensorF32Cpu4D": "native"}, routes
    codes = [d["code"] for routed in compiled.specialisations.values() for d in routed.report["diagnostics"]]
    assert codes == ["TL404", "TL404"], codes


def test_a_rank0_argument_specialises_and_a_rank0_marker_refuses_other_ranks(monkeypatch):
    """A 0-dim float32 tensor (`torch.tensor(0.5)`) has a marker, TensorF32Cpu0D: an open
    parameter specialises on it, and the marker's boundary refuses a rank-1 tensor with the
    rank in the message (auto mode then runs Python)."""
    assert _specialise.type_name(torch.tensor(0.5)) == "TensorF32Cpu0D"
    assert _specialise.type_name(torch.tensor(3)) == "TensorI64Cpu0D"
    assert _specialise.type_name(torch.tensor(True)) == "TensorBoolCpu0D"
    assert _specialise.type_name(torch.tensor(3, dtype=torch.int32)) is None  # no int32 rank-0 marker
    module = import_path(Path(__file__).resolve().parents[2] / "tests" / "corpus" / "accepted" / "rank0.py")
    scaled = torchlower.compile(module.scale_by_scalar_tensor)
    assert scaled.route == "native", scaled.reason
    x = torch.randn(3, 4)
    assert_matches_eager(scaled(x, torch.tensor(-0.5)), module.scale_by_scalar_tensor(x, torch.tensor(-0.5)))
    with pytest.raises(ValueError, match="parameter 's' expects a rank-0 tensor, got rank 1"):
        scaled(x, torch.tensor([0.5]))
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    assert_matches_eager(scaled(x, torch.tensor([0.5])), module.scale_by_scalar_tensor(x, torch.tensor([0.5])))
