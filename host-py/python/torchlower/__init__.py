"""torchlower: run annotated PyTorch inference functions natively from Rust.

- :func:`analyze` — the analyzer (Rust compiled to WebAssembly, run sandboxed in wasmtime);
  :func:`rules` — its registry of claim rules and diagnostic codes.
- :func:`compile` / :func:`native` — build the native extension and route calls to it,
  keeping the original Python as the fallback.
- :mod:`torchlower.types` — import-free annotation markers.
"""

from . import types
from ._analyze import AnalyzerError, analyze, rules
from ._compile import BuildError, compile, native
from ._specialise import SpecialisationWarning

__all__ = ["analyze", "rules", "compile", "native", "types", "AnalyzerError", "BuildError", "SpecialisationWarning"]
