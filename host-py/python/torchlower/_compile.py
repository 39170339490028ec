"""``torchlower.compile(fn)`` and ``@torchlower.native``: route a function to native code.

``compile`` analyzes the module ``fn`` is defined in (its whole source file), builds one
extension for all native functions of that module (shared with every other ``compile`` of the
same module, see :mod:`torchlower._build`), and returns a callable with

- ``.route``: ``"native"``, ``"fallback"``, or ``"specialising"`` for a function with
  unannotated parameters, specialised on each call's argument types
  (:mod:`torchlower._specialise`; ``.specialisations`` holds one routed callable per
  combination met);
- ``.report``: the analyzer's entry for this function (``None`` if it has none);
- ``.reason``: why the function falls back (``None`` when native).

Unsupported code never raises: it falls back to the original Python. A failing build falls
back too, with a :class:`BuildWarning` carrying cargo's error — except in ``native`` mode.

The mode is ``TORCHLOWER_MODE``, read at every call:

- ``auto`` (default): native where it can be, except inside an enabled ``torch.autocast``
  region (CPU or CUDA), where eager computes matmuls and convolutions in a lower precision:
  there the original Python runs. When native code refuses the arguments
  (the boundary's ``TypeError``/``ValueError``: a float64 tensor, a wrong rank, a bool for an
  int…) or its 64-bit integer arithmetic overflows where Python ints would not
  (``OverflowError``), the call reruns the original Python, which returns eager's result or
  raises eager's own error. This is safe because native functions are pure: they never
  mutate their inputs, so nothing of the refused attempt is visible. Errors eager raises as
  well (``RuntimeError`` for a size mismatch, ``ZeroDivisionError``) propagate unchanged.
- ``native``: every error surfaces; ``compile`` raises :class:`BuildError` when the build
  fails, and calling a function that is not native raises it too.
- ``fallback``: always the original Python.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
import tokenize
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

if TYPE_CHECKING:
    import torch

#: A function given to :func:`compile`: the callable returned is called the same way.
_Function = TypeVar("_Function", bound=Callable[..., Any])

from . import _modules, _specialise
from ._build import BuildError, build_extension

__all__ = ["BuildError", "BuildWarning", "compile", "native", "current_mode"]

_MODE_VARIABLE = "TORCHLOWER_MODE"
_MODES = ("auto", "native", "fallback")

# Reading the mode costs one dict lookup per call: os.environ's own mapping (bytes keys on
# POSIX) is consulted directly, because os.environ.get() of a missing key goes through a
# raised and caught KeyError (~0.3 µs, a visible share of a native call).
_environ_data = getattr(os.environ, "_data", None)
_environ_key: Any = (
    os.environ.encodekey(_MODE_VARIABLE) if _environ_data is not None else _MODE_VARIABLE  # type: ignore[attr-defined]
)
_environ_lookup = _environ_data.get if _environ_data is not None else os.environ.get
_decode = os.environ.decodevalue if _environ_data is not None else (lambda v: v)  # type: ignore[attr-defined]

# Native errors that make `auto` mode rerun the Python function (see the module docstring).
_RERUN_IN_PYTHON = (TypeError, ValueError, OverflowError)


def _after_writes(error: BaseException) -> bool:
    """Whether a native error came after the function wrote into its arguments (TL212): auto
    mode raises it, as eager would, instead of rerunning Python on the changed arguments."""
    return getattr(error, "torchlower_after_writes", False) is True


class BuildWarning(UserWarning):
    """A function falls back to Python because its module's native build failed."""


def current_mode() -> str:
    """The current ``TORCHLOWER_MODE`` (``auto`` when unset; unknown values raise)."""
    raw = _environ_lookup(_environ_key)
    return "auto" if raw is None else _parse_mode(raw)


def _parse_mode(raw: Any) -> str:
    value = _decode(raw).strip().lower() if not isinstance(raw, str) else raw.strip().lower()
    if value in _MODES or value == "":
        return value or "auto"
    raise ValueError(f"TORCHLOWER_MODE must be one of auto, native, fallback; got {value!r}")


# --- one build per module -------------------------------------------------------------------


