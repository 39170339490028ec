"""``torchlower warmup``: build the shared part of every native extension ahead of time.

The first native build on a machine compiles tch, torch-sys and the backend (about 100 s);
every later build compiles only its own small crate. ``warmup`` does that first build now, on
a tiny module of its own, so that the first ``torchlower.compile`` of a user's code takes
seconds. It shows cargo's progress (a line redrawn on a terminal, a line every few seconds on
a pipe) and ends with the time it took; run again, it finds everything built and returns at
once. Exit status 0, or 1 when the build fails (the error says why, as ``doctor`` does).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

#: A module whose one native function uses the backend's Python boundary, libtorch ops and a
#: fused kernel, so that the shared target folder ends up holding everything a build links.
WARMUP_SOURCE = '''\
import torch

from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


def warmup(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return torch.relu(x @ w.t() + b) * 2.0
'''


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help="no progress, only errors")


def main(args: argparse.Namespace) -> int:
    from ._compile import build_module
    from ._build_env import cache_dir

    if args.quiet:
        os.environ["TORCHLOWER_PROGRESS"] = "0"
    else:
        os.environ.setdefault("TORCHLOWER_PROGRESS", "1")
        print(f"torchlower warmup: building the shared backend in {cache_dir() / 'target'}", file=sys.stderr)
    started = time.monotonic()
    build = build_module(WARMUP_SOURCE, "<torchlower warmup>")
    seconds = time.monotonic() - started
    if build.error is not None:
        print(f"torchlower warmup: {build.error}", file=sys.stderr)
        print("torchlower warmup: `torchlower doctor` lists what a build needs and what is missing", file=sys.stderr)
        return 1
    if build.extension is None:
        print("torchlower warmup: the warm-up module did not route native (an analyzer bug)", file=sys.stderr)
        return 1
    if not args.quiet:
        state = "built" if build.built else "already built"
        print(f"torchlower warmup: backend {state} in {seconds:.1f}s; later first builds compile only their own crate")
    return 0
