"""``torchlower.analyze`` builds the report's Python objects in the host (host-py/src/pyjson.rs)
instead of ``json.loads`` on the text: it must give exactly what ``json.loads`` gives, value for
value and type for type, on every corpus file and on reports with escapes and non-ASCII."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import torchlower
from torchlower import _analyze

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted(REPO.glob("tests/corpus/**/*.py")) + sorted(REPO.glob("examples/*.py"))


def shape(value):
    """The value with every leaf replaced by its type, keys in order."""
    if isinstance(value, dict):
        return ("dict", [(type(k), k, shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [shape(v) for v in value])
    return (type(value), value)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_report_objects_equal_json_loads(path):
    source = path.read_bytes()
    expected = json.loads(_analyze.analyze_json(source, str(path)))
    assert shape(torchlower.analyze(source, str(path))) == shape(expected)


def test_escapes_non_ascii_and_errors():
    source = (
        '"""Docstring with "quotes", a \\\\ backslash, tabs\\t and ünïcödé 日本."""\n'
        "import torch\n"
        "from torchlower.types import TensorF32Cpu2D\n\n"
        "def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
        "    print('naïve \"quoted\"\\n')\n"
        "    return x.relu()\n\n"
        "def g(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
        "    return torch.subtract(x, x)\n"
    )
    for name in ("m.py", "dir with spaces/ünï\"code\".py", "<string>"):
        expected = json.loads(_analyze.analyze_json(source, name))
        assert shape(torchlower.analyze(source, name)) == shape(expected)
    broken = "def f(:\n    pass\n"
    assert shape(torchlower.analyze(broken)) == shape(json.loads(_analyze.analyze_json(broken)))
    with pytest.raises(torchlower.AnalyzerError) as info:
        torchlower.analyze(b"x = '\xff'\n", "latin1.py")
    assert info.value.kind == "invalid_utf8"


def test_the_garbage_collector_is_left_as_it_was():
    """The host pauses Python's cyclic collector while it builds a report, and restores it."""
    import gc

    was_enabled = gc.isenabled()
    try:
        gc.enable()
        torchlower.analyze("x = 1\n")
        assert gc.isenabled()
        gc.disable()
        torchlower.analyze("x = 1\n")
        assert not gc.isenabled()
        with pytest.raises(torchlower.AnalyzerError):
            torchlower.analyze(b"\xff", "bad.py")
        assert not gc.isenabled()
    finally:
        (gc.enable if was_enabled else gc.disable)()
