"""The real blocks of ``benchmarks/blocks.py`` (the op-family and vision issues' benchmark
cells) route native and match eager on every cell's inputs; their timings go to
``docs/benchmarks/`` through ``torchlower bench --cells-module benchmarks/blocks.py``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

import torchlower
from test_native_cpu import assert_matches_eager

BLOCKS = Path(__file__).resolve().parents[2] / "benchmarks" / "blocks.py"


def _module():
    spec = importlib.util.spec_from_file_location("_blocks_under_test", BLOCKS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_block_routes_native_and_matches_eager_on_its_cells():
    module = _module()
    cells = module.cells()
    assert {function for _, function, _ in cells} >= {"gpt_mlp", "llama_mlp", "bert_head", "attention", "multi_head_attention", "tanh_policy", "two_tower", "mnist_net", "squeeze_excitation", "mobilenet_v3_head"}
    compiled = {}
    for cell_id, function, shape in cells:
        if function not in compiled:
            compiled[function] = torchlower.compile(getattr(module, function))
            assert compiled[function].route == "native", f"{function}: {compiled[function].reason}"
        inputs = module.inputs(function, shape, torch.Generator().manual_seed(0))
        assert_matches_eager(compiled[function](*inputs), getattr(module, function)(*inputs))
