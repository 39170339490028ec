"""The native build: the analyzer's ``lib.rs`` → a generated crate → cargo → a loaded module.

One generated crate per analyzed source (its ``lib.rs`` holds every native function of the
module). Every crate builds into ONE cargo target folder per machine
(``<cache>/target``, see :func:`torchlower._build_env.cache_dir`), so ``tch``, ``torch-sys``
and the backend compile once and later modules only compile their own small crate.

The built module is cached under ``<cache>/modules/tl_<hash16>.so``, where the hash covers
everything that went into it: the emitted Rust, the backend's sources, the generated
``Cargo.toml`` (with its exact pins), the Python and torch versions and ``rustc -vV``. The
hash also names the Python module (the analyzer's ``__TORCHLOWER_MODULE__`` placeholder is
replaced by it), so two different builds never share a name inside one process.

Concurrent builds of the same module (threads or processes) serialise on a file lock and
the later one reuses the earlier's result; different modules build concurrently as far as
cargo's own lock on the target folder lets them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Iterator

from . import _build_env
from ._build_progress import BuildProgress

#: The token the analyzer emits as the ``#[pymodule]`` function name.
MODULE_PLACEHOLDER = "__TORCHLOWER_MODULE__"

#: Bumped whenever the layout of the generated crate changes (part of the hash).
_CRATE_FORMAT = "1"

_CARGO_STATUS = re.compile(
    r"^\s+(Compiling|Finished|Blocking|Updating|Downloading|Downloaded|Locking|Adding|Fresh|"
    r"Running|Checking|Building|Packaging)\b"
)


class BuildError(Exception):
    """The native extension could not be built or loaded (cargo missing, compile error…).

    ``details`` holds the relevant part of cargo's output (the first error blocks), and
    ``log_path`` the full log when one was written.
    """

    def __init__(self, message: str, details: str = "", log_path: Path | None = None):
        self.summary = message
        self.details = details
        self.log_path = log_path
        text = message
        if details:
            text += "\n" + details
        if log_path is not None:
            text += f"\n(full cargo output: {log_path})"
        super().__init__(text)


@dataclass(frozen=True)
class Extension:
    """A built and loaded native module."""

    name: str
    path: Path
    module: ModuleType
    #: True when cargo ran for this call (a cold or warm build), False on a cache hit.
    built: bool
    #: Seconds spent in this call (building and loading).
    seconds: float


_loaded: dict[str, ModuleType] = {}
_loaded_lock = threading.Lock()


def build_extension(rust_source: str, label: str = "module") -> Extension:
    """Build (or reuse) and load the extension whose ``lib.rs`` is ``rust_source``.

    ``label`` names the module in progress messages (e.g. the source file name).
    Raises :class:`BuildError` when cargo is missing or the build or the load fails.
    """
    started = time.monotonic()
    # Another torch than the one tch builds against: say so before cargo runs into torch-sys's
    # check (the cache key holds torch's version, so nothing built for another torch is loaded)
    refusal = _build_env.torch_mismatch() or _build_env.cache_problem()
    if refusal:
        raise BuildError(f"torchlower: cannot build native code: {refusal}")
    env = _build_env.build_env()
    try:
        cargo = _build_env.find_cargo(env)
        toolchain = _build_env.rustc_version(cargo)
    except _build_env.ToolchainMissing as error:
        raise BuildError(f"torchlower: cannot build native code: {error}") from None

    backend = _build_env.backend_dir()
    pins = _build_env.backend_pins(backend)
    manifest_template = _manifest(MODULE_PLACEHOLDER, backend, pins)
    digest = _build_hash(
        rust=rust_source,
        backend=_build_env.backend_fingerprint(backend),
        manifest=manifest_template,
        toolchain=toolchain,
    )
    name = f"tl_{digest[:16]}"

    with _loaded_lock:
        if name in _loaded:
            return Extension(name, _module_path(name), _loaded[name], False, time.monotonic() - started)

    built = False
    module_path = _module_path(name)
    if not _installed_intact(module_path):
        with _file_lock(_build_env.cache_dir() / "locks" / f"{name}.lock"):
            # another process may have built it meanwhile
            if not _installed_intact(module_path, repair=True):
                crate = _write_crate(name, rust_source, manifest_template.replace(MODULE_PLACEHOLDER, name))
                artifact = _run_cargo(cargo, env, crate, name, label)
                _install(artifact, module_path)
                built = True

    module = _load(name, module_path)
    return Extension(name, module_path, module, built, time.monotonic() - started)


# --- the generated crate ------------------------------------------------------------------


def _manifest(name: str, backend: Path, pins: dict[str, str]) -> str:
    """Cargo.toml of a generated crate: exact pins, a cdylib Python extension, own workspace."""
    backend_path = json.dumps(str(backend))  # a valid TOML basic string
    return f"""# Generated by torchlower: the native extension of one analyzed Python module.
