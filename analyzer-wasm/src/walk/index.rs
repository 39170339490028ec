//! Subscripts: tensor indexing (basic indexing, and advanced indexing with int64 index
//! tensors, bool masks and lists of ints, are claimed sites of the views lane; other
//! advanced forms TL211) and indexing or slicing of tuples of known length.

use super::{Val, Walker};
use crate::claim::{self, Decision, Lit};
use crate::ir;
use crate::report::SiteKind;
use crate::rules;
use crate::ty::Ty;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

/// The items of one index expression, parsed (`Walker::index_items`).
pub(super) struct IndexParse {
    items: Vec<ir::IndexItem>,
    /// the index tensors' types (a list of ints counts as an int64 rank-1 tensor)
    index_tensors: Vec<crate::ty::TensorTy>,
    /// a form not lowered (TL211), and what it is
    advanced: Option<String>,
    /// an item whose type is unresolved (already explained)
    unknown: bool,
}

impl Walker<'_> {
    /// The items of an index expression: ints, slices, `None`, `...`, int64 index tensors,
    /// bool masks, lists of ints; what is not lowered (`advanced`) or not typed (`unknown`).
    fn index_items(&mut self, slice: &Expr) -> IndexParse {
        let elts: Vec<&Expr> = match slice {
            Expr::Tuple(items) => items.elts.iter().collect(),
            single => vec![single],
        };
        let mut items = Vec::new();
        let mut advanced: Option<String> = None;
        let mut unknown = false;
        // the index tensors (int64: rank, bool: rank named) of advanced indexing
        let mut index_tensors: Vec<crate::ty::TensorTy> = Vec::new();
        let int_of = |v: Val, unknown: &mut bool, advanced: &mut Option<String>| -> Option<ir::Expr> {
            match v.ty {
                Ty::Int => v.ir.or_else(|| {
                    *unknown = true;
                    None
                }),
                Ty::Tensor(_) | Ty::Bool => {
                    *advanced = Some(format!("an index of {}", v.ty.describe()));
                    None
                }
                _ => {
                    *unknown = true;
                    if !v.explained {
                        *advanced = Some(format!("an index of {}", v.ty.describe()));
                    }
                    None
                }
            }
        };
        for e in elts {
            match e {
                Expr::NoneLiteral(_) => items.push(ir::IndexItem::NewAxis),
                Expr::EllipsisLiteral(_) => {
                    if items.contains(&ir::IndexItem::Ellipsis) {
                        advanced = Some("a second `...`".into());
                    }
                    items.push(ir::IndexItem::Ellipsis);
                }
                Expr::Slice(sl) => {
                    // a bound that is None (a `None` element of a tuple, Swin's `(-shift, None)`)
                    // is an omitted one
                    let mut bound = |w: &mut Self, b: &Option<Box<Expr>>| {
                        let v = w.expr(b.as_deref()?);
                        (v.ty != Ty::NoneVal).then(|| int_of(v, &mut unknown, &mut advanced))
                    };
                    let (a, b, c) = (bound(self, &sl.lower), bound(self, &sl.upper), bound(self, &sl.step));
                    if [&a, &b, &c].iter().all(|x| !matches!(x, Some(None))) {
                        items.push(ir::IndexItem::Slice(a.flatten(), b.flatten(), c.flatten()));
                    }
                }
                Expr::List(list) => {
                    let values: Vec<Val> = list.elts.iter().map(|e| self.expr(e)).collect();
                    match values.iter().map(|v| v.ir.clone().filter(|_| v.ty == Ty::Int)).collect::<Option<Vec<_>>>() {
                        Some(ints) if !ints.is_empty() => {
                            index_tensors.push(crate::ty::TensorTy { dtype: crate::ty::Dtype::I64, device: crate::ty::Device::Cpu, rank: 1 });
                            items.push(ir::IndexItem::List(ints));
                        }
                        _ if values.iter().any(|v| v.explained) => unknown = true,
                        _ => advanced = Some("a list index of other values than ints".into()),
                    }
                }
                Expr::ListComp(_) => {
                    let _ = self.expr(e);
                    advanced = Some("a list comprehension index".into());
                }
                other => {
                    let v = self.expr(other);
                    match (v.ty, v.ir) {
                        (Ty::Int, Some(i)) => items.push(ir::IndexItem::Int(i)),
                        (Ty::Tensor(index), Some(ir)) if matches!(index.dtype, crate::ty::Dtype::I64 | crate::ty::Dtype::I32 | crate::ty::Dtype::Bool) => {
                            index_tensors.push(index);
                            items.push(ir::IndexItem::Tensor(ir));
                        }
                        (Ty::Tensor(_) | Ty::Bool, _) => advanced = Some(format!("an index of {}", v.ty.describe())),
                        _ if v.explained => unknown = true,
                        (ty, _) => {
                            unknown = true;
                            advanced = Some(format!("an index of {}", ty.describe()));
                        }
                    }
                }
            }
        }
        IndexParse { items, index_tensors, advanced, unknown }
    }

    /// The claim of indexing a tensor of type `t` with `parse`'s items (`rule` for basic
    /// indexing; advanced indexing has its own): the result type, or why not.
    fn index_decision(&self, parse: &IndexParse, t: crate::ty::TensorTy, rule: &'static rules::Rule) -> Decision {
        let items = &parse.items;
        let index_tensors = &parse.index_tensors;
        let count = |f: fn(&ir::IndexItem) -> bool| items.iter().filter(|i| f(i)).count() as i64;
        let (ints, slices, new_axes) = (
            count(|i| matches!(i, ir::IndexItem::Int(_))),
            count(|i| matches!(i, ir::IndexItem::Slice(..))),
            count(|i| matches!(i, ir::IndexItem::NewAxis)),
        );
        let rank = i64::from(t.rank);
        // advanced: each index tensor names one dim (a bool mask its rank); together they
        // broadcast (a mask as its rank-1 positions) to the dims that replace the named ones
        let bool_mask = |i: &crate::ty::TensorTy| i.dtype == crate::ty::Dtype::Bool;
        let named: i64 = index_tensors.iter().map(|i| if bool_mask(i) { i64::from(i.rank) } else { 1 }).sum();
        let broadcast: i64 = index_tensors.iter().map(|i| if bool_mask(i) { 1 } else { i64::from(i.rank) }).max().unwrap_or(0);
        if ints + slices + named > rank {
            return Decision::reject(&rules::BAD_RANKS, format!("{} indices for a rank-{rank} tensor (IndexError)", ints + slices + named));
        }
        if index_tensors.iter().any(|i| i.device != t.device || t.device == crate::ty::Device::Cuda0) {
            return Decision::reject(&rules::ADVANCED_INDEX, "advanced indexing with a tensor on cuda:0 or on another device than the indexed tensor");
        }
        if index_tensors.len() > 1 && index_tensors.iter().any(bool_mask) {
            return Decision::reject(&rules::ADVANCED_INDEX, "a bool mask together with other index tensors");
        }
        let result_rank = rank - ints - named + broadcast + new_axes;
        match crate::ty::TensorTy::new(t.dtype, t.device, u8::try_from(result_rank).unwrap_or(0)) {
            Some(result) => Decision::Claimed(claim::Claim {
                rule: if index_tensors.is_empty() { rule } else { &rules::ADVANCED_INDEXING },
                result,
                op: ir::Op::Index,
                options: ir::Options::None,
                operands: vec![claim::OperandRef::Receiver],
            }),
            None if result_rank == 0 => Decision::reject(&rules::RANK0_RESULT, "indexing every dim gives a rank-0 tensor"),
            None => Decision::reject(&rules::BAD_RANKS, format!("the result would be rank {result_rank} (no tensor type has that rank)")),
        }
    }

    /// `t[items]`: basic indexing (ints, slices of ints, `None`, one `...`) and advanced
    /// indexing with int64 index tensors, bool masks and lists of ints are claimed sites of
    /// the views lane; other advanced forms TL211.
    pub(super) fn tensor_index(&mut self, s: &ast::ExprSubscript, tensor: Val, t: crate::ty::TensorTy) -> Val {
        let parse = self.index_items(&s.slice);
        let target = (SiteKind::Method, "Tensor.__getitem__".to_string());
        if let Some(what) = &parse.advanced {
            let decision = Decision::reject(&rules::ADVANCED_INDEX, format!("advanced indexing: {what}"));
            return self.site(target, decision, s.range(), Some(tensor), &[], &[]);
        }
        if parse.unknown || tensor.ir.is_none() {
            return Val::explained(Ty::Unknown);
        }
        let decision = self.index_decision(&parse, t, &rules::INDEX);
        let v = self.site(target, decision, s.range(), Some(tensor), &[], &[]);
        match v.ir {
            Some(ir::Expr::Tensor { site, args, .. }) => {
                let tensor = args.into_iter().next().expect("the indexed tensor");
                let mut indexed = Val::lowered(v.ty, Lit::NotLiteral, ir::Expr::Index { site, tensor: Box::new(tensor), items: parse.items });
                indexed.fresh = v.fresh;
                indexed
            }
            _ => v,
        }
    }

    /// `t[items] = value` on a tensor local that aliases no parameter (a fresh result of a
    /// claimed op, as for the in-place ops): in place as eager's `__setitem__`, with a Python
    /// number or a tensor of `t`'s dtype and device as the value.
    pub(super) fn index_assign(&mut self, s: &ast::ExprSubscript, value: Val, range: ruff_text_size::TextRange, out: &mut Vec<ir::Stmt>) {
        if let Expr::Name(n) = &*s.value {
            if let Some(Ty::List(len)) = self.env.get(n.id.as_str()).filter(|b| b.definite && !b.conflicting).map(|b| b.ty) {
                self.list_item_assign(n.id.as_str(), len, &s.slice, value, range, out);
                return;
            }
        }
        let tensor = self.expr(&s.value);
        let Ty::Tensor(t) = tensor.ty else {
            if !tensor.explained {
                self.diag(&rules::UNSUPPORTED_TARGET, format!("assignment through an index of {}", tensor.ty.describe()), range);
            }
            return;
        };
        let parse = self.index_items(&s.slice);
        let target = (SiteKind::Method, "Tensor.__setitem__".to_string());
        // `x[i] = v` into an argument, on a branch: deferred
        if self.defers_write(&tensor) && !parse.unknown {
            if let Some(deferred) = self.deferred_write(target, tensor, vec![value], range).ir {
                out.push(ir::Stmt::Effect(deferred));
            }
            return;
        }
        let decision = if let Some(what) = &parse.advanced {
            Decision::reject(&rules::ADVANCED_INDEX, format!("advanced indexing: {what}"))
        } else if !tensor.fresh {
            Decision::reject(&rules::IN_PLACE, "assignment through an index writes into a tensor that may be a parameter or a view of one")
        } else if t.device == crate::ty::Device::Cuda0 {
            Decision::reject(&rules::CUDA_UNSUPPORTED, "assignment through an index on cuda:0 is not lowered yet")
        } else {
            match value.ty {
                Ty::Int | Ty::Float | Ty::Bool => self.index_decision(&parse, t, &rules::INDEX_ASSIGN),
                Ty::Tensor(v) if v.dtype == t.dtype && v.device == t.device => self.index_decision(&parse, t, &rules::INDEX_ASSIGN),
                Ty::Tensor(v) => Decision::reject(&rules::BAD_RANKS, format!("the value ({}) is not of the tensor's dtype and device", Ty::Tensor(v).describe())),
                _ if value.explained => return,
                other => Decision::reject(&rules::UNSUPPORTED_TARGET, format!("assigning {} through an index", other.describe())),
            }
        };
        if parse.unknown && parse.advanced.is_none() {
            // already explained; but a write is never dropped from a function left native
            if self.diags.is_empty() && self.sites.iter().all(|s| s.outcome == crate::report::Outcome::Claimed) {
                self.diag(&rules::UNSUPPORTED_TARGET, "an index of this assignment has an unresolved type".into(), range);
            }
            return;
        }
        // the index rule's claim says which rule; an assignment keeps `INDEX_ASSIGN` even with
        // index tensors
        let decision = match decision {
            Decision::Claimed(mut claim) => {
                claim.rule = &rules::INDEX_ASSIGN;
                Decision::Claimed(claim)
            }
            other => other,
        };
        let v = self.site(target, decision, range, Some(tensor), std::slice::from_ref(&value), &[]);
        if let (Some(ir::Expr::Tensor { site, args, .. }), Some(value_ir)) = (v.ir, value.ir) {
            let tensor = args.into_iter().next().expect("the indexed tensor");
            let number = matches!(value.ty, Ty::Int | Ty::Float | Ty::Bool);
            let value_ir = if number { super::expr::float_operand(Val::lowered(value.ty, value.lit.clone(), value_ir)) } else { Some(value_ir) };
            if let Some(value_ir) = value_ir {
                out.push(ir::Stmt::Effect(ir::Expr::IndexPut { site, tensor: Box::new(tensor), items: parse.items, value: Box::new(value_ir), number }));
            }
        }
    }

    /// `items[i] = v` (an int literal `i`, negative too) on a list local nothing else refers to
    /// ([`super::env::Env::is_unshared_list`]: a display, `list(…)` or `.copy()`, not read
    /// since): `v` becomes the element local `items#i`. A list another name may share (a
    /// parameter's is the caller's) is not written.
    fn list_item_assign(&mut self, name: &str, len: u8, index: &Expr, value: Val, range: ruff_text_size::TextRange, out: &mut Vec<ir::Stmt>) {
        if !self.locals.contains(name) || !self.env.is_unshared_list(name) {
            self.diag(&rules::UNSUPPORTED_TARGET, format!("`{name}[…] = …` is lowered only on a new list (a display, `list(…)` or `.copy()`) not read since: another name may refer to this one"), range);
            return;
        }
        let len = i64::from(len);
        let slot = match self.expr(index).lit {
            Lit::Int(i) if (-len..len).contains(&i) => i.rem_euclid(len.max(1)) as u8,
            Lit::Int(i) => {
                self.diag(&rules::UNSUPPORTED_TARGET, format!("list index {i} is out of range for a list of {len} (IndexError)"), range);
                return;
            }
            _ => {
                self.diag(&rules::UNSUPPORTED_TARGET, "a list item assignment needs an int literal index".into(), range);
                return;
            }
        };
        if !matches!(value.ty, Ty::Tensor(_) | Ty::Int | Ty::Bool | Ty::Float) {
            if !value.explained {
                self.diag(&rules::UNSUPPORTED_TARGET, format!("storing {} in a list is not lowered (tensors and numbers are)", value.ty.describe()), range);
            }
            self.env.bind(name, Ty::Unknown);
            return;
        }
        self.assign(&super::expr::element_name(name, slot), value, range, out);
    }

    /// `value[index]`: an element or a slice of a tuple, with literal indices.
    pub(super) fn subscript(&mut self, s: &ast::ExprSubscript) -> Val {
        // `f(…)[0]` of a module function returning a tuple: its element, read off the result
        let outer = self.unpacking;
        if let (Expr::Call(_), Expr::NumberLiteral(_) | Expr::UnaryOp(_)) = (&*s.value, &*s.slice) {
            self.unpacking = Some((s.value.range(), usize::MAX));
        }
        let value = self.expr(&s.value);
        self.unpacking = outer;
        if let (Some(call @ (ir::Expr::Call { .. } | ir::Expr::Tensor { .. })), Some(n)) = (&value.ir, value.ty.items()) {
            let types = std::mem::take(&mut self.returned_tuple);
            let index = match self.expr(&s.slice).lit {
                Lit::Int(i) if (-i64::from(n)..i64::from(n)).contains(&i) => i.rem_euclid(i64::from(n).max(1)) as usize,
                _ => {
                    self.diag(&rules::UNSUPPORTED_EXPRESSION, "an element of a tuple result needs an int literal index in range".into(), s.range());
                    return Val::explained(Ty::Unknown);
                }
            };
            let ty = types.get(index).copied().unwrap_or(Ty::Unknown);
            return Val::lowered(ty, Lit::NotLiteral, ir::Expr::Field { tuple: Box::new(call.clone()), index });
        }
        if let Ty::Tensor(t) = value.ty {
            return self.tensor_index(s, value, t);
        }
        let Some(elems) = value.sequence_items() else {
            if !value.explained {
                let what = if matches!(value.ty, Ty::Tensor(_)) { "tensor indexing" } else { "subscript" };
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("{what} is not lowered"), s.range());
            }
            return Val::explained(Ty::Unknown);
        };
        let len = elems.len() as i64;
        let literal = |w: &mut Self, e: Option<&Expr>| -> Option<Option<i64>> {
            match e {
                None => Some(None),
                Some(e) => match w.expr(e).lit {
                    Lit::Int(v) => Some(Some(v)),
                    _ => None,
                },
            }
        };
        match &*s.slice {
            Expr::Slice(slice) => {
                let (Some(lower), Some(upper), Some(step)) =
                    (literal(self, slice.lower.as_deref()), literal(self, slice.upper.as_deref()), literal(self, slice.step.as_deref()))
                else {
                    self.diag(&rules::UNSUPPORTED_EXPRESSION, "a tuple slice with non-literal bounds is not lowered".into(), s.range());
                    return Val::explained(Ty::Unknown);
                };
                match python_slice(len, lower, upper, step) {
                    Some(indices) => Val::sequence(value.ty, indices.into_iter().map(|i| elems[i].clone()).collect()),
                    None => {
                        self.diag(&rules::UNSUPPORTED_EXPRESSION, "a tuple slice with step 0 raises ValueError".into(), s.range());
                        Val::explained(Ty::Unknown)
                    }
                }
            }
            index => match literal(self, Some(index)) {
                Some(Some(i)) if (-len..len).contains(&i) => elems[i.rem_euclid(len.max(1)) as usize].clone(),
                Some(Some(i)) => {
                    self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("tuple index {i} is out of range for a tuple of {len} (IndexError)"), s.range());
                    Val::explained(Ty::Unknown)
                }
                _ => {
                    self.diag(&rules::UNSUPPORTED_EXPRESSION, "a tuple index that is not an int literal is not lowered".into(), s.range());
                    Val::explained(Ty::Unknown)
                }
            },
        }
    }

}

/// The indices `range(len)[lower:upper:step]` selects (Python's slice rules), or `None` for
/// step 0.
fn python_slice(len: i64, lower: Option<i64>, upper: Option<i64>, step: Option<i64>) -> Option<Vec<usize>> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let clamp = |v: i64, low: i64, high: i64| v.max(low).min(high);
    let bound = |v: Option<i64>, default: i64, low: i64, high: i64| match v {
        None => default,
        Some(v) if v < 0 => clamp(v + len, low, high),
        Some(v) => clamp(v, low, high),
    };
    let mut out = Vec::new();
    if step > 0 {
        let (start, stop) = (bound(lower, 0, 0, len), bound(upper, len, 0, len));
        let mut i = start;
        while i < stop {
            out.push(i as usize);
            i += step;
        }
    } else {
        let (start, stop) = (bound(lower, len - 1, -1, len - 1), bound(upper, -1, -1, len - 1));
        let mut i = start;
        while i > stop {
            out.push(i as usize);
            i += step;
        }
    }
    Some(out)
}
