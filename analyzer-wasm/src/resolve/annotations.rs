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

    #[test]
    fn shadowed_int_is_not_the_builtin() {
        let tys = resolve_all("int = str\ndef f(n: int): pass\n");
        assert_eq!(tys, vec![None]);
    }
}
