"""The ``torchlower`` command line: one subcommand per module ``_cli_<name>.py``."""

from __future__ import annotations

import argparse
import importlib
import sys

# subcommand -> (module, one-line help). Each module defines add_arguments(parser) and
# main(args) -> int.
SUBCOMMANDS = {
    "check": ("_cli_check", "analyze files and show claims and diagnostics"),
    "build": ("_cli_build", "build the native extension for a file and report routes"),
    "run": ("_cli_run", "build, run every native function on generated inputs, compare with eager"),
    "bench": ("_cli_bench", "benchmark native vs eager, TorchScript and torch.compile"),
    "playground": ("_cli_playground", "serve the web playground on localhost"),
    "warmup": ("_cli_warmup", "build the shared backend ahead of time, so a first compile takes seconds"),
    "doctor": ("_cli_doctor", "show what a native build needs and what this machine has"),
    "cache": ("_cli_cache", "show the build cache's location and size, or empty it"),
    "export": ("_cli_export", "write the native functions of a file as a standalone Rust crate"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="torchlower", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        try:
            module = importlib.import_module(f"torchlower.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"torchlower.{module_name}":
                raise
            continue  # subcommand not built in this checkout
        modules[name] = module
        module.add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    args = parser.parse_args(argv)
    return int(modules[args.command].main(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
