//! Fusion: groups of claimed CPU tensor ops that `tl::fused` (native-backend/API.md, "Fused
//! kernels") computes in one call are printed as that call instead of a chain of `tl::ops`.
//!
//! Forms recognised (everything else is lowered op by op):
//! - within one expression, `reduce?(acts(base))` where `base` is `linear(x, w, b?)`
//!   (→ `linear_epilogue`) or `x @ w` / `x @ w + b` (→ `matmul_epilogue`), `acts` a chain of
//!   unary ops and `reduce` an optional `sum`/`mean` over one dim;
//! - a lone `sum`/`mean` of a local (→ `reduce`);
//! - a chain of two or more elementwise ops (unary ops, tensor–tensor `+ - * /`) over tensor
//!   locals (→ `elementwise`, one pass with broadcasting instead of one tensor per op);
//! - a `for … in range(…)` loop whose every path performs exactly one weight-tied layer step
//!   `t = h @ W + B; h = acts(t)` (or `h = acts(h @ W + B)`), the scalar control flow only
//!   choosing `acts` (→ `iterate_matmul_epilogue`); when the next statement only reduces the
//!   loop's result (`return h.mean(…)`, or `m = h.sum(…)` with `h` not read again), both
//!   statements (→ `iterate_matmul_reduce`), so the last layer never becomes a tensor.
//!
//! Exactness: the fused kernels have the chain's semantics, errors included, so the only
//! thing the pass must preserve is *evaluation order* of operands whose evaluation can fail.
//! Hence the bias of `x @ w + b` must be a local (evaluating it cannot fail, so it may move
//! before the product), and `b + x @ w` is not fused at all: its fallback would raise
//! `add(product, b)`'s broadcasting message with the sizes swapped.
//!
//! Sites of a fused group keep their own claims; their Rust range is the fused call.

use super::mangle::{local_ident, RustKind};
use super::FnEmitter;
use crate::ir::{Expr, Stmt, TensorOp};
use crate::types::ty::{Device, Ty};
use std::collections::HashMap;
use std::fmt::Write as _;

/// How many times each local name is read anywhere in a function (by name, whatever its
/// kind — conservative for liveness).
pub(super) type ReadCounts = HashMap<String, usize>;

pub(super) fn count_reads(body: &[Stmt]) -> ReadCounts {
    let mut counts = ReadCounts::new();
    stmts_reads(body, &mut counts);
    counts
}

fn stmts_reads(body: &[Stmt], counts: &mut ReadCounts) {
    for s in body {
        match s {
            Stmt::Assign { value, .. } | Stmt::Return(value) => expr_reads(value, counts),
            Stmt::If { cond, then, orelse } => {
                expr_reads(cond, counts);
                stmts_reads(then, counts);
                stmts_reads(orelse, counts);
            }
            Stmt::For { start, stop, step, body, .. } => {
                expr_reads(start, counts);
                expr_reads(stop, counts);
                expr_reads(step, counts);
                stmts_reads(body, counts);
            }
            Stmt::While { cond, body } => {
                expr_reads(cond, counts);
                stmts_reads(body, counts);
            }
        }
    }
}

fn expr_reads(e: &Expr, counts: &mut ReadCounts) {
    match e {
        Expr::Local { name, .. } => *counts.entry(name.clone()).or_default() += 1,
        Expr::Int(_) | Expr::Bool(_) => {}
        Expr::Tensor { args, .. } => args.iter().for_each(|a| expr_reads(a, counts)),
        Expr::Scalar { left, right, .. } => {
            expr_reads(left, counts);
            expr_reads(right, counts);
        }
        Expr::Neg(inner) | Expr::BoolToInt(inner) | Expr::IntTruthy(inner) | Expr::Not(inner) => expr_reads(inner, counts),
        Expr::Compare { first, rest, .. } => {
            expr_reads(first, counts);
            rest.iter().for_each(|(_, r)| expr_reads(r, counts));
        }
        Expr::BoolOp { values, .. } => values.iter().for_each(|v| expr_reads(v, counts)),
    }
}

fn has_tensor_op(e: &Expr) -> bool {
    match e {
        Expr::Local { .. } | Expr::Int(_) | Expr::Bool(_) => false,
        Expr::Tensor { .. } => true,
        Expr::Scalar { left, right, .. } => has_tensor_op(left) || has_tensor_op(right),
        Expr::Neg(inner) | Expr::BoolToInt(inner) | Expr::IntTruthy(inner) | Expr::Not(inner) => has_tensor_op(inner),
        Expr::Compare { first, rest, .. } => has_tensor_op(first) || rest.iter().any(|(_, r)| has_tensor_op(r)),
        Expr::BoolOp { values, .. } => values.iter().any(has_tensor_op),
    }
}

