"""``torchlower check FILE.py:ClassName``: an nn.Module class checked as
``torchlower.compile(instance)`` routes it, every finding placed in FILE.py."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

from torchlower import cli

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NANOGPT = REPO / "tests" / "realworld" / "modules" / "nanogpt.py"
SARIF_SCHEMA = HERE / "sarif-schema-2.1.0.json"


def run_check(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(["check", *argv, "--color", "never"])
    out, err = capsys.readouterr()
    return status, out, err


def line_of(path: Path, text: str, after: int = 0) -> int:
    """The 1-based line of the first line of ``path`` holding ``text`` (after line ``after``)."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if number > after and text in line:
            return number
    raise AssertionError(f"{text!r} not in {path}")


def write(tmp_path: Path, source: str, name: str = "net.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_nanogpt_block_routes_native_with_every_forward_at_its_def(capsys):
    target = f"{NANOGPT}:Block"
    status, out, err = run_check(capsys, target, "--init", "32, 4, 16", "--example-shapes", "Block:x=float32[2,8,32]",
                                 "--format", "json", "--strict")
    assert status == 0, err + out
    report = json.loads(out)
    names = {f["name"]: f for f in report["functions"]}
    # the block, its two LayerNorms, the attention and the MLP: one function per instance
    assert set(names) == {"Block.forward", "LayerNorm.forward [ln_1]", "LayerNorm.forward [ln_2]",
                          "CausalSelfAttention.forward [attn]", "MLP.forward [mlp]"}
    assert all(f["route"] == "native" for f in report["functions"])
    block_class = line_of(NANOGPT, "class Block(")
    assert names["Block.forward"]["line"] == line_of(NANOGPT, "def forward", after=block_class)
    attention = line_of(NANOGPT, "class CausalSelfAttention(")
    assert names["CausalSelfAttention.forward [attn]"]["line"] == line_of(NANOGPT, "def forward", after=attention)
    # a site of the attention lies on the statement it was rewritten from
    sites = names["CausalSelfAttention.forward [attn]"]["sites"]
    softmax = [s for s in sites if s["target"].endswith("softmax")]
    assert softmax and softmax[0]["line"] == line_of(NANOGPT, "att = F.softmax(att, dim=-1)")
    assert report["module"]["class"] == "Block"
    assert report["module"]["forward"] == {"x": "TensorF32Cpu3D"}
    assert report["module"]["tensors"]["attn.c_attn.weight"] == "TensorF32Cpu2D"
    assert "def _tl_module_forward(x: TensorF32Cpu3D" in report["module"]["generated"]


def test_text_output_names_the_class_and_points_into_the_file(capsys, tmp_path):
    path = write(tmp_path, """\
        import torch
        import torch.nn as nn


        class Head(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                h = self.proj(x).relu()
                return h.movedim(0, 1)
        """)
    status, out, err = run_check(capsys, f"{path}:Head", "--init", "8", "--example-shapes", "Head:x=float32[4,8]", "--strict")
    assert status == 1, err  # falls back
    movedim_line = line_of(path, "h.movedim(0, 1)")
    assert f"{path}:{line_of(path, 'def forward')} def Head.forward — fallback: " in out
    assert f"{path}:{movedim_line}:" in out
    # the caret sits under the statement it was rewritten from, in the file's own text
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{path}:{movedim_line}:"))
    assert lines[at + 1].strip() == "return h.movedim(0, 1)"
    assert lines[at + 2].strip().startswith("^")


def test_a_form_without_rewriting_is_tl109_and_strict_fails(capsys, tmp_path):
    path = write(tmp_path, """\
        import torch.nn as nn


        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(4, 4)])

            def forward(self, x):
                layers = self.layers
                return layers[0](x)
        """)
    status, out, err = run_check(capsys, f"{path}:Stack", "--example-shapes", "Stack:x=float32[2,4]", "--strict")
    assert status == 1, err
    assert "TL109" in out and "self.layers is used as a value" in out
    assert f"{path}:{line_of(path, 'class Stack')} def Stack.forward — fallback: 1 cause" in out


def test_an_instance_tensor_no_marker_describes_is_tl109(capsys, tmp_path):
    path = write(tmp_path, """\
        import torch
        import torch.nn as nn


        class Scale(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("s", torch.ones(4, dtype=torch.float64))

            def forward(self, x):
                return x * self.s
        """)
    status, out, err = run_check(capsys, f"{path}:Scale", "--example-shapes", "Scale:x=float32[2,4]", "--format", "json")
    assert status == 0, err
    report = json.loads(out)
    (function,) = report["functions"]
    assert function["route"] == "fallback"
    assert function["diagnostics"][0]["code"] == "TL109"
    assert "self.s is a torch.float64 tensor" in function["diagnostics"][0]["message"]


def test_annotations_and_literal_defaults_type_forward_without_examples(capsys, tmp_path):
    # the file never binds `torch` (only `torch.nn as nn`): the generated `torch.nn.functional.…`
    # forms still resolve
    path = write(tmp_path, """\
        import torch.nn as nn
        from torchlower.types import TensorF32Cpu2D


        class Gate(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x: TensorF32Cpu2D, scale=2.0):
                return self.fc(x).sigmoid() * scale
        """)
    status, out, err = run_check(capsys, f"{path}:Gate", "--format", "json", "--strict")
    assert status == 0, err + out
    report = json.loads(out)
    assert report["module"]["forward"] == {"x": "TensorF32Cpu2D", "scale": "float"}
    assert [f["route"] for f in report["functions"]] == ["native"]


def test_sarif_and_github_point_into_the_file(capsys, tmp_path):
    path = write(tmp_path, """\
        import torch.nn as nn


        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(8, 8)

            def forward(self, x):
                return self.proj(x).movedim(0, 1)
        """)
    target = f"{path}:Head"
    status, out, err = run_check(capsys, target, "--example-shapes", "Head:x=float32[4,8]", "--format", "sarif")
    assert status == 0, err
    sarif = json.loads(out)
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()))
    results = sarif["runs"][0]["results"]
    line = line_of(path, "movedim")
    lines = {r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results}
    assert lines["TL206"] == line
    assert all(1 <= n <= len(path.read_text().splitlines()) for n in lines.values())
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("net.py") for r in results)
    status, out, err = run_check(capsys, target, "--example-shapes", "Head:x=float32[4,8]", "--format", "github")
    assert status == 0, err
    assert f"file={path},line={line}," in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--example-shapes", "Block:x=float32[2,8,32]"], "Block(…) raised TypeError"),  # no --init
        (["--init", "32, 4, 16"], "give --example-shapes Block:x=SPEC"),
        (["--init", "32, 4, 16", "--example-shapes", "Block:y=float32[2,8,32]"], "has no parameter 'y'"),
        (["--init", "32, 4, __import__('os')", "--example-shapes", "Block:x=float32[2,8,32]"], "must be Python literals"),
        (["--init", "1) + (2", "--example-shapes", "Block:x=float32[2,8,32]"], "must be Python literals"),
    ],
)
def test_usage_errors_are_status_2(capsys, argv, message):
    status, out, err = run_check(capsys, f"{NANOGPT}:Block", *argv)
    assert status == 2
    assert message in err


def test_import_errors_and_missing_classes_are_status_2(capsys, tmp_path):
    broken = write(tmp_path, "raise RuntimeError('boom at import')\n", "broken.py")
    status, _, err = run_check(capsys, f"{broken}:Net")
    assert status == 2 and "raised RuntimeError: boom at import" in err
    status, _, err = run_check(capsys, f"{NANOGPT}:Nope")
    assert status == 2 and "no nn.Module subclass named 'Nope'" in err


def test_a_file_whose_name_has_a_colon_is_still_a_file(capsys, tmp_path):
    path = write(tmp_path, "def f(x):\n    return x\n", "odd:Name")
    status, out, err = run_check(capsys, str(path))
    assert status == 0, err
    assert "1 function" in out


def test_the_playground_module_examples_are_fresh():
    """web-playground/examples/modules/*.json are what check FILE.py:ClassName says today."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(REPO / "scripts" / "playground-module-examples.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    examples = sorted((REPO / "web-playground" / "examples" / "modules").glob("*.json"))
    assert examples, "no module example for the playground"
    for path in examples:
        example = json.loads(path.read_text())
        assert example["module"]["origins"] and example["module"]["tensors"], path.name