@dataclass
class ModuleBuild:
    """The analysis and (attempted) build of one source file."""

    filename: str
    report: dict | None
    extension: ModuleType | None
    error: BuildError | None
    #: Seconds spent building (0 on a cache hit), for the CLI.
    build_seconds: float = 0.0
    #: Whether cargo ran (False: the module came from the cache).
    built: bool = False
    warned: bool = False


_module_builds: dict[tuple[str, str], ModuleBuild] = {}
_module_builds_lock = threading.Lock()


def build_module(source: str, filename: str, report: dict | None = None) -> ModuleBuild:
    """Analyze ``source`` (unless its ``report`` is given) and build its native functions,
    cached per process and on disk.

    Never raises for analysis or build failures: they are recorded in ``.error``.
    """
    key = (filename, source)
    with _module_builds_lock:
        cached = _module_builds.get(key)
        if cached is not None:
            return cached
        build = _analyze_and_build(source, filename, report)
        _module_builds[key] = build
        return build


def _analyze_and_build(source: str, filename: str, report: dict | None) -> ModuleBuild:
    if report is None:
        from ._analyze import analyze

        try:
            report = analyze(source, filename)
        except Exception as error:  # the analyzer itself failed: nothing can be native
            message = f"torchlower: analysis of {filename} failed: {error}"
            return ModuleBuild(filename, None, None, BuildError(message))
    rust = report.get("rust")
    if not rust or not any(f.get("route") == "native" for f in report.get("functions", [])):
        return ModuleBuild(filename, report, None, None)
    try:
        extension = build_extension(rust, label=Path(filename).name)
    except BuildError as error:
        return ModuleBuild(filename, report, None, error)
    return ModuleBuild(filename, report, extension.module, None, extension.seconds, extension.built)


# --- compile ----------------------------------------------------------------------------------


@overload
def compile(fn: torch.nn.Module) -> Callable[..., Any]: ...  # noqa: A001
@overload
def compile(fn: _Function) -> _Function: ...  # noqa: A001
def compile(fn: Any) -> Any:  # noqa: A001 - the public name of the API
    """Analyze ``fn``'s module, build its native extension and route ``fn`` to it.

    See the module docstring for the returned callable and the modes.
    """
    if getattr(fn, "__torchlower__", False):
        return fn
    if _is_module(fn):
        return _compile_module(fn)
    written = _source_function(fn)
    located = _locate_source(written)
    if isinstance(located, str):
        return _fallback_callable(fn, None, located)
    filename, source = located
    build = build_module(source, filename)
    entry = _report_entry(build.report, written)
    if entry is not None and entry.get("route") != "native" and _specialise.unannotated(written):
        return _specialising(fn, written, filename, source, entry)
    return _routed(fn, build, entry, filename)


def _source_function(fn: Any) -> Any:
    """The function whose source ``fn`` runs: ``fn`` itself, or the one torch's
    ``@torch.no_grad()`` wrapped (``torch.utils._contextlib``'s ``decorate_context``, whose
    ``__wrapped__`` it is). Only that wrapper is looked through: any other one (``autocast(…)(f)``,
    a user's ``functools.wraps`` decorator applied by a call) changes what ``fn`` does in ways
    the source of ``f`` does not show, so ``fn`` stays what is compiled (and falls back). The
    analyzer also sees the decorators written in the source and routes native only where it
    understands every one; the fallback still calls ``fn``."""
    inner = fn
    for _ in range(8):  # a few nested grad-mode decorators at most
        code = getattr(inner, "__code__", None)
        wrapped = getattr(inner, "__wrapped__", None)
        if code is None or wrapped is None or not code.co_filename.replace("\\", "/").endswith("torch/utils/_contextlib.py"):
            break
        inner = wrapped
    return inner if inspect.isfunction(inner) else fn


def _routed(fn: Callable, build: ModuleBuild, entry: dict | None, filename: str) -> Callable:
    """The callable of ``fn`` for one analysis and build of its module: native or fallback."""
    if build.report is None and build.error is not None:  # the analysis itself failed
        return _failed_build(fn, build, build.error, entry)
    if entry is None:
        return _fallback_callable(fn, None, f"the analyzer reported no function {fn.__name__!r} in {filename}")
    if entry.get("route") != "native":
        return _fallback_callable(fn, entry, fallback_reason(entry))
    if build.error is not None:
        return _failed_build(fn, build, build.error, entry)
    routed = _native_callable(fn, build.extension, entry)
    if routed is None:
        return _fallback_callable(fn, entry, f"the built extension has no native symbol {entry.get('symbol')!r}")
    return routed


