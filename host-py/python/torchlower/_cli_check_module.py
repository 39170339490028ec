"""``torchlower check FILE.py:ClassName``: an ``nn.Module`` class checked as
``torchlower.compile(instance)`` would route it.

A module's ``forward`` is only analyzable on a live instance (its submodules, hyper-parameters
and tensors decide the rewriting, :mod:`torchlower._modules`), so this imports FILE.py (running
its top-level code, with ``__name__`` other than ``"__main__"``),
constructs ``ClassName(*INIT)`` in eval mode, rewrites it as ``compile`` does and analyzes the
result with the types of one example call: ``forward``'s parameters from ``--example-shapes
ClassName:NAME=SPEC,...`` (or their annotations, or their literal defaults), the instance's
tensors from what they are. The report keeps only the generated functions, each named after
the method it was rewritten from (``Block.forward [blocks.0]``) and each site placed on the
source statement it came from, so every format points into FILE.py.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._analyze import analyze_json


class ClassTargetError(Exception):
    """The class cannot be loaded, constructed or typed (a usage error: exit status 2)."""


@dataclass(frozen=True)
class ClassTarget:
    path: Path
    name: str

    def __str__(self) -> str:
        return f"{self.path}:{self.name}"


def class_target(argument: Path) -> ClassTarget | None:
    """``FILE.py:ClassName`` as a target, when FILE.py exists and the argument as a whole does
    not (a file may have a colon in its name)."""
    text = str(argument)
    head, sep, name = text.rpartition(":")
    if not sep or not name.isidentifier() or argument.exists() or not Path(head).is_file():
        return None
    return ClassTarget(Path(head), name)


def parse_init(text: str | None) -> tuple[list[Any], dict[str, Any]]:
    """``--init "64, 4, bias=False"``: the constructor's arguments, Python literals only."""
    if not text:
        return [], {}
    try:
        call = ast.parse(f"_({text})", mode="eval").body
        if not isinstance(call, ast.Call):  # `1) + (2` parses as a sum of two calls' parts
            raise ValueError("not one argument list")
        args = [ast.literal_eval(a) for a in call.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg is not None}
        if len(kwargs) != len(call.keywords):
            raise ValueError("** is not a literal")
    except (SyntaxError, ValueError) as exc:
        raise ClassTargetError(f"--init {text!r}: constructor arguments must be Python literals ({exc})") from None
    return args, kwargs


