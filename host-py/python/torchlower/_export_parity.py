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
import sys
from pathlib import Path
from typing import Any

RUST_HELPERS = '''//! The exported functions against eager PyTorch: each case's inputs and eager's results
//! were written by `torchlower export --fixtures` (tests/fixtures/). Generated; export again
//! rather than edit.
#![allow(non_snake_case)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::{{Mutex, MutexGuard}};

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

/// The torch thread count eager ran with when the fixtures were made: libtorch's GEMMs may
/// sum in another order on another count, so the native calls run with the same one.
const EAGER_THREADS: i32 = {threads};

/// libtorch's global generator seeded as eager's was before its call (`torch.manual_seed`), and
/// eager's thread count, held for the call: random ops (`torch.multinomial`) then draw what
/// eager drew, and products sum as eager's did.
fn seeded(seed: i64) -> MutexGuard<'static, ()> {{
    static GENERATOR: Mutex<()> = Mutex::new(());
    let guard = GENERATOR.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    {crate}::tch::manual_seed(seed);
    {crate}::tch::set_num_threads(EAGER_THREADS);
    guard
}}

/// Where eager returned a value but native code refuses the input at run time (an in-place
/// write into an argument under a run-time branch, a `squeeze` of a dim that is not 1, a
/// distribution's `validate_args` check): the Python path reruns eager there, an exported
/// function returns this `Error::Value`. Printed, so that a run with `--nocapture` counts them.
fn refused(case: &str, error: &Error) {{
    let documented = matches!(error, Error::Value(m) if m.starts_with("torchlower:") && m.contains("native code refuses"));
    assert!(documented, "{{case}}: eager returned a value, native code: {{error}}");
    println!("torchlower-export-refusal {{case}}: {{error}}");
}}

/// The error eager raised (`eager_type`: its exception class): the same message; or where
/// eager's own check raises with a message native code cannot reproduce (a distribution's
/// `validate_args`), native code's refusal of the same input (`Error::Value`, "torchlower: …",
/// which eager shows as a `ValueError` too); or a refusal of the input before any work (see
/// [`refused`]), printed.
fn assert_eager_error(case: &str, error: &Error, eager_type: &str, eager_message: &str) {{
    let text = error.to_string();
    if text == eager_message {{
        return;
    }}
    if matches!(error, Error::Value(m) if m.starts_with("torchlower:")) && eager_type == "ValueError" {{
        return;
    }}
    if matches!(error, Error::Value(m) if m.contains("native code refuses")) {{
        return refused(case, error);
    }}
    panic!("eager raised {{eager_type}}: {{eager_message}}\\nnative: {{text}}");
}}
'''


def _float_literal(value: float) -> str:
    """An f64 with exactly ``value``'s bits."""
    return f"f64::from_bits(0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016x})"


def _literal(value: Any, annotation: str | None) -> str:
    if isinstance(value, (list, tuple)):  # a list or tuple of ints is an array
        return f"[{', '.join(f'{int(v)}i64' for v in value)}]"
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


def _optional(annotation: str | None) -> bool:
    """Whether the report types a parameter `Optional[<marker>]` or `Optional[int]` (float,
    bool): None or the value."""
    return (annotation or "").startswith("Optional[")


def _nones(args: list[Any], annotations: list[str | None]) -> list[Any] | None:
    """``args`` with None for every `Optional[…]` parameter (None when there is none)."""
    optional = [_optional(annotation) for annotation in annotations]
    return [None if o else a for a, o in zip(args, optional)] if any(optional) else None


def _grown(args: list[Any]) -> list[Any] | None:
    """``args`` with the first tensor one element longer along its last dimension."""
    import torch

    for index, value in enumerate(args):
        if isinstance(value, torch.Tensor) and value.dim() >= 1:
            pad = torch.zeros((*value.shape[:-1], 1), dtype=value.dtype)
            return [*args[:index], torch.cat([value, pad], dim=-1), *args[index + 1:]]
    return None


#: The seed of libtorch's generator before each eager call (and each Rust call, `seeded`).
SEED = 0


