"""Rendering analyzer reports for people (text with carets) and for tools (SARIF 2.1.0).

Both renderings show the same *findings*: every rejected or not-covered site, every
function diagnostic (why a function falls back) that is not already one of those sites, and
every module diagnostic (syntax errors and the like), in source order. A *knock-on* (a site
that failed only because an input did: ``caused_by`` in the report) is left out of the text by
default, which shows root causes under a headline per function (``--all`` shows every
finding); SARIF keeps it, with the sites it comes from as ``relatedLocations``.
"""

from __future__ import annotations

import os
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, TextIO
from urllib.parse import quote

#: SARIF levels for the analyzer's severities and site outcomes.
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
#: The severity a site outcome is shown with.
_SITE_SEVERITY = {"rejected": "error", "not_covered": "info"}


@dataclass(frozen=True)
class Finding:
    """One thing to show: a rejected/not-covered site or a diagnostic."""

    code: str
    severity: str  # "error" | "warning" | "info"
    message: str
    hint: str | None
    line: int
    col: int
    end_line: int
    end_col: int
    function: str | None  # None for module diagnostics
    outcome: str | None  # "rejected" | "not_covered" for sites, None for diagnostics
    target: str | None
    rule: str | None
    #: a knock-on: the spans of the failed sites it comes from (possibly none: an input that
    #: failed outside a torch call); None for a root cause
    caused_by: tuple[tuple[int, int, int, int], ...] | None = None

    @property
    def span(self) -> tuple[int, int, int, int]:
        return (self.line, self.col, self.end_line, self.end_col)


def _span(item: dict[str, Any]) -> tuple[int, int, int, int]:
    line, col = int(item.get("line", 1)), int(item.get("col", 1))
    return (line, col, int(item.get("end_line", line)), int(item.get("end_col", col)))


def _finding(item: dict[str, Any], severity: str, function: str | None, sites: list[dict] = ()) -> Finding:
    causes = item.get("caused_by")
    return Finding(
        code=item.get("code") or "TL000",
        severity=severity,
        message=item.get("message") or f"`{item.get('target', '?')}` is {item.get('outcome', '?')}",
        hint=item.get("hint"),
        line=int(item.get("line", 1)),
        col=int(item.get("col", 1)),
        end_line=int(item.get("end_line", item.get("line", 1))),
        end_col=int(item.get("end_col", item.get("col", 1))),
        function=function,
        outcome=item.get("outcome"),
        target=item.get("target"),
        rule=item.get("rule"),
        caused_by=None if causes is None else tuple(_span(sites[i]) for i in causes if 0 <= i < len(sites)),
    )


def findings(report: dict[str, Any]) -> list[Finding]:
    """The report's findings in source order, a diagnostic repeating a site left out."""
    found = [_finding(d, d.get("severity", "error"), None) for d in report.get("diagnostics", [])]
    for function in report.get("functions", []):
        name = function.get("name")
        shown: set[tuple[str, tuple[int, int, int, int]]] = set()
        for site in function.get("sites", []):
            outcome = site.get("outcome")
            if outcome in _SITE_SEVERITY:
                finding = _finding(site, _SITE_SEVERITY[outcome], name, function.get("sites", []))
                shown.add((finding.code, finding.span))
                found.append(finding)
        for diagnostic in function.get("diagnostics", []):
            finding = _finding(diagnostic, diagnostic.get("severity", "error"), name, function.get("sites", []))
            if (finding.code, finding.span) not in shown:
                found.append(finding)
    found.sort(key=lambda f: (f.span, f.code))
    return found


@dataclass(frozen=True)
class Summary:
    functions: int
    native: int
    fallback: int
    claimed: int
    rejected: int
    not_covered: int
    module_diagnostics: int

    def line(self, filename: str) -> str:
        text = (
            f"{filename}: {self.functions} function{'s' if self.functions != 1 else ''} "
            f"({self.native} native, {self.fallback} fallback); sites: {self.claimed} claimed, "
            f"{self.rejected} rejected, {self.not_covered} not covered"
        )
        if self.module_diagnostics:
            text += f"; {self.module_diagnostics} module diagnostic{'s' if self.module_diagnostics != 1 else ''}"
        return text


