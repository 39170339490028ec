"""``torchlower doctor``: what a native build needs, what this machine has, and the fix for
anything missing.

Each line is ``ok``, ``missing`` (a build cannot work without it), ``warn`` (builds work, but
not as well) or ``info``, with the fix after ``→``. Exit status 0 when nothing is missing, 1
otherwise.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Check:
    status: str  # "ok" | "missing" | "warn" | "info"
    what: str
    found: str
    fix: str = ""

    def line(self) -> str:
        text = f"{self.status:<8}{self.what:<22}{self.found}"
        return text + (f"\n{'':<30}→ {self.fix}" if self.fix else "")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")


def checks() -> list[Check]:
    from . import _build_env
    from ._cli_cache import folder_size, human

    found: list[Check] = [Check("info", "python", f"{platform.python_version()} ({sys.executable})")]
    try:
        import torch

        lib = Path(torch.__file__).parent / "lib"
        mismatch = _build_env.torch_mismatch()
        found.append(Check("missing" if mismatch else "ok", "torch", f"{torch.__version__} ({lib})", mismatch or ""))
    except ImportError:
        found.append(Check("missing", "torch", "not importable", f"pip install torch=={_build_env.TCH_LIBTORCH}.*"))

    env = _build_env.build_env()
    try:
        cargo = _build_env.find_cargo(env)
        rustc = _build_env.rustc_version(cargo).splitlines()[0]
        found.append(Check("ok", "cargo / rustc", f"{cargo}; {rustc}"))
    except _build_env.ToolchainMissing as error:
        found.append(Check("missing", "cargo / rustc", str(error), "curl https://sh.rustup.rs -sSf | sh -s -- -y (then a new shell)"))
    compiler = shutil.which("c++", path=env.get("PATH")) or shutil.which("g++", path=env.get("PATH"))
    found.append(Check("ok" if compiler else "missing", "C++ compiler", compiler or "no c++ or g++ on PATH",
                       "" if compiler else "install g++ (torch-sys compiles tch's C++ shim): apt install g++"))

    backend = _build_env.backend_dir()
    pins = _build_env.backend_pins(backend)
    present = (backend / "Cargo.toml").is_file()
    found.append(Check("ok" if present else "missing", "backend sources", f"{backend} (tch {pins['tch'].lstrip('=')}, pyo3 {pins['pyo3'].lstrip('=')})",
                       "" if present else "reinstall torchlower (the package ships torchlower/backend_src)"))

    root = _build_env.cache_dir()
    writable = root.is_dir() and os.access(root, os.W_OK)
    size = human(folder_size(root)) if root.is_dir() else "absent"
    problem = _build_env.cache_problem(root)
    found.append(Check("ok" if writable and not problem else "missing", "cache", f"{root} ({size})",
                       problem or ("" if writable else "set TORCHLOWER_CACHE_DIR to a writable folder")))
    warm = any((root / "target" / "release" / "deps").glob("libtch-*.rlib"))
    found.append(Check("ok" if warm else "warn", "shared backend", "built" if warm else "not built yet",
                       "" if warm else "torchlower warmup (builds it now, so a first compile takes seconds)"))

    found.append(_cuda_driver())
    found.append(_nvjitlink())
    return found


def _cuda_driver() -> Check:
    named = os.environ.get("TORCHLOWER_CUDA_DRIVER")
    candidates = [named] if named else ["libcuda.so.1", "libcuda.so"]
    for candidate in candidates:
        try:
            ctypes.CDLL(candidate)
            return Check("ok", "CUDA driver", f"{candidate} loads (Cuda0 markers can run)")
        except OSError:
            continue
    return Check("info", "CUDA driver", f"none ({', '.join(candidates)} not loadable): Cuda0 functions fall back or raise",
                 "only for GPU code: install the NVIDIA driver, or set TORCHLOWER_CUDA_DRIVER to libcuda.so.1")


def _nvjitlink() -> Check:
    """nvJitLink as the GPU tests find it: ``$TORCHLOWER_NVJITLINK``, else the copy torch's
    CUDA wheels install under ``site-packages/nvidia/*/lib``."""
    named = os.environ.get("TORCHLOWER_NVJITLINK")
    candidates = [Path(named)] if named else []
    for folder in map(Path, sys.path):
        candidates += sorted((folder / "nvidia").glob("*/lib/libnvJitLink.so.*"))
    for candidate in candidates:
        if candidate.is_file():
            return Check("info", "nvJitLink", f"{candidate} (the GPU tests assemble every PTX kernel with it)")
    return Check("info", "nvJitLink", "not found (only the GPU tests use it)",
                 "pip install nvidia-nvjitlink (or set TORCHLOWER_NVJITLINK) to assemble PTX in the tests")


def main(args: argparse.Namespace) -> int:
    found = checks()
    if args.json:
        import json

        print(json.dumps([check.__dict__ for check in found], indent=2))
    else:
        print("\n".join(check.line() for check in found))
        missing = [check.what for check in found if check.status == "missing"]
        print(f"\n{'native builds can run' if not missing else 'missing: ' + ', '.join(missing)}")
    return 1 if any(check.status == "missing" for check in found) else 0
