"""torchlower: run annotated PyTorch inference functions natively from Rust.

- :func:`analyze` — the analyzer (Rust compiled to WebAssembly, run sandboxed in wasmtime);
  :func:`rules` — its registry of claim rules and diagnostic codes.
- :func:`compile` / :func:`native` — build the native extension and route calls to it,
  keeping the original Python as the fallback.
- :func:`explain` — one function's or file's claims as text, or as HTML in Jupyter.
- :mod:`torchlower.types` — import-free annotation markers.
"""

from . import types
from ._analyze import AnalyzerError, analyze, rules
from ._compile import BuildError, compile, native
from ._explain import Explanation, explain
from ._specialise import SpecialisationWarning

__all__ = ["analyze", "rules", "compile", "native", "explain", "types", "AnalyzerError", "BuildError", "Explanation", "SpecialisationWarning"]
