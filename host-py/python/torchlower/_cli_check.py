"""``torchlower check FILE...``: analyze files (without running them) and show the findings.

Formats:
- ``text`` (default): each rejected or not-covered site and each reason a function falls
  back as ``file:line:col: CODE message``, the source line, a caret under the span and the
  hint; then one summary line per file. ``--claims`` first lists every claimed site. Coloured on a terminal (``--color``, ``NO_COLOR``).
- ``json``: the analyzer's report; a JSON array of reports when several files are given.
- ``sarif``: one SARIF 2.1.0 log for all files, for editors and code-scanning services.
- ``github``: GitHub Actions workflow commands (``::error file=…,line=…::message``), so a
  workflow step shows each finding on its line of the pull request.

``--example-shapes FUNC:NAME=SPEC,...`` analyzes unannotated code as ``torchlower.compile``
would specialise it on a call with those arguments: each SPEC is ``int``, ``float``, ``bool``,
a marker (``TensorF32Cpu2D``) or a dtype with a shape (``float32[4,8]``, ``int64[3]``,
``bool[2,2]``, ``float32[4,8]@cuda``); the parameters named are annotated before analysis.

``FILE.py:ClassName`` checks an ``nn.Module`` class: FILE.py is imported, the class constructed
with ``--init ARGS`` in eval mode and rewritten as ``torchlower.compile(instance)`` does; its
``forward``'s types come from ``--example-shapes ClassName:NAME=SPEC,...``
(:mod:`torchlower._cli_check_module`).

Exit status: 0; 1 with ``--strict`` when any function falls back (or a file has a
module-level error such as a syntax error); 2 when a file cannot be read or analyzed, or an
``--example-shapes`` is malformed or names no function.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tokenize
from pathlib import Path
from typing import Any

from ._analyze import AnalyzerError, analyze_json, rules
from ._cli_check_module import ClassTargetError, check_class, class_target
from ._report_format import Style, render_github, render_text, summarize, to_sarif


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="*", type=Path, metavar="FILE",
        help="Python source files; FILE.py:ClassName checks an nn.Module class as torchlower.compile(instance) routes it",
    )
    parser.add_argument(
        "--init", metavar="ARGS",
        help="FILE.py:ClassName targets: the constructor's arguments as Python literals (\"64, 4, bias=False\")",
    )
    parser.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when any function falls back to Python"
    )
    parser.add_argument(
        "--claims", action="store_true", help="text format: also list every claimed site"
    )
    parser.add_argument(
        "--all", action="store_true", dest="all_findings",
        help="text format: also show knock-on findings (sites that fail only because an input did)",
    )
    parser.add_argument(
        "--explain", metavar="CODE",
        help="print what a diagnostic code (TL206) or claim rule (torchlower/…) means, with its example, and exit",
    )
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto",
        help="colour the text format (auto: on a terminal, unless NO_COLOR is set)",
    )
    parser.add_argument(
        "--example-shapes", action="append", default=[], metavar="FUNC:NAME=SPEC,...",
        help="types of an example call of an unannotated function (SPEC: int, float, bool, a marker, "
        "or float32[4,8], int64[3], bool[2,2], float32[4,8]@cuda); repeatable",
    )


class UnreadableSource(Exception):
    pass


def read_source(path: Path) -> str | bytes:
    """The file's source for the analyzer: its bytes when it is (meant to be) UTF-8, so that
    invalid UTF-8 is reported by the analyzer host with its byte offset, or the decoded text
    when a PEP 263 coding declaration names another encoding."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableSource(exc.strerror or str(exc)) from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise UnreadableSource(str(exc)) from None
    if encoding == "utf-8-sig":
        return data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    if encoding == "utf-8":
        return data
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UnreadableSource(f"not valid {encoding} at byte {exc.start}") from None


_DTYPES = {"float32": "F32", "int64": "I64", "int32": "I32", "bool": "Bool"}


class BadExample(Exception):
    pass


