"""``torchlower export --fixtures``: eager PyTorch's results as the exported crate's tests.

The file is imported (its top-level code runs) and each exported function is called eagerly
on inputs made as ``torchlower run`` makes them (its annotations, ``# torchlower: inputs``
comments): a random case; the same with special values (NaN, ±Inf, ±0.0) at the start of its
first float tensor; and a case where the first tensor grows by one along its last dimension,
which eager usually refuses (then its error message is what the Rust function must return).
Tensors go to ``tests/fixtures/<case>.safetensors`` (inputs ``in.N``, outputs ``out.N``),
Python numbers straight into ``tests/parity.rs``: one test per case calling the public
function and comparing with eager exactly (dtype, shape, each value's bits, NaN where eager has
NaN), and one per function checking that a float64 argument is ``Error::Argument``.
"""

from __future__ import annotations

import inspect
import struct
from pathlib import Path
from typing import Any

RUST_HELPERS = '''//! The exported functions against eager PyTorch: each case's inputs and eager's results
//! were written by `torchlower export --fixtures` (tests/fixtures/). Generated; export again
//! rather than edit.
#![allow(non_snake_case)]

use std::collections::HashMap;
use std::path::Path;

use {crate}::tch::{{Kind, Tensor}};
use {crate}::Error;

/// The tensors of one case, by name (`in.0`, `out.0`, …).
fn fixture(case: &str) -> HashMap<String, Tensor> {{
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(format!("{{case}}.safetensors"));
    Tensor::read_safetensors(&path).unwrap_or_else(|e| panic!("{{}}: {{e}}", path.display())).into_iter().collect()
}}

/// Equal as eager's result: dtype, shape, NaN where it has NaN, every other value bit for bit
/// (so -0.0 is not 0.0).
fn assert_same(got: &Tensor, want: &Tensor, what: &str) {{
    assert_eq!(got.kind(), want.kind(), "{{what}}: dtype");
    assert_eq!(got.size(), want.size(), "{{what}}: shape");
    let (got, want) = (got.contiguous(), want.contiguous());
    if matches!(want.kind(), Kind::Float | Kind::Double) {{
        let (got_nan, want_nan) = (got.isnan(), want.isnan());
        assert!(got_nan.equal(&want_nan), "{{what}}: NaN positions differ");
        let bits = if want.kind() == Kind::Float {{ Kind::Int }} else {{ Kind::Int64 }};
        let (got, want) = (got.masked_fill(&got_nan, 0.0), want.masked_fill(&want_nan, 0.0));
        assert!(got.view_dtype(bits).equal(&want.view_dtype(bits)), "{{what}}: values differ\\n{{got}}\\n{{want}}");
    }} else {{
        assert!(got.equal(&want), "{{what}}: values differ\\n{{got}}\\n{{want}}");
    }}
}}

/// The error eager raised (`eager_type`: its exception class): the same message, or where
/// eager's own check raises with a message native code cannot reproduce (a distribution's
/// `validate_args`), native code's refusal of the same input (`Error::Value`, "torchlower: …",
/// which eager shows as a `ValueError` too).
fn assert_eager_error(error: &Error, eager_type: &str, eager_message: &str) {{
    let text = error.to_string();
    if text == eager_message {{
        return;
    }}
    let refusal = matches!(error, Error::Value(m) if m.starts_with("torchlower:"));
    assert!(refusal && eager_type == "ValueError", "eager raised {{eager_type}}: {{eager_message}}\\nnative: {{text}}");
}}
'''


def _float_literal(value: float) -> str:
    """An f64 with exactly ``value``'s bits."""
    return f"f64::from_bits(0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016x})"


def _literal(value: Any, annotation: str | None) -> str:
    if annotation == "bool":
        return "true" if value else "false"
    if annotation == "float":
        return _float_literal(float(value))
    return f"{int(value)}i64"


def _special(args: list[Any]) -> list[Any] | None:
    """``args`` with NaN, ±Inf and ±0.0 written at the start of the first float tensor."""
    import torch

    for index, value in enumerate(args):
        if isinstance(value, torch.Tensor) and value.dtype == torch.float32 and value.numel() > 0:
            special = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e-45], dtype=torch.float32)
            flat = value.clone().reshape(-1)
            count = min(flat.numel(), special.numel())
            flat[:count] = special[:count]
            return [*args[:index], flat.reshape(value.shape), *args[index + 1:]]
    return None


def _grown(args: list[Any]) -> list[Any] | None:
    """``args`` with the first tensor one element longer along its last dimension."""
    import torch

    for index, value in enumerate(args):
        if isinstance(value, torch.Tensor) and value.dim() >= 1:
            pad = torch.zeros((*value.shape[:-1], 1), dtype=value.dtype)
            return [*args[:index], torch.cat([value, pad], dim=-1), *args[index + 1:]]
    return None


