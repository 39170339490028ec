"""``torchlower playground``: serve the built web playground on 127.0.0.1.

The page is static (the analyzer runs in the browser as wasm), so a plain ``http.server`` is
enough; it only has to send ``.wasm`` as ``application/wasm`` so browsers can compile it while
streaming. The page comes from the package's ``web/`` directory (shipped in the wheel) or, in a
development checkout, from ``web-playground/dist``.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
import webbrowser
from pathlib import Path

_PACKAGE_WEB = Path(__file__).resolve().parent / "web"
# host-py/python/torchlower/ -> repository root
_CHECKOUT_DIST = Path(__file__).resolve().parents[3] / "web-playground" / "dist"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0 picks a free one; default 8000)")
    parser.add_argument("--no-open", action="store_true", help="do not open a browser tab")
    parser.add_argument("--dir", type=Path, default=None, help="serve this built page instead of the bundled one")


def find_page(explicit: Path | None = None) -> Path | None:
    """The first directory holding a built page (index.html), or None."""
    candidates = [explicit] if explicit is not None else [_PACKAGE_WEB, _CHECKOUT_DIST]
    for directory in candidates:
        if directory is not None and (directory / "index.html").is_file():
            return directory
    return None


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files with the wasm MIME type, no caching (rebuilds show up on reload), quiet log."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".py": "text/plain",
    }

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - signature of the base class
        pass


def make_server(directory: Path, port: int) -> http.server.ThreadingHTTPServer:
    """A server for ``directory`` bound to 127.0.0.1:``port`` (not started)."""
    handler = functools.partial(_Handler, directory=str(directory))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def main(args: argparse.Namespace) -> int:
    page = find_page(args.dir)
    if page is None:
        searched = [args.dir] if args.dir is not None else [_PACKAGE_WEB, _CHECKOUT_DIST]
        print(
            "torchlower playground: the page has not been built (no index.html in "
            + " or ".join(str(p) for p in searched)
            + "). Build it with scripts/build-playground.sh (part of scripts/setup.sh).",
            file=sys.stderr,
        )
        return 2
    try:
        server = make_server(page, args.port)
    except OSError as exc:
        print(f"torchlower playground: cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", file=sys.stderr)
        return 2
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"torchlower playground: serving {page} at {url} (Ctrl+C to stop)", flush=True)
    if not args.no_open:
        threading.Timer(0.3, webbrowser.open, args=(url,)).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
