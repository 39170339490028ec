//! Annotation vocabulary: `torchlower.types.X` and the seed's `rextio_torch.types.X`, imported
//! by name, by module alias or fully dotted; the builtins `int`, `bool` and `float`.

use super::ModuleScope;
use crate::ty::{TensorTy, Ty};
use ruff_python_ast::Expr;

const TYPE_MODULES: &[&str] = &["torchlower.types", "rextio_torch.types"];

/// The type an annotation denotes, or `None` if it is not part of the vocabulary.
pub fn resolve_annotation(scope: &ModuleScope, annotation: &Expr) -> Option<Ty> {
    if let Expr::Name(n) = annotation {
        let name = n.id.as_str();
        if scope.is_builtin(name) {
            return match name {
                "int" => Some(Ty::Int),
                "bool" => Some(Ty::Bool),
                "float" => Some(Ty::Float),
                _ => None,
            };
        }
    }
    let path = scope.dotted_path(annotation, &|_| false)?;
    let (module, marker) = path.rsplit_once('.')?;
    if !TYPE_MODULES.contains(&module) {
        return None;
    }
    TensorTy::from_marker(marker).map(Ty::Tensor)
}

/// The element types of a tuple annotation (`tuple[A, B]`, `typing.Tuple[A, B]`), when
/// every element is in the vocabulary.
pub fn resolve_tuple_annotation(scope: &ModuleScope, annotation: &Expr) -> Option<Vec<Ty>> {
    let Expr::Subscript(s) = annotation else { return None };
    let is_tuple = match &*s.value {
        Expr::Name(n) if n.id.as_str() == "tuple" && scope.is_builtin("tuple") => true,
        other => scope.dotted_path(other, &|_| false).as_deref() == Some("typing.Tuple"),
    };
    let Expr::Tuple(items) = &*s.slice else { return None };
    if !is_tuple || items.elts.is_empty() || items.elts.len() > 8 {
        return None;
    }
    items.elts.iter().map(|e| resolve_annotation(scope, e)).collect()
}

/// The longest list or tuple of ints a parameter may be (`list[int, …]`, eight items).
pub const MAX_INT_SEQUENCE: usize = 8;

/// A parameter that is a list or tuple of a given number of ints: `tuple[int, int]`,
/// `Tuple[int, int]` (what real code writes for a kernel size) and `list[int, int]` (two or
/// more items: what `torchlower.compile` writes for a `List[int]` argument, since `list[int]`
/// means a list of any length). `Ty::List(n)` / `Ty::Tuple(n)`: its elements are `n` ints.
pub fn resolve_int_sequence(scope: &ModuleScope, annotation: &Expr) -> Option<Ty> {
    let Expr::Subscript(s) = annotation else { return None };
    let items: Vec<&Expr> = match &*s.slice {
        Expr::Tuple(t) => t.elts.iter().collect(),
        one => vec![one],
    };
    let kind = match sequence_path(scope, &s.value)? {
        "list" if items.len() >= 2 => Ty::List(0),
        "tuple" => Ty::Tuple(0),
        _ => return None,
    };
    let ints = items.len() <= MAX_INT_SEQUENCE && items.iter().all(|e| resolve_annotation(scope, e) == Some(Ty::Int));
    ints.then(|| kind.with_items(items.len() as u8))
}

/// Whether `annotation` is a list or tuple of ints of a length it does not say (`List[int]`,
/// `list[int]`, `Sequence[int]`, `Tuple[int, ...]`): `torchlower.compile` specialises it on
/// each call's argument, as an unannotated parameter.
pub fn is_open_int_sequence(scope: &ModuleScope, annotation: &Expr) -> bool {
    let Expr::Subscript(s) = annotation else { return false };
    let int = |e: &Expr| resolve_annotation(scope, e) == Some(Ty::Int);
    match (sequence_path(scope, &s.value), &*s.slice) {
        (Some("list" | "sequence"), item) => int(item),
        (Some("tuple"), Expr::Tuple(t)) => matches!(t.elts.as_slice(), [item, Expr::EllipsisLiteral(_)] if int(item)),
        _ => false,
    }
}

