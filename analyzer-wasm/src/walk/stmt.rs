//! Statements: assignments, returns, if/for/while with the environment joined at every
//! merge point, and the int/bool conditions and `range()` bounds they need.

use super::env::Binding;
use super::{Val, Walker, MAX_DEPTH};
use crate::claim::Lit;
use crate::ir;
use crate::rules;
use crate::ty::Ty;
use ruff_python_ast::{self as ast, ElifElseClause, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

/// Most `if`s per function whose tail is walked once per branch ([`Walker::if_with_tail`]):
/// each doubles the tail, so a hostile function cannot make the walk grow without bound.
pub(super) const MAX_TAIL_SPLITS: usize = 4;

/// Most elements of a list built by `.append()` (a tuple's length is a `u8`; an unrolled loop
/// that appends more is refused rather than grown without bound).
const MAX_LIST_APPEND_LEN: u8 = 64;

/// The walker's state before a statement, to walk it again ([`Walker::undo`]).
pub(super) struct WalkMark {
    env: super::env::Env,
    out_len: usize,
    sites: usize,
    diags: usize,
    returns: Option<Ty>,
    returns_tuple: Vec<Ty>,
    failed_locals: std::collections::BTreeMap<String, usize>,
    unrolled: usize,
    depth_reported: bool,
}

/// The environment after an `if`: a branch that cannot fall through contributes nothing.
fn merge_paths(after_then: super::env::Env, then_live: bool, after_else: super::env::Env, else_live: bool) -> super::env::Env {
    match (then_live, else_live) {
        (true, false) => after_then,
        (false, true) => after_else,
        _ => after_then.join(&after_else),
    }
}

/// Whether the source of `stmts` mentions `name` as a whole identifier (a conservative read
/// check: a mention in a string or comment counts too).
fn reads_name(source: &str, stmts: &[Stmt], name: &str) -> bool {
    stmts.iter().any(|stmt| mentions(source, stmt.range(), name))
}

/// Whether the source in `range` mentions `name` as a whole identifier.
fn mentions(source: &str, range: TextRange, name: &str) -> bool {
    let identifier = |c: char| c == '_' || c.is_alphanumeric();
    let text = source.get(usize::from(range.start())..usize::from(range.end())).unwrap_or("");
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(identifier) && !after.is_some_and(identifier)
    })
}

/// The names an assignment target binds (`(a1, a2), b` → a1, a2, b); `None` when it has a
/// target that is not a name or a tuple/list of them.
fn target_names(target: &Expr, names: &mut Vec<String>) -> Option<()> {
    match target {
        Expr::Name(n) => names.push(n.id.to_string()),
        Expr::Tuple(t) => t.elts.iter().try_for_each(|e| target_names(e, names))?,
        Expr::List(t) => t.elts.iter().try_for_each(|e| target_names(e, names))?,
        _ => return None,
    }
    Some(())
}

