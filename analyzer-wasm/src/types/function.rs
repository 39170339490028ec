//! The per-function pass: signature checks, then one walk over the body that types locals
//! flow-sensitively, records every torch site with its claim decision, reports every reason
//! to fall back, and builds the IR.

use super::env::Env;
use super::locals;
use super::ty::Ty;
use crate::claim::{self, Decision, Keyword, Lit, Operand, OperandRef, Query, Target};
use crate::ir::{self, CmpOp, ScalarKind, ScalarOp};
use crate::parse::LineIndex;
use crate::report::{Diagnostic, Outcome, Param, Site};
use crate::resolve::{annotations::resolve_annotation, ModuleScope};
use crate::rules::{self, Code};
use rustpython_parser::ast::{self, Constant, Expr, Operator, Ranged, Stmt};
use rustpython_parser::text_size::TextRange;
use std::collections::BTreeSet;

/// Deepest expression / statement nesting the walk follows (then TL002 and fallback).
pub const MAX_DEPTH: usize = 100;

/// Result of analyzing one function.
pub struct Analyzed {
    pub params: Vec<Param>,
    pub returns: Option<String>,
    /// sites in evaluation order; `ir::Expr::Tensor::site` indexes this
    pub sites: Vec<Site>,
    pub diagnostics: Vec<Diagnostic>,
    /// present when the function routes native
    pub ir: Option<ir::Function>,
}

impl Analyzed {
    /// An entry with nothing analyzed (async functions).
    pub fn empty() -> Analyzed {
        Analyzed { params: Vec::new(), returns: None, sites: Vec::new(), diagnostics: Vec::new(), ir: None }
    }
}

/// Positional values, keyword (name, value) pairs, and whether a `*args` was present.
type EvaluatedArgs = (Vec<Val>, Vec<(Option<String>, Val)>, bool);

/// An evaluated expression.
#[derive(Debug, Clone)]
struct Val {
    ty: Ty,
    lit: Lit,
    ir: Option<ir::Expr>,
    /// when `ir` is None: a diagnostic or non-claimed site already explains why
    explained: bool,
}

impl Val {
    fn lowered(ty: Ty, lit: Lit, ir: ir::Expr) -> Val {
        Val { ty, lit, ir: Some(ir), explained: false }
    }
    fn opaque(ty: Ty, lit: Lit) -> Val {
        Val { ty, lit, ir: None, explained: false }
    }
    fn explained(ty: Ty) -> Val {
        Val { ty, lit: Lit::NotLiteral, ir: None, explained: true }
    }
}

struct Walker<'a> {
    scope: &'a ModuleScope,
    index: &'a LineIndex<'a>,
    locals: BTreeSet<String>,
    env: Env,
    sites: Vec<Site>,
    diags: Vec<Diagnostic>,
    returns: Option<Ty>,
    depth: usize,
    depth_reported: bool,
}

/// Analyze a (sync) top-level function definition.
pub fn analyze_function(def: &ast::StmtFunctionDef, scope: &ModuleScope, index: &LineIndex) -> Analyzed {
    let mut w = Walker {
        scope,
        index,
        locals: BTreeSet::new(),
        env: Env::default(),
        sites: Vec::new(),
        diags: Vec::new(),
        returns: None,
        depth: 0,
        depth_reported: false,
    };
    let (params, param_tys) = w.signature(def);
    locals::collect(&def.body, &mut w.locals);
    for (name, ty) in &param_tys {
        w.locals.insert(name.clone());
        w.env.bind(name, *ty);
    }
    let (body, reachable) = w.block(&def.body);
    let unsupported_statement = w.diags.iter().any(|d| d.code == rules::UNSUPPORTED_STATEMENT.code);
    if reachable && !unsupported_statement {
        let end = usize::from(def.range.end());
        w.diag_at(&rules::MISSING_RETURN, "the function can reach its end and return None".to_string(), end, end);
    }
    let native = w.diags.is_empty() && w.sites.iter().all(|s| s.outcome == Outcome::Claimed);
    let ir = match (native, w.returns) {
        (true, Some(returns)) => Some(ir::Function { params: param_tys, returns, body }),
        _ => None,
    };
    Analyzed { params, returns: w.returns.and_then(|t| t.marker()).map(str::to_string), sites: w.sites, diagnostics: w.diags, ir }
}

impl<'a> Walker<'a> {
    // ---- diagnostics ---------------------------------------------------------------------

    fn diag(&mut self, code: &'static Code, message: String, range: TextRange) {
        self.diag_at(code, message, usize::from(range.start()), usize::from(range.end()));
    }

    fn diag_at(&mut self, code: &'static Code, message: String, start: usize, end: usize) {
        self.diags.push(Diagnostic {
            code: code.code.to_string(),
            severity: code.severity,
            message,
            hint: Some(code.hint.to_string()),
            span: self.index.span_of(start, end),
        });
    }