def _eager(fn: Any, args: list[Any]) -> tuple[Any, tuple[str, str] | None]:
    """(result, None) or (None, (eager's exception class, its message))."""
    import torch

    try:
        with torch.no_grad():
            return fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args]), None
    except Exception as error:  # noqa: BLE001 - any error eager raises is the expected one
        return None, (type(error).__name__, str(error))


def write_parity_tests(path: Path, crate: Path, package: str, exported: list[dict], seed: int,
                       inputs: dict[str, Any] | None = None) -> None:
    """Writes ``tests/fixtures/*.safetensors`` and ``tests/parity.rs`` for ``exported``.
    ``inputs`` may map a function's name to a callable returning its example arguments (used
    instead of generated ones)."""
    import torch
    from safetensors.torch import save_file

    from ._cli_run import import_file, make_inputs, parse_inputs_comment

    module = import_file(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    folder = crate / "tests" / "fixtures"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.safetensors"):
        old.unlink()
    rust_crate = package.replace("-", "_")
    tests = [RUST_HELPERS.format(crate=rust_crate)]
    for entry in exported:
        fn = inspect.unwrap(getattr(module, entry["name"]))
        params = entry.get("params", [])
        if inputs and entry["name"] in inputs:
            torch.manual_seed(seed)
            base = list(inputs[entry["name"]]())
        else:
            base = make_inputs(entry, parse_inputs_comment(lines, entry), size=8, seed=seed)
        cases = {"random": base, "special_values": _special(base), "grown_input": _grown(base)}
        for case, args in cases.items():
            if args is None:
                continue
            name = f"{entry['symbol'].removeprefix('r#')}__{case}"
            result, error = _eager(fn, args)
            tensors = {f"in.{i}": a.contiguous().clone() for i, a in enumerate(args) if isinstance(a, torch.Tensor)}
            call_args = [f'&t["in.{i}"]' if isinstance(a, torch.Tensor) else _literal(a, p.get("type"))
                         for i, (a, p) in enumerate(zip(args, params))]
            call = f"{rust_crate}::{entry['symbol']}({', '.join(call_args)})"
            body = [f'    let t = fixture("{name}");']
            if error is not None:
                body += [f"    let error = {call}.expect_err(\"eager raised\");",
                         f"    assert_eager_error(&error, {_rust_string(error[0])}, {_rust_string(error[1])});"]
            else:
                outputs = list(result) if isinstance(result, tuple) else [result]
                body.append(f"    let got = {call}.expect(\"eager returned\");")
                names = [f"got.{j}" for j in range(len(outputs))] if isinstance(result, tuple) else ["got"]
                for j, (value, got) in enumerate(zip(outputs, names)):
                    if isinstance(value, torch.Tensor):
                        tensors[f"out.{j}"] = value.contiguous().clone()
                        body.append(f'    assert_same(&{got}, &t["out.{j}"], "output {j}");')
                    elif isinstance(value, bool):
                        body.append(f"    assert_eq!({got}, {'true' if value else 'false'});")
                    elif isinstance(value, float):
                        body.append(f"    assert_eq!({got}.to_bits(), {_float_literal(value)}.to_bits());")
                    else:
                        body.append(f"    assert_eq!({got}, {int(value)}i64);")
            save_file(tensors, str(folder / f"{name}.safetensors"))
            tests.append(f"#[test]\nfn {name}() {{\n" + "\n".join(body) + "\n}\n")
        # the boundary: a float64 tensor where the annotation says float32
        wrong = _wrong_dtype(base)
        if wrong is not None:
            name = f"{entry['symbol'].removeprefix('r#')}__wrong_dtype"
            tensors = {f"in.{i}": a.contiguous().clone() for i, a in enumerate(wrong) if isinstance(a, torch.Tensor)}
            save_file(tensors, str(folder / f"{name}.safetensors"))
            call_args = [f'&t["in.{i}"]' if isinstance(a, torch.Tensor) else _literal(a, p.get("type"))
                         for i, (a, p) in enumerate(zip(wrong, params))]
            tests.append(
                f"#[test]\nfn {name}() {{\n    let t = fixture(\"{name}\");\n"
                f"    let error = {rust_crate}::{entry['symbol']}({', '.join(call_args)}).expect_err(\"refused\");\n"
                "    assert!(matches!(error, Error::Argument { .. }), \"{error}\");\n}\n"
            )
    (crate / "tests" / "parity.rs").write_text("\n".join(tests), encoding="utf-8")


def _wrong_dtype(args: list[Any]) -> list[Any] | None:
    import torch

    for index, value in enumerate(args):
        if isinstance(value, torch.Tensor) and value.dtype == torch.float32:
            return [*args[:index], value.double(), *args[index + 1:]]
    return None


def _rust_string(text: str) -> str:
    """A Rust string literal of ``text`` (ASCII, every other character escaped)."""
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(f"\\u{{{ord(ch):x}}}")
    out.append('"')
    return "".join(out)
