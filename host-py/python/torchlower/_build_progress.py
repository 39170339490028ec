"""What the user sees while cargo builds: "Compiling native extension: 37/112 crates, 48s".

On a terminal (stderr is a TTY) one line is redrawn in place; on a pipe nothing is shown
unless ``TORCHLOWER_PROGRESS=1`` (then a plain line every few seconds);
``TORCHLOWER_PROGRESS=0`` silences it everywhere.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO


def _enabled(stream: TextIO) -> tuple[bool, bool]:
    """(show anything, redraw in place)."""
    setting = os.environ.get("TORCHLOWER_PROGRESS", "").strip().lower()
    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    if setting in ("0", "false", "no", "off"):
        return False, False
    if setting in ("1", "true", "yes", "on"):
        return True, is_tty
    return is_tty, is_tty


def _format_elapsed(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class BuildProgress:
    """Counts cargo's compiled units against an expected total and shows it.

    ``total`` is an estimate (the count of the last successful build, or one from
    ``cargo metadata``); the shown total grows if the count passes it.
    """

    def __init__(self, label: str, total: int | None, stream: TextIO | None = None):
        self.label = label
        self.total = total
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.visible, self.in_place = _enabled(self.stream)
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._last_plain = 0.0
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> "BuildProgress":
        if self.visible:
            self._ticker = threading.Thread(target=self._tick, name="torchlower-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self.visible and self.in_place:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()

    def unit_done(self) -> None:
        """cargo reported one more compiled (or fresh) unit."""
        with self._lock:
            self.done += 1

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def line(self) -> str:
        with self._lock:
            done, total = self.done, self.total
        shown_total = max(total or 0, done)
        count = f"{done}/{shown_total} crates" if shown_total else f"{done} crates"
        return f"Compiling native extension ({self.label}): {count}, {_format_elapsed(self.elapsed)}"

    def finish(self, message: str) -> None:
        """Replace the progress line with a final message (shown only where progress is)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if self.visible:
            prefix = "\r\x1b[2K" if self.in_place else ""
            self.stream.write(f"{prefix}{message}\n")
            self.stream.flush()
        self.visible = False

    def _tick(self) -> None:
        while not self._stop.wait(0.25 if self.in_place else 0.5):
            now = time.monotonic()
            if self.in_place:
                self.stream.write("\r\x1b[2K" + self.line())
                self.stream.flush()
            elif now - self._last_plain >= 5.0:
                self._last_plain = now
                self.stream.write(self.line() + "\n")
                self.stream.flush()
