"""``torchlower export``: the native functions of a file as a standalone Rust crate that builds
without Python, passes its parity tests against eager PyTorch's results (safetensors fixtures
written by ``--fixtures``: random inputs, special values, inputs eager refuses, a wrong dtype)
and documents every function with its Python source lines and sites.

The crates are built with cargo into the repository's own target folder, where the test
command's ``cargo test -p torchlower-backend --no-default-features`` already compiled tch
without Python: each crate then compiles only itself (and its backend).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torchlower import cli
from test_realworld import _import
from torchlower._cli_export import MARKER, export

REPO = Path(__file__).resolve().parents[2]
BACKEND = REPO / "native-backend"
REALWORLD = REPO / "tests" / "realworld"


def cargo(crate: Path, *args: str, timeout: int = 1500) -> subprocess.CompletedProcess:
    env = dict(os.environ, LIBTORCH_USE_PYTORCH="1", CARGO_TARGET_DIR=str(REPO / "target"))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # torch-sys asks this python
    env.pop("LIBTORCH_BYPASS_VERSION_CHECK", None)
    done = subprocess.run(["cargo", *args], cwd=crate, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"cargo {' '.join(args)} in {crate}:\n{done.stdout[-4000:]}\n{done.stderr[-6000:]}"
    return done


def passed(done: subprocess.CompletedProcess) -> int:
    """How many tests cargo test ran and passed (a failure fails `cargo` above)."""
    return sum(int(n) for n in re.findall(r"test result: ok\. (\d+) passed", done.stdout))


def test_the_example_exports_builds_matches_eager_and_documents(tmp_path, capsys):
    crate = tmp_path / "model-crate"
    status = cli.main(["export", str(REPO / "examples" / "model.py"), "--crate", str(crate), "--fixtures"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "pub fn pooled_head" in out and "column_stats" in out and "not exported" in out
    lib = (crate / "src" / "lib.rs").read_text()
    assert "pub fn pooled_head(x: &tl::tch::Tensor, weight: &tl::tch::Tensor, bias: &tl::tch::Tensor)" in lib
    assert "pyo3" not in lib and "column_stats" not in lib
    assert (crate / "vendor" / "torchlower-backend" / "src" / "export.rs").is_file(), "the backend is vendored"
    readme = (crate / "README.md").read_text()
    assert "`column_stats` (model.py:65)" in readme and "TL311" in readme
    tested = cargo(crate, "test", "--", "--nocapture")
    # 4 functions x (random, special values, grown input, wrong dtype), none refused
    assert passed(tested) == 16 and "torchlower-export-refusal" not in tested.stdout, tested.stdout
    cargo(crate, "doc", "--no-deps")
    page = (REPO / "target" / "doc" / "model" / "fn.pooled_head.html").read_text()
    assert "model.py</code>, lines 18–20" in page and "Sites" in page and "linear_epilogue" in page


@pytest.mark.parametrize("stem", ["nanogpt", "transformers_llama", "cleanrl", "dlrm"])
def test_real_code_exports_and_matches_eager_on_its_example_inputs(stem, tmp_path):
    path = REALWORLD / f"{stem}.py"
    crate = tmp_path / stem
    exported, fallbacks = export(path, crate, backend=BACKEND, fixtures=True, inputs=_import(path).INPUTS)
    assert exported, f"{stem}: nothing exported"
    cases = len(list((crate / "tests" / "fixtures").glob("*.safetensors")))
    tested = cargo(crate, "test", "--", "--nocapture")
    assert passed(tested) == cases and "torchlower-export-refusal" not in tested.stdout, tested.stdout


def test_hostile_names_export_to_valid_rust(tmp_path):
    """Rust keywords and non-ASCII names as functions and parameters (the corpus' own file)."""
    path = REPO / "tests" / "corpus" / "accepted" / "hostile_names.py"
    crate = tmp_path / "hostile"
    exported, _ = export(path, crate, backend=BACKEND, fixtures=True)
    assert exported
    tested = cargo(crate, "test")
    assert passed(tested) == len(list((crate / "tests" / "fixtures").glob("*.safetensors")))


def test_nothing_is_written_for_a_file_without_native_functions_or_into_a_foreign_folder(tmp_path, capsys):
    source = tmp_path / "plain.py"
    source.write_text("def f(x):\n    return x\n")
    status = cli.main(["export", str(source), "--crate", str(tmp_path / "out")])
    assert status == 1 and "no function of" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "Cargo.toml").write_text("[package]\nname = 'mine'\n")
    status = cli.main(["export", str(REPO / "examples" / "model.py"), "--crate", str(foreign)])
    assert status == 2 and "was not written by torchlower export" in capsys.readouterr().err
    assert (foreign / "Cargo.toml").read_text() == "[package]\nname = 'mine'\n"
    # a folder written by export is written again
    again = tmp_path / "again"
    for _ in range(2):
        assert cli.main(["export", str(REPO / "examples" / "model.py"), "--crate", str(again), "--backend", str(BACKEND)]) == 0
    assert (again / MARKER).is_file()
    broken = tmp_path / "broken.py"
    broken.write_text("def f(x:\n")
    assert cli.main(["export", str(broken), "--crate", str(tmp_path / "b")]) == 2
    assert "TL001" in capsys.readouterr().err