[package]
name = "{name}"
version = "0.1.0"
edition = "2021"
publish = false

[lib]
name = "{name}"
path = "src/lib.rs"
crate-type = ["cdylib"]

[dependencies]
torchlower-backend = {{ path = {backend_path} }}
pyo3 = {{ version = "{pins['pyo3']}", features = ["extension-module"] }}
tch = {{ version = "{pins['tch']}", features = ["python-extension"] }}

# A workspace of its own, whatever folder the cache lives in.
[workspace]
"""


def _build_hash(**parts: str) -> str:
    import torch  # the extension is bound to this torch's ABI

    inputs = dict(parts)
    inputs.update(
        format=_CRATE_FORMAT,
        python=f"{sys.implementation.cache_tag} {sys.version}",
        torch=torch.__version__,
        platform=f"{platform.system()} {platform.machine()}",
    )
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def _write_crate(name: str, rust_source: str, manifest: str) -> Path:
    crate = _build_env.cache_dir() / "crates" / name
    (crate / "src").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text(manifest)
    # The analyzer's code with the module name filled in (API.md: the `#[pymodule]` body
    # calls `PyModuleMethods::add_function(m, …)`, so no trait import is needed).
    (crate / "src" / "lib.rs").write_text(rust_source.replace(MODULE_PLACEHOLDER, name))
    # Start from the dependency versions of the last successful build: every crate then
    # resolves tch's dependency tree identically and reuses the compiled units.
    shared_lock = _build_env.cache_dir() / "Cargo.lock"
    if shared_lock.is_file() and not (crate / "Cargo.lock").is_file():
        shutil.copyfile(shared_lock, crate / "Cargo.lock")
    return crate


def _module_path(name: str) -> Path:
    return _build_env.cache_dir() / "modules" / f"{name}.so"


# --- cargo ----------------------------------------------------------------------------------


def _run_cargo(cargo: str, env: dict[str, str], crate: Path, name: str, label: str) -> Path:
    """Runs ``cargo build --release`` with progress; returns the built shared library."""
    cache = _build_env.cache_dir()
    command = [
        cargo, "build", "--release", "--lib", "--color=never",
        "--message-format=json-render-diagnostics",
        "--manifest-path", str(crate / "Cargo.toml"),
        "--target-dir", str(cache / "target"),
    ]  # fmt: skip
    progress = BuildProgress(label, None)
    if progress.visible:
        progress.total = _expected_units(cargo, env, crate)
    try:
        # its own process group, so that stopping it stops the rustc processes it started
        process = subprocess.Popen(
            command, env=env, cwd=crate, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace", process_group=0,
        )  # fmt: skip
    except OSError as error:
        raise BuildError(f"torchlower: cannot run cargo ({cargo}): {error}") from None

    stderr_lines: list[str] = []
    drain = threading.Thread(target=lambda: stderr_lines.extend(process.stderr), daemon=True)
    drain.start()
    artifact: Path | None = None
    units = 0
    try:
        artifact, units = _follow_cargo(process, progress, name)
    except BaseException:
        # KeyboardInterrupt (a notebook's interrupt reaches this process only) or any other
        # exit: stop cargo too, so that no orphan keeps building and holding the target
        # folder's lock; cargo's fingerprints make the next build redo only what was cut off
        _stop(process)
        _forget_lock(crate)
        raise
    returncode = process.wait()
    drain.join()
    stderr = "".join(stderr_lines)
    if returncode != 0 or artifact is None:
        _forget_lock(crate)
        log_path = crate / "build-error.log"
        log_path.write_text(stderr)
        progress.finish(f"Native build of {label} failed after {progress.elapsed:.0f}s")
        raise BuildError(
            f"torchlower: building the native extension of {label} failed "
            f"(cargo exit status {returncode})",
            details=error_excerpt(stderr),
            log_path=log_path,
        )
    progress.finish(f"Built native extension of {label} in {progress.elapsed:.0f}s ({units} crates)")
    _record_units(units)
    shutil.copyfile(crate / "Cargo.lock", cache / "Cargo.lock.tmp")
    os.replace(cache / "Cargo.lock.tmp", cache / "Cargo.lock")
    return artifact


def _forget_lock(crate: Path) -> None:
    """Removes the crate's Cargo.lock after a failed or stopped build: cargo killed while
    writing it leaves it half-written, and every later build of the crate would fail to parse
    it. The next build starts again from the shared lock of the last successful one."""
    (crate / "Cargo.lock").unlink(missing_ok=True)


def _follow_cargo(process: subprocess.Popen, progress: BuildProgress, name: str) -> tuple[Path | None, int]:
    """Reads cargo's JSON messages to the end: (the built library of crate ``name``, units)."""
    artifact: Path | None = None
    units = 0
    with progress:
        for line in process.stdout:
            message = _json_or_none(line)
            if message is None or message.get("reason") != "compiler-artifact":
                continue
            units += 1
            progress.unit_done()
            target = message.get("target", {})
            if target.get("name") == name and "cdylib" in target.get("kind", []):
                artifact = next(
                    (Path(f) for f in message.get("filenames", []) if f.endswith((".so", ".dylib"))),
                    None,
                )
    return artifact, units