/// `list`, `tuple` or `sequence` for the builtins and their `typing` / `collections.abc` names.
fn sequence_path(scope: &ModuleScope, value: &Expr) -> Option<&'static str> {
    if let Expr::Name(n) = value {
        if scope.is_builtin(n.id.as_str()) {
            return match n.id.as_str() {
                "list" => Some("list"),
                "tuple" => Some("tuple"),
                _ => None,
            };
        }
    }
    match scope.dotted_path(value, &|_| false)?.as_str() {
        "typing.List" => Some("list"),
        "typing.Tuple" => Some("tuple"),
        "typing.Sequence" | "collections.abc.Sequence" => Some("sequence"),
        _ => None,
    }
}

/// Whether `annotation` is `torch.Tensor` (by any import of it): a tensor of a dtype, device
/// and rank the annotation does not say.
fn is_open_tensor(scope: &ModuleScope, annotation: &Expr) -> bool {
    scope.dotted_path(annotation, &|_| false).as_deref() == Some("torch.Tensor")
}

/// Whether a parameter's annotation leaves its type to the call: `torch.Tensor`,
/// `Optional[torch.Tensor]` (`torch.Tensor | None`) or `Optional[<marker>]` (None or that
/// tensor: only the call says which), also as strings, and a list or tuple of ints of open
/// length (`List[int]`). Such parameters are typed as
/// unannotated ones are (`torchlower.compile` specialises them on each call's arguments, a
/// `None` argument included). A bare marker resolves before this is asked.
pub fn is_open_parameter(scope: &ModuleScope, annotation: &Expr) -> bool {
    if is_open_int_sequence(scope, annotation) {
        return true;
    }
    match promise_of(scope, annotation, false, 0) {
        Some(Promise::Tensor) => true,
        // `Optional[X]` / `X | None` read as `X`: a marker or a number there may be None
        Some(Promise::Is(Ty::Tensor(_) | Ty::Int | Ty::Float | Ty::Bool)) => resolve_annotation(scope, annotation).is_none(),
        _ => false,
    }
}

/// A parameter's type from its annotation: the vocabulary, or `None` (the annotation the
/// host writes for a parameter specialised on a `None` argument).
pub fn resolve_parameter_annotation(scope: &ModuleScope, annotation: &Expr) -> Option<Ty> {
    match annotation {
        Expr::NoneLiteral(_) => Some(Ty::NoneVal),
        other => resolve_annotation(scope, other).or_else(|| resolve_int_sequence(scope, other)),
    }
}

/// What a return annotation outside the vocabulary still promises, for the forms real code
/// writes: `torch.Tensor`, tuples of such items (`Tuple[torch.Tensor, int]`,
/// `tuple[torch.Tensor, ...]`, a bare `tuple`) and `Optional[X]` / `X | None` as `X` (a
/// `return None` is refused on its own), also as strings. The return type is then inferred
/// from the `return`s, as without an annotation, and must keep the promise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Promise {
    /// exactly this type (a marker, `int`, `float`, `bool` inside an open form)
    Is(Ty),
    /// a tensor of any dtype, device and rank
    Tensor,
    /// a tuple of these items
    Tuple(Vec<Promise>),
    /// a tuple of any length whose every item keeps this promise (`Tuple[X, ...]`)
    TupleOf(Box<Promise>),
    /// a tuple of anything (`tuple`, `typing.Tuple`)
    AnyTuple,
}

