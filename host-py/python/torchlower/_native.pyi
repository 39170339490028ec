"""Types of the host's extension module (Rust, pyo3): the sandboxed analyzer and the
router of specialised functions. Internal API: the public one is ``torchlower``."""

from typing import Any, Callable, Mapping

MAX_INPUT_BYTES: int
DEFAULT_MEMORY_LIMIT: int
MAX_WASM_STACK: int
MAX_MEMORY: int

class AnalyzerSandboxError(Exception):
    """The analyzer failed inside its sandbox (trap, memory or time limit, bad input)."""

class Analyzer:
    """The analyzer's wasm module, compiled once (cached under ``cache_dir``)."""

    def __init__(self, wasm_path: str, cache_dir: str | None = None, max_wasm_stack: int | None = None) -> None: ...
    @property
    def cache_outcome(self) -> str: ...
    def analyze(self, source: bytes, filename: str, *, memory_limit: int | None = None, time_limit: float | None = None, export: bool = False) -> str: ...
    def analyze_report(self, source: bytes, filename: str, *, memory_limit: int | None = None, time_limit: float | None = None) -> dict[str, Any]: ...
    def rules(self) -> str: ...

class Specialising:
    """The callable of an unannotated function or a compiled module: guards in Rust, then the
    specialised native function or ``slow``."""

    def __init__(
        self,
        slow: Callable[..., Any],
        arity: int | None,
        environ: dict[bytes, bytes] | None,
        mode_key: object,
        autocast_enabled: Callable[[], bool],
        grad_enabled: Callable[[], bool],
        hook_dicts: list[dict[Any, Any]],
        module_dicts: list[dict[str, Any]],
        children: list[tuple[dict[str, Any], list[object]]],
        tensors: list[tuple[dict[str, Any], object]],
        calls: dict[str, int] | None,
        torch_lib: str | None = None,
    ) -> None: ...
    @property
    def calls(self) -> Mapping[str, int]: ...
    def use_native(self, native: Callable[..., Any] | None) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

def pool_slots() -> int: ...
