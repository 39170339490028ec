"""Where the native build happens and with what: cache folder, backend sources, toolchain.

Everything here is an input of the build; :mod:`torchlower._build` hashes what it returns so
that a change to any of them (a new torch, another rustc, an edited backend) builds afresh.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
from functools import lru_cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


class ToolchainMissing(Exception):
    """cargo (or rustc) is not installed or not runnable."""


def cache_dir() -> Path:
    """``$TORCHLOWER_CACHE_DIR``, else ``$XDG_CACHE_HOME/torchlower``, else ``~/.cache/torchlower``.

    Holds the one cargo target folder shared by every generated crate of this machine (so
    tch and the backend compile once), the generated crates, the built modules and the
    compiled analyzer (``wasm/``). Created private to the user (0700): what it holds is code
    this process loads.
    """
    explicit = os.environ.get("TORCHLOWER_CACHE_DIR")
    if explicit:
        path = Path(explicit).expanduser().resolve()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
        path = (base / "torchlower").resolve()
    if not path.is_dir():
        # a path that cannot be made (a file there, a read-only parent) is reported by the
        # step that writes into it: the analyzer then runs without its module cache, and a
        # build fails with a BuildError (fallback)
        with contextlib.suppress(OSError):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def cache_problem(path: Path | None = None) -> str | None:
    """Why the cache directory must not be used, or None. It holds code this process loads
    (built extensions, the compiled analyzer), so one that another user owns, or that its
    group or others may write (a cache shared by two users), could hand us their code: we
    neither load from it nor build into it."""
    path = cache_dir() if path is None else path
    try:
        info = path.stat()
    except OSError:
        return None  # not there: the step that writes into it reports why
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return (f"the cache directory {path} belongs to another user (uid {info.st_uid}); set TORCHLOWER_CACHE_DIR "
                "to a directory of your own")
    if info.st_mode & 0o022:
        return (f"the cache directory {path} is writable by its group or others (mode {info.st_mode & 0o777:o}); "
                f"make it private (chmod 700 {path}) or set TORCHLOWER_CACHE_DIR to a directory of your own")
    return None


def backend_dir() -> Path:
    """The ``torchlower-backend`` crate the generated code builds against.

    In order: ``$TORCHLOWER_BACKEND_DIR`` (for developing the backend), the copy shipped
    inside the package (``torchlower/backend_src``, put there by ``scripts/setup.sh``), and in
    a development checkout the repository's ``native-backend/``.
    """
    explicit = os.environ.get("TORCHLOWER_BACKEND_DIR")
    if explicit:
        return Path(explicit).expanduser().resolve()
    shipped = _PACKAGE_DIR / "backend_src"
    if (shipped / "Cargo.toml").is_file():
        return shipped
    checkout = _PACKAGE_DIR.parents[2] / "native-backend"
    if (checkout / "Cargo.toml").is_file():
        return checkout
    return shipped  # missing: cargo's error will say so and the build falls back


def backend_fingerprint(directory: Path) -> str:
    """Hash of the backend's manifests, build script and every source file (paths and
    contents: the C++ shim in ``src/`` too), the op table crate inside it (``ops/``) included."""
    digest = hashlib.sha256()
    files = [directory / "Cargo.toml", directory / "build.rs", directory / "ops" / "Cargo.toml"]
    for source in (directory / "src", directory / "ops" / "src"):
        if source.is_dir():
            files += sorted(p for p in source.rglob("*") if p.is_file())
    for path in files:
        digest.update(str(path.relative_to(directory)).encode())
        digest.update(b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


#: The libtorch version the pinned tch builds against (torch-sys checks it; a mismatch fails
#: the build unless LIBTORCH_BYPASS_VERSION_CHECK is set, which torchlower never does).
TCH_LIBTORCH = "2.13"


def torch_mismatch() -> str | None:
    """Why the installed torch cannot build native code (its version is not the libtorch the
    pinned tch builds against), with the fix; None when it can."""
    import torch

    version = torch.__version__.split("+")[0]
    if version == TCH_LIBTORCH or version.startswith(TCH_LIBTORCH + "."):
        return None
    tch = backend_pins(backend_dir())["tch"].lstrip("=")
    return (f"torch {torch.__version__} is not the libtorch {TCH_LIBTORCH} that tch {tch} builds against: "
            f"pip install torch=={TCH_LIBTORCH}.*")


def backend_pins(directory: Path) -> dict[str, str]:
    """Exact versions of ``pyo3`` and ``tch`` from the backend's manifest.

    The generated crate must depend on the very same versions (it uses pyo3's macros
    directly and tch through the backend), so they are read from one place.
    """
    pins = {"pyo3": "=0.24.2", "tch": "=0.26.0"}
    try:
        manifest = tomllib.loads((directory / "Cargo.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return pins
    for name in pins:
        spec = manifest.get("dependencies", {}).get(name)
        version = spec.get("version") if isinstance(spec, dict) else spec
        if isinstance(version, str):
            pins[name] = version if version.startswith("=") else f"={version}"
    return pins


def build_env() -> dict[str, str]:
    """The environment cargo runs in.

    ``torch-sys`` finds libtorch through the ``python`` on ``PATH`` (``LIBTORCH_USE_PYTORCH``),
    so this interpreter's bin folder goes first: the extension is built against the torch it
    will be loaded into. The version-check bypass is removed, never set.
    """
    env = dict(os.environ)
    env.pop("LIBTORCH_BYPASS_VERSION_CHECK", None)
    env["LIBTORCH_USE_PYTORCH"] = "1"
    interpreter_bin = str(Path(sys.executable).parent)
    extra = [interpreter_bin]
    cargo_home_bin = Path(env.get("CARGO_HOME", Path.home() / ".cargo")) / "bin"
    env["PATH"] = os.pathsep.join(extra + [env.get("PATH", ""), str(cargo_home_bin)])
    if sys.prefix != sys.base_prefix:
        env["VIRTUAL_ENV"] = sys.prefix
    env["PYO3_PYTHON"] = sys.executable
    return env


def find_cargo(env: dict[str, str]) -> str:
    """Path of cargo (``$TORCHLOWER_CARGO`` or ``cargo`` on the build ``PATH``)."""
    explicit = os.environ.get("TORCHLOWER_CARGO")
    if explicit:
        if Path(explicit).is_file() and os.access(explicit, os.X_OK):
            return explicit
        raise ToolchainMissing(f"TORCHLOWER_CARGO={explicit} is not an executable file")
    found = shutil.which("cargo", path=env.get("PATH"))
    if found is None:
        raise ToolchainMissing(
            "cargo was not found on PATH; install Rust (https://rustup.rs) to build native "
            "extensions"
        )
    return found


@lru_cache(maxsize=4)
def rustc_version(cargo: str) -> str:
    """``rustc -vV`` of the toolchain next to ``cargo`` (part of the build hash)."""
    env = build_env()
    sibling = Path(cargo).with_name("rustc")
    rustc = str(sibling) if sibling.exists() else (shutil.which("rustc", path=env["PATH"]) or "rustc")
    try:
        done = subprocess.run(
            [rustc, "-vV"], env=env, capture_output=True, text=True, timeout=60, check=True
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise ToolchainMissing(f"rustc is not runnable: {error}") from error
    return done.stdout.strip()