impl Promise {
    /// Whether a function returning `ty` (with these element types when it is a tuple) keeps
    /// the promise.
    pub fn admits(&self, ty: Ty, items: &[Ty]) -> bool {
        let item = |promise: &Promise, t: &Ty| promise.admits(*t, &[]);
        match self {
            Promise::Is(want) => ty == *want,
            Promise::Tensor => matches!(ty, Ty::Tensor(_)),
            Promise::AnyTuple => matches!(ty, Ty::Tuple(_)),
            Promise::TupleOf(each) => matches!(ty, Ty::Tuple(_)) && items.iter().all(|t| item(each, t)),
            Promise::Tuple(want) => matches!(ty, Ty::Tuple(_)) && want.len() == items.len() && want.iter().zip(items).all(|(p, t)| item(p, t)),
        }
    }

    /// The promise as Python spells it, for messages.
    pub fn describe(&self) -> String {
        match self {
            Promise::Is(ty) => ty.describe(),
            Promise::Tensor => "torch.Tensor".into(),
            Promise::AnyTuple => "tuple".into(),
            Promise::TupleOf(each) => format!("tuple[{}, ...]", each.describe()),
            Promise::Tuple(items) => format!("tuple[{}]", items.iter().map(Promise::describe).collect::<Vec<_>>().join(", ")),
        }
    }
}

/// The [`Promise`] of a return annotation that [`resolve_annotation`] and
/// [`resolve_tuple_annotation`] do not resolve, when it is one of the open forms.
pub fn resolve_promise(scope: &ModuleScope, annotation: &Expr) -> Option<Promise> {
    promise_of(scope, annotation, true, 0)
}

/// How deep open forms nest (`Optional[Tuple[...]]`, a string inside) before we give up.
const MAX_PROMISE_DEPTH: usize = 4;
/// The longest string annotation parsed (real ones are a few words).
const MAX_STRING_ANNOTATION: usize = 200;