def summarize(report: dict[str, Any]) -> Summary:
    functions = report.get("functions", [])
    sites = [site for function in functions for site in function.get("sites", [])]
    count = lambda outcome: sum(1 for site in sites if site.get("outcome") == outcome)  # noqa: E731
    native = sum(1 for function in functions if function.get("route") == "native")
    return Summary(
        functions=len(functions),
        native=native,
        fallback=len(functions) - native,
        claimed=count("claimed"),
        rejected=count("rejected"),
        not_covered=count("not_covered"),
        module_diagnostics=len(report.get("diagnostics", [])),
    )


# --- text -------------------------------------------------------------------------------------


class Style:
    """ANSI colours, or nothing when colour is off."""

    _CODES = {"bold": "1", "red": "1;31", "yellow": "1;33", "cyan": "1;36", "green": "32", "dim": "2"}

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, name: str, text: str) -> str:
        return f"\033[{self._CODES[name]}m{text}\033[0m" if self.enabled else text

    @staticmethod
    def for_stream(stream: TextIO, choice: str = "auto") -> "Style":
        """``always``/``never``, or ``auto``: colour on a terminal unless NO_COLOR is set."""
        if choice == "always":
            return Style(True)
        if choice == "never":
            return Style(False)
        isatty = getattr(stream, "isatty", lambda: False)()
        return Style(isatty and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb")


_SEVERITY_COLOUR = {"error": "red", "warning": "yellow", "info": "cyan"}


def _display_width(text: str) -> int:
    """Terminal columns taken by `text` (wide East Asian characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def caret_line(source_line: str, col: int, end_col: int | None) -> str:
    """``^~~~`` under columns ``[col, end_col)`` (1-based, in characters) of ``source_line``,
    to the end of the line when the span continues on later lines (``end_col`` None)."""
    start = max(col - 1, 0)
    stop = len(source_line) if end_col is None else max(end_col - 1, start)
    stop = min(stop, len(source_line))
    width = _display_width(source_line[start:stop])
    return " " * _display_width(source_line[:start]) + "^" + "~" * max(width - 1, 0)


def render_finding(finding: Finding, filename: str, lines: list[str], style: Style) -> str:
    colour = _SEVERITY_COLOUR.get(finding.severity, "red")
    out = [
        f"{style('bold', f'{filename}:{finding.line}:{finding.col}:')} "
        f"{style(colour, finding.code)} {finding.message}"
    ]
    if 1 <= finding.line <= len(lines):
        source_line = lines[finding.line - 1].rstrip("\r\n").expandtabs(1)
        end_col = finding.end_col if finding.end_line == finding.line else None
        out.append("    " + source_line)
        out.append("    " + style(colour, caret_line(source_line, finding.col, end_col)))
    if finding.hint:
        out.append(f"    {style('green', 'hint:')} {finding.hint}")
    return "\n".join(out)


def render_claims(report: dict[str, Any], filename: str, style: Style) -> str:
    """One line per claimed site: where, what, under which rule, with which result type."""
    out = []
    for function in report.get("functions", []):
        for site in function.get("sites", []):
            if site.get("outcome") != "claimed":
                continue
            rule = f" [{site['rule']}]" if site.get("rule") else ""
            result = f" -> {site['result_type']}" if site.get("result_type") else ""
            where = f"{filename}:{site.get('line')}:{site.get('col')}:"
            out.append(f"{style('bold', where)} {style('green', 'claimed')} {site.get('target')}{rule}{result}")
    return "\n".join(out)


def headline(function: dict[str, Any], filename: str, roots: int, knock_ons: int) -> str:
    """``model.py:42 def gpt_mlp — native, 7 sites (5 fused)`` or ``… — fallback: 2 causes``."""
    where = f"{filename}:{function.get('line', 1)} def {function.get('name', '?')}"
    sites = function.get("sites", [])
    optional = [p["name"] for p in function.get("params", []) if str(p.get("type")).startswith("Optional[")]
    if function.get("route") == "native" and optional and not sites:
        # `Optional[<marker>]` parameters: the entry runs one copy per None / tensor combination
        copies = function.get("specialisations", [])
        count = sum(len(copy.get("sites", [])) for copy in copies)
        state = f"native, {len(copies)} copies for None / a tensor in {', '.join(optional)} ({count} sites in all)"
    elif function.get("route") == "native":
        fused = sum(1 for site in sites if site.get("fused_into"))
        state = f"native, {len(sites)} site{'s' if len(sites) != 1 else ''}" + (f" ({fused} fused)" if fused else "")
    else:
        state = f"fallback: {roots} cause{'s' if roots != 1 else ''}"
        if knock_ons:
            state += f" (+{knock_ons} knock-on{'s' if knock_ons != 1 else ''}, --all shows them)"
    return f"{where} — {state}"


def render_text(
    report: dict[str, Any], filename: str, source: str, style: Style, claims: bool = False, all_findings: bool = False
) -> str:
    """The module's own diagnostics, then per function a headline and its root-cause findings
    with source line and caret (every finding with ``all_findings``; with ``claims``, first
    every claimed site), then the file's summary line."""
    lines = source.splitlines()
    blocks = [render_claims(report, filename, style)] if claims else []
    blocks = [block for block in blocks if block]
    found = findings(report)
    blocks += [render_finding(f, filename, lines, style) for f in found if f.function is None]
    for function in report.get("functions", []):
        own = [f for f in found if f.function == function.get("name") and f.function is not None]
        roots = [f for f in own if f.caused_by is None]
        shown = own if all_findings else roots
        blocks.append(style("bold", headline(function, filename, len(roots), len(own) - len(roots))))
        blocks += [render_finding(f, filename, lines, style) for f in shown]
    blocks.append(style("bold", summarize(report).line(filename)))
    return "\n\n".join(blocks)


# --- GitHub Actions workflow commands ---------------------------------------------------------

#: GitHub's annotation levels for the analyzer's severities.
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _github_data(text: str) -> str:
    """A workflow command's message, escaped as the runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    """A workflow command's property value (``file=…``), escaped as the runner unescapes it."""
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: dict[str, Any], filename: str, all_findings: bool = False) -> str:
    """One ``::error``/``::warning``/``::notice`` workflow command per root-cause finding (every
    finding with ``all_findings``), so that a GitHub Actions run shows them on the lines of the
    pull request, then a ``::notice`` with the file's summary. A function that falls back
    shows its causes at its ``def`` line too (as the text format's headline does)."""
    out = []
    found = findings(report)
    for finding in found:
        if finding.caused_by is not None and not all_findings:
            continue
        where = (
            f"file={_github_property(filename)},line={finding.line},col={finding.col},"
            f"endLine={finding.end_line},endColumn={finding.end_col},title={_github_property(finding.code)}"
        )
        message = finding.message + (f" (hint: {finding.hint})" if finding.hint else "")
        out.append(f"::{_GITHUB_LEVEL.get(finding.severity, 'warning')} {where}::{_github_data(message)}")
    for function in report.get("functions", []):
        if function.get("route") != "native":
            roots = sum(1 for f in found if f.function == function.get("name") and f.caused_by is None)
            where = f"file={_github_property(filename)},line={function.get('line', 1)},title=fallback"
            text = headline(function, filename, roots, 0)
            out.append(f"::warning {where}::{_github_data(text)}")
    out.append(f"::notice file={_github_property(filename)},title=torchlower::{_github_data(summarize(report).line(filename))}")
    return "\n".join(out)