/// `tl::fused::Unary` variant of a unary tensor op.
fn unary_variant(op: &TensorOp) -> Option<&'static str> {
    Some(match op {
        TensorOp::Relu => "Relu",
        TensorOp::Sigmoid => "Sigmoid",
        TensorOp::Tanh => "Tanh",
        TensorOp::Gelu => "Gelu",
        TensorOp::Abs => "Abs",
        TensorOp::Neg => "Neg",
        TensorOp::Square => "Square",
        TensorOp::Exp => "Exp",
        TensorOp::Log => "Log",
        TensorOp::Sqrt => "Sqrt",
        _ => return None,
    })
}

/// `tl::fused::Binary` variant of a tensor–tensor elementwise op.
fn binary_variant(op: &TensorOp) -> Option<&'static str> {
    Some(match op {
        TensorOp::Add => "Add",
        TensorOp::Sub => "Sub",
        TensorOp::Mul => "Mul",
        TensorOp::Div => "Div",
        _ => return None,
    })
}

/// A CPU tensor op with its site and operands.
fn cpu_op(e: &Expr) -> Option<(usize, &TensorOp, &[Expr])> {
    match e {
        Expr::Tensor { site, op, device: Device::Cpu, args } => Some((*site, op, args)),
        _ => None,
    }
}

fn tensor_local(e: &Expr) -> Option<&str> {
    match e {
        Expr::Local { name, ty: Ty::Tensor(_) } => Some(name),
        _ => None,
    }
}

/// `tl::fused::Reduce` constructor text of a sum/mean op.
fn reduce_text(op: &TensorOp) -> Option<String> {
    match op {
        TensorOp::SumDim { dim, keepdim } => Some(format!("tl::fused::Reduce::Sum {{ dim: {dim}, keepdim: {keepdim} }}")),
        TensorOp::MeanDim { dim, keepdim } => Some(format!("tl::fused::Reduce::Mean {{ dim: {dim}, keepdim: {keepdim} }}")),
        _ => None,
    }
}

/// A chain of elementwise ops as one `tl::fused::elementwise` program.
struct ElementwiseChain<'e> {
    /// Distinct tensor locals, in order of first use (`Step::Load` indexes them).
    operands: Vec<&'e str>,
    /// The program, in Python's evaluation order (post-order), as Rust text.
    steps: Vec<String>,
    sites: Vec<usize>,
}

/// `e` as an elementwise program when it is a tree of at least two unary ops or tensor–tensor
/// `+ - * /` on the CPU whose leaves are all tensor locals (reading a local cannot fail, so
/// the ops still run, and raise, in the source's order).
fn elementwise_chain(e: &Expr) -> Option<ElementwiseChain<'_>> {
    fn walk<'e>(e: &'e Expr, chain: &mut ElementwiseChain<'e>) -> Option<()> {
        if let Some(name) = tensor_local(e) {
            let index = chain.operands.iter().position(|o| *o == name).unwrap_or_else(|| {
                chain.operands.push(name);
                chain.operands.len() - 1
            });
            chain.steps.push(format!("tl::fused::Step::Load({index})"));
            return Some(());
        }
        let (site, op, args) = cpu_op(e)?;
        let step = match (op, args) {
            (_, [operand]) => {
                let unary = unary_variant(op)?;
                walk(operand, chain)?;
                format!("tl::fused::Step::Unary(tl::fused::Unary::{unary})")
            }
            (_, [left, right]) => {
                let binary = binary_variant(op)?;
                walk(left, chain)?;
                walk(right, chain)?;
                format!("tl::fused::Step::Binary(tl::fused::Binary::{binary})")
            }
            _ => return None,
        };
        chain.steps.push(step);
        chain.sites.push(site);
        Some(())
    }
    let mut chain = ElementwiseChain { operands: Vec::new(), steps: Vec::new(), sites: Vec::new() };
    walk(e, &mut chain)?;
    (chain.sites.len() >= 2).then_some(chain)
}