fn promise_of(scope: &ModuleScope, annotation: &Expr, tuples: bool, depth: usize) -> Option<Promise> {
    if depth > MAX_PROMISE_DEPTH {
        return None;
    }
    if let Some(ty) = resolve_annotation(scope, annotation) {
        return Some(Promise::Is(ty));
    }
    if is_open_tensor(scope, annotation) {
        return Some(Promise::Tensor);
    }
    let path = |e: &Expr| match e {
        Expr::Name(n) if scope.is_builtin(n.id.as_str()) => Some(n.id.to_string()),
        other => scope.dotted_path(other, &|_| false),
    };
    match annotation {
        Expr::StringLiteral(text) => {
            let text = text.value.to_str();
            if text.len() > MAX_STRING_ANNOTATION {
                return None;
            }
            let parsed = ruff_python_parser::parse_expression(text).ok()?.into_syntax();
            promise_of(scope, &parsed.body, tuples, depth + 1)
        }
        // `X | None`, `None | X`
        Expr::BinOp(b) if b.op == ruff_python_ast::Operator::BitOr => match (&*b.left, &*b.right) {
            (Expr::NoneLiteral(_), other) | (other, Expr::NoneLiteral(_)) => promise_of(scope, other, tuples, depth + 1),
            _ => None,
        },
        Expr::Name(_) | Expr::Attribute(_) if tuples && matches!(path(annotation).as_deref(), Some("tuple" | "typing.Tuple")) => Some(Promise::AnyTuple),
        Expr::Subscript(s) => {
            let items: Vec<&Expr> = match &*s.slice {
                Expr::Tuple(t) => t.elts.iter().collect(),
                one => vec![one],
            };
            match path(&s.value).as_deref() {
                Some("typing.Optional") if items.len() == 1 => promise_of(scope, items[0], tuples, depth + 1),
                Some("typing.Union") if items.len() == 2 => match (items[0], items[1]) {
                    (Expr::NoneLiteral(_), other) | (other, Expr::NoneLiteral(_)) => promise_of(scope, other, tuples, depth + 1),
                    _ => None,
                },
                Some("tuple" | "typing.Tuple") if tuples => match items.as_slice() {
                    [each, Expr::EllipsisLiteral(_)] => Some(Promise::TupleOf(Box::new(promise_of(scope, each, false, depth + 1)?))),
                    _ if (1..=8).contains(&items.len()) => {
                        items.iter().map(|e| promise_of(scope, e, false, depth + 1)).collect::<Option<Vec<_>>>().map(Promise::Tuple)
                    }
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruff_python_ast as ast;

    fn resolve_all(src: &str) -> Vec<Option<Ty>> {
        let m = ruff_python_parser::parse_module(src).expect("parses").into_syntax();
        let scope = ModuleScope::from_module(&m.body);
        let mut out = Vec::new();
        for stmt in &m.body {
            if let ast::Stmt::FunctionDef(f) = stmt {
                for a in &f.parameters.args {
                    out.push(a.parameter.annotation.as_deref().and_then(|e| resolve_annotation(&scope, e)));
                }
            }
        }
        out
    }

    #[test]
    fn spellings_of_the_markers() {
        let tys = resolve_all(
            "from torchlower.types import TensorF32Cpu2D\nimport torchlower.types as T\nimport rextio_torch.types\n\
             from rextio_torch import types as R\nimport torchlower\n\
             def f(a: TensorF32Cpu2D, b: T.TensorF32Cpu1D, c: rextio_torch.types.TensorI64Cpu1D,\n\
                   d: R.TensorF32Cuda0_2D, e: torchlower.types.TensorF32Cuda0_1D, n: int, g: bool, h: float, i: T.Nope): pass\n",
        );
        assert_eq!(
            tys,
            vec![
                Some(Ty::Tensor(TensorTy::F32_CPU_2D)),
                Some(Ty::Tensor(TensorTy::F32_CPU_1D)),
                Some(Ty::Tensor(TensorTy::I64_CPU_1D)),
                Some(Ty::Tensor(TensorTy::F32_CUDA0_2D)),
                Some(Ty::Tensor(TensorTy::F32_CUDA0_1D)),
                Some(Ty::Int),
                Some(Ty::Bool),
                Some(Ty::Float),
                None,
            ]
        );
    }

    /// Each parameter of the first function in `src`: its list or tuple of ints, and whether
    /// its length is left open.
    fn int_sequences(src: &str) -> Vec<(Option<Ty>, bool)> {
        let m = ruff_python_parser::parse_module(src).expect("parses").into_syntax();
        let scope = ModuleScope::from_module(&m.body);
        let Some(ast::Stmt::FunctionDef(f)) = m.body.iter().find(|s| matches!(s, ast::Stmt::FunctionDef(_))) else { return Vec::new() };
        f.parameters
            .args
            .iter()
            .filter_map(|a| a.parameter.annotation.as_deref())
            .map(|e| (resolve_parameter_annotation(&scope, e), is_open_parameter(&scope, e)))
            .collect()
    }

    #[test]
    fn lists_and_tuples_of_ints_say_their_length_or_leave_it_open() {
        let found = int_sequences(
            "import typing\nfrom typing import List, Sequence, Tuple\nimport collections.abc\n\
             def f(a: list[int, int], b: tuple[int, int], c: Tuple[int], d: typing.List[int, int, int],\n\
                   e: List[int], f: list[int], g: Sequence[int], h: Tuple[int, ...], i: collections.abc.Sequence[int],\n\
                   j: list[float, int], k: tuple[int, ...][0], l: list[int, int, int, int, int, int, int, int, int]): pass\n",
        );
        assert_eq!(
            found,
            vec![
                (Some(Ty::List(2)), false),
                (Some(Ty::Tuple(2)), false),
                (Some(Ty::Tuple(1)), false),
                (Some(Ty::List(3)), false),
                (None, true),
                (None, true),
                (None, true),
                (None, true),
                (None, true),
                (None, false),
                (None, false),
                // more than eight ints: no parameter type, and not open either
                (None, false),
            ]
        );
    }

    /// The promise of each function's return annotation in `src`.
    fn promises(src: &str) -> Vec<Option<Promise>> {
        let m = ruff_python_parser::parse_module(src).expect("parses").into_syntax();
        let scope = ModuleScope::from_module(&m.body);
        m.body
            .iter()
            .filter_map(|stmt| match stmt {
                ast::Stmt::FunctionDef(f) => Some(f.returns.as_deref().and_then(|e| resolve_promise(&scope, e))),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn open_return_annotations_promise_what_they_say() {
        let found = promises(
            "import torch\nimport torch as th\nfrom torch import Tensor\nimport typing\nfrom typing import Optional, Tuple, Union\n\
             from torchlower.types import TensorF32Cpu2D\n\
             def a() -> torch.Tensor: pass\ndef b() -> th.Tensor: pass\ndef c() -> 'Tensor': pass\n\
             def d() -> Optional[torch.Tensor]: pass\ndef e() -> Tensor | None: pass\ndef f() -> Union[None, Tensor]: pass\n\
             def g() -> tuple: pass\ndef h() -> typing.Tuple: pass\ndef i() -> Tuple[Tensor, ...]: pass\n\
             def j() -> tuple[Tensor, int]: pass\ndef k() -> 'Tuple[TensorF32Cpu2D, Tensor]': pass\n\
             def l() -> Union[int, str]: pass\ndef m() -> tuple[tuple[Tensor, Tensor], Tensor]: pass\ndef n() -> torch.nn.Module: pass\n\
             def o() -> Optional[Optional[Optional[Optional[Optional[Tensor]]]]]: pass\ndef p() -> list[Tensor]: pass\n",
        );
        let tensor = || Promise::Tensor;
        assert_eq!(
            found,
            vec![
                Some(tensor()),
                Some(tensor()),
                Some(tensor()),
                Some(tensor()),
                Some(tensor()),
                Some(tensor()),
                Some(Promise::AnyTuple),
                Some(Promise::AnyTuple),
                Some(Promise::TupleOf(Box::new(tensor()))),
                Some(Promise::Tuple(vec![tensor(), Promise::Is(Ty::Int)])),
                Some(Promise::Tuple(vec![Promise::Is(Ty::Tensor(TensorTy::F32_CPU_2D)), tensor()])),
                None, // a union of two types
                None, // tuples are not nested in a return
                None,
                None, // nested deeper than MAX_PROMISE_DEPTH
                None,
            ]
        );
    }

    #[test]
    fn a_promise_admits_what_keeps_it() {
        let t2 = Ty::Tensor(TensorTy::F32_CPU_2D);
        let t1 = Ty::Tensor(TensorTy::F32_CPU_1D);
        assert!(Promise::Tensor.admits(t2, &[]));
        assert!(!Promise::Tensor.admits(Ty::Int, &[]));
        assert!(!Promise::Tensor.admits(Ty::Tuple(1), &[t2]));
        assert!(Promise::AnyTuple.admits(Ty::Tuple(2), &[t2, Ty::Int]));
        assert!(!Promise::AnyTuple.admits(t2, &[]));
        let each = Promise::TupleOf(Box::new(Promise::Tensor));
        assert!(each.admits(Ty::Tuple(3), &[t2, t1, t2]));
        assert!(!each.admits(Ty::Tuple(2), &[t2, Ty::Float]));
        let pair = Promise::Tuple(vec![Promise::Tensor, Promise::Is(Ty::Int)]);
        assert!(pair.admits(Ty::Tuple(2), &[t1, Ty::Int]));
        assert!(!pair.admits(Ty::Tuple(2), &[t1, Ty::Float]));
        assert!(!pair.admits(Ty::Tuple(3), &[t1, Ty::Int, Ty::Int]));
        assert_eq!(pair.describe(), "tuple[torch.Tensor, int]");
        assert_eq!(each.describe(), "tuple[torch.Tensor, ...]");
    }

    #[test]
    fn shadowed_int_is_not_the_builtin() {
        let tys = resolve_all("int = str\ndef f(n: int): pass\n");
        assert_eq!(tys, vec![None]);
    }
}
