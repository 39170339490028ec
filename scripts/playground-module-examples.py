#!/usr/bin/env python3
"""Writes the playground's module examples (web-playground/examples/modules/*.json).

The browser cannot build an nn.Module instance, so each example is what
``torchlower check FILE.py:ClassName --format json`` says of one class of the module corpus:
the class's file, the description of the instance (forward's example types, each tensor's type)
and the generated functions with the statement each line came from. The playground re-analyzes
the generated functions in its wasm whenever the description's types are edited.

Run after changing the module rewriting or the corpus files; tests/python/test_check_module.py
fails while a committed example is stale. ``--check`` only compares.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "web-playground" / "examples" / "modules"

#: id -> (title, corpus file, class, constructor arguments, forward's example types)
EXAMPLES = {
    "nanogpt_block": ("nanoGPT Block (nn.Module)", "tests/realworld/modules/nanogpt.py", "Block", "32, 4, 16",
                      {"x": "float32[2,8,32]"}),
    "timm_swiglu": ("timm SwiGLU (nn.Module)", "tests/realworld/modules/timm_torchvision.py", "SwiGLU", "16, 32",
                    {"x": "float32[4,16]"}),
}


def example(title: str, file: str, cls: str, init: str, shapes: dict[str, str]) -> dict:
    from torchlower._cli_check import example_type
    from torchlower._cli_check_module import ClassTarget, check_class

    report, source = check_class(ClassTarget(ROOT / file, cls), init,
                                 {name: example_type(spec) for name, spec in shapes.items()})
    return {"title": title, "file": Path(file).name, "class": cls, "init": init, "source": source,
            "module": report["module"]}


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    OUT.mkdir(parents=True, exist_ok=True)
    for id_, args in EXAMPLES.items():
        text = json.dumps(example(*args), indent=1, ensure_ascii=False) + "\n"
        path = OUT / f"{id_}.json"
        if check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(path.relative_to(ROOT))
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("stale playground module examples (run scripts/playground-module-examples.py):",
              *map(str, stale), sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
