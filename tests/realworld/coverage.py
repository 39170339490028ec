"""How much of the real-code corpus routes native, and what still blocks it.

    python tests/realworld/coverage.py [--json] [--top N] [--unannotated | --torch-tensor]

Analyzes every ``tests/realworld/*.py`` with ``torchlower.analyze`` and prints, per file and in
total, native functions / functions and claimed torch call sites / sites; then the blockers
ranked by how many functions they keep from routing native: each fallback function counts once
for every distinct diagnostic code (or, for sites that are not covered, call target) on it.

``--unannotated`` measures the unannotated path instead: every file with all its parameter and
return annotations removed, each natively routed function specialised as
``torchlower.compile`` would on its first call (``torchlower._specialise``: the example
arguments of the file's ``INPUTS`` give the types) and analyzed again; it prints how many of
the annotated version's native functions stay native. ``--torch-tensor`` does the same for the
corpus annotated as the projects write it (every tensor marker replaced by ``torch.Tensor``).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def corpus_files() -> list[Path]:
    return sorted(p for p in HERE.glob("*.py") if p.name != "coverage.py")


def _blockers(entry: dict) -> set[str]:
    """What keeps one fallback function from routing native, as short labels: the root
    causes (a knock-on, marked ``caused_by``, failed only because of another finding)."""
    found: set[str] = set()
    for d in entry.get("diagnostics", []):
        if "caused_by" not in d:
            found.add(f"{d['code']} {d['message'].split(':')[0][:60]}")
    for site in entry.get("sites", []):
        if "caused_by" in site:
            continue
        if site["outcome"] == "rejected":
            found.add(f"{site.get('code', '?')} {site['target']}")
        elif site["outcome"] == "not_covered":
            found.add(f"not covered: {site['target']}")
    return found or {"(no diagnostic)"}


def measure(files: list[Path]) -> dict:
    import torchlower

    per_file = []
    blockers: collections.Counter[str] = collections.Counter()
    totals = collections.Counter()
    for path in files:
        report = torchlower.analyze(path.read_text(), filename=path.name)
        functions = report["functions"]
        native = [f["name"] for f in functions if f["route"] == "native"]
        # a call site per place in the source: the code after an `if` that types a local two
        # ways is analyzed once per branch, and its site counts as claimed when every copy is
        by_place: dict[tuple, list[str]] = collections.defaultdict(list)
        # (a function with `Optional[<marker>]` parameters has no sites of its own: its copies,
        # one per None / tensor combination, have them)
        for f in functions:
            optional = f["route"] == "native" and not f["sites"] and any(str(p.get("type")).startswith("Optional[") for p in f["params"])
            for source in f.get("specialisations", []) if optional else [f]:
                for site in source["sites"]:
                    by_place[(f["name"], site["line"], site["col"], site["end_line"], site["end_col"])].append(site["outcome"])
        sites = list(by_place.values())
        claimed = sum(all(outcome == "claimed" for outcome in outcomes) for outcomes in sites)
        for f in functions:
            if f["route"] != "native":
                blockers.update(_blockers(f))
        row = {"file": path.name, "functions": len(functions), "native": len(native), "sites": len(sites),
               "claimed": claimed, "native_functions": native}
        per_file.append(row)
        for key in ("functions", "native", "sites", "claimed"):
            totals[key] += row[key]
    return {"files": per_file, "totals": dict(totals), "blockers": blockers.most_common()}


def strip_annotations(source: str) -> str:
    """``source`` with the parameter and return annotations of its module-level functions
    removed (lines kept, so the analyzer's line numbers still match)."""
    import ast

    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    cuts = []  # (line, start byte, end byte)
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        for a in arguments:
            if a.annotation is not None and a.annotation.end_lineno == a.lineno:
                cuts.append((a.lineno, a.col_offset + len(a.arg.encode()), a.annotation.end_col_offset))
        if node.returns is not None and node.returns.lineno == node.returns.end_lineno:
            raw = lines[node.returns.lineno - 1].encode()
            arrow = raw.rfind(b"->", 0, node.returns.col_offset)
            if arrow >= 0:
                start = arrow - 1 if raw[arrow - 1:arrow] == b" " else arrow
                cuts.append((node.returns.lineno, start, node.returns.end_col_offset))
    for line, start, end in sorted(cuts, reverse=True):
        raw = lines[line - 1].encode()
        lines[line - 1] = (raw[:start] + raw[end:]).decode()
    return "".join(lines)


def open_annotations(source: str) -> str:
    """``source`` annotated as the projects write it: every tensor marker in the parameter and
    return annotations of its module-level functions replaced by ``torch.Tensor``
    (``x: torch.Tensor``, ``-> tuple[torch.Tensor, int]``) and every ``list[int, int]`` by
    ``List[int]``; ``int``/``float``/``bool`` kept."""
    import ast
    import re

    tree = ast.parse(source)
    # the project's own name of torch (Stable-Baselines3 writes `th.Tensor`)
    torch_name = next(
        (a.asname or a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names if a.name == "torch"), "torch"
    )
    # `list[int, int]` (torchlower's precise list of ints) as the project writes it
    int_list = "List[int]" if re.search(r"^from typing import [^\n]*\bList\b", source, re.M) else "list[int]"
    lines = source.splitlines(keepends=True)
    spans = []  # (line, start byte, end byte) of each one-line annotation
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        for annotation in [a.annotation for a in arguments] + [node.returns]:
            if annotation is not None and annotation.lineno == annotation.end_lineno:
                spans.append((annotation.lineno, annotation.col_offset, annotation.end_col_offset))
    for line, start, end in sorted(spans, reverse=True):
        raw = lines[line - 1].encode()
        text = re.sub(r"\bTensor(F32|I64|I32|Bool)\w*", f"{torch_name}.Tensor", raw[start:end].decode())
        text = re.sub(r"\blist\[int(, int)+\]", int_list, text)
        lines[line - 1] = (raw[:start] + text.encode() + raw[end:]).decode()
    return "".join(lines)


def measure_open(files: list[Path]) -> dict:
    """:func:`measure_unannotated` for the corpus annotated with ``torch.Tensor``
    (:func:`open_annotations`): its tensor parameters specialised on the example inputs."""
    return measure_unannotated(files, form=open_annotations)


def measure_unannotated(files: list[Path], form=None) -> dict:
    """Native functions of the annotated corpus, and how many of them route native again when
    unannotated (or in another ``form`` of the source) and specialised on their example
    inputs, as ``torchlower.compile`` specialises the parameters it cannot type."""
    import importlib.util
    import inspect

    import torch
    import torchlower
    from torchlower import _specialise

    rows = []
    for path in files:
        source = path.read_text()
        report = torchlower.analyze(source, filename=path.name)
        spec = importlib.util.spec_from_file_location(f"_tl_unannotated_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        stripped = (form or strip_annotations)(source)
        module_as_written = _import_source(stripped, path, f"_tl_form_{path.stem}")
        native, specialised, lost = 0, 0, []
        for entry in report["functions"]:
            if entry["route"] != "native" or entry["name"] not in getattr(module, "INPUTS", {}):
                continue
            native += 1
            torch.manual_seed(0)
            args = module.INPUTS[entry["name"]]()
            # the arguments bound as the host binds a call: defaults applied
            bound = inspect.signature(getattr(module, entry["name"])).bind(*args)
            bound.apply_defaults()
            untyped = set(_specialise.unannotated(getattr(module_as_written, entry["name"])))
            types = {n: _specialise.type_name(a) for n, a in bound.arguments.items() if n in untyped}
            annotated = _specialise.annotate(stripped, entry["name"], entry["line"], {n: t for n, t in types.items() if t})
            again = torchlower.analyze(annotated or "", filename=path.name)
            route = next((f["route"] for f in again["functions"] if f["name"] == entry["name"] and f["line"] == entry["line"]), None)
            if route == "native":
                specialised += 1
            else:
                lost.append(entry["name"])
        rows.append({"file": path.name, "native": native, "specialised": specialised, "lost": lost})
    return {"files": rows, "native": sum(r["native"] for r in rows), "specialised": sum(r["specialised"] for r in rows)}


def _import_source(source: str, path: Path, name: str):
    """The module ``source`` defines, as if it were the file ``path``."""
    module = type(sys)(name)
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - our own corpus
    return module


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the measurement as JSON")
    parser.add_argument("--top", type=int, default=25, help="how many blockers to list")
    parser.add_argument("--unannotated", action="store_true", help="measure the unannotated, specialised path")
    parser.add_argument("--torch-tensor", action="store_true", help="measure the corpus annotated with torch.Tensor, specialised")
    args = parser.parse_args(argv)
    if args.unannotated or args.torch_tensor:
        result = measure_open(corpus_files()) if args.torch_tensor else measure_unannotated(corpus_files())
        for row in result["files"]:
            lost = f"  lost: {', '.join(row['lost'])}" if row["lost"] else ""
            print(f"{row['file']:28} {row['specialised']:>4}/{row['native']:<4}{lost}")
        form = "annotated with torch.Tensor" if args.torch_tensor else "unannotated"
        print(f"{'total':28} {result['specialised']:>4}/{result['native']:<4} native functions stay native {form}")
        return 0
    result = measure(corpus_files())
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
        return 0
    print(f"{'file':28} {'native':>12} {'claimed sites':>16}")
    for row in result["files"]:
        print(f"{row['file']:28} {row['native']:>4}/{row['functions']:<4} {_percent(row['native'], row['functions']):>6}"
              f" {row['claimed']:>5}/{row['sites']:<5} {_percent(row['claimed'], row['sites']):>6}")
    t = result["totals"]
    print(f"{'total':28} {t['native']:>4}/{t['functions']:<4} {_percent(t['native'], t['functions']):>6}"
          f" {t['claimed']:>5}/{t['sites']:<5} {_percent(t['claimed'], t['sites']):>6}")
    print(f"\nwhat blocks the {t['functions'] - t['native']} fallback functions (functions per blocker):")
    for label, count in result["blockers"][: args.top]:
        print(f"{count:5}  {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