def load_instance(target: ClassTarget, init: str | None) -> Any:
    """``ClassName(*INIT)`` from FILE.py, in eval mode."""
    import torch

    args, kwargs = parse_init(init)
    module_name = "_torchlower_check_" + "".join(c if c.isalnum() else "_" for c in target.path.stem)
    spec = importlib.util.spec_from_file_location(module_name, target.path)
    if spec is None or spec.loader is None:
        raise ClassTargetError(f"cannot import {target.path}")
    namespace = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = namespace  # inspect finds the class's source through it
    folder = str(target.path.resolve().parent)
    sys.path.insert(0, folder)  # the file's sibling imports
    try:
        spec.loader.exec_module(namespace)
    except BaseException as exc:  # noqa: BLE001 - the user's module code may raise anything
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ClassTargetError(f"importing {target.path} raised {type(exc).__name__}: {exc}") from None
    finally:
        sys.path.remove(folder)
    cls = getattr(namespace, target.name, None)
    if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
        raise ClassTargetError(f"{target.path} has no nn.Module subclass named {target.name!r}")
    try:
        instance = cls(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the user's constructor
        raise ClassTargetError(f"{target.name}(…) raised {type(exc).__name__}: {exc} (pass its arguments with --init)") from None
    return instance.eval()


def forward_types(instance: Any, examples: dict[str, str]) -> dict[str, str]:
    """The type of each of ``forward``'s parameters: the example's, else its annotation (a
    marker, ``int``/``float``/``bool``), else its literal default's."""
    from . import _specialise

    types: dict[str, str] = {}
    parameters = inspect.signature(instance.forward).parameters
    unknown = set(examples) - set(parameters)
    if unknown:
        raise ClassTargetError(f"{type(instance).__name__}.forward has no parameter {sorted(unknown)[0]!r}")
    for name, parameter in parameters.items():
        annotation = parameter.annotation
        if name in examples:
            types[name] = examples[name]
        elif isinstance(annotation, type) and (annotation.__name__.startswith("Tensor") or annotation in (int, float, bool)):
            types[name] = annotation.__name__
        elif isinstance(annotation, str) and (annotation.startswith("Tensor") or annotation in ("int", "float", "bool")):
            types[name] = annotation
        elif parameter.default is not inspect.Parameter.empty and _specialise.type_name(parameter.default):
            types[name] = _specialise.type_name(parameter.default)  # type: ignore[assignment]
        else:
            raise ClassTargetError(
                f"{type(instance).__name__}.forward's parameter {name!r} has no type: "
                f"give --example-shapes {type(instance).__name__}:{name}=SPEC (float32[2,8], int, ...)"
            )
    return types


def _fallback_report(filename: str, name: str, line: int, message: str, hint: str) -> dict[str, Any]:
    """A report of one function that runs eagerly for a reason found before analysis."""
    span = {"line": line, "col": 1, "end_line": line, "end_col": 1}
    diagnostic = {"code": "TL109", "severity": "warning", "message": message, "hint": hint, **span}
    return {"schema": 1, "filename": filename, "diagnostics": [],
            "functions": [{"name": name, **span, "route": "fallback", "params": [], "returns": None,
                           "sites": [], "diagnostics": [diagnostic]}], "rust": None}


@dataclass
class Prepared:
    """A class instance made ready for the analyzer: its file, and either the rewritten
    forward annotated with the types of one example call (``annotated``) or why it has none
    (``problem``: a TL109 message and hint)."""

    instance: Any
    source: str
    class_line: int
    rewritten: Any = None
    types: dict[str, str] | None = None
    annotated: str | None = None
    problem: tuple[str, str] | None = None


def prepare(target: ClassTarget, init: str | None, examples: dict[str, str]) -> Prepared:
    """``ClassName(*INIT)`` from FILE.py, rewritten as ``torchlower.compile`` does and
    annotated with forward's example types and its tensors' own (what ``check`` analyzes and
    ``export`` lowers)."""
    from . import _modules, _specialise

    instance = load_instance(target, init)
    cls = type(instance)
    source = target.path.read_text(encoding="utf-8")
    try:
        class_line = inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        class_line = 1
    prepared = Prepared(instance, source, class_line)
    try:
        prepared.rewritten = _modules.rewrite(instance)
    except _modules.Unsupported as exc:
        prepared.problem = (f"{cls.__name__} runs eagerly: {exc}",
                            "torchlower.compile(module) rewrites forward into functions; this form has no rewriting")
        return prepared
    types = forward_types(instance, examples)
    for argument, path in prepared.rewritten.tensors:
        tensor = _modules._attribute(instance, path)
        marker = _specialise.type_name(tensor)
        if marker is None:
            prepared.problem = (
                f"{cls.__name__} runs eagerly: self.{path} is a {tensor.dtype} tensor of rank {tensor.dim()} on "
                f"{tensor.device}, which no marker describes",
                "native code takes float32 (CPU ranks 0-6, cuda:0 ranks 1-4), int64, int32 or bool (CPU ranks 1-4)")
            return prepared
        types[argument] = marker
    text, entry_line = prepared.rewritten.appended_to(source)
    prepared.types = types
    prepared.annotated = _specialise.annotate(text, _modules.ENTRY, entry_line, types)
    if prepared.annotated is None:
        raise ClassTargetError("the generated forward was not found")  # cannot happen: the entry is ours
    return prepared


def check_class(target: ClassTarget, init: str | None, examples: dict[str, str]) -> tuple[dict[str, Any], str]:
    """The report in FILE.py's terms, with a ``module`` key describing the rewriting (the
    instance's tensors with their types, the generated source as analyzed), and FILE.py's
    source."""
    prepared = prepare(target, init, examples)
    cls, source, class_line, rewritten = type(prepared.instance), prepared.source, prepared.class_line, prepared.rewritten
    filename = str(target.path)
    if prepared.problem is not None:
        report = _fallback_report(filename, f"{cls.__name__}.forward", class_line, *prepared.problem)
        report["module"] = {"class": cls.__name__, "tensors": {}, "generated": rewritten.generated if rewritten else None}
        return report, source
    types, annotated = prepared.types or {}, prepared.annotated or ""
    report = _in_file_terms(json.loads(analyze_json(annotated, filename)), source, rewritten, class_line)
    report["module"] = {
        "class": cls.__name__,
        "forward": {name: types[name] for name in inspect.signature(prepared.instance.forward).parameters},
        "tensors": {path: types[argument] for argument, path in rewritten.tensors},
        # the functions as analyzed (annotated for this call), without the file's own text
        "generated": annotated[len(source.rstrip("\n")):].lstrip("\n"),
        # the entry's parameters after forward's own: instance tensor -> its attribute path
        "arguments": dict(rewritten.tensors),
        "class_line": class_line,
        # per generated function: its label and each of its lines' source statement (the
        # playground moves a re-analysis of `generated` into the file with these)
        "origins": {
            name: {"label": _label(origin), "line": origin.line,
                   "statements": {str(k): list(v) for k, v in origin.statements.items()}}
            for name, origin in rewritten.origins.items()
        },
    }
    return report, source


def _in_file_terms(report: dict[str, Any], source: str, rewritten: Any, class_line: int) -> dict[str, Any]:
    """The generated functions' entries with each span moved to the source statement it was
    rewritten from (a site keeps its own span in ``generated_span``); a function without source
    of its own (an ``nn.Sequential``'s chain) is placed on the checked class."""
    first_generated = len(source.splitlines()) + 1
    functions = []
    for function in report.get("functions", []):
        origin = rewritten.origins.get(function.get("name"))
        if origin is None or function["line"] < first_generated:
            continue  # the file's own functions
        start = function["line"]

        def place(item: dict[str, Any]) -> dict[str, Any]:
            moved = dict(item)
            moved["generated_span"] = [item.get("line"), item.get("col"), item.get("end_line"), item.get("end_col")]
            span = origin.statements.get(int(item.get("line", start)) - start + 1) or origin.statements.get(1)
            if span is None:
                span = (class_line, 1, class_line, 1)
            moved["line"], moved["col"], moved["end_line"], moved["end_col"] = span
            return moved

        # a submodule's function is unannotated: what runs is its copy for the call's types
        copies = function.get("specialisations") or [function]
        for copy in copies:
            entry = place({k: v for k, v in copy.items() if k != "specialisations"})
            types = ", ".join(str(p.get("type")) for p in copy.get("params", []))
            entry["name"] = _label(origin) + (f" ({types})" if len(copies) > 1 else "")
            entry["generated_name"] = copy["name"]
            entry["sites"] = [place(site) for site in copy.get("sites", [])]
            entry["diagnostics"] = [place(d) for d in copy.get("diagnostics", [])]
            functions.append(entry)
    diagnostics = [d for d in report.get("diagnostics", []) if d.get("line", 1) < first_generated]
    return {**report, "functions": functions, "diagnostics": diagnostics, "rust": report.get("rust")}


def _label(origin: Any) -> str:
    """``Block.forward``, or ``LayerNorm.forward [ln_1]`` for a submodule."""
    return f"{origin.cls}.{origin.method}" + (f" [{origin.path}]" if origin.path else "")