    /// Require a lowered form of `v`; explain once why there is none.
    fn need(&mut self, v: Val, range: TextRange, context: &str) -> Option<ir::Expr> {
        if v.ir.is_none() && !v.explained {
            let what = match v.ty {
                Ty::Float => "a float value".to_string(),
                Ty::Str => "a string value".to_string(),
                Ty::NoneVal => "None".to_string(),
                other => format!("a value of {}", other.describe()),
            };
            self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("{context}: {what} has no native form"), range);
        }
        v.ir
    }

    // ---- signature ------------------------------------------------------------------------

    fn signature(&mut self, def: &ast::StmtFunctionDef) -> (Vec<Param>, Vec<(String, Ty)>) {
        for deco in &def.decorator_list {
            let path = self.scope.dotted_path(deco, &|_| false);
            if path.as_deref() != Some("torchlower.native") {
                self.diag(&rules::DECORATOR, "only @torchlower.native is understood as a decorator".into(), deco.range());
            }
        }
        if !def.type_params.is_empty() {
            self.diag(&rules::ASYNC_FN, "generic functions (type parameters) are not lowered".into(), def.range);
        }
        let args = &def.args;
        if let Some(v) = &args.vararg {
            self.diag(&rules::PARAM_VARIADIC, format!("*{} is not supported", v.arg), v.range);
            self.bind_param_unknown(v.arg.as_str());
        }
        if let Some(k) = &args.kwarg {
            self.diag(&rules::PARAM_VARIADIC, format!("**{} is not supported", k.arg), k.range);
            self.bind_param_unknown(k.arg.as_str());
        }
        for k in &args.kwonlyargs {
            self.diag(&rules::PARAM_VARIADIC, format!("keyword-only parameter `{}` is not supported", k.def.arg), k.def.range);
            let ty = k.def.annotation.as_deref().and_then(|a| resolve_annotation(self.scope, a)).unwrap_or(Ty::Unknown);
            self.locals.insert(k.def.arg.to_string());
            self.env.bind(k.def.arg.as_str(), ty);
        }
        let mut params = Vec::new();
        let mut tys = Vec::new();
        for a in args.posonlyargs.iter().chain(args.args.iter()) {
            let name = a.def.arg.to_string();
            if let Some(default) = &a.default {
                self.diag(&rules::PARAM_DEFAULT, format!("parameter `{name}` has a default value"), default.range());
            }
            let ty = match &a.def.annotation {
                None => {
                    self.diag(&rules::PARAM_UNANNOTATED, format!("parameter `{name}` has no annotation"), a.def.range);
                    Ty::Unknown
                }
                Some(ann) => match resolve_annotation(self.scope, ann) {
                    Some(t) => t,
                    None => {
                        self.diag(&rules::PARAM_UNSUPPORTED, format!("parameter `{name}`: annotation is not a supported type"), ann.range());
                        Ty::Unknown
                    }
                },
            };
            params.push(Param { name: name.clone(), ty: ty.marker().map(str::to_string) });
            tys.push((name, ty));
        }
        match &def.returns {
            None => self.diag(&rules::RETURN_UNANNOTATED, "the function has no return annotation".into(), def.range),
            Some(ann) => match resolve_annotation(self.scope, ann) {
                Some(t) => self.returns = Some(t),
                None => self.diag(&rules::RETURN_UNSUPPORTED, "the return annotation is not a supported type".into(), ann.range()),
            },
        }
        (params, tys)
    }

    fn bind_param_unknown(&mut self, name: &str) {
        self.locals.insert(name.to_string());
        self.env.bind(name, Ty::Unknown);
    }

    // ---- statements -----------------------------------------------------------------------

    /// Walk a block; returns its IR and whether its end is reachable.
    fn block(&mut self, body: &[Stmt]) -> (Vec<ir::Stmt>, bool) {
        let mut out = Vec::new();
        for (i, stmt) in body.iter().enumerate() {
            // a docstring at the top of the function body is allowed
            if i == 0 {
                if let Stmt::Expr(e) = stmt {
                    if matches!(&*e.value, Expr::Constant(c) if matches!(c.value, Constant::Str(_))) {
                        continue;
                    }
                }
            }
            if !self.stmt(stmt, &mut out) {
                return (out, false); // the rest of the block is unreachable
            }
        }
        (out, true)
    }

    /// Walk one statement, appending IR; returns whether control continues after it.
    fn stmt(&mut self, stmt: &Stmt, out: &mut Vec<ir::Stmt>) -> bool {
        if self.depth >= MAX_DEPTH {
            self.too_deep(stmt.range());
            return true;
        }
        self.depth += 1;
        let continues = self.stmt_inner(stmt, out);
        self.depth -= 1;
        continues
    }

    fn too_deep(&mut self, range: TextRange) {
        if !self.depth_reported {
            self.depth_reported = true;
            self.diag(&rules::TOO_DEEP, format!("nesting deeper than {MAX_DEPTH} levels is not analyzed"), range);
        }
    }

    fn stmt_inner(&mut self, stmt: &Stmt, out: &mut Vec<ir::Stmt>) -> bool {
        match stmt {
            Stmt::Pass(_) => true,
            Stmt::Assign(s) => {
                let v = self.expr(&s.value);
                match s.targets.as_slice() {
                    [Expr::Name(n)] => self.assign(n.id.as_str(), v, s.value.range(), out),
                    _ => {
                        self.diag(&rules::UNSUPPORTED_TARGET, "only `name = value` assignments are lowered".into(), s.range);
                        for t in &s.targets {
                            self.bind_unknown(t);
                        }
                    }
                }
                true
            }
            Stmt::AnnAssign(s) => {
                match (&*s.target, &s.value) {
                    (Expr::Name(n), Some(value)) => {
                        let v = self.expr(value);
                        self.assign(n.id.as_str(), v, value.range(), out);
                    }
                    _ => self.diag(&rules::UNSUPPORTED_TARGET, "annotated assignment without a value or to a non-name".into(), s.range),
                }
                true
            }
            Stmt::AugAssign(s) => {
                self.aug_assign(s, out);
                true
            }
            Stmt::Return(s) => {
                self.ret(s, out);
                false
            }
            Stmt::If(s) => self.if_stmt(s, out),
            Stmt::For(s) => {
                self.for_stmt(s, out);
                true
            }
            Stmt::While(s) => {
                self.while_stmt(s, out);
                true
            }
            Stmt::Expr(s) => {
                let _ = self.expr(&s.value);
                self.diag(&rules::UNSUPPORTED_STATEMENT, "expression statements are not lowered (the value would be discarded)".into(), s.range);
                true
            }
            Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_) | Stmt::Global(_) | Stmt::Nonlocal(_) => {
                self.diag(&rules::NESTED_SCOPE, format!("`{}` statement inside a native function", stmt_kind(stmt)), stmt.range());
                true
            }
            Stmt::Break(_) | Stmt::Continue(_) => {
                self.diag(&rules::UNSUPPORTED_LOOP, format!("`{}` is not lowered", stmt_kind(stmt)), stmt.range());
                true
            }
            Stmt::Raise(_) => {
                self.diag(&rules::UNSUPPORTED_STATEMENT, "`raise` statement is not lowered".into(), stmt.range());
                false
            }
            other => {
                self.diag(&rules::UNSUPPORTED_STATEMENT, format!("`{}` statement is not lowered", stmt_kind(other)), other.range());
                true
            }
        }
    }

    fn bind_unknown(&mut self, target: &Expr) {
        match target {
            Expr::Name(n) => self.env.bind(n.id.as_str(), Ty::Unknown),
            Expr::Tuple(t) => t.elts.iter().for_each(|e| self.bind_unknown(e)),
            Expr::List(t) => t.elts.iter().for_each(|e| self.bind_unknown(e)),
            Expr::Starred(s) => self.bind_unknown(&s.value),
            _ => {}
        }
    }

    fn assign(&mut self, name: &str, v: Val, range: TextRange, out: &mut Vec<ir::Stmt>) {
        let ty = v.ty;
        let lowerable = matches!(ty, Ty::Tensor(_) | Ty::Int | Ty::Bool);
        let ir = if lowerable || !v.explained { self.need(v, range, "assignment") } else { None };
        self.env.bind(name, ty);
        if let Some(value) = ir {
            out.push(ir::Stmt::Assign { name: name.to_string(), ty, value });
        }
    }

    fn aug_assign(&mut self, s: &ast::StmtAugAssign, out: &mut Vec<ir::Stmt>) {
        let Expr::Name(n) = &*s.target else {
            let _ = self.expr(&s.value);
            self.diag(&rules::UNSUPPORTED_TARGET, "augmented assignment to a non-name".into(), s.range);
            return;
        };
        let current = self.name(n.id.as_str(), s.target.range());
        let rhs = self.expr(&s.value);
        let v = self.binop(s.op, true, current, rhs, s.range);
        self.assign(n.id.as_str(), v, s.range, out);
    }

    fn ret(&mut self, s: &ast::StmtReturn, out: &mut Vec<ir::Stmt>) {
        let Some(value) = &s.value else {
            self.diag(&rules::RETURN_NONE, "`return` without a value returns None".into(), s.range);
            return;
        };
        let v = self.expr(value);
        let ty = v.ty;
        if let Some(want) = self.returns {
            if ty != want && !(v.explained && ty == Ty::Unknown) {
                self.diag(
                    &rules::RETURN_MISMATCH,
                    format!("returns {} but the annotation says {}", ty.describe(), want.describe()),
                    value.range(),
                );
                return;
            }
        }
        if let Some(e) = self.need(v, value.range(), "return value") {
            out.push(ir::Stmt::Return(e));
        }
    }

    fn if_stmt(&mut self, s: &ast::StmtIf, out: &mut Vec<ir::Stmt>) -> bool {
        let cond = self.condition(&s.test);
        let before = self.env.clone();
        let (then, then_live) = self.block(&s.body);
        let after_then = std::mem::replace(&mut self.env, before);
        let (orelse, else_live) = self.block(&s.orelse);
        let after_else = std::mem::take(&mut self.env);
        self.env = match (then_live, else_live) {
            (true, true) => after_then.join(&after_else),
            (true, false) => after_then,
            (false, true) => after_else,
            (false, false) => after_then.join(&after_else),
        };
        if let Some(cond) = cond {
            out.push(ir::Stmt::If { cond, then, orelse });
        }
        then_live || else_live
    }

    fn for_stmt(&mut self, s: &ast::StmtFor, out: &mut Vec<ir::Stmt>) {
        if !s.orelse.is_empty() {
            self.diag(&rules::UNSUPPORTED_LOOP, "`for ... else` is not lowered".into(), s.range);
        }
        let bounds = self.range_call(&s.iter);
        let var = match &*s.target {
            Expr::Name(n) => Some(n.id.to_string()),
            other => {
                self.diag(&rules::UNSUPPORTED_LOOP, "the loop target must be a plain name".into(), other.range());
                None
            }
        };
        let before = self.env.clone();
        if let Some(var) = &var {
            self.env.bind(var, Ty::Int);
        }
        let head = self.env.clone();
        let (body, _) = self.block(&s.body);
        self.check_loop_types(&head, s.range);
        let after_body = std::mem::take(&mut self.env);
        // zero iterations leave `before`; otherwise the end of some iteration
        self.env = before.join(&after_body);
        if let (Some(var), Some((start, stop, step))) = (var, bounds) {
            out.push(ir::Stmt::For { var, start, stop, step, body });
        }
    }

    fn while_stmt(&mut self, s: &ast::StmtWhile, out: &mut Vec<ir::Stmt>) {
        if !s.orelse.is_empty() {
            self.diag(&rules::UNSUPPORTED_LOOP, "`while ... else` is not lowered".into(), s.range);
        }
        let cond = self.condition(&s.test);
        let before = self.env.clone();
        let (body, _) = self.block(&s.body);
        self.check_loop_types(&before, s.range);
        let after_body = std::mem::take(&mut self.env);
        self.env = before.join(&after_body);
        if let Some(cond) = cond {
            out.push(ir::Stmt::While { cond, body });
        }
    }

    /// A name bound at the loop head must keep its type through the body (single pass: no
    /// fixpoint iteration, so a change is reported instead of widened).
    fn check_loop_types(&mut self, head: &Env, range: TextRange) {
        let mut changed = Vec::new();
        for (name, b) in head.iter() {
            if let Some(after) = self.env.get(name) {
                if after.ty != b.ty {
                    changed.push(name.clone());
                }
            }
        }
        for name in changed {
            self.diag(&rules::LOOP_TYPE_CHANGE, format!("`{name}` changes type inside the loop"), range);
        }
    }

    /// `range(stop)`, `range(start, stop)` or `range(start, stop, step)` over ints.
    fn range_call(&mut self, iter: &Expr) -> Option<(ir::Expr, ir::Expr, ir::Expr)> {
        let call = match iter {
            Expr::Call(c) if matches!(&*c.func, Expr::Name(n) if n.id.as_str() == "range" && !self.locals.contains("range") && self.scope.is_builtin("range")) => c,
            other => {
                let _ = self.expr(other);
                self.diag(&rules::UNSUPPORTED_LOOP, "only `for name in range(...)` loops are lowered".into(), other.range());
                return None;
            }
        };
        if !call.keywords.is_empty() || call.args.is_empty() || call.args.len() > 3 || call.args.iter().any(|a| matches!(a, Expr::Starred(_))) {
            self.diag(&rules::UNSUPPORTED_LOOP, "range() needs 1 to 3 positional int arguments".into(), call.range);
            return None;
        }
        let mut vals = Vec::new();
        for a in &call.args {
            let v = self.expr(a);
            vals.push(self.int_operand(v, a.range(), "range() argument"));
        }
        let mut it = vals.into_iter();
        match (it.next(), it.next(), it.next()) {
            (Some(Some(stop)), None, None) => Some((ir::Expr::Int(0), stop, ir::Expr::Int(1))),
            (Some(Some(start)), Some(Some(stop)), None) => Some((start, stop, ir::Expr::Int(1))),
            (Some(Some(start)), Some(Some(stop)), Some(Some(step))) => Some((start, stop, step)),
            _ => None,
        }
    }

    /// An int-valued IR operand (bool converts), or a diagnostic.
    fn int_operand(&mut self, v: Val, range: TextRange, context: &str) -> Option<ir::Expr> {
        match v.ty {
            Ty::Int => v.ir,
            Ty::Bool => v.ir.map(|e| ir::Expr::BoolToInt(Box::new(e))),
            Ty::Unknown if v.explained => None,
            other => {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("{context} must be an int, got {}", other.describe()), range);
                None
            }
        }
    }

    /// An `if`/`while` test as a bool IR expression.
    fn condition(&mut self, test: &Expr) -> Option<ir::Expr> {
        let sites_before = self.sites.len();
        let v = self.expr(test);
        // a tensor comparison (`if x > y:`) is a not-covered site; say why the branch itself
        // cannot be lowered too
        let test_span = self.index.span(test.range());
        if matches!(test, Expr::Compare(_)) && self.sites.get(sites_before..).unwrap_or(&[]).iter().any(|s| s.span == test_span) {
            self.diag(&rules::TENSOR_CONDITION, "the condition compares tensors".into(), test.range());
            return None;
        }
        match v.ty {
            Ty::Bool => v.ir,
            Ty::Int => v.ir.map(|e| ir::Expr::IntTruthy(Box::new(e))),
            Ty::Tensor(_) => {
                self.diag(&rules::TENSOR_CONDITION, "the condition depends on tensor data".into(), test.range());
                None
            }
            Ty::Unknown if v.explained => None,
            other => {
                self.diag(&rules::UNSUPPORTED_CONDITION, format!("the condition is {}, not int or bool", other.describe()), test.range());
                None
            }
        }
    }

    // ---- expressions ----------------------------------------------------------------------

    fn expr(&mut self, e: &Expr) -> Val {
        if self.depth >= MAX_DEPTH {
            self.too_deep(e.range());
            return Val::explained(Ty::Unknown);
        }
        self.depth += 1;
        let v = self.expr_inner(e);
        self.depth -= 1;
        v
    }

    fn expr_inner(&mut self, e: &Expr) -> Val {
        match e {
            Expr::Constant(c) => self.constant(c),
            Expr::Name(n) => self.name(n.id.as_str(), n.range),
            Expr::BinOp(b) => {
                let l = self.expr(&b.left);
                let r = self.expr(&b.right);
                self.binop(b.op, false, l, r, b.range)
            }
            Expr::UnaryOp(u) => self.unary(u),
            Expr::BoolOp(b) => self.bool_op(b),
            Expr::Compare(c) => self.compare(c),
            Expr::Call(c) => self.call(c),
            Expr::Attribute(a) => {
                let locals = &self.locals;
                if self.scope.dotted_path(e, &|n| locals.contains(n)).is_some() {
                    // e.g. `torch.float64` as an option value: the consumer decides
                    return Val::opaque(Ty::Unknown, Lit::NotLiteral);
                }
                let recv = self.expr(&a.value);
                if matches!(recv.ty, Ty::Tensor(_)) && matches!(a.attr.as_str(), "T" | "mT" | "H" | "mH" | "real" | "imag" | "data") {
                    self.diag(&rules::VIEW_OP, format!("`.{}` is a view of the tensor", a.attr), a.range);
                } else if !recv.explained {
                    self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("attribute `.{}` is not lowered", a.attr), a.range);
                }
                Val::explained(Ty::Unknown)
            }
            Expr::Lambda(_) | Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::GeneratorExp(_) => {
                self.diag(&rules::NESTED_SCOPE, format!("{} inside a native function", expr_kind(e)), e.range());
                Val::explained(Ty::Unknown)
            }
            other => {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("{} is not lowered", expr_kind(other)), other.range());
                Val::explained(Ty::Unknown)
            }
        }
    }

    fn constant(&mut self, c: &ast::ExprConstant) -> Val {
        match &c.value {
            Constant::Bool(b) => Val::lowered(Ty::Bool, Lit::Bool(*b), ir::Expr::Bool(*b)),
            Constant::Int(i) => match i64::try_from(i) {
                Ok(v) => Val::lowered(Ty::Int, Lit::Int(v), ir::Expr::Int(v)),
                Err(_) => {
                    self.diag(&rules::INT_OUT_OF_RANGE, "integer literal does not fit in 64 bits".into(), c.range);
                    Val { ty: Ty::Int, lit: Lit::NotLiteral, ir: None, explained: true }
                }
            },
            Constant::None => Val::opaque(Ty::NoneVal, Lit::None),
            Constant::Str(s) => Val::opaque(Ty::Str, Lit::Str(s.clone())),
            Constant::Float(_) | Constant::Complex { .. } => Val::opaque(Ty::Float, Lit::NotLiteral),
            _ => Val::opaque(Ty::Unknown, Lit::NotLiteral),
        }
    }

    fn name(&mut self, name: &str, range: TextRange) -> Val {
        if !self.locals.contains(name) {
            self.diag(&rules::UNBOUND_NAME, format!("`{name}` is not a local of the function (module globals and builtins are not lowered)"), range);
            return Val::explained(Ty::Unknown);
        }
        match self.env.get(name) {
            None => {
                self.diag(&rules::UNBOUND_NAME, format!("`{name}` is read before it is assigned"), range);
                Val::explained(Ty::Unknown)
            }
            Some(b) if !b.definite => {
                self.diag(&rules::UNBOUND_NAME, format!("`{name}` may be unbound here (not assigned on every path)"), range);
                Val::explained(b.ty)
            }
            Some(b) => match b.ty {
                Ty::Tensor(_) | Ty::Int | Ty::Bool => Val::lowered(b.ty, Lit::NotLiteral, ir::Expr::Local { name: name.to_string(), ty: b.ty }),
                // an unknown local was already reported where it was bound
                other => Val::explained(other),
            },
        }
    }

    fn binop(&mut self, op: Operator, augmented: bool, l: Val, r: Val, range: TextRange) -> Val {
        // an operand that already failed (and was reported) next to a non-tensor: no new site
        let failed = |v: &Val| v.explained && v.ty == Ty::Unknown;
        let tensor = |v: &Val| matches!(v.ty, Ty::Tensor(_));
        if (failed(&l) && !tensor(&r)) || (failed(&r) && !tensor(&l)) {
            return Val::explained(Ty::Unknown);
        }
        let operands = [Operand { ty: l.ty, lit: l.lit.clone() }, Operand { ty: r.ty, lit: r.lit.clone() }];
        let q = Query { target: Target::BinOp { op, augmented }, receiver: None, args: &operands, keywords: &[], starred: false };
        let decision = claim::decide(&q);
        if decision != Decision::NotASite {
            return self.site(Target::BinOp { op, augmented }, decision, range, None, &[l, r], &[]);
        }
        // scalar arithmetic
        if !(l.ty.is_scalar_int() && r.ty.is_scalar_int()) {
            if !(l.explained || r.explained) {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`{}` on {} and {} is not lowered", claim::operator_symbol(op), l.ty.describe(), r.ty.describe()), range);
            }
            return Val::explained(Ty::Unknown);
        }
        let sop = match op {
            Operator::Add => ScalarOp::Add,
            Operator::Sub => ScalarOp::Sub,
            Operator::Mult => ScalarOp::Mul,
            Operator::FloorDiv => ScalarOp::FloorDiv,
            Operator::Mod => ScalarOp::Mod,
            Operator::Div => {
                self.diag(&rules::SCALAR_OPERATOR, "`/` on ints gives a float".into(), range);
                return Val::explained(Ty::Unknown);
            }
            other => {
                self.diag(&rules::SCALAR_OPERATOR, format!("scalar operator `{}` is not lowered", claim::operator_symbol(other)), range);
                return Val::explained(Ty::Unknown);
            }
        };
        let li = self.int_operand(l, range, "operand");
        let ri = self.int_operand(r, range, "operand");
        match (li, ri) {
            (Some(a), Some(b)) => Val::lowered(Ty::Int, Lit::NotLiteral, ir::Expr::Scalar { op: sop, left: Box::new(a), right: Box::new(b) }),
            _ => Val::explained(Ty::Int),
        }
    }

    fn unary(&mut self, u: &ast::ExprUnaryOp) -> Val {
        let v = self.expr(&u.operand);
        match (u.op, v.ty) {
            (ast::UnaryOp::USub, Ty::Int | Ty::Bool) => {
                // fold literals so that `dim=-1` stays a literal
                if let Lit::Int(n) = v.lit {
                    if let Some(neg) = n.checked_neg() {
                        return Val::lowered(Ty::Int, Lit::Int(neg), ir::Expr::Int(neg));
                    }
                }
                match self.int_operand(v, u.range, "operand of unary -") {
                    Some(e) => Val::lowered(Ty::Int, Lit::NotLiteral, ir::Expr::Neg(Box::new(e))),
                    None => Val::explained(Ty::Int),
                }
            }
            (ast::UnaryOp::UAdd, Ty::Int | Ty::Bool) => match self.int_operand(v, u.range, "operand of unary +") {
                Some(e) => Val::lowered(Ty::Int, Lit::NotLiteral, e),
                None => Val::explained(Ty::Int),
            },
            (ast::UnaryOp::Not, Ty::Bool) => match v.ir {
                Some(e) => Val::lowered(Ty::Bool, Lit::NotLiteral, ir::Expr::Not(Box::new(e))),
                None => Val::explained(Ty::Bool),
            },
            (ast::UnaryOp::Not, Ty::Int) => match v.ir {
                Some(e) => Val::lowered(Ty::Bool, Lit::NotLiteral, ir::Expr::Not(Box::new(ir::Expr::IntTruthy(Box::new(e))))),
                None => Val::explained(Ty::Bool),
            },
            (_, Ty::Unknown) if v.explained => Val::explained(Ty::Unknown),
            (op, ty) => {
                let sym = match op {
                    ast::UnaryOp::USub => "-",
                    ast::UnaryOp::UAdd => "+",
                    ast::UnaryOp::Not => "not",
                    ast::UnaryOp::Invert => "~",
                };
                let hint = if matches!(ty, Ty::Tensor(_)) { " (use torch.neg)" } else { "" };
                self.diag(&rules::SCALAR_OPERATOR, format!("unary `{sym}` on {} is not lowered{hint}", ty.describe()), u.range);
                Val::explained(Ty::Unknown)
            }
        }
    }

    fn bool_op(&mut self, b: &ast::ExprBoolOp) -> Val {
        let vals: Vec<Val> = b.values.iter().map(|v| self.expr(v)).collect();
        if vals.iter().any(|v| v.ty != Ty::Bool) {
            if !vals.iter().any(|v| v.explained) {
                self.diag(&rules::SCALAR_OPERATOR, "`and`/`or` are lowered on bool operands only".into(), b.range);
            }
            return Val::explained(Ty::Unknown);
        }
        let irs: Option<Vec<ir::Expr>> = vals.into_iter().map(|v| v.ir).collect();
        match irs {
            Some(values) => Val::lowered(Ty::Bool, Lit::NotLiteral, ir::Expr::BoolOp { and: matches!(b.op, ast::BoolOp::And), values }),
            None => Val::explained(Ty::Bool),
        }
    }

    fn compare(&mut self, c: &ast::ExprCompare) -> Val {
        let first = self.expr(&c.left);
        let rest: Vec<Val> = c.comparators.iter().map(|e| self.expr(e)).collect();
        let all: Vec<&Val> = std::iter::once(&first).chain(rest.iter()).collect();
        if all.iter().any(|v| matches!(v.ty, Ty::Tensor(_))) {
            // a tensor comparison is a torch site that is not covered
            let sym = c.ops.first().map(cmp_symbol).unwrap_or("==");
            self.sites.push(Site {
                span: self.index.span(c.range),
                kind: crate::report::SiteKind::Binop,
                target: sym.to_string(),
                outcome: Outcome::NotCovered,
                rule: None,
                result_type: None,
                code: Some(rules::SITE_NOT_COVERED.code.to_string()),
                message: Some("tensor comparisons are not part of the claimed surface".into()),
                hint: Some(rules::SITE_NOT_COVERED.hint.to_string()),
                rust: None,
                rust_range: None,
            });
            self.diag(&rules::SITE_NOT_COVERED, "tensor comparison is not covered".into(), c.range);
            return Val::explained(Ty::Unknown);
        }
        if all.iter().any(|v| !v.ty.is_scalar_int()) {
            if !all.iter().any(|v| v.explained) {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, "comparisons are lowered on int and bool operands only".into(), c.range);
            }
            return Val::explained(Ty::Unknown);
        }
        let mut ops = Vec::new();
        for op in &c.ops {
            let o = match op {
                ast::CmpOp::Eq => CmpOp::Eq,
                ast::CmpOp::NotEq => CmpOp::Ne,
                ast::CmpOp::Lt => CmpOp::Lt,
                ast::CmpOp::LtE => CmpOp::Le,
                ast::CmpOp::Gt => CmpOp::Gt,
                ast::CmpOp::GtE => CmpOp::Ge,
                other => {
                    self.diag(&rules::SCALAR_OPERATOR, format!("`{}` comparisons are not lowered", cmp_symbol(other)), c.range);
                    return Val::explained(Ty::Bool);
                }
            };
            ops.push(o);
        }
        let kind = if all.iter().all(|v| v.ty == Ty::Bool) { ScalarKind::Bool } else { ScalarKind::Int };
        let convert = |w: &mut Self, v: Val| -> Option<ir::Expr> {
            match kind {
                ScalarKind::Bool => v.ir,
                ScalarKind::Int => w.int_operand(v, c.range, "comparison operand"),
            }
        };
        let first_ir = convert(self, first);
        let mut rest_ir = Vec::new();
        for (op, v) in ops.into_iter().zip(rest) {
            rest_ir.push(convert(self, v).map(|e| (op, e)));
        }
        let rest_ir: Option<Vec<(CmpOp, ir::Expr)>> = rest_ir.into_iter().collect();
        match (first_ir, rest_ir) {
            (Some(f), Some(r)) => Val::lowered(Ty::Bool, Lit::NotLiteral, ir::Expr::Compare { kind, first: Box::new(f), rest: r }),
            _ => Val::explained(Ty::Bool),
        }
    }

    fn call(&mut self, c: &ast::ExprCall) -> Val {
        let locals = &self.locals;
        let path = self.scope.dotted_path(&c.func, &|n| locals.contains(n));
        let mut receiver: Option<Val> = None;
        let method_name: Option<String>;
        match (&*c.func, &path) {
            (_, Some(_)) => method_name = None,
            (Expr::Attribute(a), None) => {
                receiver = Some(self.expr(&a.value));
                method_name = Some(a.attr.to_string());
            }
            (Expr::Name(n), None) => {
                // a builtin, a local or an unresolved module name: not a torch site
                let _ = self.args(c);
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("call of `{}` is not lowered", n.id), c.range);
                return Val::explained(Ty::Unknown);
            }
            (_, None) => {
                let _ = self.expr(&c.func);
                let _ = self.args(c);
                self.diag(&rules::UNSUPPORTED_EXPRESSION, "call of a computed callee is not lowered".into(), c.range);
                return Val::explained(Ty::Unknown);
            }
        }
        let (args, keywords, starred) = self.args(c);
        let arg_ops: Vec<Operand> = args.iter().map(|v| Operand { ty: v.ty, lit: v.lit.clone() }).collect();
        let kw_ops: Vec<Keyword> = keywords.iter().map(|(n, v)| Keyword { name: n.clone(), value: Operand { ty: v.ty, lit: v.lit.clone() } }).collect();
        let recv_op = receiver.as_ref().map(|v| Operand { ty: v.ty, lit: v.lit.clone() });
        let target = match (&path, &method_name) {
            (Some(p), _) => Target::Function(p.as_str()),
            (None, Some(m)) => Target::Method(m.as_str()),
            (None, None) => return Val::explained(Ty::Unknown),
        };
        let decision = claim::decide(&Query { target, receiver: recv_op.as_ref(), args: &arg_ops, keywords: &kw_ops, starred });
        if decision == Decision::NotASite {
            let what = match target {
                Target::Function(p) => format!("call of `{p}`"),
                Target::Method(m) => format!("method `.{m}()` on {}", recv_op.as_ref().map(|o| o.ty.describe()).unwrap_or_default()),
                Target::BinOp { .. } => "operation".to_string(),
            };
            if !receiver.as_ref().is_some_and(|r| r.explained) {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("{what} is not lowered"), c.range);
            }
            return Val::explained(Ty::Unknown);
        }
        let kw_vals: Vec<Val> = keywords.into_iter().map(|(_, v)| v).collect();
        self.site(target, decision, c.range, receiver, &args, &kw_vals)
    }

    /// Evaluate positional and keyword arguments (for their own sites and types).
    fn args(&mut self, c: &ast::ExprCall) -> EvaluatedArgs {
        let mut starred = false;
        let mut args = Vec::new();
        for a in &c.args {
            if let Expr::Starred(s) = a {
                starred = true;
                let _ = self.expr(&s.value);
                continue;
            }
            args.push(self.expr(a));
        }
        let mut kws = Vec::new();
        for k in &c.keywords {
            let v = self.expr(&k.value);
            kws.push((k.arg.as_ref().map(|a| a.to_string()), v));
        }
        (args, kws, starred)
    }

    /// Record a torch site with its decision; returns the value of the site's expression.
    fn site(&mut self, target: Target, decision: Decision, range: TextRange, receiver: Option<Val>, args: &[Val], kws: &[Val]) -> Val {
        let (kind, target_name) = claim::describe_target(target);
        let id = self.sites.len();
        let mut site = Site {
            span: self.index.span(range),
            kind,
            target: target_name,
            outcome: Outcome::NotCovered,
            rule: None,
            result_type: None,
            code: None,
            message: None,
            hint: None,
            rust: None,
            rust_range: None,
        };
        let val = match decision {
            Decision::Claimed(c) => {
                site.outcome = Outcome::Claimed;
                site.rule = Some(c.rule.id.to_string());
                site.result_type = c.result.marker().map(str::to_string);
                let operand_irs: Option<Vec<ir::Expr>> = c
                    .operands
                    .iter()
                    .map(|r| match r {
                        OperandRef::Receiver => receiver.as_ref().and_then(|v| v.ir.clone()),
                        OperandRef::Arg(i) => args.get(*i).and_then(|v| v.ir.clone()),
                        OperandRef::Keyword(i) => kws.get(*i).and_then(|v| v.ir.clone()),
                    })
                    .collect();
                match operand_irs {
                    Some(ops) => Val::lowered(
                        Ty::Tensor(c.result),
                        Lit::NotLiteral,
                        ir::Expr::Tensor { site: id, op: c.op, device: c.result.device, args: ops },
                    ),
                    None => Val::explained(Ty::Tensor(c.result)),
                }
            }
            Decision::Rejected { code, message } => {
                site.outcome = Outcome::Rejected;
                site.code = Some(code.code.to_string());
                site.message = Some(message.clone());
                site.hint = Some(code.hint.to_string());
                self.diag(code, message, range);
                Val::explained(Ty::Unknown)
            }
            Decision::NotCovered(message) => {
                site.code = Some(rules::SITE_NOT_COVERED.code.to_string());
                site.message = Some(message.clone());
                site.hint = Some(rules::SITE_NOT_COVERED.hint.to_string());
                self.diag(&rules::SITE_NOT_COVERED, message, range);
                Val::explained(Ty::Unknown)
            }
            Decision::NotASite => Val::explained(Ty::Unknown),
        };
        self.sites.push(site);
        val
    }
}