def _specialising(fn: Callable, written: Callable, filename: str, source: str, entry: dict) -> Callable:
    """An unannotated ``fn``: specialised per argument-type combination on its calls
    (:mod:`torchlower._specialise`). ``.route`` is ``"specialising"``; ``.specialisations`` maps
    each combination met to its routed callable (with its own ``.route`` and ``.report``)."""

    def compile_source(annotated: str) -> Callable:
        build = build_module(annotated, filename)
        return _routed(fn, build, _report_entry(build.report, written), filename)

    def fallback(reason: str) -> Callable:
        return _fallback_callable(fn, entry, reason)

    call = _specialise.specialising_callable(fn, source, entry["line"], compile_source, fallback)
    specialisations = call.specialisations  # type: ignore[attr-defined]
    routed = _decorate(call, fn, "specialising", entry, "unannotated parameters: specialised on each call's argument types")
    routed.specialisations = specialisations  # type: ignore[attr-defined]
    return routed


def _is_module(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.nn.Module)


def _compile_module(module: Any) -> Callable:
    """An ``nn.Module`` instance (:mod:`torchlower._modules`): ``forward`` rewritten as
    functions appended to its class's source file, specialised per call."""
    cls = type(module)
    try:
        filename = inspect.getsourcefile(cls) or ""
        with tokenize.open(filename) as handle:
            source = handle.read()
    except (OSError, TypeError, SyntaxError):
        filename, source = f"<{cls.__name__}>", ""

    def build(annotated: str, name: str) -> tuple[Callable | None, str | None, list[dict]]:
        build = build_module(annotated, filename)
        # the generated functions' entries (they follow the file's own)
        generated = [f for f in (build.report or {}).get("functions", []) if f.get("name", "").startswith("_tl_module")]
        entries = [f for f in generated if f.get("name") == name]
        if not entries:
            return None, str(build.error) if build.error else f"the analyzer reported no function {name}", generated
        entry = entries[-1]
        if entry.get("route") != "native":
            return None, fallback_reason(entry), generated
        if build.error is not None:
            return None, str(build.error), generated
        native_fn = getattr(build.extension, entry.get("symbol") or "", None)
        return native_fn, None if native_fn is not None else "the built extension has no native symbol", generated

    return _modules.compile_module(module, build, filename, source, _RERUN_IN_PYTHON, current_mode)


def native(fn: _Function) -> _Function:
    """Decorator form of :func:`compile`."""
    return compile(fn)  # type: ignore[return-value]  # an nn.Module instance is never decorated


def fallback_reason(entry: dict) -> str:
    """One line saying why the analyzer routed a function to Python."""
    for diagnostic in entry.get("diagnostics", []) or []:
        return _diagnostic_line(diagnostic)
    for site in entry.get("sites", []) or []:
        if site.get("outcome") != "claimed":
            return _diagnostic_line(site)
    return "the analyzer routed it to Python"


def _diagnostic_line(item: dict) -> str:
    code = item.get("code")
    message = item.get("message") or item.get("target") or "not supported"
    where = f"line {item['line']}: " if "line" in item else ""
    return f"{where}{message}" + (f" [{code}]" if code else "")


def _failed_build(fn: Callable, build: ModuleBuild, error: BuildError, entry: dict | None) -> Callable:
    """``native`` mode: raise the build's error. Otherwise warn (once per module) and fall back."""
    if current_mode() == "native":
        raise error
    if not build.warned:
        build.warned = True
        warnings.warn(
            f"torchlower: native build failed, functions of {build.filename} run as Python.\n{error}",
            BuildWarning,
            stacklevel=3,
        )
    return _fallback_callable(fn, entry, error.summary + (f": {error.details}" if error.details else ""))


