"""``torchlower build FILE.py``: analyze a file, build its native extension, report routes.

Prints one row per function: its route and, when it falls back, why. The file is only read,
never imported or run. Exit status 1 when the build failed (the table then shows every
function on the fallback route with cargo's error).
"""

from __future__ import annotations

import argparse
import sys
import tokenize
from pathlib import Path

from ._compile import ModuleBuild, build_module, fallback_reason


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="Python source file to build")


def format_table(headers: list[str], rows: list[list[str]]) -> str:
    """A plain left-aligned text table (the CLI's output format)."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def route_rows(build: ModuleBuild) -> list[tuple[dict, str, str]]:
    """(report entry, effective route, reason) per function of the module."""
    rows = []
    for entry in (build.report or {}).get("functions", []):
        if entry.get("route") != "native":
            rows.append((entry, "fallback", fallback_reason(entry)))
        elif build.error is not None:
            rows.append((entry, "fallback", f"build failed: {build.error.summary}"))
        elif entry.get("symbol") is None or not hasattr(build.extension, entry["symbol"]):
            rows.append((entry, "fallback", f"no native symbol {entry.get('symbol')!r} in the extension"))
        else:
            rows.append((entry, "native", ""))
    return rows


def describe_build(build: ModuleBuild) -> str:
    if build.error is not None:
        return str(build.error)
    if build.extension is None:
        return "no native function: nothing to build"
    how = f"built in {build.build_seconds:.1f}s" if build.built else "reused from the cache"
    return f"native extension {build.extension.__name__} ({how})"


def read_source(path: Path) -> str:
    with tokenize.open(path) as handle:
        return handle.read()


def main(args: argparse.Namespace) -> int:
    path: Path = args.file
    try:
        source = read_source(path)
    except (OSError, SyntaxError) as error:
        print(f"torchlower build: cannot read {path}: {error}", file=sys.stderr)
        return 2
    build = build_module(source, str(path.resolve()))
    rows = [[e["name"], str(e.get("line", "")), route, reason] for e, route, reason in route_rows(build)]
    print(format_table(["function", "line", "route", "reason (fallback)"], rows))
    print()
    print(describe_build(build))
    return 1 if build.error is not None else 0
