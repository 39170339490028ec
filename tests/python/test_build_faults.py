"""Faults during a native build lose nothing: an interrupt (Ctrl+C in a terminal, or a
notebook's interrupt, which reaches the Python process only) stops cargo with it, and cargo
killed mid-build makes that call fall back with a BuildError; either way the next build in a
fresh process succeeds and computes eager's values.

Each case runs in a fresh interpreter on a module of its own (a constant in the source gives
it a hash no other test shares), so its crate is really compiled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

SCRIPT = '''
import sys, warnings
import torch
import torchlower
from torchlower.types import TensorF32Cpu1D

SCALE = {scale!r}

def scaled(x: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return torch.tanh(x) * SCALE

print("compiling", flush=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    native = torchlower.compile(scaled)
x = torch.linspace(-2.0, 2.0, 7)
assert torch.equal(native(x), torch.tanh(x) * SCALE)
print("route", native.route, "warnings", len([w for w in caught if "BuildWarning" in type(w.message).__name__]), flush=True)
'''


#: the default mode, whatever the test session runs in: a failed build falls back
ENV = {**os.environ, "TORCHLOWER_MODE": "auto"}


def _script(tmp_path: Path) -> Path:
    path = tmp_path / f"fault_{uuid.uuid4().hex[:8]}.py"
    path.write_text(SCRIPT.format(scale=1.0 + uuid.uuid4().int % 1000 / 1000))
    return path


def _cargo_processes_for(crate_hint: str) -> list[tuple[int, str]]:
    """(pid, command line) of running cargo/rustc processes that mention ``crate_hint``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if crate_hint in command and ("cargo" in command or "rustc" in command):
            found.append((int(proc.name), command))
    return found


def _wait_for_cargo(process: subprocess.Popen, seconds: float = 60) -> list[tuple[int, str]]:
    """Waits until the child's build has started cargo on a generated crate; its commands."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        running = _cargo_processes_for("/crates/tl_")
        if running:
            return running
        time.sleep(0.05)
    return []


def _default_sigint() -> None:
    """In the child: SIGINT as a terminal gives it (a shell's background job inherits it
    ignored, and Python then installs no KeyboardInterrupt handler)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_interrupt_during_a_build_stops_cargo_and_the_next_build_works(tmp_path):
    script = _script(tmp_path)
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=_default_sigint, env=ENV)
    assert child.stdout.readline().strip() == "compiling"
    running = _wait_for_cargo(child)
    assert running, "the build never started cargo"
    crate = next(part for part in running[0][1].split() if "/crates/tl_" in part)
    crate_dir = crate.split("/crates/")[1].split("/")[0]
    os.kill(child.pid, signal.SIGINT)  # the Python process only, as a notebook interrupt
    _, stderr = child.communicate(timeout=60)
    assert child.returncode != 0 and "KeyboardInterrupt" in stderr, stderr[-2000:]
    time.sleep(0.5)
    assert not _cargo_processes_for(crate_dir), "cargo kept building after the interrupt"
    again = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=900, env=ENV)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "route native warnings 0" in again.stdout


def test_cargo_killed_mid_build_falls_back_then_the_next_build_works(tmp_path):
    script = _script(tmp_path)
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    assert child.stdout.readline().strip() == "compiling"
    running = _wait_for_cargo(child)
    assert running, "the build never started cargo"
    for pid, command in _cargo_processes_for("/crates/tl_"):
        if command.split()[0].endswith("cargo"):
            os.kill(pid, signal.SIGKILL)
    stdout, stderr = child.communicate(timeout=300)
    assert child.returncode == 0, stderr[-2000:]
    assert "route fallback warnings 1" in stdout, stdout + stderr[-2000:]
    again = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=900, env=ENV)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "route native warnings 0" in again.stdout
