"""The installed package as users get it: ``scripts/build-wheel.sh`` builds the wheel, which is
installed into a fresh virtualenv outside the repository (torch comes from the test
environment, nothing from the checkout), and there ``torchlower check``, ``torchlower.compile``
of an example (built from the wheel's own backend sources, compared with eager), the
playground server and ``torchlower bench --quick`` all work."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _site_packages() -> Path:
    return Path(next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()))


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv python, venv bin folder, a work folder outside the repository)."""
    root = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(["scripts/build-wheel.sh"], cwd=REPO, env=dict(os.environ, TORCHLOWER_SKIP_SETUP="1"),
                           capture_output=True, text=True, timeout=1800)
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = Path(built.stdout.strip().splitlines()[-1])
    assert wheel.is_file() and wheel.name.startswith("torchlower-")
    venv = root / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    # torch and its dependencies from the test environment, through a folder of links that
    # leaves out everything torchlower (the editable install of the checkout)
    deps = root / "deps"
    deps.mkdir()
    for entry in _site_packages().iterdir():
        if not entry.name.lower().startswith(("torchlower", "_torchlower")) and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    venv_site = next((venv / "lib").glob("python3*/site-packages"))
    (venv_site / "zz_test_deps.pth").write_text(f"{deps}\n")
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    work = root / "work"
    work.mkdir()
    (work / "model.py").write_text((REPO / "examples" / "model.py").read_text())
    return python, venv / "bin", work


def _run(installed, *argv: str, timeout: int = 900) -> subprocess.CompletedProcess:
    python, bin_dir, work = installed
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "TORCHLOWER_BACKEND_DIR")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(list(argv), cwd=work, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_package_comes_from_the_wheel(installed):
    python, _, work = installed
    done = _run(installed, str(python), "-c", "import torchlower, torchlower._build_env as e; print(torchlower.__file__); print(e.backend_dir())")
    assert done.returncode == 0, done.stderr
    package, backend = done.stdout.split()
    assert "site-packages" in package and str(REPO) not in package
    assert backend.endswith("torchlower/backend_src") and str(REPO) not in backend


def test_check_runs(installed):
    done = _run(installed, "torchlower", "check", "model.py")
    assert done.returncode == 0, done.stderr
    assert "model.py:" in done.stdout and "native" in done.stdout


def test_compile_builds_from_the_wheel_and_matches_eager(installed):
    python, _, _ = installed
    program = (
        "import torch, model, torchlower\n"
        "f = torchlower.compile(model.pooled_head)\n"
        "assert f.route == 'native', f.reason\n"
        "x, w, b = torch.randn(16, 128), torch.randn(64, 128), torch.randn(64)\n"
        "torch.testing.assert_close(f(x, w, b), model.pooled_head(x, w, b), rtol=1e-5, atol=1e-6)\n"
        "print('ok')\n"
    )
    done = _run(installed, str(python), "-c", program, timeout=1800)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


def test_playground_serves_its_page(installed):
    _, bin_dir, work = installed
    server = subprocess.Popen([str(bin_dir / "torchlower"), "playground", "--port", "0", "--no-open"], cwd=work,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        assert " at http://127.0.0.1:" in line, line + server.stderr.read()
        url = line.split(" at ")[1].split()[0]
        with urllib.request.urlopen(url, timeout=30) as response:
            page = response.read().decode()
        assert response.status == 200 and "<html" in page.lower()
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_bench_quick_runs_from_the_packaged_cells(installed):
    _, _, work = installed
    started = time.monotonic()
    done = _run(installed, "torchlower", "bench", "--quick", "--cells", "A1", "--lanes", "native,eager", "--no-chart", timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "A1" in done.stdout and list((work / "torchlower-benchmarks").glob("*.json")), done.stdout
    print(f"bench --quick: {time.monotonic() - started:.0f}s")