def _eager(fn: Any, args: list[Any]) -> tuple[Any, tuple[str, str] | None, list[Any]]:
    """(result, None, copies) or (None, (eager's exception class, its message), copies): eager
    runs on ``copies`` of the arguments, which a function that writes into its arguments
    (TL212) leaves changed."""
    import torch

    copies = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    torch.manual_seed(SEED)
    try:
        with torch.no_grad():
            return fn(*copies), None, copies
    except Exception as error:  # noqa: BLE001 - any error eager raises is the expected one
        return None, (type(error).__name__, str(error)), copies


def _written(before: Any, after: Any) -> bool:
    """Whether eager wrote into this tensor argument (bitwise, NaN payloads included)."""
    import torch

    if not isinstance(before, torch.Tensor):
        return False
    as_bytes = lambda t: t.contiguous().reshape(-1).view(torch.uint8)  # noqa: E731
    return not torch.equal(as_bytes(before), as_bytes(after))



class _Writer:
    """The fixtures folder and the tests of one crate."""

    def __init__(self, crate: Path, package: str) -> None:
        import torch

        self.crate = crate
        self.rust_crate = package.replace("-", "_")
        self.folder = crate / "tests" / "fixtures"
        self.folder.mkdir(parents=True, exist_ok=True)
        for old in self.folder.glob("*.safetensors"):
            old.unlink()
        self.tests = [RUST_HELPERS.format(crate=self.rust_crate, threads=torch.get_num_threads())]

    def save(self, name: str, tensors: dict) -> None:
        from safetensors.torch import save_file

        save_file(tensors, str(self.folder / f"{name}.safetensors"))

    def cases(self, stem: str, eager: Any, callee: str, args: list[Any], annotations: list[str | None],
              setup: tuple[str, ...] = ()) -> None:
        """The tests of one function (``callee(args…)`` in Rust, ``eager(*args)`` in Python):
        random, special values, grown input, None for its `Optional[<marker>]` parameters,
        wrong dtype. ``setup``: Rust lines run first."""
        cases = {"random": args, "special_values": _special(args), "grown_input": _grown(args), "optional_none": _nones(args, annotations)}
        for case, values in cases.items():
            if values is not None:
                self._case(f"{stem}__{case}", eager, callee, values, annotations, setup)
        wrong = _wrong_dtype(args)
        if wrong is not None:  # the boundary: a float64 tensor where the annotation says float32
            name = f"{stem}__wrong_dtype"
            self.save(name, _inputs(wrong))
            body = [*setup, f'    let t = fixture("{name}");',
                    f'    let error = {callee}({", ".join(_call_args(wrong, annotations))}).expect_err("refused");',
                    '    assert!(matches!(error, Error::Argument { .. }), "{error}");']
            self.tests.append(f"#[test]\nfn {name}() {{\n" + "\n".join(body) + "\n}\n")

    def _case(self, name: str, eager: Any, callee: str, args: list[Any], annotations: list[str | None],
              setup: tuple[str, ...]) -> None:
        import torch

        result, error, copies = _eager(eager, args)
        tensors = _inputs(args)
        call = f"{callee}({', '.join(_call_args(args, annotations))})"
        body = [*setup, f'    let t = fixture("{name}");', f"    let rng = seeded({SEED});", f"    let result = {call};", "    drop(rng);"]
        if error is not None:
            body += ['    let error = result.expect_err("eager raised");',
                     f'    assert_eager_error("{name}", &error, {_rust_string(error[0])}, {_rust_string(error[1])});']
        else:
            # a returned list is the Rust tuple of its elements
            sequence = isinstance(result, (tuple, list))
            outputs = list(result) if sequence else [result]
            body.append(f'    let got = match result {{ Ok(got) => got, Err(error) => return refused("{name}", &error) }};')
            names = [f"got.{j}" for j in range(len(outputs))] if sequence else ["got"]
            for j, (value, got) in enumerate(zip(outputs, names)):
                if isinstance(value, torch.Tensor):
                    tensors[f"out.{j}"] = value.contiguous().clone()
                    body.append(f'    assert_same(&{got}, &t["out.{j}"], "output {j}");')
                elif isinstance(value, bool):
                    body.append(f"    assert_eq!({got}, {'true' if value else 'false'});")
                elif isinstance(value, float):
                    body.append(f"    assert_eq!({got}.to_bits(), {_float_literal(value)}.to_bits());")
                elif value is None:  # `-> None`: the unit
                    body.append(f"    let () = {got};")
                else:
                    body.append(f"    assert_eq!({got}, {int(value)}i64);")
        # the arguments eager wrote into (TL212), as eager left them, result or error
        for i, (before, after) in enumerate(zip(args, copies)):
            if _written(before, after):
                tensors[f"written.{i}"] = after.contiguous().clone()
                body.append(f'    assert_same(&t["in.{i}"], &t["written.{i}"], "argument {i} as eager wrote it");')
        self.save(name, tensors)
        self.tests.append(f"#[test]\nfn {name}() {{\n" + "\n".join(body) + "\n}\n")

    def finish(self) -> None:
        (self.crate / "tests" / "parity.rs").write_text("\n".join(self.tests), encoding="utf-8")