/// A statement that only reduces a loop's result: `return hidden.sum(…)` or
/// `name = hidden.mean(…)`.
struct Reduction<'s> {
    /// The local assigned, or `None` for a `return`.
    target: Option<&'s str>,
    site: usize,
    reduce: String,
}

fn reduction_of<'s>(s: &'s Stmt, hidden: &str) -> Option<Reduction<'s>> {
    let (target, value) = match s {
        Stmt::Return(value) => (None, value),
        Stmt::Assign { name, ty: Ty::Tensor(_), value } => (Some(name.as_str()), value),
        _ => return None,
    };
    let (site, op, args) = cpu_op(value)?;
    let [arg] = args else { return None };
    if tensor_local(arg)? != hidden {
        return None;
    }
    Some(Reduction { target, site, reduce: reduce_text(op)? })
}

fn acts_text(acts: &[&str]) -> String {
    let items: Vec<String> = acts.iter().map(|a| format!("tl::fused::Unary::{a}")).collect();
    format!("&[{}]", items.join(", "))
}

/// The GEMM at the root of an epilogue.
enum Base<'e> {
    Linear { x: &'e Expr, w: &'e Expr, b: Option<&'e Expr> },
    Matmul { x: &'e Expr, w: &'e Expr, b: Option<&'e Expr> },
}

/// `x @ w + b` (bias a local, see the module doc) or `x @ w`, with the sites it spans.
fn matmul_step<'e>(e: &'e Expr, sites: &mut Vec<usize>) -> Option<(&'e Expr, &'e Expr, Option<&'e Expr>)> {
    let (site, op, args) = cpu_op(e)?;
    match (op, args) {
        (TensorOp::Matmul, [x, w]) => {
            sites.push(site);
            Some((x, w, None))
        }
        (TensorOp::Add, [product, b]) if tensor_local(b).is_some() => {
            let (matmul_site, TensorOp::Matmul, [x, w]) = cpu_op(product)? else { return None };
            sites.extend([site, matmul_site]);
            Some((x, w, Some(b)))
        }
        _ => None,
    }
}

/// `reduce?(acts(base))`, with every site it covers.
struct Epilogue<'e> {
    base: Base<'e>,
    acts: Vec<&'static str>,
    reduce: Option<String>,
    sites: Vec<usize>,
}

/// Peel unary ops off `e` (outermost first), returning them in application order and the
/// expression they apply to.
fn peel_acts<'e>(mut e: &'e Expr, sites: &mut Vec<usize>) -> (Vec<&'static str>, &'e Expr) {
    let mut acts = Vec::new();
    while let Some((site, op, [inner])) = cpu_op(e) {
        let Some(variant) = unary_variant(op) else { break };
        acts.push(variant);
        sites.push(site);
        e = inner;
    }
    acts.reverse();
    (acts, e)
}

fn match_epilogue(e: &Expr) -> Option<Epilogue<'_>> {
    let mut sites = Vec::new();
    let mut reduce = None;
    let mut inner = e;
    if let Some((site, op, [arg])) = cpu_op(e) {
        if let Some(text) = reduce_text(op) {
            reduce = Some(text);
            sites.push(site);
            inner = arg;
        }
    }
    let (acts, root) = peel_acts(inner, &mut sites);
    let base = match cpu_op(root)? {
        (site, TensorOp::Linear { bias }, args) => {
            sites.push(site);
            match (bias, args) {
                (true, [x, w, b]) => Base::Linear { x, w, b: Some(b) },
                (false, [x, w]) => Base::Linear { x, w, b: None },
                _ => return None,
            }
        }
        _ => {
            let (x, w, b) = matmul_step(root, &mut sites)?;
            Base::Matmul { x, w, b }
        }
    };
    // a lone linear/matmul is one op already; something must follow it
    let has_epilogue = !acts.is_empty() || reduce.is_some() || matches!(base, Base::Matmul { b: Some(_), .. });
    has_epilogue.then_some(Epilogue { base, acts, reduce, sites })
}