def example_type(spec: str) -> str:
    """The annotation an ``--example-shapes`` SPEC stands for."""
    spec = spec.strip()
    if spec in ("int", "float", "bool") or (spec.startswith("Tensor") and spec.isidentifier()):
        return spec
    head, _, device = spec.partition("@")
    dtype, bracket, dims = head.partition("[")
    if dtype not in _DTYPES or not bracket or not dims.endswith("]") or device not in ("", "cpu", "cuda", "cuda:0"):
        raise BadExample(f"{spec!r} is not int, float, bool, a marker or DTYPE[d0,d1,...][@cuda]")
    sizes = [d for d in dims[:-1].split(",") if d.strip()]
    if not all(d.strip().isdigit() for d in sizes):
        raise BadExample(f"{spec!r}: the shape must list non-negative ints")
    place = "Cuda0_" if device.startswith("cuda") else "Cpu"
    return f"Tensor{_DTYPES[dtype]}{place}{len(sizes)}D"


def example_value(spec: str, generator: Any = None) -> Any:
    """A value an ``--example-shapes`` SPEC describes: a seeded random tensor of its dtype and
    shape (``float32[2,8]``), or 3 / 0.5 / True for ``int`` / ``float`` / ``bool``; None for a
    bare marker, which gives no shape."""
    import torch

    spec = spec.strip()
    scalars = {"int": 3, "float": 0.5, "bool": True}
    if spec in scalars or spec.startswith("Tensor"):
        return scalars.get(spec)
    example_type(spec)  # raises BadExample when malformed
    head, _, device = spec.partition("@")
    dtype, _, dims = head.partition("[")
    shape = tuple(int(d) for d in dims[:-1].split(",") if d.strip())
    if dtype == "float32":
        value = torch.randn(shape, generator=generator)
    elif dtype in ("int64", "int32"):
        value = torch.randint(0, max(min(shape or (2,)), 2), shape, generator=generator, dtype=getattr(torch, dtype))
    else:
        value = torch.rand(shape, generator=generator) > 0.5
    return value.to("cuda:0") if device.startswith("cuda") else value


def parse_examples(specs: list[str], raw: bool = False) -> dict[str, dict[str, str]]:
    """``FUNC:NAME=SPEC,...`` options as {function: {parameter: annotation}} (the SPECs as
    given with ``raw``)."""
    examples: dict[str, dict[str, str]] = {}
    for option in specs:
        function, sep, rest = option.partition(":")
        if not sep or not function.strip().isidentifier():
            raise BadExample(f"{option!r} is not FUNC:NAME=SPEC,...")
        types = examples.setdefault(function.strip(), {})
        # split on commas outside brackets (shapes hold commas)
        depth, start = 0, 0
        parts = []
        for i, ch in enumerate(rest + ","):
            depth += ch == "["
            depth -= ch == "]"
            if ch == "," and depth == 0:
                parts.append(rest[start:i])
                start = i + 1
        for part in filter(str.strip, parts):
            name, eq, spec = part.partition("=")
            if not eq or not name.strip().isidentifier():
                raise BadExample(f"{part!r} is not NAME=SPEC")
            annotation = example_type(spec)
            types[name.strip()] = spec.strip() if raw else annotation
    return examples


