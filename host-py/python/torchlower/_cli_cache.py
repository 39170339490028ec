"""``torchlower cache``: where the build cache is, how big, and emptying it.

``--size`` (the default) prints the cache folder and the size of each part: ``target/`` (the
one cargo target folder every generated crate shares: tch and the backend, compiled once),
``crates/`` (generated sources), ``modules/`` (built extensions), ``wasm/`` (the compiled
analyzer), anything else. ``--clean`` removes the whole folder's contents; the next build is
a first build again (``torchlower warmup`` redoes it ahead of time).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--size", action="store_true", help="print the cache's location and size (default)")
    action.add_argument("--clean", action="store_true", help="remove everything in the cache")


def folder_size(path: Path) -> int:
    """Bytes of the regular files under ``path`` (links not followed)."""
    total = 0
    for child in path.rglob("*"):
        try:
            if child.is_file() and not child.is_symlink():
                total += child.stat().st_size
        except OSError:
            continue
    return total


def human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def parts(root: Path) -> list[tuple[str, int]]:
    """(name, bytes) of each entry of the cache folder, largest first."""
    if not root.is_dir():
        return []
    sizes = []
    for entry in sorted(root.iterdir()):
        size = folder_size(entry) if entry.is_dir() and not entry.is_symlink() else entry.lstat().st_size
        sizes.append((entry.name + ("/" if entry.is_dir() else ""), size))
    return sorted(sizes, key=lambda item: -item[1])


def main(args: argparse.Namespace) -> int:
    from ._build_env import cache_dir

    root = cache_dir()
    if args.clean:
        removed = 0
        for entry in list(root.iterdir()) if root.is_dir() else []:
            removed += folder_size(entry) if entry.is_dir() and not entry.is_symlink() else entry.lstat().st_size
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        print(f"torchlower cache: removed {human(removed)} from {root}")
        return 0
    listed = parts(root)
    print(f"{root}: {human(sum(size for _, size in listed))}")
    for name, size in listed:
        print(f"  {name:<12} {human(size):>10}")
    return 0