fn cmp_symbol(op: &ast::CmpOp) -> &'static str {
    match op {
        ast::CmpOp::Eq => "==",
        ast::CmpOp::NotEq => "!=",
        ast::CmpOp::Lt => "<",
        ast::CmpOp::LtE => "<=",
        ast::CmpOp::Gt => ">",
        ast::CmpOp::GtE => ">=",
        ast::CmpOp::Is => "is",
        ast::CmpOp::IsNot => "is not",
        ast::CmpOp::In => "in",
        ast::CmpOp::NotIn => "not in",
    }
}

fn stmt_kind(s: &Stmt) -> &'static str {
    match s {
        Stmt::FunctionDef(_) => "def",
        Stmt::AsyncFunctionDef(_) => "async def",
        Stmt::ClassDef(_) => "class",
        Stmt::Return(_) => "return",
        Stmt::Delete(_) => "del",
        Stmt::Assign(_) => "assignment",
        Stmt::TypeAlias(_) => "type",
        Stmt::AugAssign(_) => "augmented assignment",
        Stmt::AnnAssign(_) => "annotated assignment",
        Stmt::For(_) => "for",
        Stmt::AsyncFor(_) => "async for",
        Stmt::While(_) => "while",
        Stmt::If(_) => "if",
        Stmt::With(_) => "with",
        Stmt::AsyncWith(_) => "async with",
        Stmt::Match(_) => "match",
        Stmt::Raise(_) => "raise",
        Stmt::Try(_) => "try",
        Stmt::TryStar(_) => "try/except*",
        Stmt::Assert(_) => "assert",
        Stmt::Import(_) => "import",
        Stmt::ImportFrom(_) => "from ... import",
        Stmt::Global(_) => "global",
        Stmt::Nonlocal(_) => "nonlocal",
        Stmt::Expr(_) => "expression",
        Stmt::Pass(_) => "pass",
        Stmt::Break(_) => "break",
        Stmt::Continue(_) => "continue",
    }
}

