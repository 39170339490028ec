"""`torchlower playground`: serves the built page on 127.0.0.1 with the right MIME types,
prints its URL, and fails clearly when the page has not been built."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _start(*args: str) -> tuple[subprocess.Popen, str]:
    """Runs the CLI in a subprocess and returns it with the URL it printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "torchlower.cli", "playground", "--no-open", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:\d+/", line)
    if not match:
        proc.kill()
        raise AssertionError(f"no URL printed: {line!r} {proc.stderr.read()!r}")
    return proc, match.group(0)


@pytest.fixture
def fake_page(tmp_path: Path) -> Path:
    (tmp_path / "index.html").write_text("<!doctype html><title>t</title>")
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "a.wasm").write_bytes(b"\0asm\1\0\0\0")
    (tmp_path / "assets" / "a.js").write_text("export {};")
    return tmp_path


def test_serves_page_with_wasm_mime_type(fake_page: Path) -> None:
    proc, url = _start("--dir", str(fake_page))
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.headers.get_content_type() == "text/html"
            assert b"<title>t</title>" in response.read()
        with urllib.request.urlopen(url + "assets/a.wasm", timeout=10) as response:
            assert response.headers.get_content_type() == "application/wasm"
            assert response.read() == b"\0asm\1\0\0\0"
        with urllib.request.urlopen(url + "assets/a.js", timeout=10) as response:
            assert response.headers.get_content_type() == "text/javascript"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_unbuilt_page_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "torchlower.cli", "playground", "--no-open", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "has not been built" in result.stderr
    assert "scripts/build-playground.sh" in result.stderr


def test_serves_the_built_playground() -> None:
    """Without --dir: the page built by the set-up (package web/ dir or the checkout's dist),
    with the analyzer's wasm-bindgen build next to it."""
    proc, url = _start()
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            html = response.read().decode()
        assert "<title>torchlower playground</title>" in html
        assert "pkg/torchlower_analyzer_bg.wasm" in html
        with urllib.request.urlopen(url + "pkg/torchlower_analyzer_bg.wasm", timeout=10) as response:
            assert response.headers.get_content_type() == "application/wasm"
            assert response.read(4) == b"\0asm"
        with urllib.request.urlopen(url + "pkg/torchlower_analyzer.js", timeout=10) as response:
            assert response.headers.get_content_type() == "text/javascript"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
