"""Version and environment skew (issue 15): a torch that tch does not build against, under a
cache holding builds for the right one, and a cache directory shared with another user. Each
ends in a clear error or a fallback with the reason, never in loading code built for another
torch or by someone else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from torchlower import _analyze, _build_env
from torchlower._cli_doctor import checks

SCRIPT = '''
import json, sys, warnings
import torch
if len(sys.argv) > 1:
    torch.__version__ = sys.argv[1]  # what `pip install torch==…` over this cache would give
import torchlower
from torchlower import _build
from torchlower.types import TensorF32Cpu1D

SCALE = {scale!r}

def scaled(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return x * SCALE + 1.0

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    native = torchlower.compile(scaled)
    x = torch.linspace(-2.0, 2.0, 7)
    got = native(x)
import os
os.environ["TORCHLOWER_MODE"] = "native"
try:
    native(x)
    native_mode = "ran"
except torchlower.BuildError as error:
    native_mode = str(error)
print(json.dumps({{
    "route": native.route,
    "equal": torch.equal(got, x * SCALE + 1.0),
    "loaded": sorted(_build._loaded),
    "warnings": [str(w.message) for w in caught],
    "native_mode": native_mode,
}}))
'''


def _run(script: Path, *args: str, env: dict | None = None) -> dict:
    env = dict(os.environ if env is None else env, TORCHLOWER_MODE="auto")
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=1200, env=env)
    assert done.returncode == 0, f"the process died ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_new_torch_under_an_old_cache_falls_back_and_loads_nothing(tmp_path):
    script = tmp_path / f"skew_{uuid.uuid4().hex[:8]}.py"
    script.write_text(SCRIPT.format(scale=float(uuid.uuid4().int % 1000) / 7.0))
    built = _run(script)  # the torch tch builds against: built and cached
    assert built["route"] == "native" and built["equal"] and built["loaded"], built
    assert built["native_mode"] == "ran"
    skewed = _run(script, "2.99.0+cpu")  # the same module, the cache as it is, another torch
    assert skewed["route"] == "fallback" and skewed["equal"], skewed
    assert skewed["loaded"] == [], "nothing built for another torch is loaded"
    (warning,) = [w for w in skewed["warnings"] if "cannot build native code" in w]
    assert "torch 2.99.0+cpu is not the libtorch 2.13 that tch 0.26.0 builds against" in warning
    assert "pip install torch==2.13.*" in warning
    assert "is not the libtorch 2.13" in skewed["native_mode"], "native mode raises the reason"


def test_a_cache_others_can_write_is_neither_loaded_from_nor_built_into(tmp_path):
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    shared.chmod(0o777)  # a cache two users share
    script = tmp_path / f"shared_{uuid.uuid4().hex[:8]}.py"
    script.write_text(SCRIPT.format(scale=3.5))
    result = _run(script, env=dict(os.environ, TORCHLOWER_CACHE_DIR=str(shared)))
    assert result["route"] == "fallback" and result["equal"] and result["loaded"] == [], result
    (warning,) = [w for w in result["warnings"] if "cannot build native code" in w]
    assert f"the cache directory {shared} is writable by its group or others (mode 777)" in warning
    assert "writable by its group or others" in result["native_mode"]
    # the analysis still ran (the function's report says why it falls back), and nothing was
    # written there: no compiled analyzer, no crate, no module
    assert sorted(p.name for p in shared.iterdir()) == []


def test_a_cache_owned_by_another_user_is_refused(tmp_path, monkeypatch):
    root = tmp_path / "theirs"
    root.mkdir(mode=0o700)
    monkeypatch.setenv("TORCHLOWER_CACHE_DIR", str(root))
    assert _build_env.cache_problem() is None
    assert _analyze.cache_dir() == root.resolve() / "wasm"
    monkeypatch.setattr(os, "getuid", lambda: root.stat().st_uid + 1)  # as another user sees it
    problem = _build_env.cache_problem()
    assert problem and f"belongs to another user (uid {root.stat().st_uid})" in problem
    assert _analyze.cache_dir() is None, "the analyzer is compiled in memory instead"
    cache = next(c for c in checks() if c.what == "cache")
    assert cache.status == "missing" and "belongs to another user" in cache.fix


def test_doctor_names_the_torch_to_install(monkeypatch):
    import torch

    monkeypatch.setattr(torch, "__version__", "2.14.1")
    entry = next(c for c in checks() if c.what == "torch")
    assert entry.status == "missing"
    assert entry.fix == "torch 2.14.1 is not the libtorch 2.13 that tch 0.26.0 builds against: pip install torch==2.13.*"
    monkeypatch.setattr(torch, "__version__", "2.13.0+cu130")
    assert next(c for c in checks() if c.what == "torch").status == "ok"