def _stop(process: subprocess.Popen) -> None:
    """Terminates cargo's process group (cargo and its rustc processes), killing what is left
    after 5 s."""
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def error_excerpt(stderr: str, limit: int = 40) -> str:
    """The part of cargo's stderr worth showing: its error blocks, without status lines."""
    lines = [line for line in stderr.splitlines() if not _CARGO_STATUS.match(line)]
    blocks: list[list[str]] = [[]]
    for line in lines:
        if line.startswith(("error", "warning")) and blocks[-1]:
            blocks.append([])
        blocks[-1].append(line)
    errors = [line for block in blocks if block and block[0].startswith("error") for line in block]
    chosen = errors or lines[-limit:]
    while chosen and not chosen[-1].strip():
        chosen.pop()
    return "\n".join(chosen[:limit])


def _json_or_none(line: str) -> dict | None:
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _units_file() -> Path:
    return _build_env.cache_dir() / "units.json"


def _record_units(units: int) -> None:
    with contextlib.suppress(OSError):
        _units_file().write_text(json.dumps({"units": units}))


def _expected_units(cargo: str, env: dict[str, str], crate: Path) -> int | None:
    """How many units cargo will report: the last build's count, else an estimate from
    ``cargo metadata`` (one unit per package, one more per build script)."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        return int(json.loads(_units_file().read_text())["units"])
    host = re.search(r"^host: (\S+)", _build_env.rustc_version(cargo), re.M)
    command = [cargo, "metadata", "--format-version", "1", "--manifest-path", str(crate / "Cargo.toml")]
    if host:
        command += ["--filter-platform", host.group(1)]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        metadata = json.loads(done.stdout)
        in_graph = {node["id"] for node in metadata["resolve"]["nodes"]}
        build_scripts = sum(
            1
            for package in metadata["packages"]
            if package["id"] in in_graph
            and any("custom-build" in target["kind"] for target in package["targets"])
        )
        return len(in_graph) + build_scripts
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError):
        return None


# --- install and load -----------------------------------------------------------------------


def _install(artifact: Path, module_path: Path) -> None:
    """Copy the built library into the cache with its digest beside it (`<name>.so.sha256`),
    each through a staging file and an atomic rename, the digest first: a crash or a full disk
    midway leaves a library that :func:`_installed_intact` refuses, never one it loads."""
    module_path.parent.mkdir(parents=True, exist_ok=True)
    staging = module_path.with_suffix(f".{os.getpid()}.tmp")
    shutil.copyfile(artifact, staging)
    with open(staging, "rb+") as handle:
        os.fsync(handle.fileno())
    digest_path = _digest_path(module_path)
    digest_staging = digest_path.with_suffix(f".{os.getpid()}.tmp")
    digest_staging.write_text(_file_digest(staging) + "\n")
    os.replace(digest_staging, digest_path)
    os.replace(staging, module_path)


def _digest_path(module_path: Path) -> Path:
    return module_path.with_name(module_path.name + ".sha256")


def _file_digest(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _installed_intact(module_path: Path, repair: bool = False) -> bool:
    """Whether the cached library can be loaded safely. Loading a damaged one (truncated by a
    full disk or a crash mid-copy) does not raise: the dynamic loader maps pages past the end
    of the file and the process dies of SIGBUS. So the file must match the digest written when
    it was installed, and its ELF segments must lie inside it. With ``repair`` (under the
    build lock), a damaged file is removed for the caller to rebuild, and the user is told."""
    if not module_path.is_file():
        return False
    digest_path = _digest_path(module_path)
    problem = _elf_problem(module_path)
    # (a library installed before digests were written gets the structure check alone)
    if problem is None and digest_path.is_file():
        if _file_digest(module_path) != digest_path.read_text(errors="replace").strip():
            problem = "its contents differ from the digest written when it was built"
    if problem is None:
        return True
    if repair:
        import warnings

        warnings.warn(f"torchlower: the cached extension {module_path} is damaged ({problem}); rebuilding it", RuntimeWarning, stacklevel=3)
        for path in (module_path, digest_path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    return False


def _elf_problem(path: Path) -> str | None:
    """What is wrong with the ELF structure of a 64-bit little-endian shared library (the
    Linux builds), or None: every loadable segment and the section header table must lie
    inside the file. Other formats are left to the digest."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        header = handle.read(64)
        if header[:4] != b"\x7fELF":
            return "not an ELF file" if sys.platform.startswith("linux") else None
        if header[4:6] != b"\x02\x01" or len(header) < 64:  # not 64-bit little-endian
            return None if len(header) == 64 else f"it is {size} bytes, shorter than an ELF header"
        phoff, shoff = struct.unpack_from("<QQ", header, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", header, 0x36)
        if shoff + shentsize * shnum > size:
            return f"it is {size} bytes, shorter than its section headers"
        if phoff + phentsize * phnum > size:
            return f"it is {size} bytes, shorter than its program headers"
        handle.seek(phoff)
        table = handle.read(phentsize * phnum)
    for i in range(phnum):
        kind, _flags, offset, _vaddr, _paddr, filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
        if kind == 1 and offset + filesz > size:  # PT_LOAD
            return f"it is {size} bytes, shorter than its loadable segment at {offset}+{filesz}"
    return None


def _load(name: str, path: Path) -> ModuleType:
    with _loaded_lock:
        if name in _loaded:
            return _loaded[name]
        import torch  # noqa: F401  (loads libtorch and libtorch_python, which the module links)

        try:
            loader = importlib.machinery.ExtensionFileLoader(name, str(path))
            spec = importlib.util.spec_from_file_location(name, path, loader=loader)
            if spec is None:
                raise ImportError(f"no module spec for {path}")
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
        except ImportError as error:
            raise BuildError(f"torchlower: the built extension {path} does not load: {error}") from None
        _loaded[name] = module
        return module


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock held by this process (and thread) until the block ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