# --- SARIF 2.1.0 ------------------------------------------------------------------------------

SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def artifact_uri(filename: str) -> str:
    """A relative path stays a relative URI reference (so results move with the checkout);
    an absolute one becomes a file:// URI."""
    path = Path(filename)
    if path.is_absolute():
        return path.as_uri()
    return quote(path.as_posix())


def _sarif_name(text: str) -> str:
    """A short identifier for a rule (SARIF ``name``): its summary in kebab case."""
    words = "".join(ch.lower() if ch.isalnum() else " " for ch in text).split()
    return "-".join(words) or "rule"


def _help_text(entry: dict[str, Any]) -> str | None:
    """The registry's hint and example, as SARIF ``help``."""
    parts = [entry.get("hint"), entry.get("example") and f"Example:\n{entry['example']}"]
    return "\n\n".join(part for part in parts if part) or None


def _registry_descriptor(rule_id: str, entry: dict[str, Any], properties: dict[str, Any]) -> dict[str, Any]:
    """A SARIF reportingDescriptor carrying a registry entry's full text."""
    summary = entry.get("summary") or rule_id
    descriptor: dict[str, Any] = {
        "id": rule_id,
        "name": _sarif_name(summary),
        "shortDescription": {"text": summary},
    }
    if entry.get("explanation"):
        descriptor["fullDescription"] = {"text": entry["explanation"]}
    if help_text := _help_text(entry):
        descriptor["help"] = {"text": help_text}
    descriptor["properties"] = {key: value for key, value in properties.items() if value is not None}
    return descriptor


