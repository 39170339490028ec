//! The signature: decorators, parameters (annotations, defaults, variadics) and the return
//! annotation, resolved to types.

use super::Walker;
use crate::report::Param;
use crate::resolve::annotations::{is_open_parameter, resolve_annotation, resolve_parameter_annotation, resolve_promise, resolve_tuple_annotation};
use crate::claim::Lit;
use crate::ir;
use crate::rules;
use crate::ty::Ty;
use ruff_python_ast as ast;
use ruff_text_size::Ranged;

impl Walker<'_> {

    /// `@torchlower.native`, or the grad-mode decorator real inference code wears
    /// (`@torch.no_grad()`, with or without the call): native results never carry autograd
    /// history, which is all it changes for a forward path.
    fn understood_decorator(&self, deco: &ast::Expr) -> bool {
        let (callee, called) = match deco {
            ast::Expr::Call(c) if c.arguments.args.is_empty() && c.arguments.keywords.is_empty() => (&*c.func, true),
            other => (other, false),
        };
        match self.scope.dotted_path(callee, &|_| false).as_deref() {
            Some("torchlower.native") => !called,
            // (`inference_mode` makes its results inference tensors, which native ones are not)
            Some("torch.no_grad" | "torch.autograd.no_grad" | "torch.autograd.grad_mode.no_grad") => true,
            _ => false,
        }
    }

    pub(super) fn signature(&mut self, def: &ast::StmtFunctionDef) -> (Vec<Param>, Vec<(String, Ty)>) {
        for deco in &def.decorator_list {
            if !self.understood_decorator(&deco.expression) {
                self.diag(&rules::DECORATOR, "only @torchlower.native and @torch.no_grad() are understood as decorators".into(), deco.expression.range());
            }
        }
        let def_range = crate::parse::def_range(self.index.source(), def);
        if def.type_params.is_some() {
            self.diag(&rules::ASYNC_FN, "generic functions (type parameters) are not lowered".into(), def_range);
        }
        let args = &def.parameters;
        if let Some(v) = &args.vararg {
            self.diag(&rules::PARAM_VARIADIC, format!("*{} is not supported", v.name), v.range());
            self.bind_param_unknown(v.name.as_str());
        }
        if let Some(k) = &args.kwarg {
            self.diag(&rules::PARAM_VARIADIC, format!("**{} is not supported", k.name), k.range());
            self.bind_param_unknown(k.name.as_str());
        }
        for k in &args.kwonlyargs {
            let p = &k.parameter;
            self.diag(&rules::PARAM_VARIADIC, format!("keyword-only parameter `{}` is not supported", p.name), p.range());
            let ty = p.annotation.as_deref().and_then(|a| resolve_annotation(self.scope, a)).unwrap_or(Ty::Unknown);
            self.locals.insert(p.name.to_string());
            self.env.bind(p.name.as_str(), ty);
        }
        // a specialised copy (its parameter types given by its call) needs no annotations
        let types_given = self.infer_returns;
        let mut params = Vec::new();
        let mut tys = Vec::new();
        for a in args.posonlyargs.iter().chain(args.args.iter()) {
            let name = a.parameter.name.to_string();
            let ty = match &a.parameter.annotation {
                None => {
                    if !types_given {
                        self.diag(&rules::PARAM_UNANNOTATED, format!("parameter `{name}` has no annotation"), a.parameter.range());
                    }
                    Ty::Unknown
                }
                Some(ann) => match resolve_parameter_annotation(self.scope, ann) {
                    Some(t) => t,
                    None if types_given => Ty::Unknown,
                    // typed as an unannotated parameter is (`torchlower.compile` specialises it)
                    None if is_open_parameter(self.scope, ann) => {
                        let written = self.index.source().get(ann.range().to_std_range()).unwrap_or("torch.Tensor");
                        let optional_marker =
                            matches!(resolve_promise(self.scope, ann), Some(crate::resolve::annotations::Promise::Is(Ty::Tensor(_) | Ty::Int | Ty::Float | Ty::Bool)));
                        let int_sequence = crate::resolve::annotations::is_open_int_sequence(self.scope, ann);
                        let message = if int_sequence {
                            format!("parameter `{name}`: `{written}` does not say how many ints it holds; each call says it")
                        } else if optional_marker {
                            format!("parameter `{name}`: `{written}` may be None, which no native type holds; each call says which")
                        } else {
                            format!("parameter `{name}`: `{written}` does not say the tensor's dtype, device and rank")
                        };
                        self.diag(&rules::PARAM_UNANNOTATED, message, ann.range());
                        Ty::Unknown
                    }
                    None => {
                        self.diag(&rules::PARAM_UNSUPPORTED, format!("parameter `{name}`: annotation is not a supported type"), ann.range());
                        Ty::Unknown
                    }
                },
            };
            if let (Some(default), false) = (&a.default, types_given) {
                if literal_default(default, ty).is_none() {
                    self.diag(&rules::PARAM_DEFAULT, format!("parameter `{name}`: only a literal default of its type (an int, float or bool) is lowered"), default.range());
                }
            }
            params.push(Param { name: name.clone(), ty: ty.annotation() });
            tys.push((name, ty));
        }
        match &def.returns {
            // inferred from the `return` statements (checked after the body)
            None => self.infer_returns = true,
            // `-> None`: a function run for its writes (YOLOv5's `clip_boxes`)
            Some(ann) if matches!(&**ann, ast::Expr::NoneLiteral(_)) => self.returns = Some(Ty::NoneVal),
            Some(ann) => match (resolve_annotation(self.scope, ann), resolve_tuple_annotation(self.scope, ann)) {
                (Some(t), _) => self.returns = Some(t),
                (None, Some(items)) => {
                    self.returns = Some(Ty::Tuple(items.len() as u8));
                    self.returns_tuple = items;
                }
                // inferred from the `return`s, then checked against the promise (`analyze_with`)
                (None, None) => match resolve_promise(self.scope, ann) {
                    Some(promise) => {
                        self.infer_returns = true;
                        self.promise = Some(promise);
                    }
                    None => self.diag(&rules::RETURN_UNSUPPORTED, "the return annotation is not a supported type".into(), ann.range()),
                },
            },
        }
        (params, tys)
    }

    fn bind_param_unknown(&mut self, name: &str) {
        self.locals.insert(name.to_string());
        self.env.bind(name, Ty::Unknown);
    }

}