def _locate_source(fn: Callable) -> tuple[str, str] | str:
    """(file name, whole module source) of a module-level function, or why there is none."""
    if not inspect.isfunction(fn):
        return f"{fn!r} is not a Python function"
    if fn.__qualname__ != fn.__name__:
        return f"{fn.__qualname__} is not a module-level function (only those are compiled)"
    try:
        filename = inspect.getsourcefile(fn)
    except TypeError:
        filename = None
    if not filename or not Path(filename).is_file():
        return f"the source file of {fn.__name__} is not available"
    try:
        with tokenize.open(filename) as handle:
            return filename, handle.read()
    except (OSError, SyntaxError) as error:
        return f"cannot read {filename}: {error}"


def _report_entry(report: dict | None, fn: Callable) -> dict | None:
    """The analyzer's entry for ``fn``: same name, the first ``def`` at or after the line
    where the function's code starts (decorators come first)."""
    if report is None:
        return None
    first_line = fn.__code__.co_firstlineno
    candidates = [
        f for f in report.get("functions", []) if f.get("name") == fn.__name__ and f.get("line", 0) >= first_line
    ]
    return min(candidates, key=lambda f: f["line"]) if candidates else None


# --- the returned callables -------------------------------------------------------------------


def _decorate(call: Callable, fn: Callable, route: str, entry: dict | None, reason: str | None) -> Callable:
    functools.update_wrapper(call, fn)
    call.route = route  # type: ignore[attr-defined]
    call.report = entry  # type: ignore[attr-defined]
    call.reason = reason  # type: ignore[attr-defined]
    call.__torchlower__ = True  # type: ignore[attr-defined]
    return call


def _fallback_callable(fn: Callable, entry: dict | None, reason: str) -> Callable:
    lookup, key = _environ_lookup, _environ_key

    def call(*args, **kwargs):
        raw = lookup(key)
        if raw is not None and _parse_mode(raw) == "native":
            raise BuildError(f"torchlower: {fn.__name__} is not native (TORCHLOWER_MODE=native): {reason}")
        return fn(*args, **kwargs)

    return _decorate(call, fn, "fallback", entry, reason)


def _native_callable(fn: Callable, extension: ModuleType, entry: dict) -> Callable | None:
    """The routing wrapper of ``fn``'s native entry ``entry["symbol"]`` of ``extension`` (None
    when the extension has no such symbol). Generated extensions bring their own router
    (``tl_router``, a ``NativeFunction`` written in Rust: the common call, positional with the
    mode unset, reaches native code without a Python frame); it hands every other call to
    :func:`_generic_router`. Extensions without one (hand-written ones) get that router alone."""
    symbol = entry.get("symbol") or ""
    native_fn = getattr(extension, symbol, None)
    if native_fn is None:
        return None
    router = _generic_router(fn, native_fn)
    make_router = getattr(extension, "tl_router", None)
    if make_router is not None:
        router = make_router(symbol, fn, router, _environ_data, _environ_key)
    routed = _decorate(router, fn, "native", entry, None)
    routed.native_entry = native_fn  # for the C router of specialised code (_specialise)
    return routed


def _generic_router(fn: Callable, native_fn: Callable) -> Callable:
    """The routing wrapper for any signature and mode: arguments bound with
    ``inspect.signature`` (defaults applied) unless all come positionally; in auto mode the
    original function inside an enabled autocast region and when native code refuses."""
    signature = inspect.signature(fn)
    names = list(signature.parameters)
    arity = len(names)
    lookup, key, rerun, after_writes = _environ_lookup, _environ_key, _RERUN_IN_PYTHON, _after_writes
    autocast_enabled = _modules._autocast_query()

    def positional(args: tuple, kwargs: dict) -> tuple | None:
        if not kwargs and len(args) == arity:
            return args
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return None  # let the Python function raise its own TypeError
        bound.apply_defaults()
        return tuple(bound.arguments[name] for name in names)

    def call(*args, **kwargs):
        raw = lookup(key)
        mode = "auto" if raw is None else _parse_mode(raw)
        if mode == "fallback" or (mode == "auto" and autocast_enabled()):
            return fn(*args, **kwargs)
        values = positional(args, kwargs)
        if values is None:
            return fn(*args, **kwargs)
        if mode == "native":
            return native_fn(*values)
        try:
            return native_fn(*values)
        except rerun as error:
            if after_writes(error):
                raise
            return fn(*args, **kwargs)

    return call
