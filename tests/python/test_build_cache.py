"""A damaged extension in the build cache (a full disk or a crash mid-copy) is rebuilt, never
loaded: loading a truncated shared library kills the process with SIGBUS instead of raising.

Each case runs the user's flow in a fresh interpreter (so a regression shows as that process
dying, not as pytest dying) on a module of its own (a constant in the source gives it a hash
no other test shares), damages the cached library the way a fault would, and runs the same
flow again: it must route native, compute eager's values, warn once and leave an intact
library behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from torchlower import _build

SCRIPT = '''
import json, sys, warnings
import torch
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
source = open(__file__).read()
extension = _build.build_extension(torchlower.analyze(source, __file__)["rust"])
print(json.dumps({{
    "route": native.route,
    "equal": torch.equal(got, x * SCALE + 1.0),
    "path": str(extension.path),
    "warnings": [str(w.message) for w in caught if "damaged" in str(w.message)],
}}))
'''


def _run(script: Path) -> dict:
    env = dict(os.environ, TORCHLOWER_MODE="auto")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=1200, env=env)
    assert done.returncode == 0, f"the process died ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _zero_a_block(path: Path) -> None:
    # the size stays, a block in the middle reads as zeros (a crash before the data was written)
    with open(path, "rb+") as handle:
        handle.seek(path.stat().st_size // 2)
        handle.write(b"\0" * 4096)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


@pytest.mark.parametrize("damage", [_truncate, _zero_a_block, _empty], ids=["truncated", "zeroed-block", "empty"])
def test_a_damaged_cached_extension_is_rebuilt_not_loaded(damage, tmp_path):
    script = tmp_path / "scaled_module.py"
    script.write_text(SCRIPT.format(scale=1.0 + (uuid.uuid4().int % 1000) / 1024.0))
    first = _run(script)
    assert first["route"] == "native" and first["equal"] and not first["warnings"]
    library = Path(first["path"])
    assert library.is_file() and _build._installed_intact(library)

    damage(library)
    if damage is not _zero_a_block:
        assert _build._elf_problem(library) is not None, "the structure check sees the damage"

    second = _run(script)
    assert second["route"] == "native" and second["equal"], second
    assert second["path"] == first["path"]
    assert len(second["warnings"]) == 1 and "damaged" in second["warnings"][0], second["warnings"]
    assert _build._installed_intact(library), "the rebuilt library is whole again"


def test_the_structure_check_reads_real_libraries():
    # the backend's own extension and torch's libraries are whole ELF files
    import torch

    libraries = [Path(_build.__file__).with_name(name) for name in os.listdir(Path(_build.__file__).parent) if name.endswith(".so")]
    libraries += sorted((Path(torch.__file__).parent / "lib").glob("libc10.so"))
    assert libraries
    for library in libraries:
        assert _build._elf_problem(library) is None, library


def test_a_new_cache_directory_is_private_to_the_user(tmp_path, monkeypatch):
    from torchlower import _analyze, _build_env

    root = tmp_path / "fresh" / "torchlower-cache"
    monkeypatch.setenv("TORCHLOWER_CACHE_DIR", str(root))
    assert _build_env.cache_dir() == root.resolve()
    assert (root.stat().st_mode & 0o777) == 0o700
    assert _analyze.cache_dir() == root.resolve() / "wasm", "one cache root for the analyzer and the builds"
