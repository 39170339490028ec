"""``torchlower.analyze``: the analyzer, compiled to WebAssembly, run sandboxed in wasmtime.

The wasm module ships in the package (``torchlower/analyzer.wasm``). It is compiled once per
machine and cached under ``$TORCHLOWER_CACHE_DIR/wasm`` (default ``~/.cache/torchlower/wasm``,
or ``$XDG_CACHE_HOME/torchlower/wasm``); each call then runs in a fresh wasmtime store limited
in memory, time and stack, with the GIL released.
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

from . import _native

#: Where the analyzer wasm lives inside the installed package.
WASM_PATH = Path(__file__).with_name("analyzer.wasm")
#: Sources larger than this are refused before the analyzer runs.
MAX_INPUT_BYTES: int = _native.MAX_INPUT_BYTES


class AnalyzerError(Exception):
    """The analyzer produced no report for a source.

    ``kind`` names the reason: ``"input_too_large"``, ``"invalid_utf8"``, ``"memory_limit"``,
    ``"time_limit"``, ``"stack_overflow"``, ``"trap"`` (the analyzer crashed),
    ``"protocol"`` (the wasm broke its ABI) or ``"host"`` (the wasm could not be loaded).
    Unsupported or even syntactically invalid Python is *not* an error: it is reported in the
    returned report's diagnostics.
    """

    def __init__(self, message: str, kind: str = "host"):
        super().__init__(message)
        self.kind = kind


def cache_dir() -> Path | None:
    """The directory holding compiled analyzer modules (inside the build cache); None when the
    cache must not be used (:func:`torchlower._build_env.cache_problem`): the analyzer is then
    compiled in memory."""
    from ._build_env import cache_dir as build_cache_dir, cache_problem

    root = build_cache_dir()
    return None if cache_problem(root) else root / "wasm"


_analyzer: _native.Analyzer | None = None
_analyzer_lock = threading.Lock()


def _loaded_analyzer() -> _native.Analyzer:
    """The process's compiled analyzer, loaded (or compiled) on first use."""
    global _analyzer
    with _analyzer_lock:
        if _analyzer is None:
            if not WASM_PATH.is_file():
                raise AnalyzerError(
                    f"the analyzer wasm is missing ({WASM_PATH}); run scripts/build-wasm.sh "
                    "and reinstall the package",
                    "host",
                )
            try:
                folder = cache_dir()
                _analyzer = _native.Analyzer(str(WASM_PATH), None if folder is None else str(folder))
            except _native.AnalyzerSandboxError as exc:
                raise AnalyzerError(exc.args[1], exc.args[0]) from None
        return _analyzer


def analyze_json(
    source: str | bytes,
    filename: str = "<string>",
    *,
    memory_limit: int | None = None,
    time_limit: float | None = None,
) -> str:
    """The analyzer's report as the exact JSON text the wasm produced.

    ``source`` may be ``bytes`` (it must then be UTF-8; the error says where it is not).
    ``memory_limit`` (bytes of linear memory) and ``time_limit`` (seconds; default 5 s plus
    20 µs per source byte) override the sandbox defaults.
    """
    return _run("analyze", source, filename, memory_limit=memory_limit, time_limit=time_limit)


def export_report(source: str | bytes, filename: str = "<string>") -> dict[str, Any]:
    """The report of ``source`` with its native functions lowered as ``torchlower export``'s
    crate: ``rust`` is that crate's ``lib.rs`` and a native function's ``symbol`` its public
    Rust name (the analyzer's ``tl_export``)."""
    return json.loads(_run("analyze", source, filename, export=True))


def _run(method: str, source: str | bytes, filename: str, **limits: float | None) -> Any:
    """``Analyzer.<method>(source, filename, **limits)``, with sandbox errors as AnalyzerError."""
    if isinstance(source, str):
        # surrogatepass keeps lone surrogates as (invalid) bytes so that the sandbox reports
        # them with their byte offset, like any other invalid UTF-8.
        source = source.encode("utf-8", "surrogatepass")
    analyzer = _loaded_analyzer()
    try:
        return getattr(analyzer, method)(source, filename, **limits)
    except _native.AnalyzerSandboxError as exc:
        kind, message = exc.args
        raise AnalyzerError(f"{filename}: {message}", kind) from None


def analyze(source: str | bytes, filename: str = "<string>") -> dict[str, Any]:
    """Analyze Python ``source`` and return the report (docs/architecture.md, "The report"):
    the dict ``json.loads(analyze_json(source, filename))`` gives, built by the host from the
    analyzer's JSON without the intermediate text.

    Raises :class:`AnalyzerError` only when the sandbox stopped the analyzer (a limit was
    hit, the input is not UTF-8 or too large) or the analyzer failed; the next call works.
    """
    return _run("analyze_report", source, filename)


_rules: dict[str, Any] | None = None


def rules() -> dict[str, Any]:
    """The analyzer's registry, read from the wasm (its ``tl_rules`` export) once per process:
    ``{"rules": [...], "extensions": [...], "codes": [...]}``, each claim rule with ``id``,
    ``lane``, ``summary``, ``explanation``, ``example``, ``hint``, ``extension``, each
    diagnostic code with ``code``, ``area``, ``summary``, ``explanation``, ``example``,
    ``hint`` (analyzer-wasm/ABI.md). Each call returns a copy of its own.
    """
    global _rules
    analyzer = _loaded_analyzer()
    if _rules is None:
        try:
            text = analyzer.rules()
        except _native.AnalyzerSandboxError as exc:
            kind, message = exc.args
            raise AnalyzerError(f"rule registry: {message}", kind) from None
        _rules = json.loads(text)
    return copy.deepcopy(_rules)


def cache_outcome() -> str:
    """How this process got its compiled analyzer: "hit", "miss", "replaced" or "disabled"."""
    return _loaded_analyzer().cache_outcome
