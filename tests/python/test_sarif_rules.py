"""SARIF from ``torchlower check --format sarif`` carries the analyzer's registry text.

The registry is read through the API (``torchlower.rules()``, the wasm's ``tl_rules``
export), never copied here, so these tests follow every change of a rule's wording: each
``tool.driver.rules`` entry of a code the log reports, and of every claim rule, must hold
that entry's summary, explanation, hint and example.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import torchlower
from torchlower import cli
from torchlower._analyze import _loaded_analyzer

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SARIF_SCHEMA = HERE / "sarif-schema-2.1.0.json"
# Files whose findings span several areas (signature, sites of several lanes, statements,
# returns, a syntax error).
FILES = [
    "tests/python/snapshots/check_input.py",
    "tests/corpus/rejected/gelu_variants.py",
    "tests/corpus/rejected/statements.py",
    "tests/corpus/rejected/classification_variants.py",
]


@pytest.fixture(scope="module")
def registry() -> dict:
    return torchlower.rules()


@pytest.fixture()
def sarif(capsys, monkeypatch) -> dict:
    monkeypatch.chdir(REPO)
    status = cli.main(["check", *FILES, "--format", "sarif"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def test_rules_come_from_the_wasm_export(registry):
    """``torchlower.rules()`` is the registry the analyzer wasm exports (``tl_rules``), the
    same text as the playground's ``rules()``; every entry has its full text."""
    assert registry == json.loads(_loaded_analyzer().rules())
    assert registry["rules"] and registry["codes"]
    for entry in registry["codes"]:
        assert entry["code"].startswith("TL") and entry["summary"] and entry["explanation"], entry
    for entry in registry["rules"]:
        assert entry["id"] and entry["summary"] and entry["explanation"] and entry["example"], entry
    # a copy each call: callers cannot change the next caller's registry
    mine = torchlower.rules()
    mine["codes"].clear()
    assert torchlower.rules() == registry


def expected_help(entry: dict) -> str:
    parts = [entry["hint"]] if entry.get("hint") else []
    if entry.get("example"):
        parts.append(f"Example:\n{entry['example']}")
    return "\n\n".join(parts)


def test_sarif_carries_the_registry_text_of_every_reported_code(sarif, registry):
    (run,) = sarif["runs"]
    descriptors = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    codes = {entry["code"]: entry for entry in registry["codes"]}
    reported = {result["ruleId"] for result in run["results"]}
    assert len(reported) >= 5, reported  # several areas are exercised
    for code in reported:
        entry = codes[code]  # every code the analyzer reports is in its registry
        descriptor = descriptors[code]
        assert descriptor["shortDescription"]["text"] == entry["summary"]
        assert descriptor["fullDescription"]["text"] == entry["explanation"]
        assert descriptor["help"]["text"] == expected_help(entry)
        assert entry["hint"] in descriptor["help"]["text"] and entry["example"] in descriptor["help"]["text"]
        assert descriptor["name"] and " " not in descriptor["name"]
        assert descriptor["properties"]["area"] == entry["area"]
    for result in run["results"]:
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_sarif_describes_every_registry_code_and_claim_rule(sarif, registry):
    (run,) = sarif["runs"]
    descriptors = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert {entry["code"] for entry in registry["codes"]} <= set(descriptors)
    for entry in registry["rules"]:
        descriptor = descriptors[entry["id"]]
        assert descriptor["shortDescription"]["text"] == entry["summary"]
        assert descriptor["fullDescription"]["text"] == entry["explanation"]
        assert descriptor["help"]["text"] == expected_help(entry)
        assert descriptor["properties"]["kind"] == "claim rule"
        assert descriptor["properties"]["lane"] == entry["lane"]
    # results that name a claim rule name one that is described
    for result in run["results"]:
        claim_rule = result.get("properties", {}).get("claimRule")
        if claim_rule:
            assert claim_rule in descriptors


def test_sarif_with_the_full_registry_validates_against_the_schema(sarif):
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(sarif)
