"""``torchlower.compile(module)`` on the module corpus (tests/realworld/modules/): nn.Module
classes as their projects wrote them, each rewritten to functions by the host
(torchlower._modules), specialised on its calls, routed native where the analyzer claims every
site, equal to eager — also after new weights are loaded — and guarded: training mode, hooks,
autograd and dtype changes run the module itself."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

import torchlower
from test_native_cpu import assert_matches_eager

MODULES = Path(__file__).resolve().parents[1] / "realworld" / "modules"
FILES = sorted(MODULES.glob("*.py"))
#: share of the module corpus that must run native (issue: at least 80%)
MIN_NATIVE_SHARE = 0.8


def _load(path: Path):
    name = f"_tl_modules_{path.stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _examples():
    for path in FILES:
        for name in _load(path).EXAMPLES:
            yield pytest.param(path, name, id=f"{path.stem}.{name}")


def _new_weights(model: torch.nn.Module, seed: int) -> dict:
    generator = torch.Generator().manual_seed(seed)
    return {k: torch.randn(v.shape, generator=generator) if v.is_floating_point() else v for k, v in model.state_dict().items()}


@pytest.mark.parametrize("path,name", list(_examples()))
def test_module_matches_eager_and_reads_weights_at_call_time(path, name, monkeypatch):
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    make, inputs = _load(path).EXAMPLES[name]
    torch.manual_seed(0)
    model = make().eval()
    compiled = torchlower.compile(model)
    torch.manual_seed(1)
    args = inputs()
    before = [a.clone() for a in args]
    with torch.no_grad():
        assert_matches_eager(compiled(*args), model(*args))
        special = tuple(a.masked_fill(torch.rand(a.shape) < 0.05, float("nan")) for a in args)
        assert_matches_eager(compiled(*special), model(*special))
        model.load_state_dict(_new_weights(model, 7))
        assert_matches_eager(compiled(*args), model(*args))
    for a, b in zip(args, before):
        assert torch.equal(a, b), "input mutated"
    native = any(v is not None for v in compiled.specialisations.values())
    if native:
        assert compiled.calls["native"] == 3, compiled.calls
        # the report lists every generated forward (a nested one is native as the copy its
        # caller specialises; alone, unannotated, it is not), the entry native, its sites claimed
        (entries,) = compiled.reports.values()
        entry = entries[-1]
        assert entry["name"] == "_tl_module_forward" and entry["route"] == "native"
        assert all(s["outcome"] == "claimed" for s in entry["sites"])
    else:
        assert compiled.reason or compiled.reasons, "an eager module says why"


def test_most_of_the_module_corpus_runs_native(monkeypatch):
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    routes = {}
    for path in FILES:
        for name, (make, inputs) in _load(path).EXAMPLES.items():
            torch.manual_seed(0)
            compiled = torchlower.compile(make().eval())
            with torch.no_grad():
                compiled(*inputs())
            routes[f"{path.stem}.{name}"] = compiled.calls["native"] == 1
    native = sum(routes.values())
    assert len(routes) >= 20 and native / len(routes) >= MIN_NATIVE_SHARE, routes


@pytest.fixture
def mlp(monkeypatch):
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    make, inputs = _load(MODULES / "nanogpt.py").EXAMPLES["MLP"]
    torch.manual_seed(0)
    model = make().eval()
    return model, torchlower.compile(model), inputs()


def test_training_mode_runs_the_module_itself(mlp):
    model, compiled, args = mlp
    model.train()
    out = compiled(*args)
    assert compiled.calls == {"native": 0, "eager": 1}
    assert out.requires_grad  # eager's autograd graph
    model.eval()
    with torch.no_grad():
        compiled(*args)
    assert compiled.calls["native"] == 1


def test_a_hook_runs_the_module_itself(mlp):
    model, compiled, args = mlp
    seen = []
    handle = model.c_fc.register_forward_hook(lambda m, i, o: seen.append(o.shape))
    with torch.no_grad():
        assert_matches_eager(compiled(*args), model(*args))
    assert compiled.calls == {"native": 0, "eager": 1} and len(seen) == 2
    handle.remove()
    with torch.no_grad():
        compiled(*args)
    assert compiled.calls["native"] == 1


def test_autograd_outside_no_grad_runs_eager_and_native_outputs_never_require_grad(mlp):
    model, compiled, args = mlp
    out = compiled(*args)  # parameters require grad, autograd is on: eager's graph
    assert out.requires_grad and compiled.calls["eager"] == 1
    with torch.inference_mode():
        out = compiled(*args)
    assert not out.requires_grad and compiled.calls["native"] == 1


def test_in_place_weight_updates_are_seen(mlp):
    model, compiled, args = mlp
    with torch.no_grad():
        first = compiled(*args)
        model.c_fc.weight.mul_(2.0)
        model.c_proj.bias.add_(1.0)
        second = compiled(*args)
        assert_matches_eager(second, model(*args))
    assert not torch.equal(first, second) and compiled.calls["native"] == 2


def test_a_dtype_change_runs_eager(mlp):
    model, compiled, args = mlp
    model.double()
    with torch.no_grad():
        out = compiled(*(a.double() for a in args))
        assert_matches_eager(out, model(*(a.double() for a in args)))
    assert out.dtype == torch.float64 and compiled.calls == {"native": 0, "eager": 1}


def test_an_unsupported_module_says_why_and_runs_eager(monkeypatch):
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")

    class Holder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = torch.nn.Linear(4, 4)

        def forward(self, x):
            layer = self.inner  # a submodule held in a local: not rewritten
            return layer(x)

    model = Holder().eval()
    compiled = torchlower.compile(model)
    assert compiled.route == "fallback" and "self.inner" in compiled.reason
    x = torch.randn(2, 4)
    with torch.no_grad():
        assert_matches_eager(compiled(x), model(x))
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    with pytest.raises(torchlower.BuildError, match="Holder is not native"):
        compiled(x)


def test_the_readme_example_runs():
    import subprocess

    example = Path(__file__).resolve().parents[2] / "examples" / "module_and_unannotated.py"
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "MLP module: route module, calls {'native': 1, 'eager': 0}" in done.stdout
    assert "scaled_softmax('TensorF32Cpu3D', 'float'): native" in done.stdout


def test_a_submodule_in_training_mode_or_rebound_runs_eager(mlp):
    model, compiled, args = mlp
    model.dropout.train()  # only the dropout: eager applies it (p=0 here), so must we
    with torch.no_grad():
        assert_matches_eager(compiled(*args), model(*args))
    assert compiled.calls == {"native": 0, "eager": 1}
    model.dropout.eval()
    model.c_fc = torch.nn.Linear(model.c_fc.in_features, model.c_fc.out_features)
    with torch.no_grad():
        assert_matches_eager(compiled(*args), model(*args))  # the new layer's weights, as eager
    assert compiled.calls == {"native": 0, "eager": 2}


def test_a_held_tensor_changing_type_is_seen_by_the_next_call(monkeypatch):
    """Calls are keyed by their arguments; the instance's tensors are checked by the native
    boundary, whose refusal specialises again for what they are now."""
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    make, inputs = _load(MODULES / "timm_torchvision.py").EXAMPLES["LayerScale"]
    model = make().eval()
    compiled = torchlower.compile(model)
    (x,) = inputs()
    with torch.no_grad():
        assert_matches_eager(compiled(x), model(x))
        model.gamma.data = model.gamma.data.double()  # what Module.to(float64) does to a parameter
        out = compiled(x)
        assert_matches_eager(out, model(x))
        assert out.dtype == torch.float64
        model.gamma.data = model.gamma.data.float()
        assert_matches_eager(compiled(x), model(x))
    assert compiled.calls == {"native": 2, "eager": 1}, compiled.calls


def test_a_module_runs_itself_inside_an_autocast_region(monkeypatch):
    """Inside `torch.autocast("cpu")` eager computes the Linear in bfloat16: the compiled
    module runs the module itself there (auto mode), natively again outside."""
    import torch.nn as nn

    import torchlower

    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).eval()
    compiled = torchlower.compile(model)
    x = torch.randn(3, 8)
    with torch.no_grad():
        compiled(x)
        native_calls = compiled.calls["native"]
        with torch.autocast("cpu", dtype=torch.bfloat16):
            routed, eager = compiled(x), model(x)
        assert routed.dtype == torch.bfloat16 and torch.equal(routed, eager)
        assert compiled.calls["native"] == native_calls
        compiled(x)
        assert compiled.calls["native"] == native_calls + 1


def _primed(mlp):
    """The compiled MLP after one native call: later calls take the C fast path
    (`CompiledModule`), whose guards the next test breaks one by one."""
    model, compiled, args = mlp
    with torch.no_grad():
        compiled(*args)
    assert compiled.calls == {"native": 1, "eager": 0}
    return model, compiled, args


def _global_pre_hook():
    return torch.nn.modules.module.register_module_forward_pre_hook(lambda m, i: None)


@pytest.mark.parametrize("change", ["train", "submodule train", "hook", "global hook", "autocast", "autograd", "fallback mode"])
def test_each_guard_holds_on_the_fast_path(mlp, monkeypatch, change):
    """After the fast path has been used, each guard-breaking change runs the module itself
    (eager's values), and undoing it runs native code again."""
    model, compiled, args = _primed(mlp)
    undo = lambda: None  # noqa: E731
    no_grad = True
    if change == "train":
        model.train()
        undo = model.eval
    elif change == "submodule train":
        model.dropout.train()
        undo = model.dropout.eval
    elif change == "hook":
        undo = model.c_proj.register_forward_pre_hook(lambda m, i: None).remove
    elif change == "global hook":
        undo = _global_pre_hook().remove
    elif change == "fallback mode":
        monkeypatch.setenv("TORCHLOWER_MODE", "fallback")
        undo = lambda: monkeypatch.setenv("TORCHLOWER_MODE", "auto")  # noqa: E731
    elif change == "autograd":
        no_grad = False  # parameters require grad: eager records its graph
    context = torch.autocast("cpu", dtype=torch.bfloat16) if change == "autocast" else torch.no_grad()
    with context, torch.set_grad_enabled(not no_grad):
        out, eager = compiled(*args), model(*args)
    if change in ("autocast", "autograd"):  # eager's bfloat16 values / eager's graph
        assert torch.equal(out, eager) and out.dtype == eager.dtype and out.requires_grad == eager.requires_grad
    else:
        assert_matches_eager(out, eager)
    assert compiled.calls == {"native": 1, "eager": 1}, compiled.calls
    undo()
    with torch.no_grad():
        assert_matches_eager(compiled(*args), model(*args))
    assert compiled.calls == {"native": 2, "eager": 1}, compiled.calls


def test_the_fast_path_reads_the_instance_s_tensors_at_every_call(mlp):
    """A new Parameter assigned to a submodule, keywords, and a call with other argument types
    (a new specialisation) after the fast path was used."""
    model, compiled, args = _primed(mlp)
    with torch.no_grad():
        model.c_fc.weight = torch.nn.Parameter(torch.randn_like(model.c_fc.weight))
        assert_matches_eager(compiled(*args), model(*args))
        assert_matches_eager(compiled(x=args[0]), model(x=args[0]))
        flat = args[0][0]  # rank 2 instead of 3: another specialisation
        assert_matches_eager(compiled(flat), model(flat))
        assert_matches_eager(compiled(*args), model(*args))
        del model.c_proj.bias  # a tensor deleted from the instance: eager's own error
        with pytest.raises(AttributeError):
            model(*args)
        with pytest.raises(AttributeError):
            compiled(*args)
    assert compiled.calls == {"native": 5, "eager": 1}, compiled.calls


class _ReluInPlaceThenReuse(torch.nn.Module):
    """`nn.ReLU(inplace=True)` on a fresh local whose old name is read again: eager's result
    is the rectified tensor twice."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.act = torch.nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.fc(x)
        y = self.act(h)
        return h + y


class _SiluInPlaceOnTheInput(torch.nn.Module):
    """`nn.SiLU(inplace=True)` on forward's argument: eager writes into the caller's tensor."""

    def __init__(self):
        super().__init__()
        self.act = torch.nn.SiLU(inplace=True)

    def forward(self, x):
        return self.act(x) * 2.0


@pytest.mark.parametrize("cls", [_ReluInPlaceThenReuse, _SiluInPlaceOnTheInput])
def test_in_place_activation_modules_write_as_eager_does(cls, monkeypatch):
    monkeypatch.setenv("TORCHLOWER_MODE", "auto")
    torch.manual_seed(0)
    model = cls().eval()
    compiled = torchlower.compile(model)
    x = torch.randn(3, 4)
    for _ in range(2):  # the first call specialises, the second takes the primed path
        x_eager, x_native = x.clone(), x.clone()
        with torch.no_grad():
            expected = model(x_eager)
            got = compiled(x_native)
        assert_matches_eager(got, expected)
        assert torch.equal(x_native, x_eager), "the input is written exactly as eager writes it"


def test_a_file_that_imports_only_torch_nn_runs_native(tmp_path, monkeypatch):
    """The generated functions spell `torch.nn.functional.linear`; a file whose only import is
    `import torch.nn as nn` never binds `torch` (found by `torchlower check FILE.py:Class`)."""
    monkeypatch.setenv("TORCHLOWER_MODE", "native")
    path = tmp_path / "only_nn.py"
    path.write_text(
        "import torch.nn as nn\n\n\n"
        "class Gate(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 3)\n\n"
        "    def forward(self, x, scale=2.0):\n"
        "        return self.fc(x).sigmoid() * scale\n"
    )
    spec = importlib.util.spec_from_file_location("_tl_only_nn", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["_tl_only_nn"] = module
    spec.loader.exec_module(module)
    model = module.Gate().eval()
    compiled = torchlower.compile(model)
    x = torch.randn(5, 4)
    with torch.no_grad():
        assert_matches_eager(compiled(x), model(x))
    assert compiled.calls == {"native": 1, "eager": 0}