def apply_examples(source: str, examples: dict[str, dict[str, str]]) -> str:
    """``source`` with the example types written into the named functions."""
    import ast

    from ._specialise import annotate

    lines = {n.name: min([n.lineno, *(d.lineno for d in n.decorator_list)])
             for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for function, types in examples.items():
        if function not in lines:
            raise BadExample(f"no module-level function {function!r}")
        annotated = annotate(source, function, lines[function], types)
        if annotated is None:
            raise BadExample(f"cannot annotate {function!r}")
        source = annotated
    return source


def _as_text(source: str | bytes) -> str:
    return source if isinstance(source, str) else source.decode("utf-8")


def _tool_version() -> str:
    try:
        from importlib.metadata import version

        return version("torchlower")
    except Exception:  # noqa: BLE001 - metadata is missing in a bare source checkout
        return "0.0.0"


def _falls_back(report: dict[str, Any]) -> bool:
    if any(d.get("severity") == "error" for d in report.get("diagnostics", [])):
        return True
    return any(f.get("route") != "native" for f in report.get("functions", []))


def explain(name: str) -> int:
    """``--explain``: the registry's entry for a diagnostic code or a claim rule."""
    try:
        registry = rules()
    except AnalyzerError as exc:
        print(f"torchlower check: cannot read the analyzer's rule registry: {exc} [{exc.kind}]", file=sys.stderr)
        return 2
    wanted = name.strip()
    for entry in registry.get("codes", []) + registry.get("rules", []):
        key = entry.get("code") or entry.get("id")
        if key and key.lower() == wanted.lower():
            title = f"{key}: {entry.get('summary', '')}"
            parts = [title, "=" * min(len(title), 78), entry.get("explanation", "")]
            if entry.get("example"):
                parts.append("Example:\n    " + entry["example"].replace("\n", "\n    "))
            if entry.get("hint"):
                parts.append("Hint: " + entry["hint"])
            print("\n\n".join(part for part in parts if part))
            return 0
    print(f"torchlower check: no diagnostic code or claim rule named {wanted!r} (see docs/rules.md)", file=sys.stderr)
    return 2


class CheckFailed(Exception):
    """A file or class that could not be analyzed (the message says why; exit status 2)."""


def _analyze_one(path: Path, target: Any, init: str | None, examples: dict[str, dict[str, str]],
                 class_names: set[str]) -> tuple[str, dict[str, Any], str, str]:
    """(file name, report, source, report JSON) of one FILE or FILE.py:ClassName argument."""
    name = str(path)
    try:
        if target is not None:
            report, text = check_class(target, init, examples.get(target.name, {}))
            return str(target.path), report, text, json.dumps(report, indent=2)
        source = read_source(path)
        file_examples = {f: types for f, types in examples.items() if f not in class_names}
        if file_examples:
            source = apply_examples(_as_text(source), file_examples)
        report_json = analyze_json(source, name)
        return name, json.loads(report_json), _as_text(source), report_json
    except ClassTargetError as exc:
        raise CheckFailed(f"{name}: {exc}") from None
    except UnreadableSource as exc:
        raise CheckFailed(f"cannot read {name}: {exc}") from None
    except AnalyzerError as exc:
        raise CheckFailed(f"cannot analyze {exc} [{exc.kind}]") from None
    except (BadExample, SyntaxError) as exc:
        raise CheckFailed(f"--example-shapes in {name}: {exc}") from None


def main(args: argparse.Namespace) -> int:
    if args.explain:
        return explain(args.explain)
    if not args.files:
        print("torchlower check: give one or more FILEs (or --explain CODE)", file=sys.stderr)
        return 2
    style = Style.for_stream(sys.stdout, args.color)
    analyzed: list[tuple[str, dict[str, Any], str, str]] = []  # name, report, source, json
    failed = False
    try:
        examples = parse_examples(args.example_shapes)
    except BadExample as exc:
        print(f"torchlower check: --example-shapes: {exc}", file=sys.stderr)
        return 2
    classes = {path: class_target(path) for path in args.files}
    class_names = {target.name for target in classes.values() if target is not None}
    for path in args.files:
        try:
            analyzed.append(_analyze_one(path, classes[path], args.init, examples, class_names))
        except CheckFailed as exc:
            print(f"torchlower check: {exc}", file=sys.stderr)
            failed = True

    if args.format == "text":
        if analyzed:
            print("\n\n".join(render_text(r, n, s, style, claims=args.claims, all_findings=args.all_findings)
                             for n, r, s, _ in analyzed))
    elif args.format == "github":
        for n, r, _, _ in analyzed:
            print(render_github(r, n, all_findings=args.all_findings))
    elif args.format == "json":
        if len(args.files) == 1 and analyzed:
            print(analyzed[0][3])
        else:
            print(json.dumps([report for _, report, _, _ in analyzed], indent=2))
    else:
        try:
            registry = rules()
        except AnalyzerError as exc:
            print(f"torchlower check: cannot read the analyzer's rule registry: {exc} [{exc.kind}]", file=sys.stderr)
            return 2
        sarif = to_sarif(((n, r, s) for n, r, s, _ in analyzed), registry, _tool_version())
        print(json.dumps(sarif, indent=2, ensure_ascii=False))

    if failed:
        return 2
    if args.strict and any(_falls_back(report) for _, report, _, _ in analyzed):
        return 1
    return 0


__all__ = ["add_arguments", "main", "read_source", "summarize"]