/// `default` when it is a literal the native boundary takes for a parameter of type `ty`,
/// as (its Python type, value, IR): the host binds the call's arguments and applies the
/// defaults before the native call, so such a default reaches native code as a passed value,
/// and a call from another function of the module passes it the same way. An int literal for
/// a `float` parameter is Python's own int there, which the boundary refuses (auto mode reruns
/// Python), as when a caller passes one; a module-internal call passes an int (a specialised
/// copy of the callee, as for any int argument).
/// `float("inf")`, `float("-Infinity")`, `float("nan")`: the non-finite values Python's
/// `float()` parses from a string literal (any case, an optional sign, spaces around). The
/// host applies the default Python evaluated, so the name `float` is read as the builtin here
/// as the function's own default is.
fn float_of_string(e: &ast::Expr) -> Option<f64> {
    let ast::Expr::Call(c) = e else { return None };
    let (ast::Expr::Name(f), [ast::Expr::StringLiteral(s)]) = (&*c.func, &c.arguments.args[..]) else { return None };
    if f.id.as_str() != "float" || !c.arguments.keywords.is_empty() {
        return None;
    }
    let text = s.value.to_str().trim().to_ascii_lowercase();
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(&text)),
    };
    let v = match body {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => return None,
    };
    Some(if negative { -v } else { v })
}

pub fn literal_default(default: &ast::Expr, ty: Ty) -> Option<(Ty, Lit, Option<ir::Expr>)> {
    // `mask=None`, `scale: float = None`: a call that omits the argument passes None, which
    // the boundary of any other type refuses (auto mode reruns Python; `torchlower.compile`
    // specialises on None)
    if let ast::Expr::NoneLiteral(_) = default {
        return Some((Ty::NoneVal, Lit::None, None));
    }
    let (number, negative) = match default {
        ast::Expr::UnaryOp(u) if u.op == ast::UnaryOp::USub => (&*u.operand, true),
        ast::Expr::UnaryOp(u) if u.op == ast::UnaryOp::UAdd => (&*u.operand, false),
        other => (other, false),
    };
    // `filter_value: float = -float("Inf")` (Transformers' logits warpers)
    if let (Some(v), Ty::Float | Ty::Unknown) = (float_of_string(number), ty) {
        let v = if negative { -v } else { v };
        return Some((Ty::Float, Lit::Float(v), Some(ir::Expr::Float(v))));
    }
    match (number, ty) {
        (ast::Expr::BooleanLiteral(b), Ty::Bool | Ty::Unknown) if !negative => Some((Ty::Bool, Lit::Bool(b.value), Some(ir::Expr::Bool(b.value)))),
        // an unannotated parameter's default is a value of its own type
        (ast::Expr::NumberLiteral(n), Ty::Int | Ty::Float | Ty::Unknown) => match &n.value {
            ast::Number::Int(i) => {
                let v = i.as_i64()?;
                let v = if negative { v.checked_neg()? } else { v };
                Some((Ty::Int, Lit::Int(v), Some(ir::Expr::Int(v))))
            }
            ast::Number::Float(f) if matches!(ty, Ty::Float | Ty::Unknown) => {
                let v = if negative { -*f } else { *f };
                Some((Ty::Float, Lit::Float(v), Some(ir::Expr::Float(v))))
            }
            _ => None,
        },
        _ => None,
    }
}
