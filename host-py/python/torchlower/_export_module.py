"""``torchlower export FILE.py:ClassName``: an ``nn.Module`` as a Rust struct holding the
tensors its ``forward`` reads.

The class is loaded, constructed (``--init``) and rewritten as ``torchlower check
FILE.py:ClassName`` does (:func:`torchlower._cli_check_module.prepare`), and the file with the
generated functions is lowered for a crate. Its entry becomes ``pub fn _tl_module_forward``
(forward's parameters, then each tensor); the struct named after the class keeps those
tensors, loads them by their names in the module (``state_dict`` keys such as
``attn.c_attn.weight``) from a safetensors file or a map, and its ``forward`` calls the entry.
Tensors are never baked into the crate: any instance's load, if they have the types (checked
at every call) and the shapes the class was constructed for — its hyper-parameters (ints,
floats, shapes read from the instance, such as ``normalized_shape``) are constants of the crate,
as they are of the specialisation ``torchlower.compile(module)`` builds.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

#: Rust's keywords (the analyzer's list, analyzer-wasm/src/lower/mangle.rs, which names the
#: exported functions; here only the struct and its forward's parameters are named)
_RUST_KEYWORDS = frozenset(
    "as async await break const continue crate dyn else enum extern false fn for gen if impl in let loop match mod move "
    "mut pub ref return self Self static struct super trait true type unsafe use where while abstract become box do "
    "final macro override priv try typeof unsized virtual yield".split()
)


def _plain(name: str, taken: frozenset[str] = frozenset()) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)) and name not in _RUST_KEYWORDS and name not in taken \
        and not name.startswith("tl_") and name != "_"


def struct_name(class_name: str) -> str:
    """The struct's name: the class's, where Rust can spell it and it names nothing of the crate."""
    return class_name if _plain(class_name, frozenset({"Error", "Result", "tch", "Ok", "Err", "Some", "None"})) else "Module"


def _rust_type(annotation: str) -> str:
    return "&tch::Tensor" if annotation.startswith("Tensor") else {"int": "i64", "float": "f64", "bool": "bool"}[annotation]


def _return_type(annotation: str | None) -> str:
    if annotation is None or annotation.startswith("Tensor"):
        return "tch::Tensor"
    return {"int": "i64", "float": "f64", "bool": "bool"}.get(annotation, annotation)


def module_struct(struct: str, class_name: str, filename: str, entry: dict, forward: dict[str, str],
                  tensors: list[tuple[str, str]], types: dict[str, str]) -> str:
    """The Rust of the struct: ``tensors`` are (entry argument, attribute path) in the entry's
    order, ``forward`` forward's parameters with their annotations, ``types`` every argument's."""
    names = ", ".join(f'({_rust_str(path)}, "{types[argument]}")' for argument, path in tensors)
    params = [(name if _plain(name, frozenset({"self"})) else f"arg{i}", annotation)
              for i, (name, annotation) in enumerate(forward.items())]
    declared = ", ".join(f"{name}: {_rust_type(annotation)}" for name, annotation in params)
    passed = ", ".join([name for name, _ in params] + [f"&self.tensors[{i}]" for i in range(len(tensors))])
    return f'''
/// `{class_name}` of `{filename}` as an instance holds it: the tensors its `forward` reads,
/// loaded by their names in the module ([`{struct}::TENSORS`], the `state_dict` keys), and
/// [`{struct}::forward`], lowered by torchlower (the generated entry [`{entry["symbol"]}`]).
pub struct {struct} {{
    tensors: Vec<tch::Tensor>,
}}

impl {struct} {{
    /// The tensors `forward` reads, by their names in the module, with the annotation each must
    /// satisfy (checked at every call).
    pub const TENSORS: &'static [(&'static str, &'static str)] = &[{names}];

    /// From named tensors (a `state_dict`); each name of [`Self::TENSORS`] must be there, others
    /// are ignored.
    pub fn from_tensors(mut named: std::collections::HashMap<String, tch::Tensor>) -> Result<Self> {{
        let tensors = Self::TENSORS
            .iter()
            .map(|(name, _)| named.remove(*name).ok_or_else(|| Error::Value(format!("torchlower: no tensor named {{name}}"))))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {{ tensors }})
    }}

    /// From a safetensors file, e.g. one written by
    /// `safetensors.torch.save_file(dict(model.state_dict()), path)` (a non-persistent buffer
    /// is not in the `state_dict`: add it by name).
    pub fn from_safetensors(path: impl AsRef<std::path::Path>) -> Result<Self> {{
        Self::from_tensors(tch::Tensor::read_safetensors(path)?.into_iter().collect())
    }}

    /// `{class_name}.forward`: the same values as eager PyTorch's module in eval mode.
    ///
    /// # Errors
    ///
    /// [`Error::Argument`] when an argument or a held tensor is not of its annotated dtype,
    /// device or rank; otherwise the errors eager PyTorch raises for the same inputs.
    pub fn forward(&self, {declared}) -> Result<{_return_type(entry.get("returns"))}> {{
        {entry["symbol"]}({passed})
    }}
}}
'''


def forward_parameters(instance: Any, types: dict[str, str]) -> dict[str, str]:
    """forward's parameters (without ``self``) with their annotations, in order."""
    return {name: types[name] for name in inspect.signature(instance.forward).parameters}


def _rust_str(text: str) -> str:
    """A Rust string literal of an attribute path (ASCII identifiers and dots in practice;
    anything else escaped)."""
    return '"' + "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else f"\\u{{{ord(c):x}}}" for c in text) + '"'
