//! Loops: `for name in range(...)` and `while`, walked once with the environment joined
//! at the loop head; what a body rebinds loses its freshness (it may alias a parameter on
//! the next iteration).

use super::env::Env;
use super::Walker;
use crate::ir;
use crate::rules;
use crate::ty::Ty;
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

/// Most iterations unrolled in one function (`for t in [q, k, v]`, nested loops multiply):
/// each is one more walk of the body, so a hostile module cannot make the analysis explode.
pub(super) const MAX_UNROLLED: usize = 256;

impl Walker<'_> {
    pub(super) fn for_stmt(&mut self, s: &ast::StmtFor, out: &mut Vec<ir::Stmt>) {
        // `for t in [q, k, v]:`, `for size in window_size:`, `for i, (w, b) in enumerate(layers):`,
        // `for k, s in zip(kernels, strides):` over sequences of known length: unrolled
        let plain = s.orelse.is_empty() && !leaves_early(&s.body) && unpacks_into_names(&s.target);
        if plain {
            if let Some(values) = self.known_elements(&s.iter, out) {
                if self.unrolled + values.len() <= MAX_UNROLLED {
                    self.unrolled_for(&s.target, values, &s.body, s.range(), out);
                    return;
                }
            }
        }
        if !s.orelse.is_empty() {
            self.diag(&rules::UNSUPPORTED_LOOP, "`for ... else` is not lowered".into(), s.range());
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
        let rebound = rebound_in(&s.body);
        self.env.forget_fresh(&rebound);
        // an unrolled loop's literal variable rebound here: unknown from the second iteration
        self.env.forget_statics(&bound_in(&s.body));
        let head = self.env.clone();
        let (body, next, breaks) = self.loop_body(&s.body);
        self.check_loop_types(&head, &next, s.range());
        // zero iterations leave `before`; otherwise the end of some iteration, or a `break`
        self.env = next.iter().chain(&breaks).fold(before, |env, exit| env.join(exit));
        if let (Some(var), Some((start, stop, step))) = (var, bounds) {
            out.push(ir::Stmt::For { var, start, stop, step, body });
        }
    }

    /// The elements of `for name in [a, b, c]:` (a list or tuple display), evaluated once, in
    /// order, as Python builds the sequence, then held apart from their names ([`Self::held`]).
    fn sequence_elements(&mut self, elements: &[Expr], out: &mut Vec<ir::Stmt>) -> Vec<super::Val> {
        let mut values = Vec::with_capacity(elements.len());
        for element in elements {
            let v = self.expr(element);
            values.push(self.held(v, element.range(), out));
        }
        values
    }

    /// `v` as the loop will see it on every iteration: Python iterates the objects the sequence
    /// held when the loop began, so a value that is not a literal is copied into a temporary
    /// local (the elements of a nested tuple too) and the body rebinding a name (`b = out`, or
    /// the sequence's own name) changes nothing the later iterations read.
    fn held(&mut self, v: super::Val, range: TextRange, out: &mut Vec<ir::Stmt>) -> super::Val {
        if v.lit != crate::claim::Lit::NotLiteral {
            return v;
        }
        if let Some(items) = v.sequence_items() {
            let kind = v.ty;
            let held: Vec<super::Val> = items.into_iter().map(|item| self.held(item, range, out)).collect();
            return super::Val::sequence(kind, held);
        }
        if v.ir.is_none() {
            return v;
        }
        let temp = self.temp();
        self.assign(&temp, v, range, out);
        self.name_of_temp(&temp)
    }

    /// The elements of a loop's iterable when their number is known: a list or tuple display
    /// (evaluated once, in order), a tuple or list local, and `enumerate` / `zip` of those
    /// (each element a tuple, as Python yields it; `zip` stops at the shortest). `None` for any
    /// other iterable, which nothing has evaluated yet.
    fn known_elements(&mut self, iter: &Expr, out: &mut Vec<ir::Stmt>) -> Option<Vec<super::Val>> {
        match iter {
            Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }) if !elts.iter().any(|e| matches!(e, Expr::Starred(_))) => {
                (self.unrolled + elts.len() <= MAX_UNROLLED).then(|| self.sequence_elements(elts, out))
            }
            Expr::Name(seq) => {
                let known = self.locals.contains(seq.id.as_str()) && self.env.get(seq.id.as_str()).is_some_and(|b| b.definite && !b.conflicting && b.ty.items().is_some());
                if !known {
                    return None;
                }
                let items = self.expr(iter).sequence_items()?;
                Some(items.into_iter().map(|item| self.held(item, iter.range(), out)).collect())
            }
            Expr::Call(c) => {
                let Expr::Name(f) = &*c.func else { return None };
                let builtin = |w: &Self, name: &str| f.id.as_str() == name && !w.locals.contains(name) && w.scope.is_builtin(name);
                let args = &c.arguments.args;
                if builtin(self, "enumerate") && args.len() == 1 {
                    let start = match &c.arguments.keywords[..] {
                        [] => 0,
                        [k] if k.arg.as_ref().is_some_and(|a| a.as_str() == "start") => match &k.value {
                            Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Int(i), .. }) => i.as_i64()?,
                            _ => return None,
                        },
                        _ => return None,
                    };
                    let items = self.known_elements(&args[0], out)?;
                    let int = |i: i64| super::Val::lowered(Ty::Int, crate::claim::Lit::Int(i), ir::Expr::Int(i));
                    return Some(items.into_iter().zip(start..).map(|(v, i)| super::Val::tuple(vec![int(i), v])).collect());
                }
                if builtin(self, "zip") && !args.is_empty() && c.arguments.keywords.is_empty() && !args.iter().any(|a| matches!(a, Expr::Starred(_))) {
                    let mut columns = Vec::with_capacity(args.len());
                    for arg in args {
                        columns.push(self.known_elements(arg, out)?);
                    }
                    let n = columns.iter().map(Vec::len).min().unwrap_or(0);
                    return Some((0..n).map(|i| super::Val::tuple(columns.iter().map(|c| c[i].clone()).collect())).collect());
                }
                None
            }
            _ => None,
        }
    }

    /// Binds a loop target (a name, or a tuple or list of targets, nested) to one element.
    fn bind_loop_target(&mut self, target: &Expr, value: super::Val, range: TextRange, out: &mut Vec<ir::Stmt>) {
        match target {
            Expr::Name(n) => {
                let literal = matches!(value.lit, crate::claim::Lit::Int(_) | crate::claim::Lit::Float(_) | crate::claim::Lit::Bool(_)).then(|| value.lit.clone());
                self.assign(n.id.as_str(), value, range, out);
                if let Some(literal) = literal {
                    self.env.remember_literal(n.id.as_str(), literal);
                }
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => match value.sequence_items() {
                Some(items) if items.len() == elts.len() => {
                    for (t, v) in elts.iter().zip(items) {
                        self.bind_loop_target(t, v, range, out);
                    }
                }
                _ => {
                    self.diag(&rules::UNSUPPORTED_TARGET, format!("the loop unpacks {} values from {}", elts.len(), value.ty.describe()), range);
                    self.bind_unknown(target);
                }
            },
            other => self.bind_unknown(other),
        }
    }

    /// A `for` over a sequence of known elements: the body is walked once per element with
    /// the target bound to it (literals stay literals, so `x.sum(dim=d)` keeps a static dim).
    fn unrolled_for(&mut self, target: &Expr, values: Vec<super::Val>, body: &[Stmt], range: TextRange, out: &mut Vec<ir::Stmt>) {
        self.unrolled += values.len();
        for value in values {
            self.bind_loop_target(target, value, range, out);
            let (block, live) = self.block(body);
            out.extend(block);
            if !live {
                break; // every path returned: the later iterations never run
            }
        }
    }

    pub(super) fn while_stmt(&mut self, s: &ast::StmtWhile, out: &mut Vec<ir::Stmt>) {
        if !s.orelse.is_empty() {
            self.diag(&rules::UNSUPPORTED_LOOP, "`while ... else` is not lowered".into(), s.range());
        }
        // the condition is read again after each iteration: nothing the body binds is known
        self.env.forget_statics(&bound_in(&s.body));
        let cond = self.condition(&s.test);
        let before = self.env.clone();
        self.env.forget_fresh(&rebound_in(&s.body));
        let head = self.env.clone();
        let (body, next, breaks) = self.loop_body(&s.body);
        self.check_loop_types(&head, &next, s.range());
        self.env = next.iter().chain(&breaks).fold(before, |env, exit| env.join(exit));
        if let Some(cond) = cond {
            out.push(ir::Stmt::While { cond, body });
        }
    }

    /// Walks a loop body collecting its `break`s and `continue`s: returns its IR, the
    /// environments that reach the next iteration (the body's end, each `continue`) and those
    /// that leave by `break`.
    fn loop_body(&mut self, body: &[Stmt]) -> (Vec<ir::Stmt>, Vec<Env>, Vec<Env>) {
        self.loop_exits.push(super::LoopExits::default());
        let (ir, live) = self.block(body);
        let exits = self.loop_exits.pop().unwrap_or_default();
        let end = std::mem::take(&mut self.env);
        let mut next = exits.continues;
        // a body that always leaves early does not reach its end; one that always returns
        // keeps its (unreached) end, as before break/continue existed
        if live || (next.is_empty() && exits.breaks.is_empty()) {
            next.push(end);
        }
        (ir, next, exits.breaks)
    }

    /// A name bound at the loop head must keep its type through the body, to wherever the
    /// next iteration starts from (single pass: no fixpoint iteration, so a change is
    /// reported instead of widened).
    fn check_loop_types(&mut self, head: &Env, next: &[Env], range: TextRange) {
        let mut changed = std::collections::BTreeSet::new();
        let mut deleted = std::collections::BTreeSet::new();
        for (name, b) in head.iter() {
            if next.iter().any(|env| env.get(name).is_some_and(|after| after.ty != b.ty)) {
                changed.insert(name.clone());
            }
            // `del name` in the body: the body was walked with the name bound, but the next
            // iteration would start without it (Python's UnboundLocalError on a read)
            if b.definite && next.iter().any(|env| !env.get(name).is_some_and(|after| after.definite)) {
                deleted.insert(name.clone());
            }
        }
        for name in changed {
            self.diag(&rules::LOOP_TYPE_CHANGE, format!("`{name}` changes type inside the loop"), range);
        }
        for name in deleted {
            self.diag(&rules::UNBOUND_NAME, format!("`{name}` is deleted inside the loop and not bound again before the next iteration"), range);
        }
    }

    /// `range(stop)`, `range(start, stop)` or `range(start, stop, step)` over ints.
    pub(super) fn range_call(&mut self, iter: &Expr) -> Option<(ir::Expr, ir::Expr, ir::Expr)> {
        let call = match iter {
            Expr::Call(c) if matches!(&*c.func, Expr::Name(n) if n.id.as_str() == "range" && !self.locals.contains("range") && self.scope.is_builtin("range")) => c,
            other => {
                let _ = self.expr(other);
                self.diag(&rules::UNSUPPORTED_LOOP, "only `for name in range(...)` loops are lowered".into(), other.range());
                return None;
            }
        };
        let (args, keywords) = (&call.arguments.args, &call.arguments.keywords);
        if !keywords.is_empty() || args.is_empty() || args.len() > 3 || args.iter().any(|a| matches!(a, Expr::Starred(_))) {
            self.diag(&rules::UNSUPPORTED_LOOP, "range() needs 1 to 3 positional int arguments".into(), call.range());
            return None;
        }
        let mut vals = Vec::new();
        for a in args {
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

}


/// Every name a loop body binds (`+=` and nested blocks included): their static values do not
/// hold from the second iteration on.
fn bound_in(body: &[Stmt]) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    super::locals::collect(body, &mut names, 2 * super::MAX_DEPTH, &|_, _| false);
    names.into_iter().collect()
}

/// The names a loop body binds by assignment (not by `+=`, which keeps a tensor's storage):
/// one of them may be a parameter's tensor when the next iteration starts.
fn rebound_in(body: &[Stmt]) -> Vec<String> {
    fn targets(e: &Expr, out: &mut Vec<String>) {
        match e {
            Expr::Name(n) => out.push(n.id.to_string()),
            Expr::Tuple(t) => t.elts.iter().for_each(|e| targets(e, out)),
            Expr::List(t) => t.elts.iter().for_each(|e| targets(e, out)),
            Expr::Starred(s) => targets(&s.value, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for s in body {
        match s {
            Stmt::Assign(a) => a.targets.iter().for_each(|t| targets(t, &mut out)),
            Stmt::AnnAssign(a) => targets(&a.target, &mut out),
            Stmt::For(f) => {
                targets(&f.target, &mut out);
                out.extend(rebound_in(&f.body));
            }
            Stmt::While(w) => out.extend(rebound_in(&w.body)),
            Stmt::If(i) => crate::parse::if_blocks(i).for_each(|b| out.extend(rebound_in(b))),
            _ => {}
        }
    }
    out
}

/// Whether a loop target is a name or a tuple or list of such targets (at most a few levels
/// deep, as loops write them).
fn unpacks_into_names(target: &Expr) -> bool {
    fn within(target: &Expr, depth: usize) -> bool {
        match target {
            Expr::Name(_) => true,
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => depth < 4 && elts.iter().all(|e| within(e, depth + 1)),
            _ => false,
        }
    }
    within(target, 0)
}

/// Whether `body` has a `break` or `continue` of its own loop (not of a loop nested in it).
fn leaves_early(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Break(_) | Stmt::Continue(_) => true,
        Stmt::If(i) => crate::parse::if_blocks(i).any(leaves_early),
        Stmt::With(w) => leaves_early(&w.body),
        Stmt::Try(t) => leaves_early(&t.body) || leaves_early(&t.orelse) || leaves_early(&t.finalbody) || t.handlers.iter().any(|h| match h {
            ast::ExceptHandler::ExceptHandler(h) => leaves_early(&h.body),
        }),
        _ => false,
    })
}