impl Walker<'_> {

    /// Walk a block; returns its IR and whether its end is reachable.
    pub(super) fn block(&mut self, body: &[Stmt]) -> (Vec<ir::Stmt>, bool) {
        let mut out = Vec::new();
        for (i, stmt) in body.iter().enumerate() {
            // a docstring at the top of the function body is allowed
            if i == 0 {
                if let Stmt::Expr(e) = stmt {
                    if matches!(&*e.value, Expr::StringLiteral(_)) {
                        continue;
                    }
                }
            }
            if let Stmt::If(s) = stmt {
                if let Some(live) = self.if_with_tail(s, &body[i + 1..], &mut out) {
                    return (out, live); // the rest of the block was walked in each branch
                }
                continue;
            }
            if !self.stmt(stmt, &mut out) {
                return (out, false); // the rest of the block is unreachable
            }
        }
        (out, true)
    }

    /// An `if` followed by `tail`, the rest of its block. Walked as usual, unless its branches
    /// leave a name with different types that `tail` reads (T5's `relative_buckets`: the int
    /// `0` on one path, an int64 tensor after `+=` on the other): then the walk is undone and
    /// `tail` is walked again at the end of each branch with that branch's types, as if the
    /// source had a copy of it in each (the tail runs once on every path either way). Only
    /// outside loops (a loop body's tail flows back into the loop), at most
    /// [`MAX_TAIL_SPLITS`] times per function. `Some(live)` when the tail was consumed,
    /// `None` when the `if` was walked as usual and the caller goes on with `tail`.
    fn if_with_tail(&mut self, s: &ast::StmtIf, tail: &[Stmt], out: &mut Vec<ir::Stmt>) -> Option<bool> {
        if self.depth >= MAX_DEPTH {
            self.too_deep(s.range());
            return None;
        }
        let mark = self.mark(out.len());
        self.depth += 1;
        let live = self.if_stmt(&s.test, &s.body, &s.elif_else_clauses, out);
        self.depth -= 1;
        if !live {
            return Some(false);
        }
        let newly_conflicting: Vec<String> = self
            .env
            .iter()
            .filter(|(name, b)| b.conflicting && !mark.env.get(name).is_some_and(|before| before.conflicting))
            .map(|(name, _)| name.clone())
            .collect();
        let splits = !tail.is_empty()
            && self.loop_exits.is_empty()
            && self.tail_splits < MAX_TAIL_SPLITS
            && newly_conflicting.iter().any(|name| reads_name(self.index.source(), tail, name));
        if !splits {
            return None;
        }
        self.tail_splits += 1;
        self.undo(mark, out);
        self.depth += 1;
        let cond = self.condition(&s.test);
        let before = self.env.clone();
        let branch = |w: &mut Self, walk: &dyn Fn(&mut Self) -> (Vec<ir::Stmt>, bool)| {
            w.conditional += 1;
            w.on_branch += 1;
            let (mut block, live) = walk(w);
            w.conditional -= 1;
            if !live {
                w.on_branch -= 1;
                return (block, false, std::mem::take(&mut w.env));
            }
            let (rest, live) = w.block(tail);
            w.on_branch -= 1;
            block.extend(rest);
            (block, live, std::mem::take(&mut w.env))
        };
        let (then, then_live, after_then) = branch(self, &|w| w.block(&s.body));
        self.env = before;
        let (orelse, else_live, after_else) = branch(self, &|w| w.else_branch(&s.elif_else_clauses));
        self.env = merge_paths(after_then, then_live, after_else, else_live);
        self.depth -= 1;
        if let Some(cond) = cond {
            out.push(ir::Stmt::If { cond, then, orelse });
        }
        Some(then_live || else_live)
    }

    /// What [`Self::undo`] needs to walk a statement again as if it had not been walked.
    pub(super) fn mark(&self, out_len: usize) -> WalkMark {
        WalkMark {
            env: self.env.clone(),
            out_len,
            sites: self.sites.len(),
            diags: self.diags.len(),
            returns: self.returns,
            returns_tuple: self.returns_tuple.clone(),
            failed_locals: self.failed_locals.clone(),
            unrolled: self.unrolled,
            depth_reported: self.depth_reported,
        }
    }

    pub(super) fn undo(&mut self, mark: WalkMark, out: &mut Vec<ir::Stmt>) {
        out.truncate(mark.out_len);
        self.env = mark.env;
        self.sites.truncate(mark.sites);
        self.diags.truncate(mark.diags);
        self.returns = mark.returns;
        self.returns_tuple = mark.returns_tuple;
        self.failed_locals = mark.failed_locals;
        self.unrolled = mark.unrolled;
        self.depth_reported = mark.depth_reported;
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

    pub(super) fn too_deep(&mut self, range: TextRange) {
        if !self.depth_reported {
            self.depth_reported = true;
            self.diag(&rules::TOO_DEEP, format!("nesting deeper than {MAX_DEPTH} levels is not analyzed"), range);
        }
    }

    fn stmt_inner(&mut self, stmt: &Stmt, out: &mut Vec<ir::Stmt>) -> bool {
        match stmt {
            Stmt::Pass(_) => true,
            Stmt::Assign(s) if s.targets.len() > 1 => self.chained_assign(s, out),
            Stmt::Assign(s) => {
                if self.nested_unpacking(s, out) {
                    return true;
                }
                if let Some(rewritten) = self.hoist_distribution(s, out) {
                    return self.stmt(&Stmt::Assign(rewritten), out);
                }
                if let ([Expr::Name(n)], Expr::Call(c)) = (s.targets.as_slice(), &*s.value) {
                    if self.distribution_assign(n.id.as_str(), c, s.value.range(), out) {
                        return true;
                    }
                }
                // `a, b = …` and `[a, b] = …` bind alike
                let unpacked = match s.targets.as_slice() {
                    [Expr::Tuple(t)] => Some(&t.elts),
                    [Expr::List(t)] => Some(&t.elts),
                    _ => None,
                };
                if let (Some(targets), Expr::Call(_)) = (unpacked, &*s.value) {
                    self.unpacking = Some((s.value.range(), targets.len()));
                }
                let v = self.expr(&s.value);
                self.unpacking = None;
                if let (Some(ir::Expr::Tensor { options: ir::Options::Parts { .. } | ir::Options::PartsDyn { .. }, .. }), Some(targets)) = (&v.ir, unpacked) {
                    self.unpack_parts(targets, v, s.range(), out);
                    return true;
                }
                if let (Some(ir::Expr::Call { .. } | ir::Expr::Tensor { .. }), Ty::Tuple(_) | Ty::List(_), Some(targets)) = (&v.ir, v.ty, unpacked) {
                    self.unpack_call(targets, v, s.range(), out);
                    return true;
                }
                match s.targets.as_slice() {
                    [Expr::Name(n)] => {
                        let new_list = v.fresh && matches!(v.ty, Ty::List(_));
                        self.assign(n.id.as_str(), v, s.value.range(), out);
                        if new_list && matches!(self.env.get(n.id.as_str()).map(|b| b.ty), Some(Ty::List(_))) {
                            self.env.mark_list(n.id.as_str());
                        }
                    }
                    [Expr::Tuple(t)] if v.sequence_items().is_some() => self.unpack(&t.elts, v, s.range(), out),
                    [Expr::List(t)] if v.sequence_items().is_some() => self.unpack(&t.elts, v, s.range(), out),
                    [Expr::Subscript(sub)] => self.index_assign(sub, v, s.range(), out),
                    _ => {
                        self.diag(&rules::UNSUPPORTED_TARGET, "only `name = value` assignments are lowered".into(), s.range());
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
                    _ => self.diag(&rules::UNSUPPORTED_TARGET, "annotated assignment without a value or to a non-name".into(), s.range()),
                }
                true
            }
            Stmt::AugAssign(s) => {
                self.aug_assign(s, out);
                true
            }
            Stmt::Return(s) => {
                match s.value.as_deref() {
                    Some(Expr::If(choice)) if matches!(*choice.body, Expr::Tuple(_)) != matches!(*choice.orelse, Expr::Tuple(_)) => self.return_either(s, choice, out),
                    _ => self.ret(s, out),
                }
                false
            }
            Stmt::If(s) => self.if_stmt(&s.test, &s.body, &s.elif_else_clauses, out),
            Stmt::With(w) if !w.is_async && w.items.iter().all(|item| self.transparent_context(item)) => {
                // `with torch.autocast(…, enabled=False):` / `torch.no_grad()`: the body as is
                let (block, live) = self.block(&w.body);
                out.extend(block);
                live
            }
            Stmt::Assert(s) => {
                self.assert_stmt(s, out);
                true
            }
            Stmt::For(s) if !s.is_async => {
                self.for_stmt(s, out);
                true
            }
            Stmt::While(s) => {
                self.while_stmt(s, out);
                true
            }
            Stmt::Expr(s) => {
                // `torch._assert(cond, message)`: the `assert` statement torchvision writes
                if let Expr::Call(c) = &*s.value {
                    let locals = &self.locals;
                    let torch_assert = self.scope.dotted_path(&c.func, &|n| locals.contains(n)).as_deref() == Some("torch._assert");
                    if let ([test, message], true) = (&c.arguments.args[..], torch_assert && c.arguments.keywords.is_empty()) {
                        self.assert_parts(test, Some(message), s.range(), out);
                        return true;
                    }
                }
                if let Expr::Call(c) = &*s.value {
                    if self.list_append(c, s.range(), out) {
                        return true;
                    }
                }
                let v = self.expr(&s.value);
                match v.ir {
                    // `h.relu_()`: made for its effect (or refused: `x.relu_()` on an argument)
                    Some(e @ (ir::Expr::InPlace { .. } | ir::Expr::WriteBack { .. } | ir::Expr::Defer { .. })) => out.push(ir::Stmt::Effect(e)),
                    // a value computed and discarded (DeepCTR's `mask.type(torch.float32)`, whose
                    // result the project drops): evaluated as Python evaluates it, errors included
                    Some(e) if crate::lower::mangle::RustKind::of(v.ty).is_some() => out.push(ir::Stmt::Effect(e)),
                    _ if v.explained => {}
                    _ => self.diag(&rules::UNSUPPORTED_STATEMENT, "expression statements are not lowered (the value would be discarded)".into(), s.range()),
                }
                true
            }
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) | Stmt::Global(_) | Stmt::Nonlocal(_) => {
                self.diag(&rules::NESTED_SCOPE, format!("`{}` statement inside a native function", stmt_kind(stmt)), stmt.range());
                true
            }
            Stmt::Break(_) | Stmt::Continue(_) => {
                let is_break = matches!(stmt, Stmt::Break(_));
                let env = self.env.clone();
                let Some(exits) = self.loop_exits.last_mut() else {
                    // CPython refuses to compile it: "'break' outside loop"
                    self.diag(&rules::UNSUPPORTED_LOOP, format!("`{}` outside a loop (SyntaxError)", stmt_kind(stmt)), stmt.range());
                    return false;
                };
                if is_break {
                    exits.breaks.push(env);
                    out.push(ir::Stmt::Break);
                } else {
                    exits.continues.push(env);
                    out.push(ir::Stmt::Continue);
                }
                false
            }
            Stmt::Raise(r) => {
                self.raise_stmt(r, out);
                false
            }
            Stmt::Delete(d) => {
                self.delete(d);
                true
            }
            // `import torch` inside a function where the module already imports it: nothing
            Stmt::Import(i) if i.names.iter().all(|a| {
                let (name, module) = super::locals::imported_binding(a);
                self.scope.reimports(name, module)
            }) => true,
            other => {
                self.diag(&rules::UNSUPPORTED_STATEMENT, format!("`{}` statement is not lowered", stmt_kind(other)), other.range());
                true
            }
        }
    }

    /// `del a, b`: the names are unbound from here on (diffusers' `del baddbmm_input`, written
    /// to free memory early; native locals are freed when the function returns). Deleting an
    /// element or an attribute would write into a value, and is not lowered.
    fn delete(&mut self, d: &ast::StmtDelete) {
        for target in &d.targets {
            let Expr::Name(n) = target else {
                self.diag(&rules::UNSUPPORTED_STATEMENT, "`del` of an element or an attribute is not lowered (it writes into a value)".into(), target.range());
                continue;
            };
            let name = n.id.as_str();
            match self.env.get(name) {
                Some(b) if b.definite => {
                    let elements = match b.ty {
                        Ty::Tuple(len) | Ty::List(len) => len,
                        Ty::Distribution(kind) => kind.tensors(),
                        _ => 0,
                    };
                    for i in 0..elements {
                        self.env.unbind(&super::expr::element_name(name, i));
                    }
                    self.env.unbind(name);
                }
                // Python raises UnboundLocalError (or NameError)
                _ => self.diag(&rules::UNBOUND_NAME, format!("`del {name}` of a name that is not (or not always) bound here"), target.range()),
            }
        }
    }

    /// `items.append(v)` on a list local nothing else refers to ([`Env::is_unshared_list`]):
    /// `v` becomes the next element local `items#n` and `items` a list one longer, as the list
    /// grows in Python. `false` when the statement is not such a call (the caller walks it as
    /// an expression); a diagnostic when it is an append this walk cannot follow.
    fn list_append(&mut self, c: &ast::ExprCall, range: TextRange, out: &mut Vec<ir::Stmt>) -> bool {
        let Expr::Attribute(attr) = &*c.func else { return false };
        let (Expr::Name(n), "append") = (&*attr.value, attr.attr.as_str()) else { return false };
        let name = n.id.as_str();
        let Some(Binding { ty: Ty::List(len), definite: true, conflicting: false }) = self.env.get(name) else { return false };
        if !self.locals.contains(name) {
            return false;
        }
        if !self.env.is_unshared_list(name) {
            self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`{name}.append()` is lowered only on a list bound by a display (`{name} = []`) and not read since (another name may refer to it)"), range);
            return true;
        }
        let ([value], []) = (&c.arguments.args[..], &c.arguments.keywords[..]) else {
            self.diag(&rules::BAD_ARITY, "`list.append()` takes exactly one argument (TypeError)".into(), range);
            return true;
        };
        if len >= MAX_LIST_APPEND_LEN {
            self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("a list of more than {MAX_LIST_APPEND_LEN} elements built by `.append()` is not lowered"), range);
            self.env.bind(name, Ty::Unknown);
            return true;
        }
        let v = self.expr(value);
        if !matches!(v.ty, Ty::Tensor(_) | Ty::Int | Ty::Bool | Ty::Float) {
            if !v.explained {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`.append()` of {} is not lowered (tensors and numbers are)", v.ty.describe()), range);
            }
            self.env.bind(name, Ty::Unknown);
            return true;
        }
        self.assign(&super::expr::element_name(name, len), v, value.range(), out);
        self.env.bind(name, Ty::List(len + 1));
        self.env.mark_list(name);
        true
    }

    pub(super) fn bind_unknown(&mut self, target: &Expr) {
        match target {
            Expr::Name(n) => self.env.bind(n.id.as_str(), Ty::Unknown),
            Expr::Tuple(t) => t.elts.iter().for_each(|e| self.bind_unknown(e)),
            Expr::List(t) => t.elts.iter().for_each(|e| self.bind_unknown(e)),
            Expr::Starred(s) => self.bind_unknown(&s.value),
            _ => {}
        }
    }

    /// `d = Categorical(logits=x)` / `d = Normal(loc, scale)`: the arguments go to the
    /// distribution's locals `d#0`, `d#1`, then the constructor op (eager's checks, and what
    /// eager stores) replaces `d#0`; `d` itself is bound to the distribution type. `false`
    /// when the call is not a distribution constructor.
    fn distribution_assign(&mut self, name: &str, c: &ast::ExprCall, range: TextRange, out: &mut Vec<ir::Stmt>) -> bool {
        let locals = &self.locals;
        let Some(path) = self.scope.dotted_path(&c.func, &|n| locals.contains(n)) else { return false };
        let Some(kind) = crate::claim::distributions::constructor(&path) else { return false };
        let (args, keywords, starred) = self.args(c);
        let arg_ops: Vec<crate::claim::Operand> = args.iter().map(Val::operand).collect();
        let kw_ops: Vec<crate::claim::Keyword> = keywords.iter().map(|(n, v)| crate::claim::Keyword { name: n.clone(), value: v.operand() }).collect();
        let target = crate::claim::Target::Function(path.as_str());
        let decision = crate::claim::decide(&crate::claim::Query { target, receiver: None, args: &arg_ops, keywords: &kw_ops, starred });
        let crate::claim::Decision::Claimed(mut claim) = decision else {
            let kw_vals: Vec<Val> = keywords.into_iter().map(|(_, v)| v).collect();
            let _ = self.site(crate::claim::describe_target(target), decision, range, None, &args, &kw_vals);
            self.env.bind(name, Ty::Unknown);
            return true;
        };
        // the tensors, in parameter order, into the distribution's locals
        let stored: Vec<Val> = claim
            .operands
            .iter()
            .map(|r| match r {
                crate::claim::OperandRef::Arg(i) => args.get(*i).cloned(),
                crate::claim::OperandRef::Keyword(i) => keywords.get(*i).map(|(_, v)| v.clone()),
                crate::claim::OperandRef::Receiver => None,
            })
            .map(|v| v.unwrap_or_else(|| Val::explained(Ty::Unknown)))
            .collect();
        let count = stored.len() as u8;
        for (i, v) in stored.into_iter().enumerate() {
            self.assign(&super::expr::element_name(name, i as u8), v, range, out);
        }
        let locals: Vec<Val> = (0..count).map(|i| self.element(name, i)).collect();
        claim.operands = (0..usize::from(count)).map(crate::claim::OperandRef::Arg).collect();
        let made = self.site(crate::claim::describe_target(target), crate::claim::Decision::Claimed(claim), range, None, &locals, &[]);
        self.assign(&super::expr::element_name(name, 0), made, range, out);
        self.env.bind(name, Ty::Distribution(kind));
        true
    }

    pub(super) fn assign(&mut self, name: &str, v: Val, range: TextRange, out: &mut Vec<ir::Stmt>) {
        if let (Ty::Distribution(kind), Some(elems)) = (v.ty, v.elems.clone()) {
            // `d2 = d`: the same stored tensors under the new name
            for (i, elem) in elems.into_iter().enumerate() {
                self.assign(&super::expr::element_name(name, i as u8), elem, range, out);
            }
            self.env.bind(name, Ty::Distribution(kind));
            return;
        }
        if let (Ty::Tuple(n), None, Some(value)) = (v.ty, &v.elems, v.ir.clone()) {
            // `r = x.topk(k)`: an op's tuple into a name lives as its elements `r#i`, as
            // `a, b = x.topk(k)` binds them (the call left their types in `returned_tuple`)
            let types = std::mem::take(&mut self.returned_tuple);
            if types.len() != usize::from(n) {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("assignment: {} has no native form here", v.ty.describe()), range);
                self.env.bind(name, Ty::Unknown);
                return;
            }
            let names: Vec<(String, Ty)> = types.into_iter().enumerate().map(|(i, ty)| (super::expr::element_name(name, i as u8), ty)).collect();
            for (element, ty) in &names {
                self.env.bind(element, *ty);
            }
            self.env.bind(name, v.ty);
            self.env.set_pair(name, v.pair);
            out.push(ir::Stmt::Unpack { names, value, tuple: true });
            return;
        }
        if let (Ty::Tuple(_) | Ty::List(_), Some(elems)) = (v.ty, v.elems.clone()) {
            let pair = v.pair;
            // a tuple (or list) local lives as its elements `name#i`; a None element is static
            // (Swin's slice bounds `(-shift, None)`: read back as None where used)
            for (i, elem) in elems.into_iter().enumerate() {
                let element = super::expr::element_name(name, i as u8);
                if elem.ty == Ty::NoneVal && !elem.explained {
                    self.env.bind(&element, Ty::NoneVal);
                } else {
                    self.assign(&element, elem, range, out);
                }
            }
            self.env.bind(name, v.ty);
            self.env.set_pair(name, pair);
            return;
        }
        if let (Ty::Str, Lit::Str(_) | Lit::Dtype(_) | Lit::Device(_)) = (v.ty, &v.lit) {
            // a static value (`dtype = x.dtype`): no native form, read back where used
            self.env.bind_static(name, v.ty, v.lit);
            return;
        }
        match v.cause {
            Some(site) if v.explained => self.failed_locals.insert(name.to_string(), site),
            _ => self.failed_locals.remove(name),
        };
        if v.ty == Ty::NoneVal && !v.explained {
            // `mask = None`: static, read back as None (`mask is None` a literal); a path that
            // binds a tensor instead makes the code after the `if` walk once per path
            self.env.bind(name, Ty::NoneVal);
            return;
        }
        let ty = v.ty;
        let fresh = v.fresh && matches!(ty, Ty::Tensor(_));
        let lowerable = matches!(ty, Ty::Tensor(_) | Ty::Int | Ty::Bool | Ty::Float);
        if !lowerable && v.ir.is_some() {
            // a value with code but no Rust local to hold it: reported, never dropped silently
            self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("assignment: a value of {} has no native form here", ty.describe()), range);
            self.env.bind(name, Ty::Unknown);
            return;
        }
        let ir = if lowerable || !v.explained { self.need(v, range, "assignment") } else { None };
        if fresh {
            self.env.bind_fresh(name, ty);
        } else {
            self.env.bind(name, ty);
        }
        if let Some(value) = ir {
            out.push(ir::Stmt::Assign { name: name.to_string(), ty, value });
        }
    }

    /// `entropy = Categorical(logits=scores).entropy()` (Transformers' `EtaLogitsWarper`): a
    /// distribution made inline and used at once, as the whole value of an assignment, is made
    /// first into a temporary (`#n = Categorical(…)`, as `distribution_assign` makes a named
    /// one), and the assignment then reads the temporary. The constructor is the first thing
    /// the value evaluates (after its own arguments), so the order of effects is Python's.
    /// Returns the rewritten assignment, or `None` when the value is not of that form.
    /// `q = k = value` (DETR's encoder layer): Python evaluates the value once and binds each
    /// target to it in turn, left to right, so it is walked as `#t = value`, `q = #t`, `k = #t`
    /// (the same tensor under every name, as eager's; a temporary, so a target that rebinds a
    /// name of another one, `a = (a, b) = pair`, reads the value and not the new binding).
    fn chained_assign(&mut self, s: &ast::StmtAssign, out: &mut Vec<ir::Stmt>) -> bool {
        let temp = self.temp();
        self.locals.insert(temp.clone());
        let read = |range| Expr::Name(ast::ExprName { node_index: Default::default(), range, id: temp.as_str().into(), ctx: ast::ExprContext::Load });
        let single = |target: Expr, value: Expr| Stmt::Assign(ast::StmtAssign { node_index: Default::default(), range: s.range, targets: vec![target], value: Box::new(value) });
        let store = Expr::Name(ast::ExprName { node_index: Default::default(), range: s.value.range(), id: temp.as_str().into(), ctx: ast::ExprContext::Store });
        let mut live = self.stmt(&single(store, (*s.value).clone()), out);
        for target in &s.targets {
            live &= self.stmt(&single(target.clone(), read(s.value.range())), out);
        }
        live
    }

    fn hoist_distribution(&mut self, s: &ast::StmtAssign, out: &mut Vec<ir::Stmt>) -> Option<ast::StmtAssign> {
        let receiver = match &*s.value {
            Expr::Call(call) => match &*call.func {
                Expr::Attribute(a) => &a.value,
                _ => return None,
            },
            Expr::Attribute(a) => &a.value,
            _ => return None,
        };
        let Expr::Call(constructor) = &**receiver else { return None };
        let locals = &self.locals;
        let path = self.scope.dotted_path(&constructor.func, &|n| locals.contains(n))?;
        crate::claim::distributions::constructor(&path)?;
        let temp = self.temp();
        self.locals.insert(temp.clone());
        if !self.distribution_assign(&temp, constructor, constructor.range(), out) {
            return None;
        }
        let name = Expr::Name(ast::ExprName { node_index: Default::default(), range: constructor.range(), id: temp.into(), ctx: ast::ExprContext::Load });
        let mut value = (*s.value).clone();
        match &mut value {
            Expr::Call(call) => {
                if let Expr::Attribute(a) = &mut *call.func {
                    a.value = Box::new(name);
                }
            }
            Expr::Attribute(a) => a.value = Box::new(name),
            _ => {}
        }
        Some(ast::StmtAssign { node_index: Default::default(), range: s.range, targets: s.targets.clone(), value: Box::new(value) })
    }

    /// `(a1, a2), (b1, b2) = box1.chunk(2, 2), box2.chunk(2, 2)` (YOLOv5's `box_iou`): a tuple
    /// display unpacked into a tuple of targets, some of them nested, is walked as one
    /// assignment per element, left to right. Python evaluates every value before it binds a
    /// name, so this is the same program when no value mentions a name the targets bind
    /// (else it is not taken, and the plain path reports the nested target).
    fn nested_unpacking(&mut self, s: &ast::StmtAssign, out: &mut Vec<ir::Stmt>) -> bool {
        let targets = match s.targets.as_slice() {
            [Expr::Tuple(t)] => &t.elts,
            [Expr::List(t)] => &t.elts,
            _ => return false,
        };
        let Expr::Tuple(values) = &*s.value else { return false };
        let values = &values.elts;
        if targets.len() != values.len() || !targets.iter().any(|t| matches!(t, Expr::Tuple(_) | Expr::List(_))) || values.iter().any(|v| matches!(v, Expr::Starred(_))) {
            return false;
        }
        let mut names = Vec::new();
        if targets.iter().try_for_each(|t| target_names(t, &mut names)).is_none() {
            return false;
        }
        let source = self.index.source();
        if names.iter().any(|name| values.iter().any(|v| mentions(source, v.range(), name))) {
            return false;
        }
        for (target, value) in targets.iter().zip(values) {
            let one = ast::StmtAssign { node_index: Default::default(), range: s.range, targets: vec![target.clone()], value: Box::new(value.clone()) };
            // through `stmt`, which bounds the depth of nested targets
            self.stmt(&Stmt::Assign(one), out);
        }
        true
    }

    /// `a, b = value` for a tuple value of the same length (statically known): every element
    /// is evaluated into a temporary first, then the names are bound left to right (so
    /// `a, b = b, a` swaps, as in Python).
    fn unpack(&mut self, targets: &[Expr], v: Val, range: TextRange, out: &mut Vec<ir::Stmt>) {
        let elems = v.elems.unwrap_or_default();
        let names: Option<Vec<&str>> = targets.iter().map(|t| if let Expr::Name(n) = t { Some(n.id.as_str()) } else { None }).collect();
        let Some(names) = names.filter(|n| n.len() == elems.len()) else {
            let what = if targets.iter().any(|t| !matches!(t, Expr::Name(_))) {
                "unpacking into targets other than plain names is not lowered".to_string()
            } else {
                format!("unpacks {} values from a tuple of {} (ValueError)", targets.len(), elems.len())
            };
            self.diag(&rules::UNSUPPORTED_TARGET, what, range);
            targets.iter().for_each(|t| self.bind_unknown(t));
            return;
        };
        let mut temps = Vec::new();
        for elem in elems {
            let temp = self.temp();
            self.assign(&temp, elem, range, out);
            temps.push(temp);
        }
        for (name, temp) in names.into_iter().zip(temps) {
            let value = self.name_of_temp(&temp);
            self.assign(name, value, range, out);
        }
    }

    /// `a, b = t.chunk(2, dim)`: each name bound to one part (names only; the count was fixed
    /// from them when the call was claimed).
    fn unpack_parts(&mut self, targets: &[Expr], v: Val, range: TextRange, out: &mut Vec<ir::Stmt>) {
        let names: Option<Vec<String>> = targets.iter().map(|t| if let Expr::Name(n) = t { Some(n.id.to_string()) } else { None }).collect();
        let (Some(names), Some(value)) = (names, v.ir) else {
            self.diag(&rules::UNSUPPORTED_TARGET, "unpacking into targets other than plain names is not lowered".into(), range);
            targets.iter().for_each(|t| self.bind_unknown(t));
            return;
        };
        for name in &names {
            self.bind_element(name, v.ty, v.fresh);
        }
        out.push(ir::Stmt::Unpack { names: names.into_iter().map(|n| (n, v.ty)).collect(), value, tuple: false });
    }

    /// `a, b = f(…)` of a module function returning a tuple (the call's element types were
    /// left in `returned_tuple` by the call).
    fn unpack_call(&mut self, targets: &[Expr], v: Val, range: TextRange, out: &mut Vec<ir::Stmt>) {
        let types = std::mem::take(&mut self.returned_tuple);
        let names: Option<Vec<String>> = targets.iter().map(|t| if let Expr::Name(n) = t { Some(n.id.to_string()) } else { None }).collect();
        let (Some(names), Some(value)) = (names.filter(|n| n.len() == types.len()), v.ir) else {
            self.diag(&rules::UNSUPPORTED_TARGET, format!("unpacking a tuple of {} into these targets is not lowered", types.len()), range);
            targets.iter().for_each(|t| self.bind_unknown(t));
            return;
        };
        // a claimed op's results are fresh as a single result is (`topk`'s values: Mixtral's
        // `routing_weights /= …`); a helper's tuple is not known to be
        let fresh = v.fresh && matches!(value, ir::Expr::Tensor { .. });
        for (name, ty) in names.iter().zip(&types) {
            self.bind_element(name, *ty, fresh);
        }
        out.push(ir::Stmt::Unpack { names: names.into_iter().zip(types).collect(), value, tuple: true });
    }

    /// Binds one unpacked element: fresh (its storage provably not a parameter's) when the
    /// value it comes from is, and it is a tensor.
    fn bind_element(&mut self, name: &str, ty: Ty, fresh: bool) {
        if fresh && matches!(ty, Ty::Tensor(_)) {
            self.env.bind_fresh(name, ty);
        } else {
            self.env.bind(name, ty);
        }
    }

    /// The value of a synthetic local (a tuple temp, read like a local).
    pub(super) fn name_of_temp(&mut self, temp: &str) -> Val {
        match self.env.get(temp) {
            Some(b) if matches!(b.ty, Ty::Tensor(_) | Ty::Int | Ty::Bool | Ty::Float) => {
                Val::lowered(b.ty, crate::claim::Lit::NotLiteral, ir::Expr::Local { name: temp.to_string(), ty: b.ty })
            }
            Some(b) => Val::explained(b.ty),
            None => Val::explained(Ty::Unknown),
        }
    }

    fn aug_assign(&mut self, s: &ast::StmtAugAssign, out: &mut Vec<ir::Stmt>) {
        let Expr::Name(n) = &*s.target else {
            let _ = self.expr(&s.value);
            self.diag(&rules::UNSUPPORTED_TARGET, "augmented assignment to a non-name".into(), s.range());
            return;
        };
        let current = self.name(n.id.as_str(), s.target.range());
        let rhs = self.expr(&s.value);
        let in_place_op = match s.op {
            ast::Operator::Add => Some(ir::Op::Add),
            ast::Operator::Sub => Some(ir::Op::Sub),
            ast::Operator::Mult => Some(ir::Op::Mul),
            ast::Operator::Div => Some(ir::Op::Div),
            // `done |= finished` of bool tensors (a tensor on the right: eager's kernel)
            ast::Operator::BitOr if matches!(rhs.ty, Ty::Tensor(_)) => Some(ir::Op::LogicalOr),
            ast::Operator::BitAnd if matches!(rhs.ty, Ty::Tensor(_)) => Some(ir::Op::LogicalAnd),
            ast::Operator::BitXor if matches!(rhs.ty, Ty::Tensor(_)) => Some(ir::Op::LogicalXor),
            _ => None,
        };
        let v = match in_place_op {
            // `h += x` on a tensor local that aliases no parameter: in place, as eager
            Some(op) if current.fresh && matches!(current.ty, Ty::Tensor(_)) => {
                let symbol = crate::claim::operator_symbol(s.op);
                self.in_place((crate::report::SiteKind::Binop, format!("{symbol}=")), op, current, Some(rhs), s.range())
            }
            // `x -= y` on an argument, on a branch: deferred
            Some(_) if self.defers_write(&current) => {
                let symbol = crate::claim::operator_symbol(s.op);
                self.deferred_write((crate::report::SiteKind::Binop, format!("{symbol}=")), current, vec![rhs], s.range())
            }
            // `buckets += t` on a Python number: numbers have no in-place operators, so
            // Python rebinds the name to `buckets + t` (T5's `relative_buckets = 0` … `+=`)
            _ if matches!(current.ty, Ty::Int | Ty::Float) && matches!(rhs.ty, Ty::Tensor(_)) => {
                self.binop(s.op, false, current, rhs, s.range())
            }
            _ => self.binop(s.op, true, current, rhs, s.range()),
        };
        self.assign(n.id.as_str(), v, s.range(), out);
    }

    fn ret(&mut self, s: &ast::StmtReturn, out: &mut Vec<ir::Stmt>) {
        // a bare `return` first: the function returns None (its return type is inferred)
        if s.value.is_none() && self.infer_returns && self.returns.is_none() {
            self.returns = Some(Ty::NoneVal);
        }
        // `return` / `return None` where the function returns None (`-> None`)
        if self.returns == Some(Ty::NoneVal) && s.value.as_deref().is_none_or(|v| matches!(v, Expr::NoneLiteral(_))) {
            out.push(ir::Stmt::return_none());
            return;
        }
        let value = match &s.value {
            Some(value) => value,
            None => {
                self.diag(&rules::RETURN_NONE, "`return` without a value returns None".into(), s.range());
                return;
            }
        };
        if matches!(&**value, Expr::Call(_)) {
            self.unpacking = Some((value.range(), usize::MAX));
        }
        let v = self.expr(value);
        self.unpacking = None;
        if let Ty::Distribution(kind) = v.ty {
            // eager returns the distribution object, which native code has no form of
            self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("returning a {} distribution is not lowered (its methods' results are)", kind.name()), value.range());
            return;
        }
        if let Some(elems) = v.elems.clone() {
            self.ret_tuple(v.ty, elems, v.pair, value.range(), out);
            return;
        }
        if let (Some(e @ (ir::Expr::Call { .. } | ir::Expr::Tensor { .. })), Ty::Tuple(_) | Ty::List(_)) = (&v.ir, v.ty) {
            let types = std::mem::take(&mut self.returned_tuple);
            if self.infer_returns && self.returns.is_none() {
                self.returns = Some(v.ty);
                self.returns_tuple = types.clone();
            }
            let want = self.returns.unwrap_or(Ty::Unknown);
            if types != self.returns_tuple || v.ty.sequence_name() != want.sequence_name() {
                let describe = |tys: &[Ty]| tys.iter().map(|t| t.describe()).collect::<Vec<_>>().join(", ");
                self.diag(&rules::RETURN_MISMATCH, format!("returns {}[{}] but the annotation says {}[{}]", v.ty.sequence_name(), describe(&types), want.sequence_name(), describe(&self.returns_tuple)), value.range());
                return;
            }
            if self.same_returned_pair(v.pair, value.range()) {
                out.push(ir::Stmt::Return(e.clone()));
            }
            return;
        }
        let ty = v.ty;
        // a specialised copy returns what its first `return` returns
        if self.infer_returns && self.returns.is_none() && !matches!(ty, Ty::Unknown | Ty::Tuple(_) | Ty::List(_)) {
            self.returns = Some(ty);
        }
        if let Some(want) = self.returns {
            if ty != want && self.refuses_path(ty, want) {
                let source = if self.infer_returns { "an earlier `return` gives" } else { "the annotation says" };
                let message = format!("returns {} on this path, where {source} {}", ty.describe(), want.describe());
                self.diag(&rules::RETURN_PATH_REFUSED, format!("{message}; native code refuses it with a ValueError (auto mode runs Python)"), value.range());
                let text = format!("torchlower: native code refuses this path: the function {message} (auto mode runs this call as Python)");
                out.push(ir::Stmt::Raise { exception: ir::Exception::Value, message: Some(vec![ir::MessagePart::Text(text)]) });
                return;
            }
            if ty != want && !(v.explained && ty == Ty::Unknown) {
                let source = if self.infer_returns { "an earlier `return` gives" } else { "the annotation says" };
                self.diag(&rules::RETURN_MISMATCH, format!("returns {} but {source} {}", ty.describe(), want.describe()), value.range());
                return;
            }
        }
        if let Some(e) = self.need(v, value.range(), "return value") {
            out.push(ir::Stmt::Return(e));
        }
    }

    /// Whether a `return` of `ty` where the function returns `want` (its annotation's type,
    /// or the first `return`'s where it is inferred) is refused at run time (TL404) rather
    /// than failing the function: a tensor of another type returned on a run-time branch.
    fn refuses_path(&self, ty: Ty, want: Ty) -> bool {
        self.on_branch > 0 && matches!((ty, want), (Ty::Tensor(_), Ty::Tensor(_)))
    }

    /// `return a, b` (or `return [a, b]`, as `kind` is) against a `tuple[A, B]` annotation or
    /// an earlier `return`.
    fn ret_tuple(&mut self, kind: Ty, elems: Vec<Val>, pair: Option<ir::ReturnedPair>, range: TextRange, out: &mut Vec<ir::Stmt>) {
        let sequence = kind.sequence_name();
        if elems.is_empty() {
            // `return s.shape` of a rank-0 tensor: no tuple type has no elements
            self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("returning an empty {sequence} is not lowered"), range);
            return;
        }
        let got: Vec<Ty> = elems.iter().map(|e| e.ty).collect();
        let explained = elems.iter().any(|e| e.explained && e.ty == Ty::Unknown);
        if self.infer_returns && self.returns.is_none() && !explained {
            self.returns = Some(kind);
            self.returns_tuple = got.clone();
        }
        let same_kind = self.returns.is_some_and(|want| want.items().is_some() && want.sequence_name() == sequence);
        // on a run-time branch, a tuple whose tensors are of other types or None where the
        // function returns tensors (Llama's `return h, mask` with `mask = None` when
        // `seqlen == 1`): refused at run time (TL404), as a single tensor of another type is
        let refused = self.on_branch > 0
            && same_kind
            && !explained
            && got != self.returns_tuple
            && got.len() == self.returns_tuple.len()
            && got.iter().zip(&self.returns_tuple).all(|(g, w)| g == w || matches!((g, w), (Ty::Tensor(_) | Ty::NoneVal, Ty::Tensor(_))));
        // a tuple on a run-time branch of a function that returns one tensor (Mamba's
        // `return out if not prenorm else (out, x)` with `-> Tensor`): refused there as well
        let single = self.returns.and_then(Ty::tensor);
        let refused_single = self.on_branch > 0 && !explained && single.is_some();
        if refused || refused_single {
            let describe = |tys: &[Ty]| tys.iter().map(|t| t.describe()).collect::<Vec<_>>().join(", ");
            let source = if self.infer_returns { "an earlier `return` gives" } else { "the annotation says" };
            let want = match single {
                Some(t) => Ty::Tensor(t).describe(),
                None => format!("{sequence}[{}]", describe(&self.returns_tuple)),
            };
            let message = format!("returns {sequence}[{}] on this path, where {source} {want}", describe(&got));
            self.diag(&rules::RETURN_PATH_REFUSED, format!("{message}; native code refuses it with a ValueError (auto mode runs Python)"), range);
            let text = format!("torchlower: native code refuses this path: the function {message} (auto mode runs this call as Python)");
            out.push(ir::Stmt::Raise { exception: ir::Exception::Value, message: Some(vec![ir::MessagePart::Text(text)]) });
            return;
        }
        if (got != self.returns_tuple || !same_kind) && !explained {
            let describe = |tys: &[Ty]| tys.iter().map(|t| t.describe()).collect::<Vec<_>>().join(", ");
            let want = match self.returns {
                Some(want) if !self.returns_tuple.is_empty() => format!("{}[{}]", want.sequence_name(), describe(&self.returns_tuple)),
                other => other.map(|t| t.describe()).unwrap_or_default(),
            };
            let source = if self.infer_returns { "an earlier `return` gives" } else { "the annotation says" };
            self.diag(&rules::RETURN_MISMATCH, format!("returns {sequence}[{}] but {source} {want}", describe(&got)), range);
            return;
        }
        if !self.same_returned_pair(pair, range) {
            return;
        }
        let items: Vec<Option<ir::Expr>> = elems.into_iter().map(|e| self.need(e, range, "returned tuple element")).collect();
        if let Some(items) = items.into_iter().collect::<Option<Vec<_>>>() {
            out.push(ir::Stmt::Return(ir::Expr::Tuple(items)));
        }
    }

    /// Whether a returned tuple of Python type `pair` agrees with the function's earlier
    /// `return`s of one (reported otherwise): the entry gives every call one type, so
    /// `return x.max(1)` (eager's `torch.return_types.max`) beside `return a, b` stays Python.
    fn same_returned_pair(&mut self, pair: Option<ir::ReturnedPair>, range: TextRange) -> bool {
        let Some(pair) = pair else {
            self.diag(&rules::RETURN_MISMATCH, "returns a tuple whose Python type (which `torch.return_types` record, or a plain tuple) depends on the path taken".into(), range);
            return false;
        };
        let first = *self.returned_pair.get_or_insert(pair);
        if first == pair {
            return true;
        }
        let describe = |p: ir::ReturnedPair| match p {
            ir::ReturnedPair::Tuple => "a plain tuple".to_string(),
            ir::ReturnedPair::Record(name) => format!("a `torch.return_types.{name}`"),
            ir::ReturnedPair::Of(_) => "what a module function returns".to_string(),
        };
        self.diag(&rules::RETURN_MISMATCH, format!("returns {} where an earlier `return` gives {}", describe(pair), describe(first)), range);
        false
    }

    /// `assert cond` / `assert cond, message`: `AssertionError` when the int/bool condition is
    /// false, with the message a string literal or an f-string whose fields are Python ints
    /// (or static strings) without conversions or format specs.
    fn assert_stmt(&mut self, s: &ast::StmtAssert, out: &mut Vec<ir::Stmt>) {
        self.assert_parts(&s.test, s.msg.as_deref(), s.range(), out);
    }

    /// `raise E` / `raise E(message)` of a builtin exception class (`ir::Exception`), the
    /// message a string literal or an f-string of ints as `assert`'s: native code raises the
    /// same exception with the same text. A re-raise, a cause (`from`), other classes or
    /// arguments stay Python.
    fn raise_stmt(&mut self, r: &ast::StmtRaise, out: &mut Vec<ir::Stmt>) {
        let (class, args) = match r.exc.as_deref() {
            Some(Expr::Name(n)) => (Some(n), &[][..]),
            Some(Expr::Call(c)) if c.arguments.keywords.is_empty() => match &*c.func {
                Expr::Name(n) => (Some(n), &c.arguments.args[..]),
                _ => (None, &[][..]),
            },
            _ => (None, &[][..]),
        };
        let builtin = class.filter(|n| !self.locals.contains(n.id.as_str()) && self.scope.is_builtin(n.id.as_str()));
        let exception = builtin.and_then(|n| ir::Exception::from_builtin(n.id.as_str()));
        let message = match args {
            [] => Some(None),
            [Expr::StringLiteral(text)] => Some(Some(vec![ir::MessagePart::Text(text.value.to_str().to_string())])),
            [Expr::FString(f)] => self.f_string_message(f).map(Some),
            _ => None,
        };
        let why = match (r.exc.is_some(), r.cause.is_some(), exception, &message) {
            (false, _, _, _) => "a bare `raise` (a re-raise) is not lowered",
            (_, true, _, _) => "`raise … from …` is not lowered",
            (_, _, None, _) => "`raise` is lowered for ValueError, TypeError, RuntimeError, IndexError, NotImplementedError and AssertionError",
            (_, _, _, None) => "a `raise` message that is not one string literal or an f-string of ints is not lowered",
            (_, _, Some(exception), Some(message)) => {
                out.push(ir::Stmt::Raise { exception, message: message.clone() });
                return;
            }
        };
        self.diag(&rules::UNSUPPORTED_STATEMENT, why.into(), r.range());
    }

    /// `return out if not prenorm else (out, x)` (Mamba's norms): a value and a tuple, which no
    /// one value holds, so it is walked as Python runs it, `if c: return a` / `else: return b`;
    /// each return is typed alone (on a run-time branch, one the annotation does not describe
    /// is refused at run time, TL404).
    fn return_either(&mut self, s: &ast::StmtReturn, choice: &ast::ExprIf, out: &mut Vec<ir::Stmt>) {
        let ret = |value: &Expr| Stmt::Return(ast::StmtReturn { node_index: Default::default(), range: s.range, value: Some(Box::new(value.clone())) });
        let orelse = ElifElseClause { range: choice.orelse.range(), node_index: Default::default(), test: None, body: vec![ret(&choice.orelse)].into() };
        self.if_stmt(&choice.test, &[ret(&choice.body)], &[orelse], out);
    }

    /// An assertion of `test` with an optional message (`assert` or `torch._assert`).
    fn assert_parts(&mut self, test: &Expr, msg: Option<&Expr>, range: TextRange, out: &mut Vec<ir::Stmt>) {
        let cond = self.condition(test);
        let message = match msg {
            None => Some(None),
            Some(Expr::StringLiteral(text)) => Some(Some(vec![ir::MessagePart::Text(text.value.to_str().to_string())])),
            Some(Expr::FString(f)) => self.f_string_message(f).map(Some),
            // `assert ok, (left, right)`: eager's AssertionError prints the tuple (EnCodec's
            // padding checks)
            Some(e @ Expr::Tuple(_)) => {
                let v = self.expr(e);
                int_tuple_parts(&v, "(", ")").map(Some)
            }
            Some(_) => None,
        };
        let Some(message) = message else {
            self.diag(
                &rules::UNSUPPORTED_STATEMENT,
                "an `assert` message that is not a string literal, an f-string of ints or a tuple of ints is not lowered".into(),
                range,
            );
            return;
        };
        if let Some(cond) = cond {
            out.push(ir::Stmt::Assert { cond, message });
        }
    }

    /// The parts of an f-string message, when every field is a plain int or static string.
    fn f_string_message(&mut self, f: &ast::ExprFString) -> Option<Vec<ir::MessagePart>> {
        let mut parts = Vec::new();
        for part in f.value.iter() {
            match part {
                ast::FStringPart::Literal(text) => parts.push(ir::MessagePart::Text(text.value.to_string())),
                ast::FStringPart::FString(fs) => {
                    for element in fs.elements.iter() {
                        match element {
                            ast::InterpolatedStringElement::Literal(text) => parts.push(ir::MessagePart::Text(text.value.to_string())),
                            ast::InterpolatedStringElement::Interpolation(field) => {
                                if field.debug_text.is_some() || field.format_spec.is_some() || field.conversion != ast::ConversionFlag::None {
                                    return None;
                                }
                                // a tuple display prints as Python's tuple, `t.size()` / `t.shape`
                                // as `torch.Size([…])` (Wav2Vec2's size checks); a tuple held in a
                                // local could be either, so only these spellings are formatted
                                let (open, close) = match &*field.expression {
                                    Expr::Tuple(_) => ("(", ")"),
                                    Expr::Attribute(a) if a.attr.as_str() == "shape" => ("torch.Size([", "])"),
                                    Expr::Call(c) if c.arguments.args.is_empty() && c.arguments.keywords.is_empty() && matches!(&*c.func, Expr::Attribute(a) if a.attr.as_str() == "size") => ("torch.Size([", "])"),
                                    _ => ("", ""),
                                };
                                let v = self.expr(&field.expression);
                                match (v.ty, &v.lit, v.ir.clone()) {
                                    (_, Lit::Str(text), _) => parts.push(ir::MessagePart::Text(text.clone())),
                                    (Ty::Int, _, Some(e)) => parts.push(ir::MessagePart::Int(e)),
                                    (Ty::Tuple(_), _, _) if !open.is_empty() => parts.extend(int_tuple_parts(&v, open, close)?),
                                    _ => return None,
                                }
                            }
                        }
                    }
                }
            }
        }
        Some(parts)
    }

    /// A `with` item that changes nothing native code computes: `torch.no_grad()` and
    /// `torch.inference_mode()` (native code never records grad), `torch.autocast(…,
    /// enabled=False)` (native code computes in the annotated dtypes, as eager does with
    /// autocast off), with no `as` target.
    fn transparent_context(&self, item: &ast::WithItem) -> bool {
        let Expr::Call(c) = &item.context_expr else { return false };
        if item.optional_vars.is_some() || c.arguments.args.iter().any(|a| matches!(a, Expr::Starred(_))) {
            return false;
        }
        let locals = &self.locals;
        let path = self.scope.dotted_path(&c.func, &|n| locals.contains(n));
        let keyword_false = |name: &str| {
            c.arguments.keywords.iter().any(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == name) && matches!(&k.value, Expr::BooleanLiteral(b) if !b.value))
        };
        match path.as_deref() {
            Some("torch.no_grad" | "torch.inference_mode") => c.arguments.args.is_empty() && c.arguments.keywords.is_empty(),
            Some("torch.autocast" | "torch.amp.autocast" | "torch.cpu.amp.autocast") => keyword_false("enabled"),
            _ => false,
        }
    }

    /// `if test: body` followed by its `elif`/`else` clauses (`rest`); an `elif` is lowered
    /// as an `if` nested in the `else` branch, as Python's own AST has it.
    fn if_stmt(&mut self, test: &Expr, body: &[Stmt], rest: &[ElifElseClause], out: &mut Vec<ir::Stmt>) -> bool {
        let cond = self.condition(test);
        // a static condition (`if mask is not None:` on an annotated tensor): only the branch
        // Python takes is walked and lowered; the other never runs
        if let Some(ir::Expr::Bool(taken)) = cond {
            let (block, live) = if taken { self.block(body) } else { self.else_branch(rest) };
            out.extend(block);
            return live;
        }
        let before = self.env.clone();
        self.conditional += 1;
        self.on_branch += 1;
        let (then, then_live) = self.block(body);
        let after_then = std::mem::replace(&mut self.env, before);
        let (orelse, else_live) = self.else_branch(rest);
        self.conditional -= 1;
        self.on_branch -= 1;
        let after_else = std::mem::take(&mut self.env);
        self.env = merge_paths(after_then, then_live, after_else, else_live);
        if let Some(cond) = cond {
            out.push(ir::Stmt::If { cond, then, orelse });
        }
        then_live || else_live
    }

    /// The `else` branch of an `if` whose remaining clauses are `rest`: nothing, the `else`
    /// block, or the next `elif` as a nested statement (one level deeper, as a nested `if`).
    fn else_branch(&mut self, rest: &[ElifElseClause]) -> (Vec<ir::Stmt>, bool) {
        let Some((clause, tail)) = rest.split_first() else { return (Vec::new(), true) };
        let Some(test) = &clause.test else { return self.block(&clause.body) };
        let mut out = Vec::new();
        if self.depth >= MAX_DEPTH {
            self.too_deep(clause.range());
            return (out, true);
        }
        self.depth += 1;
        let live = self.if_stmt(test, &clause.body, tail, &mut out);
        self.depth -= 1;
        (out, live)
    }

    /// An int-valued IR operand (bool converts), or a diagnostic.
    pub(super) fn int_operand(&mut self, v: Val, range: TextRange, context: &str) -> Option<ir::Expr> {
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
    pub(super) fn condition(&mut self, test: &Expr) -> Option<ir::Expr> {
        if let Some(truth) = self.tensor_truth(test) {
            return truth;
        }
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
            // `if interpolate_offset:`: a float is true when nonzero (NaN too), as CPython's
            Ty::Float => v.ir.map(|e| ir::Expr::Compare { kind: ir::ScalarKind::Float, first: Box::new(e), rest: vec![(ir::CmpOp::Ne, ir::Expr::Float(0.0))] }),
            Ty::Tensor(_) => {
                self.diag(&rules::TENSOR_CONDITION, "the condition depends on tensor data".into(), test.range());
                None
            }
            Ty::Unknown if v.explained => None,
            // `if causal:` on a parameter specialised on None: false, as CPython's truth of None
            Ty::NoneVal => Some(ir::Expr::Bool(false)),
            // a tuple or list of known length (timm's `if to_cat:`): true when not empty; only
            // where its elements are reads, which cannot raise
            Ty::Tuple(n) | Ty::List(n) if v.elems.as_ref().is_some_and(|e| e.iter().all(|e| matches!(e.ir, Some(ir::Expr::Local { .. } | ir::Expr::Int(_) | ir::Expr::Float(_) | ir::Expr::Bool(_))))) => Some(ir::Expr::Bool(n > 0)),
            other => {
                self.diag(&rules::UNSUPPORTED_CONDITION, format!("the condition is {}, not int or bool", other.describe()), test.range());
                None
            }
        }
    }

}

