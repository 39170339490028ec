"""How much of the real-code corpus routes native, and what still blocks it.

    python tests/realworld/coverage.py [--json] [--top N]

Analyzes every ``tests/realworld/*.py`` with ``torchlower.analyze`` and prints, per file and in
total, native functions / functions and claimed torch call sites / sites; then the blockers
ranked by how many functions they keep from routing native: each fallback function counts once
for every distinct diagnostic code (or, for sites that are not covered, call target) on it.
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
    """What keeps one fallback function from routing native, as short labels."""
    found: set[str] = set()
    for d in entry.get("diagnostics", []):
        found.add(f"{d['code']} {d['message'].split(':')[0][:60]}")
    for site in entry.get("sites", []):
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
        sites = [s for f in functions for s in f["sites"]]
        claimed = sum(s["outcome"] == "claimed" for s in sites)
        for f in functions:
            if f["route"] != "native":
                blockers.update(_blockers(f))
        row = {"file": path.name, "functions": len(functions), "native": len(native), "sites": len(sites),
               "claimed": claimed, "native_functions": native}
        per_file.append(row)
        for key in ("functions", "native", "sites", "claimed"):
            totals[key] += row[key]
    return {"files": per_file, "totals": dict(totals), "blockers": blockers.most_common()}


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the measurement as JSON")
    parser.add_argument("--top", type=int, default=25, help="how many blockers to list")
    args = parser.parse_args(argv)
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