def test_a_module_exports_as_a_struct_that_loads_its_tensors_by_name(tmp_path, capsys):
    nanogpt = REALWORLD / "modules" / "nanogpt.py"
    crate = tmp_path / "block"
    status = cli.main(["export", f"{nanogpt}:Block", "--init", "32, 4, 16", "--example-shapes", "Block:x=float32[2,8,32]",
                       "--crate", str(crate), "--backend", str(BACKEND), "--fixtures"])
    assert status == 0, capsys.readouterr().err
    lib = (crate / "src" / "lib.rs").read_text()
    assert "pub struct Block {" in lib and "pub fn forward(&self, x: &tch::Tensor) -> Result<tch::Tensor>" in lib
    names = re.findall(r'\("([\w.]+)", "Tensor\w+"\)', lib.split("pub const TENSORS")[1].split(";")[0])
    model = _import(nanogpt).Block(32, 4, 16)
    assert names and set(names) <= set(model.state_dict()), "the tensors load by their state_dict names"
    tested = cargo(crate, "test")
    assert passed(tested) == 4, tested.stdout  # random, special values, grown input, wrong dtype
    # a form without rewriting: nothing is written, the reason is printed
    holder = tmp_path / "holder.py"
    holder.write_text(
        "import torch.nn as nn\n\n\nclass Holder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.inner = nn.Linear(4, 4)\n\n    def forward(self, x):\n        layer = self.inner\n        return layer(x)\n"
    )
    status = cli.main(["export", f"{holder}:Holder", "--example-shapes", "Holder:x=float32[2,4]", "--crate", str(tmp_path / "h")])
    assert status == 1 and "self.inner is used as a value" in capsys.readouterr().err
    assert not (tmp_path / "h").exists()


ACCEPTED = sorted((REPO / "tests" / "corpus" / "accepted").glob("*.py"))


@pytest.mark.parametrize("path", ACCEPTED, ids=[p.stem for p in ACCEPTED])
def test_the_accepted_corpus_exports_and_matches_eager(path, tmp_path):
    """Every file of the accepted corpus exports, builds and passes its parity tests (files in
    the seed's `rextio_torch` spelling cannot be imported for fixtures: they only build; CUDA
    functions get no fixtures on a machine without a GPU)."""
    importable = "rextio_torch" not in path.read_text()
    crate = tmp_path / path.stem
    exported, _ = export(path, crate, backend=BACKEND, fixtures=importable)
    assert exported
    if importable:
        tested = cargo(crate, "test", "--", "--nocapture")
        cases = len(list((crate / "tests" / "fixtures").glob("*.safetensors")))
        assert passed(tested) == cases, tested.stdout
    else:
        cargo(crate, "build")