impl Walker<'_> {
    /// A condition that is `t.all()` / `t.any()` / `torch.all(t)` / `torch.any(t)` without a
    /// dim (DETR's `assert (boxes1[:, 2:] >= boxes1[:, :2]).all()`): the tensor's truth as a
    /// Python bool, where eager's 0-dim result would be read by `bool()`. `None` for any other
    /// test (walked as an expression).
    fn tensor_truth(&mut self, test: &Expr) -> Option<Option<ir::Expr>> {
        let Expr::Call(c) = test else { return None };
        if !c.arguments.keywords.is_empty() {
            return None;
        }
        let locals = &self.locals;
        let path = self.scope.dotted_path(&c.func, &|n| locals.contains(n));
        let (any, operand) = match (path.as_deref(), &*c.func, &c.arguments.args[..]) {
            (Some("torch.all"), _, [t]) => (false, t),
            (Some("torch.any"), _, [t]) => (true, t),
            (None, Expr::Attribute(a), []) if matches!(a.attr.as_str(), "all" | "any") => (a.attr.as_str() == "any", &*a.value),
            _ => return None,
        };
        let mark = self.mark(0);
        let tensor = self.expr(operand);
        let Ty::Tensor(t) = tensor.ty else {
            // not a tensor (a local of another type): walked again as a plain expression
            self.undo(mark, &mut Vec::new());
            return None;
        };
        let name = if any { "any" } else { "all" };
        let target = match path {
            Some(p) => (crate::report::SiteKind::Call, p),
            None => (crate::report::SiteKind::Method, format!("Tensor.{name}")),
        };
        if t.device != crate::ty::Device::Cpu {
            let decision = crate::claim::Decision::reject(&rules::CUDA_UNSUPPORTED, format!("`{name}()` as a condition is claimed on the CPU"));
            let _ = self.site(target, decision, c.range(), Some(tensor), &[], &[]);
            return Some(None);
        }
        let claim = crate::claim::Claim { rule: &rules::TENSOR_TRUTH, result: t, op: ir::Op::All, options: ir::Options::None, operands: Vec::new() };
        let recorded = self.site(target, crate::claim::Decision::Claimed(claim), c.range(), None, &[], &[]);
        match (recorded.ir, tensor.ir) {
            (Some(ir::Expr::Tensor { site, .. }), Some(value)) => Some(Some(ir::Expr::TensorTruth { site, any, tensor: Box::new(value) })),
            _ => Some(None),
        }
    }
}

