"""``torchlower.explain(...)``: one function's (or a whole file's) claims, for people.

In a terminal or ``print`` it is the text of ``torchlower check`` (root causes under a
headline per function). In Jupyter it renders as HTML (``_repr_html_``): the source with each
call site coloured by its outcome (claimed, rejected, not covered), a hover title giving the
rule or code, the message and the hint, a line per function with its route, and the emitted
Rust folded under a ``<details>``. Nothing is run or built: it only analyzes.
"""

from __future__ import annotations

import html
import inspect
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ._analyze import analyze
from ._report_format import Style, render_text

_STYLE = """<style>
.tl-explain { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; }
.tl-explain pre { margin: 0.4em 0; padding: 0.5em; background: #f8f8f8; line-height: 1.45; overflow-x: auto; }
.tl-explain .tl-ln { color: #999; user-select: none; }
.tl-explain .tl-claimed { background: #dcf5dc; border-bottom: 1px solid #3a3; }
.tl-explain .tl-rejected { background: #fbdada; border-bottom: 2px solid #c33; }
.tl-explain .tl-not_covered { background: #fdf0cc; border-bottom: 2px dotted #b80; }
.tl-explain .tl-native { color: #161; font-weight: bold; }
.tl-explain .tl-fallback { color: #a11; font-weight: bold; }
.tl-explain ul { margin: 0.3em 0; padding-left: 1.4em; }
</style>"""


@dataclass(repr=False)
class Explanation:
    """The analysis of one file, focused on one function when ``function`` is set."""

    report: dict[str, Any]
    source: str
    filename: str
    function: str | None = None
    _first_line: int = field(default=1, repr=False)
    _last_line: int | None = field(default=None, repr=False)

    def functions(self) -> list[dict[str, Any]]:
        entries = self.report.get("functions", [])
        if self.function is None:
            return entries
        return [f for f in entries if f.get("name") == self.function and f.get("line", 0) >= self._first_line][:1]

    def __repr__(self) -> str:
        routes = ", ".join(f"{f.get('name')}: {f.get('route')}" for f in self.functions())
        return f"<torchlower.Explanation of {self.filename} ({routes or 'no functions'})>"

    def __str__(self) -> str:
        report = dict(self.report, functions=self.functions()) if self.function else self.report
        return render_text(report, self.filename, self.source, Style(False))

    def _repr_html_(self) -> str:
        functions = self.functions()
        if self.function and functions:
            first, last = functions[0].get("line", 1), functions[0].get("end_line", functions[0].get("line", 1))
        else:
            first, last = 1, len(self.source.splitlines())
        sites = [site for f in functions for site in f.get("sites", [])]
        parts = [_STYLE, '<div class="tl-explain">']
        parts.append("<ul>" + "".join(_function_line(f) for f in functions) + "</ul>")
        parts.append("<pre>" + _highlight(self.source, sites, first, last) + "</pre>")
        rust = self.report.get("rust")
        if rust:
            ranges = [f.get("rust_range") for f in functions if f.get("rust_range")]
            text = "\n\n".join(rust[a:b] for a, b in ranges) if self.function and ranges else rust
            lines = text.count("\n") + 1
            parts.append(f"<details><summary>Emitted Rust ({lines} lines)</summary><pre>{html.escape(text)}</pre></details>")
        parts.append("</div>")
        return "".join(parts)


def _function_line(function: dict[str, Any]) -> str:
    from ._compile import fallback_reason

    name = html.escape(str(function.get("name", "?")))
    sites = function.get("sites", [])
    claimed = sum(1 for s in sites if s.get("outcome") == "claimed")
    if function.get("route") == "native":
        state = f'<span class="tl-native">native</span>: {claimed} of {len(sites)} sites claimed'
    else:
        state = f'<span class="tl-fallback">fallback</span>: {html.escape(fallback_reason(function))}'
    return f"<li><code>def {name}</code> (line {function.get('line', '?')}) — {state}</li>"


def _title(site: dict[str, Any]) -> str:
    head = site.get("rule") if site.get("outcome") == "claimed" else site.get("code")
    text = f"{site.get('outcome', '?').replace('_', ' ')}: {site.get('target', '?')}"
    if head:
        text += f" [{head}]"
    if site.get("message"):
        text += f"\n{site['message']}"
    if site.get("hint"):
        text += f"\nhint: {site['hint']}"
    if site.get("fused_into"):
        text += f"\nfused into {site['fused_into']}"
    return text


def _highlight(source: str, sites: list[dict[str, Any]], first: int, last: int) -> str:
    """Lines ``first..last`` of ``source``, HTML-escaped, each site wrapped in a span (sites
    nest as the expressions do; one that would cross another is left out)."""
    lines = source.splitlines()
    starts, offset = [], 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    text = "\n".join(lines)

    def position(line: int, col: int) -> int:
        line = min(max(line, 1), max(len(lines), 1))
        return min(starts[line - 1] + max(col - 1, 0), len(text)) if lines else 0

    spans = sorted(
        ((position(s.get("line", 1), s.get("col", 1)), position(s.get("end_line", s.get("line", 1)), s.get("end_col", 1)), s) for s in sites),
        key=lambda span: (span[0], -span[1]),
    )
    opens: dict[int, list[str]] = {}
    closes: dict[int, int] = {}
    stack: list[int] = []
    for start, end, site in spans:
        while stack and stack[-1] <= start:
            stack.pop()
        if end <= start or (stack and end > stack[-1]):
            continue  # empty, or crossing an enclosing span
        stack.append(end)
        outcome = site.get("outcome", "not_covered")
        opens.setdefault(start, []).append(f'<span class="tl-{html.escape(outcome)}" title="{html.escape(_title(site)).replace(chr(10), "&#10;")}">')
        closes[end] = closes.get(end, 0) + 1
    lo, hi = starts[first - 1] if lines else 0, (starts[last - 1] + len(lines[last - 1])) if lines else 0
    out, open_count, number = [], 0, first
    for index in range(lo, hi + 1):
        out.append("</span>" * closes.get(index, 0))
        open_count -= closes.get(index, 0)
        if index < hi and (index == lo or text[index - 1] == "\n"):
            out.append(f'<span class="tl-ln">{number:>4} </span>')
            number += 1
        for tag in opens.get(index, []):
            out.append(tag)
            open_count += 1
        if index < hi:
            out.append(html.escape(text[index]))
    out.append("</span>" * max(open_count, 0))
    return "".join(out)


def explain(target: Callable[..., Any] | str | Path, filename: str | None = None) -> Explanation:
    """The analysis of ``target``: a module-level function (its file is analyzed, the
    function shown), a path of a Python file, or source text (named ``filename``)."""
    if inspect.isfunction(target):
        path = inspect.getsourcefile(target)
        if not path or not Path(path).is_file():
            raise ValueError(f"the source file of {target.__name__} is not available")
        with tokenize.open(path) as handle:
            source = handle.read()
        return Explanation(analyze(source, path), source, path, target.__name__, target.__code__.co_firstlineno)
    if isinstance(target, Path) or (isinstance(target, str) and filename is None and target.endswith(".py") and "\n" not in target):
        path = str(target)
        with tokenize.open(path) as handle:
            source = handle.read()
        return Explanation(analyze(source, path), source, path)
    if isinstance(target, str):
        name = filename or "<string>"
        return Explanation(analyze(target, name), target, name)
    raise TypeError(f"explain() takes a function, a path or source text, not {type(target).__name__}")