def _code_descriptor(code: str, entry: dict[str, Any] | None, example: Finding | None) -> dict[str, Any]:
    """A diagnostic code's descriptor: the registry's text, or (a code the registry does not
    know) the first finding of the code."""
    if entry:
        return _registry_descriptor(code, entry, {"kind": "diagnostic code", "area": entry.get("area")})
    descriptor: dict[str, Any] = {"id": code}
    if example is not None:
        descriptor["shortDescription"] = {"text": example.message}
        if example.hint:
            descriptor["help"] = {"text": example.hint}
    return descriptor


def _claim_rule_descriptor(entry: dict[str, Any]) -> dict[str, Any]:
    """A claim rule's descriptor (results name the claim rule of their site, if any, in
    ``properties.claimRule``)."""
    return _registry_descriptor(
        entry["id"],
        entry,
        {"kind": "claim rule", "lane": entry.get("lane"), "extension": bool(entry.get("extension"))},
    )


def to_sarif(
    reports: Iterable[tuple[str, dict[str, Any], str]],
    registry: dict[str, Any] | None,
    tool_version: str,
) -> dict[str, Any]:
    """One SARIF run over ``(filename, report, source)`` triples.

    ``registry`` is the analyzer's rule registry (:func:`torchlower.rules`): ``tool.driver.rules``
    then holds every diagnostic code (the ``ruleId`` of results) and every claim rule (named
    by results in ``properties.claimRule``) with its summary, explanation, hint and example.
    Without it, only the codes found are listed, each described by its first finding.
    """
    registry_codes = {entry["code"]: entry for entry in (registry or {}).get("codes", []) if "code" in entry}
    claim_rules = [entry for entry in (registry or {}).get("rules", []) if "id" in entry]
    results: list[dict[str, Any]] = []
    first_of_code: dict[str, Finding] = {}
    for filename, report, source in reports:
        lines = source.splitlines()
        for finding in findings(report):
            first_of_code.setdefault(finding.code, finding)
            region: dict[str, Any] = {
                "startLine": finding.line,
                "startColumn": finding.col,
                "endLine": finding.end_line,
                "endColumn": finding.end_col,
            }
            if 1 <= finding.line <= len(lines):
                region["snippet"] = {"text": lines[finding.line - 1]}
            text = finding.message + (f" Hint: {finding.hint}" if finding.hint else "")
            properties = {
                key: value
                for key, value in (
                    ("function", finding.function),
                    ("outcome", finding.outcome),
                    ("target", finding.target),
                    ("claimRule", finding.rule),
                )
                if value
            }
            result: dict[str, Any] = {
                "ruleId": finding.code,
                "level": _SARIF_LEVEL.get(finding.severity, "warning"),
                "message": {"text": text},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": artifact_uri(filename)},
                            "region": region,
                        }
                    }
                ],
            }
            if properties:
                result["properties"] = properties
            if finding.caused_by is not None:  # a knock-on: the sites it comes from
                result["relatedLocations"] = [
                    {
                        "id": index,
                        "message": {"text": "the failed site this finding's input comes from"},
                        "physicalLocation": {
                            "artifactLocation": {"uri": artifact_uri(filename)},
                            "region": {"startLine": span[0], "startColumn": span[1], "endLine": span[2], "endColumn": span[3]},
                        },
                    }
                    for index, span in enumerate(finding.caused_by)
                ]
                result.setdefault("properties", {})["knockOn"] = True
            results.append(result)

    codes = sorted(set(first_of_code) | set(registry_codes))
    rules = [_code_descriptor(code, registry_codes.get(code), first_of_code.get(code)) for code in codes]
    rules += [_claim_rule_descriptor(entry) for entry in claim_rules if entry["id"] not in registry_codes]
    rule_index = {rule["id"]: index for index, rule in enumerate(rules)}
    for result in results:
        result["ruleIndex"] = rule_index[result["ruleId"]]
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "torchlower",
                        "version": tool_version,
                        "rules": rules,
                    }
                },
                # The analyzer counts columns in Unicode scalar values, not UTF-16 units.
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def stream_style(choice: str = "auto") -> Style:
    return Style.for_stream(sys.stdout, choice)