fn expr_kind(e: &Expr) -> &'static str {
    match e {
        Expr::BoolOp(_) => "boolean operation",
        Expr::NamedExpr(_) => "assignment expression (:=)",
        Expr::BinOp(_) => "binary operation",
        Expr::UnaryOp(_) => "unary operation",
        Expr::Lambda(_) => "lambda",
        Expr::IfExp(_) => "conditional expression",
        Expr::Dict(_) => "dict display",
        Expr::Set(_) => "set display",
        Expr::ListComp(_) => "list comprehension",
        Expr::SetComp(_) => "set comprehension",
        Expr::DictComp(_) => "dict comprehension",
        Expr::GeneratorExp(_) => "generator expression",
        Expr::Await(_) => "await",
        Expr::Yield(_) | Expr::YieldFrom(_) => "yield",
        Expr::Compare(_) => "comparison",
        Expr::Call(_) => "call",
        Expr::FormattedValue(_) | Expr::JoinedStr(_) => "f-string",
        Expr::Constant(_) => "constant",
        Expr::Attribute(_) => "attribute",
        Expr::Subscript(_) => "subscript",
        Expr::Starred(_) => "starred expression",
        Expr::Name(_) => "name",
        Expr::List(_) => "list display",
        Expr::Tuple(_) => "tuple",
        Expr::Slice(_) => "slice",
    }
}
