"""examples/rust-service: an HTTP endpoint over a crate written by `torchlower export`, started
on 127.0.0.1 and asked over HTTP; its answers must equal eager PyTorch's bit for bit, and a
request the model refuses must come back as a 400 with the model's error (run.sh does the same
with a release build and prints the latency next to a Python server)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

from safetensors.torch import save_file

from test_export import REPO, cargo
from torchlower._cli_export import export

EXAMPLE = REPO / "examples" / "rust-service"


def _serve_check():
    spec = importlib.util.spec_from_file_location("_serve_check", EXAMPLE / "serve_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["_serve_check"] = module
    spec.loader.exec_module(module)
    return module


def test_the_service_answers_as_eager_pytorch(tmp_path):
    exported, _ = export(EXAMPLE / "model.py", tmp_path / "model-rs")
    assert [e["symbol"] for e in exported] == ["classify"]
    shutil.copytree(EXAMPLE / "server", tmp_path / "server", ignore=shutil.ignore_patterns("target", "Cargo.lock"))
    cargo(tmp_path / "server", "build")
    binary = REPO / "target" / "debug" / "classify-service"
    check = _serve_check()
    classify, weights = check.load_model(), check.make_weights()
    save_file(weights, str(tmp_path / "weights.safetensors"))
    process, port = check.start_rust(binary, tmp_path / "weights.safetensors")
    try:
        check.check_answers(port, classify, weights)
        assert check.median_latency(port, 50, 4) > 0
    finally:
        process.kill()
        process.wait()