def _inputs(args: list[Any]) -> dict:
    import torch

    return {f"in.{i}": a.contiguous().clone() for i, a in enumerate(args) if isinstance(a, torch.Tensor)}


def _call_args(args: list[Any], annotations: list[str | None]) -> list[str]:
    """The Rust arguments of a call: tensors from the fixture, an `Optional[…]` parameter's as
    `Some(…)` or `None`, other values as literals."""
    import torch

    def argument(i: int, value: Any, annotation: str | None) -> str:
        optional = _optional(annotation)
        if isinstance(value, torch.Tensor):
            return f'Some(&t["in.{i}"])' if optional else f'&t["in.{i}"]'
        if optional:
            inner = (annotation or "")[len("Optional["):-1]
            return "None" if value is None else f"Some({_literal(value, inner)})"
        return _literal(value, annotation)

    return [argument(i, a, annotation) for i, (a, annotation) in enumerate(zip(args, annotations))]


def write_parity_tests(path: Path, crate: Path, package: str, exported: list[dict], seed: int,
                       inputs: dict[str, Any] | None = None) -> None:
    """Writes ``tests/fixtures/*.safetensors`` and ``tests/parity.rs`` for ``exported``.
    ``inputs`` may map a function's name to a callable returning its example arguments (used
    instead of generated ones)."""
    import torch

    from ._cli_run import import_file, make_inputs, parse_inputs_comment

    try:
        module = import_file(path)
    except Exception as error:  # noqa: BLE001 - the user's module may raise anything
        raise ValueError(f"--fixtures imports {path}, which raised {type(error).__name__}: {error}") from None
    lines = path.read_text(encoding="utf-8").splitlines()
    writer = _Writer(crate, package)
    for entry in exported:
        if any("Cuda" in (p.get("type") or "") for p in entry.get("params", [])) and not torch.cuda.is_available():
            print(f"torchlower export: no fixtures for {entry['name']}: its tensors live on cuda:0 and torch sees no GPU",
                  file=sys.stderr)
            continue
        fn = inspect.unwrap(getattr(module, entry["name"]))
        if inputs and entry["name"] in inputs:
            torch.manual_seed(seed)
            args = _with_defaults(fn, inputs[entry["name"]]())
        else:
            args = make_inputs(entry, parse_inputs_comment(lines, entry), size=8, seed=seed)
        writer.cases(entry["symbol"].removeprefix("r#"), fn, f"{writer.rust_crate}::{entry['symbol']}", args,
                     [p.get("type") for p in entry.get("params", [])])
    writer.finish()


def _with_defaults(fn: Any, args: Any) -> list[Any]:
    """``args`` bound to ``fn`` as a call binds them, omitted defaults included: the exported
    Rust function takes every parameter (it has no defaults)."""
    bound = inspect.signature(fn).bind(*args)
    bound.apply_defaults()
    return list(bound.arguments.values())


def write_module_parity_tests(crate: Path, package: str, struct: str, instance: Any, tensors: list[str],
                              args: list[Any], annotations: list[str | None]) -> None:
    """The same tests for an exported module: the instance's tensors (by their names in the
    module) in ``tests/fixtures/weights.safetensors``, loaded by ``STRUCT::from_safetensors``,
    and ``forward`` on ``args`` against ``instance(*args)``."""
    from . import _modules

    writer = _Writer(crate, package)
    writer.save("weights", {path: _modules._attribute(instance, path).detach().contiguous().clone() for path in tensors})
    setup = (f'    let model = {writer.rust_crate}::{struct}::from_safetensors('
             'Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/weights.safetensors")).expect("the weights load");',)
    writer.cases(struct.lower(), instance, "model.forward", args, annotations, setup)
    writer.finish()


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