/// Activation choice of a loop body: a fixed chain, or a scalar `if` choosing between two.
enum ActTree<'e> {
    Chain(Vec<&'static str>),
    Branch { cond: &'e Expr, then: Box<ActTree<'e>>, orelse: Box<ActTree<'e>> },
}

/// What every path of a weight-tied loop body must agree on.
#[derive(Default)]
struct LoopStep<'e> {
    /// (hidden, weight, bias) names and bias expression, from the first path matched
    carried: Option<(&'e str, &'e str, Option<&'e Expr>)>,
    /// the per-path temporaries `t` of `t = h @ W + B; h = acts(t)`
    temps: Vec<&'e str>,
    sites: Vec<usize>,
}

impl<'e> LoopStep<'e> {
    /// One layer step `hidden = acts(hidden @ w + b)` read from `value` (assigned to
    /// `hidden`), consistent with the other paths.
    fn step(&mut self, hidden: &'e str, value: &'e Expr) -> Option<()> {
        let (x, w, b) = matmul_step(value, &mut self.sites)?;
        let (x, w) = (tensor_local(x)?, tensor_local(w)?);
        let b_name = b.map(tensor_local);
        if x != hidden || w == hidden || b_name == Some(Some(hidden)) {
            return None;
        }
        match self.carried {
            None => self.carried = Some((hidden, w, b)),
            Some((h0, w0, b0)) => {
                if h0 != hidden || w0 != w || b0.map(tensor_local) != b_name {
                    return None;
                }
            }
        }
        Some(())
    }

    fn body(&mut self, body: &'e [Stmt]) -> Option<ActTree<'e>> {
        match body {
            [Stmt::If { cond, then, orelse }] if !has_tensor_op(cond) => {
                let then = Box::new(self.body(then)?);
                let orelse = Box::new(self.body(orelse)?);
                Some(ActTree::Branch { cond, then, orelse })
            }
            [Stmt::Assign { name: temp, ty: Ty::Tensor(_), value: step }, Stmt::Assign { name: hidden, ty: Ty::Tensor(_), value }] => {
                let (acts, root) = peel_acts(value, &mut self.sites);
                if tensor_local(root) != Some(temp.as_str()) || temp == hidden {
                    return None;
                }
                self.step(hidden, step)?;
                self.temps.push(temp);
                Some(ActTree::Chain(acts))
            }
            [Stmt::Assign { name: hidden, ty: Ty::Tensor(_), value }] => {
                let (acts, root) = peel_acts(value, &mut self.sites);
                self.step(hidden, root)?;
                Some(ActTree::Chain(acts))
            }
            _ => None,
        }
    }
}

impl FnEmitter<'_> {
    /// Print `e` as one fused call if it is a fusable group; `false` leaves it to the plain
    /// op-by-op lowering.
    pub(super) fn try_fused_expr(&mut self, e: &Expr) -> bool {
        let start = self.out.len();
        let sites = if let Some(plan) = match_epilogue(e) {
            let (function, x, w, b) = match plan.base {
                Base::Linear { x, w, b } => ("linear_epilogue", x, w, b),
                Base::Matmul { x, w, b } => ("matmul_epilogue", x, w, b),
            };
            let _ = write!(self.out, "tl::fused::{function}(");
            self.borrow(Some(x));
            self.out.push_str(", ");
            self.borrow(Some(w));
            self.out.push_str(", ");
            self.optional_borrow(b);
            let reduce = plan.reduce.map_or_else(|| "None".to_string(), |r| format!("Some({r})"));
            let _ = write!(self.out, ", {}, {reduce})?", acts_text(&plan.acts));
            plan.sites
        } else if let Some(chain) = elementwise_chain(e) {
            self.out.push_str("tl::fused::elementwise(&[");
            for (i, name) in chain.operands.iter().enumerate() {
                let _ = write!(self.out, "{}&{}", if i > 0 { ", " } else { "" }, local_ident(name, RustKind::Tensor));
            }
            let _ = write!(self.out, "], &[{}])?", chain.steps.join(", "));
            chain.sites
        } else if let Some((site, op, [arg])) = cpu_op(e) {
            let (Some(reduce), Some(_)) = (reduce_text(op), tensor_local(arg)) else { return false };
            self.out.push_str("tl::fused::reduce(");
            self.borrow(Some(arg));
            let _ = write!(self.out, ", {reduce})?");
            vec![site]
        } else {
            return false;
        };
        self.link_sites(&sites, start);
        true
    }

    /// Print the `for` statement `s` as one `iterate_matmul_epilogue` call if it is a
    /// weight-tied layer loop whose temporaries and loop variable are dead after it — or, when
    /// `next` is a `sum`/`mean` of the loop's result that is its last use, both statements as
    /// one `iterate_matmul_reduce` call. Returns how many statements were printed (`None`:
    /// not fused). The caller has already indented the line.
    pub(super) fn try_fused_loop(&mut self, s: &Stmt, next: Option<&Stmt>, level: usize) -> Option<usize> {
        let Stmt::For { var, start, stop, step, body } = s else { return None };
        let mut layer = LoopStep::default();
        let tree = layer.body(body)?;
        let (hidden, weight, bias) = layer.carried?;
        // names the loop writes must not alias what it reads as constants
        let written: Vec<&str> = layer.temps.iter().copied().chain([hidden, var.as_str()]).collect();
        let bias_name = bias.and_then(tensor_local);
        if written.contains(&weight) || bias_name.is_some_and(|b| written.contains(&b)) || layer.temps.contains(&var.as_str()) {
            return None;
        }
        // liveness: temporaries and the loop variable are read nowhere but in this loop
        let inside = count_reads(body);
        let count = |reads: &ReadCounts, name: &str| reads.get(name).copied().unwrap_or(0);
        let reads_outside = |name: &str| count(&self.reads, name).saturating_sub(count(&inside, name));
        if !layer.temps.iter().all(|t| reads_outside(t) == 0) || reads_outside(var) != 0 {
            return None;
        }
        // after a `return`, nothing reads `hidden`; after an assignment, nothing else may
        let consumer = next.and_then(|n| reduction_of(n, hidden)).filter(|c| c.target.is_none() || reads_outside(hidden) == 1);
        let returns = consumer.as_ref().is_some_and(|c| c.target.is_none());
        let hidden_var = local_ident(hidden, RustKind::Tensor);
        match consumer.as_ref().map(|c| c.target) {
            Some(None) => self.out.push_str("return Ok("),
            Some(Some(target)) => {
                let _ = write!(self.out, "{} = ", local_ident(target, RustKind::Tensor));
            }
            None => {
                let _ = write!(self.out, "{hidden_var} = ");
            }
        }
        let call_start = self.out.len();
        let function = if consumer.is_some() { "iterate_matmul_reduce" } else { "iterate_matmul_epilogue" };
        let _ = write!(self.out, "tl::fused::{function}(&{hidden_var}, &{}, ", local_ident(weight, RustKind::Tensor));
        self.optional_borrow(bias);
        self.out.push_str(", tl::scalar::range(");
        self.expr(start);
        self.out.push_str(", ");
        self.expr(stop);
        self.out.push_str(", ");
        self.expr(step);
        self.out.push_str(")?, |it| -> tl::Result<&'static [tl::fused::Unary]> {\n");
        self.indent(level + 1);
        let _ = writeln!(self.out, "let {}: i64 = it;", local_ident(var, RustKind::Int));
        self.indent(level + 1);
        self.act_tree(&tree, level + 1);
        self.out.push('\n');
        self.indent(level);
        self.out.push('}');
        let mut sites = layer.sites.clone();
        if let Some(c) = &consumer {
            let _ = write!(self.out, ", {})?", c.reduce);
            sites.push(c.site);
        } else {
            self.out.push_str(")?");
        }
        self.link_sites(&sites, call_start);
        self.out.push_str(if returns { ");\n" } else { ";\n" });
        Some(if consumer.is_some() { 2 } else { 1 })
    }

    fn act_tree(&mut self, tree: &ActTree, level: usize) {
        match tree {
            ActTree::Chain(acts) => {
                let _ = write!(self.out, "Ok({})", acts_text(acts));
            }
            ActTree::Branch { cond, then, orelse } => {
                self.out.push_str("if ");
                self.expr(cond);
                self.out.push_str(" {\n");
                self.indent(level + 1);
                self.act_tree(then, level + 1);
                self.out.push('\n');
                self.indent(level);
                self.out.push_str("} else {\n");
                self.indent(level + 1);
                self.act_tree(orelse, level + 1);
                self.out.push('\n');
                self.indent(level);
                self.out.push('}');
            }
        }
    }

    fn optional_borrow(&mut self, e: Option<&Expr>) {
        match e {
            Some(e) => {
                self.out.push_str("Some(");
                self.borrow(Some(e));
                self.out.push(')');
            }
            None => self.out.push_str("None"),
        }
    }

    /// Every site of a fused group points at the fused call `[start, now)`.
    fn link_sites(&mut self, sites: &[usize], start: usize) {
        let range = [start, self.out.len()];
        for site in sites {
            if let Some(slot) = self.site_ranges.get_mut(*site) {
                *slot = Some(range);
            }
        }
    }
}