fn stmt_kind(s: &Stmt) -> &'static str {
    match s {
        Stmt::FunctionDef(d) if d.is_async => "async def",
        Stmt::FunctionDef(_) => "def",
        Stmt::ClassDef(_) => "class",
        Stmt::Return(_) => "return",
        Stmt::Delete(_) => "del",
        Stmt::Assign(_) => "assignment",
        Stmt::TypeAlias(_) => "type",
        Stmt::AugAssign(_) => "augmented assignment",
        Stmt::AnnAssign(_) => "annotated assignment",
        Stmt::For(f) if f.is_async => "async for",
        Stmt::For(_) => "for",
        Stmt::While(_) => "while",
        Stmt::If(_) => "if",
        Stmt::With(w) if w.is_async => "async with",
        Stmt::With(_) => "with",
        Stmt::Match(_) => "match",
        Stmt::Raise(_) => "raise",
        Stmt::Try(t) if t.is_star => "try/except*",
        Stmt::Try(_) => "try",
        Stmt::Assert(_) => "assert",
        Stmt::Import(_) => "import",
        Stmt::ImportFrom(_) => "from ... import",
        Stmt::Global(_) => "global",
        Stmt::Nonlocal(_) => "nonlocal",
        Stmt::Expr(_) => "expression",
        Stmt::Pass(_) => "pass",
        Stmt::Break(_) => "break",
        Stmt::Continue(_) => "continue",
        Stmt::IpyEscapeCommand(_) => "IPython escape command",
    }
}


/// The message parts printing a tuple of ints as Python does (`(3, 4)`, `(3,)`), or as
/// `torch.Size([3, 4])` with that `open` / `close`; `None` unless every item is an int.
fn int_tuple_parts(v: &super::Val, open: &str, close: &str) -> Option<Vec<ir::MessagePart>> {
    let items = v.sequence_items()?;
    let mut parts = vec![ir::MessagePart::Text(open.to_string())];
    for (i, item) in items.iter().enumerate() {
        let (Ty::Int, Some(e)) = (item.ty, item.ir.clone()) else { return None };
        if i > 0 {
            parts.push(ir::MessagePart::Text(", ".to_string()));
        }
        parts.push(ir::MessagePart::Int(e));
    }
    // Python's one-element tuple keeps its comma
    let lone = if items.len() == 1 && open == "(" { "," } else { "" };
    parts.push(ir::MessagePart::Text(format!("{lone}{close}")));
    Some(parts)
}
