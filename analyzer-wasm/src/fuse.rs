//! Fusion: an IR → IR pass that replaces groups of claimed CPU tensor ops by the one
//! `tl::fused` kernel call (native-backend/API.md, "Fused kernels") that computes them, so
//! that lowering only prints. Each fused node lists the sites it covers; the report shows them
//! as `fused_into`.
//!
//! Forms recognised (everything else stays op by op):
//! - within one expression, `reduce?(acts(base))` where `base` is `linear(x, w, b?)`
//!   (→ `linear_epilogue`, a lone `F.linear` too) or `x @ w` / `x @ w + b` (→ `matmul_epilogue`), `acts` a chain of
//!   unary ops and `reduce` an optional `sum`/`mean` over one dim;
//! - a lone `sum`/`mean` of a local (→ `reduce`);
//! - convolution stacks: `v = acts(F.conv2d(u, …))` statements each reading the previous one's
//!   local (reassigned, or read nowhere else), then maybe `v = F.max_pool2d(v, …)`, or the same
//!   nested in one expression (an inlined `nn.Sequential`): two convolutions or more, or one and
//!   the pool (→ `conv_chain`, the value kept in oneDNN's layout between them);
//! - `acts(base)` where `base` is an op whose result is a fresh tensor nothing else holds
//!   (convolutions, norms: [`fresh_result`]) → `acts_in_place`, the ops run on that tensor
//!   instead of allocating one result per op;
//! - the hand-written RMSNorm `x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)`, then
//!   `* g` or `g * …` with `g` a local (→ `rms_norm`), also when the mean of squares is the
//!   previous statement's local `v = x.pow(2).mean(-1, keepdim=True)` read nowhere else (the
//!   Hugging Face form): that statement cannot fail, so it moves into the fused call;
//! - a product of those (an epilogue) times or divided by a Python number, `(q @ kᵀ) * scale`
//!   or `torch.matmul(q, k.transpose(2, 3)) / math.sqrt(d)` (→ `scale`, in place on the
//!   product's fresh result), or the number on the left of `*` when it cannot fail;
//! - a chain of elementwise ops (unary ops, tensor–tensor `+ - * /`) over tensor locals and
//!   computed tensors (→ `elementwise`, one pass with broadcasting instead of one tensor per
//!   op: SwiGLU's `silu(x @ w1) * (x @ w3)`, a residual `x + F.linear(…)`);
//! - a `for … in range(…)` loop whose every path performs exactly one weight-tied layer step
//!   `t = h @ W + B; h = acts(t)` (or `h = acts(h @ W + B)`), the scalar control flow only
//!   choosing `acts` (→ `iterate_matmul_epilogue`); when the next statement only reduces the
//!   loop's result (`return h.mean(…)`, or `m = h.sum(…)` with `h` not read again), both
//!   statements (→ `iterate_matmul_reduce`), so the last layer never becomes a tensor.
//!
//! Exactness: the fused kernels have the chain's semantics, errors included, so the only
//! thing the pass must preserve is *evaluation order* of operands whose evaluation can fail.
//! Hence the bias of `x @ w + b` must be a local (evaluating it cannot fail, so it may move
//! before the product), and `b + x @ w` is no epilogue: its fallback would raise
//! `add(product, b)`'s broadcasting message with the sizes swapped (it is an elementwise
//! `add(b, product)` over the computed product instead).
//!
//! Matching is top-down (a group is matched before its operands, which are then fused on
//! their own), exactly the order in which the groups are printed.

use crate::ir::{self, ActTree, Expr, Fused, FusedLoop, IndexItem, LoopResult, Op, Options, Product, Reduce, Step, Stmt, Unary};
use crate::ty::{Device, Ty};
use std::cell::Cell;
use std::collections::HashMap;

/// Fuse every group of `f`'s body.
pub fn fuse_function(f: ir::Function) -> ir::Function {
    let reads = count_reads(&f.body);
    let body = Pass::new(&reads, None).block(f.body);
    ir::Function { body, ..f }
}

/// How many times each local name is read anywhere in a function (by name, whatever its
/// kind — conservative for liveness).
type ReadCounts = HashMap<String, usize>;

fn count_reads(body: &[Stmt]) -> ReadCounts {
    let mut counts = ReadCounts::new();
    for s in body {
        visit_stmt_exprs(s, &mut |e| {
            if let Expr::Local { name, .. } = e {
                *counts.entry(name.clone()).or_default() += 1;
            }
        });
    }
    counts
}

/// Calls `f` on every expression of `s` and of the statements nested in it.
fn visit_stmt_exprs(s: &Stmt, f: &mut impl FnMut(&Expr)) {
    match s {
        Stmt::Assign { value, .. } | Stmt::Return(value) | Stmt::Assert { cond: value, .. } | Stmt::Unpack { value, .. } | Stmt::Effect(value) => {
            value.visit(f)
        }
        Stmt::If { cond, then, orelse } => {
            cond.visit(f);
            then.iter().chain(orelse).for_each(|s| visit_stmt_exprs(s, f));
        }
        Stmt::For { start, stop, step, body, .. } => {
            [start, stop, step].into_iter().for_each(|e| e.visit(f));
            body.iter().for_each(|s| visit_stmt_exprs(s, f));
        }
        Stmt::While { cond, body } => {
            cond.visit(f);
            body.iter().for_each(|s| visit_stmt_exprs(s, f));
        }
        // the pass runs once, on an unfused body
        Stmt::FusedLoop(_) | Stmt::Raise { .. } | Stmt::Break | Stmt::Continue => {}
    }
}

fn has_tensor_op(e: &Expr) -> bool {
    let mut found = false;
    e.visit(&mut |e| found |= matches!(e, Expr::Tensor { .. } | Expr::Fused { .. }));
    found
}

/// A CPU tensor op with its site and operands.
fn cpu_op(e: &Expr) -> Option<(usize, Op, Options, &[Expr])> {
    match e {
        Expr::Tensor { site, op, options, device: Device::Cpu, args } => Some((*site, *op, *options, args)),
        _ => None,
    }
}

fn tensor_local(e: &Expr) -> Option<&str> {
    match e {
        Expr::Local { name, ty: Ty::Tensor(_) } => Some(name),
        _ => None,
    }
}

/// Ops whose result is always a new tensor that no operand or other value aliases, so an
/// activation may overwrite it (never a view, never an input returned as is).
fn fresh_result(op: Op) -> bool {
    matches!(
        op,
        Op::Conv1d | Op::Conv2d | Op::Conv1dPadding | Op::Conv2dPadding | Op::ConvTranspose2d | Op::BatchNorm | Op::LayerNorm | Op::GroupNorm
    )
}

/// `acts(base)` with `base` a [`fresh_result`] op: the acts and their sites, and `base`.
fn acts_on_fresh_result(e: &Expr) -> Option<(Vec<Unary>, Vec<usize>, &Expr)> {
    let mut sites = Vec::new();
    let (acts, base) = peel_acts(e, &mut sites);
    let (_, op, _, _) = cpu_op(base)?;
    (!acts.is_empty() && fresh_result(op)).then_some((acts, sites, base))
}

/// The fused reduction of a sum/mean op.
fn reduction(op: Op, options: Options) -> Option<Reduce> {
    match (op, options) {
        (Op::SumDim, Options::DimKeepdim(dim, keepdim)) => Some(Reduce { mean: false, dim, keepdim }),
        (Op::MeanDim, Options::DimKeepdim(dim, keepdim)) => Some(Reduce { mean: true, dim, keepdim }),
        _ => None,
    }
}

// ---- matching (read-only over the unfused tree) -------------------------------------------

/// A chain of elementwise ops as one `tl::fused::elementwise` program: `e` when it is a tree
/// of unary ops or tensor–tensor `+ - * /` on the CPU. Its leaves are tensor locals and
/// computed tensors (claimed CPU ops without effects, fused on their own); the computed ones
/// are evaluated before the chain runs, which keeps Python's order of failures only if no
/// `+ - * /` (which can raise on shapes) comes before the last of them — unary ops never
/// raise. A computed leaf needs a binary op to be worth a program (`relu(conv(…))` is
/// `acts_in_place`).
/// A lone op on locals qualifies too (`tl::fused::unary`, or a one-step program for `+ - * /`):
/// one pass without the dispatcher and TensorIterator set-up that dominate eager's cost on
/// small tensors; the kernel hands other dtypes, ranks, large threaded sizes and lone binary
/// ops above 2^11 elements (where libtorch's vectorised kernel is faster) to libtorch.
fn elementwise_chain(e: &Expr) -> Option<(Vec<Expr>, Vec<Step>, Vec<usize>)> {
    /// The program so far, and the position after its last computed leaf.
    #[derive(Default)]
    struct Chain {
        operands: Vec<Expr>,
        program: Vec<Step>,
        sites: Vec<usize>,
        after_computed: usize,
    }
    fn walk(e: &Expr, chain: &mut Chain) -> Option<()> {
        // a product with its activations stays one epilogue, a leaf here
        let epilogue = match_epilogue(e).is_some();
        let op = cpu_op(e).filter(|_| !epilogue).and_then(|(site, op, options, args)| match args {
            [operand] => op.unary().map(|u| (site, Step::Unary(u), vec![operand])),
            [left, right] if options == Options::None => op.binary().map(|b| (site, Step::Binary(b), vec![left, right])),
            _ => None,
        });
        let Some((site, step, args)) = op else {
            // a leaf: a local (deduplicated), or a computed tensor evaluated in order
            let index = match tensor_local(e) {
                Some(name) => chain.operands.iter().position(|o| tensor_local(o) == Some(name)),
                None if computed_leaf(e) => {
                    chain.after_computed = chain.program.len() + 1;
                    None
                }
                None => return None,
            };
            let index = index.unwrap_or_else(|| {
                chain.operands.push(e.clone());
                chain.operands.len() - 1
            });
            chain.program.push(Step::Load(index));
            return Some(());
        };
        for arg in args {
            walk(arg, chain)?;
        }
        chain.program.push(step);
        chain.sites.push(site);
        Some(())
    }
    let mut chain = Chain::default();
    walk(e, &mut chain)?;
    let computed = chain.after_computed > 0;
    let binary_at = |i: usize| matches!(chain.program[i], Step::Binary(_));
    if chain.sites.is_empty() || (0..chain.after_computed).any(binary_at) || (computed && !(0..chain.program.len()).any(binary_at)) {
        return None;
    }
    Some((chain.operands, chain.program, chain.sites))
}

/// A tensor that a chain may compute before its ops: a claimed CPU op with nothing in it that
/// writes (an in-place op could change what an earlier op of the chain reads).
fn computed_leaf(e: &Expr) -> bool {
    matches!(e, Expr::Tensor { device: Device::Cpu, .. }) && !may_write(e)
}

/// Whether evaluating `e` may write a tensor: an in-place op, an indexed store, or a call
/// (deferred or to a helper) whose body we do not see here.
fn may_write(e: &Expr) -> bool {
    let mut writes = false;
    e.visit(&mut |e| writes |= matches!(e, Expr::InPlace { .. } | Expr::WriteBack { .. } | Expr::IndexPut { .. } | Expr::Defer { .. } | Expr::Call { .. }));
    writes
}

/// `x.pow(2).mean(-1, keepdim=True)` of a tensor local `x` of rank ≥ 1: `x`'s name and the
/// two sites.
fn mean_square(e: &Expr) -> Option<(&str, [usize; 2])> {
    let (mean_site, Op::MeanDim, Options::DimKeepdim(dim, true), [squared]) = cpu_op(e)? else { return None };
    let (pow_site, Op::Pow, _, [x, two]) = cpu_op(squared)? else { return None };
    let Expr::Local { name, ty: Ty::Tensor(t) } = x else { return None };
    let last_dim = dim == -1 || dim == i64::from(t.rank) - 1;
    let two = matches!(two, Expr::Int(2)) || matches!(two, Expr::Float(v) if *v == 2.0);
    (t.rank >= 1 && last_dim && two).then_some((name, [pow_site, mean_site]))
}

/// A statement `variance = input.pow(2).mean(-1, keepdim=True)` whose local is read only
/// once, which the RMSNorm of the next statement may absorb.
struct MeanSquare {
    variance: String,
    input: String,
    sites: [usize; 2],
}

fn mean_square_statement(s: &Stmt, reads: &ReadCounts) -> Option<MeanSquare> {
    let Stmt::Assign { name, ty: Ty::Tensor(_), value } = s else { return None };
    let (input, sites) = mean_square(value)?;
    (input != name && reads.get(name) == Some(&1)).then(|| MeanSquare { variance: name.clone(), input: input.to_string(), sites })
}

/// `x * rsqrt(m + eps)` with `m` the mean of `x`'s squares, written out or as the `pending`
/// statement's local: `x`, `eps` and the sites (the pending statement's included).
fn rms_core<'e>(e: &'e Expr, pending: Option<&MeanSquare>) -> Option<(&'e Expr, &'e Expr, Vec<usize>)> {
    let (mul_site, Op::Mul, _, [x, scale]) = cpu_op(e)? else { return None };
    let x_name = tensor_local(x)?;
    let (rsqrt_site, Op::Rsqrt, _, [shifted]) = cpu_op(scale)? else { return None };
    let (add_site, Op::Add, Options::ScalarRight, [mean, eps]) = cpu_op(shifted)? else { return None };
    let mut sites = vec![mul_site, rsqrt_site, add_site];
    match (mean_square(mean), pending) {
        (Some((name, squares)), _) if name == x_name => sites.extend(squares),
        (None, Some(p)) if tensor_local(mean) == Some(p.variance.as_str()) && p.input == x_name => sites.extend(p.sites),
        _ => return None,
    }
    Some((x, eps, sites))
}

/// The RMSNorm `rms_core`, times a weight local on either side or not: the kernel's operands
/// (unfused) and the sites.
fn match_rms_norm<'e>(e: &'e Expr, pending: Option<&MeanSquare>) -> Option<(&'e Expr, &'e Expr, Option<(&'e Expr, bool)>, Vec<usize>)> {
    if let Some((site, Op::Mul, _, [a, b])) = cpu_op(e) {
        let weighted = match (tensor_local(a), tensor_local(b)) {
            (_, Some(_)) => rms_core(a, pending).map(|core| (core, b, false)),
            (Some(_), None) => rms_core(b, pending).map(|core| (core, a, true)),
            (None, None) => None,
        };
        if let Some(((x, eps, mut sites), weight, left)) = weighted {
            sites.push(site);
            return Some((x, eps, Some((weight, left)), sites));
        }
    }
    let (x, eps, sites) = rms_core(e, pending)?;
    Some((x, eps, None, sites))
}

/// `x @ w + b` (bias a local, see the module doc) or `x @ w`, with the sites it spans.
fn matmul_step<'e>(e: &'e Expr, sites: &mut Vec<usize>) -> Option<(&'e Expr, &'e Expr, Option<&'e Expr>)> {
    let (site, op, _, args) = cpu_op(e)?;
    match (op, args) {
        (Op::Matmul | Op::Mm, [x, w]) => {
            sites.push(site);
            Some((x, w, None))
        }
        (Op::Add, [product, b]) if tensor_local(b).is_some() => {
            let (matmul_site, Op::Matmul | Op::Mm, _, [x, w]) = cpu_op(product)? else { return None };
            sites.extend([site, matmul_site]);
            Some((x, w, Some(b)))
        }
        _ => None,
    }
}

/// Peel unary ops off `e` (outermost first), returning them in application order and the
/// expression they apply to.
fn peel_acts<'e>(mut e: &'e Expr, sites: &mut Vec<usize>) -> (Vec<Unary>, &'e Expr) {
    let mut acts = Vec::new();
    while let Some((site, op, _, [inner])) = cpu_op(e) {
        let Some(unary) = op.unary() else { break };
        acts.push(unary);
        sites.push(site);
        e = inner;
    }
    acts.reverse();
    (acts, e)
}

/// `reduce?(acts(base))`, with every site it covers.
struct Epilogue<'e> {
    product: Product,
    x: &'e Expr,
    w: &'e Expr,
    b: Option<&'e Expr>,
    acts: Vec<Unary>,
    reduce: Option<Reduce>,
    sites: Vec<usize>,
}

fn match_epilogue(e: &Expr) -> Option<Epilogue<'_>> {
    let mut sites = Vec::new();
    let mut reduce = None;
    let mut inner = e;
    if let Some((site, op, options, [arg])) = cpu_op(e) {
        if let Some(r) = reduction(op, options) {
            reduce = Some(r);
            sites.push(site);
            inner = arg;
        }
    }
    let (acts, root) = peel_acts(inner, &mut sites);
    let (product, x, w, b) = match cpu_op(root)? {
        (site, Op::Linear, _, args) => {
            sites.push(site);
            match args {
                [x, w, b] => (Product::Linear, x, w, Some(b)),
                [x, w] => (Product::Linear, x, w, None),
                _ => return None,
            }
        }
        _ => {
            let (x, w, b) = matmul_step(root, &mut sites)?;
            (Product::Matmul, x, w, b)
        }
    };
    // a lone `F.linear` or `a @ b` still goes to the fused kernel, whose GEMM (our small one
    // where it matches MKL's order, else the same BLAS call as eager's addmm/mm, one per
    // matrix for attention's batched products) skips the dispatcher: measured ×0.93–0.97 of
    // eager as libtorch's op at small sizes
    Some(Epilogue { product, x, w, b, acts, reduce, sites })
}

/// `product * number`, `product / number` or `number * product`, `product` an epilogue (its
/// result a fresh tensor) and the number a Python int or float: the op's site, the product,
/// the op and the number. Python evaluates a number on the left before the product, and the
/// fused call evaluates the product first, so a number there must be one that cannot fail (a
/// literal or a local).
fn match_scale(e: &Expr) -> Option<(usize, &Expr, ir::Binary, &Expr)> {
    let (site, op, options, args) = cpu_op(e)?;
    let (product, number) = match (op, options, args) {
        (Op::Mul | Op::Div, Options::ScalarRight, [product, number]) => (product, number),
        (Op::Mul, Options::ScalarLeft, [number @ (Expr::Local { .. } | Expr::Int(_) | Expr::Float(_)), product]) => (product, number),
        _ => return None,
    };
    match_epilogue(product)?;
    Some((site, product, op.binary()?, number))
}

/// A statement that only reduces a loop's result: `return hidden.sum(…)` or
/// `name = hidden.mean(…)`.
struct Reduction<'s> {
    /// The local assigned, or `None` for a `return`.
    target: Option<&'s str>,
    site: usize,
    reduce: Reduce,
}

fn reduction_of<'s>(s: &'s Stmt, hidden: &str) -> Option<Reduction<'s>> {
    let (target, value) = match s {
        Stmt::Return(value) => (None, value),
        Stmt::Assign { name, ty: Ty::Tensor(_), value } => (Some(name.as_str()), value),
        _ => return None,
    };
    let (site, op, options, [arg]) = cpu_op(value)? else { return None };
    if tensor_local(arg)? != hidden {
        return None;
    }
    Some(Reduction { target, site, reduce: reduction(op, options)? })
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

    fn body(&mut self, body: &'e [Stmt]) -> Option<ActTree> {
        match body {
            [Stmt::If { cond, then, orelse }] if !has_tensor_op(cond) => {
                let then = Box::new(self.body(then)?);
                let orelse = Box::new(self.body(orelse)?);
                Some(ActTree::Branch { cond: cond.clone(), then, orelse })
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

// ---- rewriting ----------------------------------------------------------------------------

/// One statement of a convolution chain: `name = acts(F.conv2d(input, …))` (`acts` maybe
/// empty), or its closing `name = F.max_pool2d(input, …)` (`pool`).
struct ChainLink {
    name: String,
    ty: Ty,
    input: Expr,
    /// the conv2d or max_pool2d op
    op: Expr,
    acts: Vec<Unary>,
    sites: Vec<usize>,
    pool: bool,
}

/// A statement already fused as a chain link (see [`Fused::ConvChain`]): its operands other
/// than the input cannot write anything or read the input's local.
fn chain_link(s: &Stmt) -> Option<ChainLink> {
    let Stmt::Assign { name, ty, value } = s else { return None };
    let (op_expr, acts, mut sites) = match value {
        Expr::Fused { kernel: Fused::Acts { input, acts }, sites } => (input.as_ref(), acts.clone(), sites.clone()),
        other => (other, Vec::new(), Vec::new()),
    };
    let (site, op, _, args) = cpu_op(op_expr)?;
    let pool = match op {
        Op::Conv2d => false,
        Op::MaxPool2d if acts.is_empty() => true,
        _ => return None,
    };
    let (input, rest) = args.split_first()?;
    if may_write(value) || !stage_operands_free(rest, tensor_local(input)) {
        return None;
    }
    sites.push(site);
    sites.sort_unstable();
    Some(ChainLink { name: name.clone(), ty: ty.clone(), input: input.clone(), op: op_expr.clone(), acts, sites, pool })
}

/// Whether a chain stage's operands besides its input (weights, bias, ints) may be evaluated
/// anywhere in the chain: nothing in them runs a tensor op or may write, and none reads
/// `chained`, the local whose value the chain holds (the statement form drops it from the Rust).
fn stage_operands_free(rest: &[Expr], chained: Option<&str>) -> bool {
    rest.iter().all(|e| {
        let mut reads_chained = false;
        e.visit(&mut |e| reads_chained |= matches!((e, chained), (Expr::Local { name, .. }, Some(chained)) if name == chained));
        !reads_chained && !has_tensor_op(e) && !may_write(e)
    })
}

/// A chain stage's op (`conv2d` or the closing `max_pool2d`) with its input operand replaced by
/// an empty tuple: the chain holds that value, and nothing visits it twice.
fn without_input(op: &Expr) -> Expr {
    match op {
        Expr::Tensor { site, op, options, device, args } => {
            let args = std::iter::once(Expr::Tuple(Vec::new())).chain(args.iter().skip(1).cloned()).collect();
            Expr::Tensor { site: *site, op: *op, options: *options, device: *device, args }
        }
        other => other.clone(),
    }
}

/// `pool?(acts(F.conv2d(acts(F.conv2d(input, …)), …)))` within one expression — how the module
/// rewrite inlines an `nn.Sequential` of `Conv2d`/`ReLU`/`MaxPool2d` — with two convolutions or
/// more, or one and the pool: the innermost input, the stages from the innermost, the pool and
/// every site. The operands besides each input must be evaluable in any order (locals, ints).
fn nested_conv_chain(e: &Expr) -> Option<(&Expr, Vec<ir::ConvStage>, Option<Box<Expr>>, Vec<usize>)> {
    let plain = |rest: &[Expr]| stage_operands_free(rest, None);
    let mut sites = Vec::new();
    let (mut inner, pool) = match cpu_op(e) {
        Some((site, Op::MaxPool2d, _, [input, rest @ ..])) if plain(rest) => {
            sites.push(site);
            (input, Some(Box::new(without_input(e))))
        }
        _ => (e, None),
    };
    let mut stages = Vec::new();
    loop {
        let mut stage_sites = Vec::new();
        let (acts, base) = peel_acts(inner, &mut stage_sites);
        let Some((site, Op::Conv2d, _, [input, rest @ ..])) = cpu_op(base) else { break };
        if !plain(rest) {
            break;
        }
        sites.extend(stage_sites);
        sites.push(site);
        stages.push(ir::ConvStage { conv: without_input(base), acts });
        inner = input;
    }
    if stages.len() < 2 && (stages.is_empty() || pool.is_none()) {
        return None;
    }
    stages.reverse();
    sites.sort_unstable();
    Some((inner, stages, pool, sites))
}

/// Runs of consecutive statements where each convolution (then the closing max pool) takes the
/// previous one's local as its input and that local dies there (the same name reassigned, or
/// read nowhere else): two convolutions or more, or one and the pool (→ `conv_chain`).
fn conv_chains(body: Vec<Stmt>, reads: &ReadCounts) -> Vec<Stmt> {
    let links: Vec<Option<ChainLink>> = body.iter().map(chain_link).collect();
    let follows = |prev: &ChainLink, next: &ChainLink| {
        tensor_local(&next.input) == Some(prev.name.as_str()) && (next.name == prev.name || reads.get(&prev.name) == Some(&1))
    };
    let mut out = Vec::with_capacity(body.len());
    let mut body = body.into_iter().map(Some).collect::<Vec<_>>();
    let mut i = 0;
    while i < body.len() {
        let mut end = i;
        if links[i].as_ref().is_some_and(|l| !l.pool) {
            while let (Some(prev), Some(Some(next))) = (&links[end], links.get(end + 1)) {
                if !follows(prev, next) || prev.pool {
                    break;
                }
                end += 1;
            }
        }
        let run: Vec<&ChainLink> = links[i..=end].iter().flatten().collect();
        let convs = run.iter().filter(|l| !l.pool).count();
        if end == i || (convs < 2 && !run.last().is_some_and(|l| l.pool)) {
            out.extend(body[i].take());
            i += 1;
            continue;
        }
        let (first, last) = (run[0], run[run.len() - 1]);
        let stages = run.iter().filter(|l| !l.pool).map(|l| ir::ConvStage { conv: without_input(&l.op), acts: l.acts.clone() }).collect();
        let pool = last.pool.then(|| Box::new(without_input(&last.op)));
        let mut sites: Vec<usize> = run.iter().flat_map(|l| l.sites.iter().copied()).collect();
        sites.sort_unstable();
        let kernel = Fused::ConvChain { input: Box::new(first.input.clone()), stages, pool };
        out.push(Stmt::Assign { name: last.name.clone(), ty: last.ty.clone(), value: Expr::Fused { kernel, sites } });
        i = end + 1;
    }
    out
}

struct Pass<'r> {
    /// reads of each local in the whole function (liveness)
    reads: &'r ReadCounts,
    /// the mean-of-squares statement just before the one being rewritten, if any
    pending: Option<&'r MeanSquare>,
    /// whether an RMSNorm absorbed `pending`
    absorbed: Cell<bool>,
}

impl<'r> Pass<'r> {
    fn new(reads: &'r ReadCounts, pending: Option<&'r MeanSquare>) -> Self {
        Pass { reads, pending, absorbed: Cell::new(false) }
    }

    fn block(&self, body: Vec<Stmt>) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(body.len());
        let mut rest = body.into_iter().peekable();
        while let Some(s) = rest.next() {
            // `v = x.pow(2).mean(…)` absorbed by the next statement's RMSNorm (a straight-line
            // statement that writes nothing only: in a loop body, or through `x.mul_(2)` in the
            // same expression, `x` could change between the two)
            let straight = |n: &&Stmt| match n {
                Stmt::Assign { value, .. } | Stmt::Return(value) | Stmt::Effect(value) => !may_write(value),
                _ => false,
            };
            if let (Some(pending), Some(next)) = (mean_square_statement(&s, self.reads), rest.peek().filter(straight)) {
                let pass = Pass::new(self.reads, Some(&pending));
                let fused = pass.stmt(next.clone());
                if pass.absorbed.get() {
                    out.push(fused);
                    rest.next();
                    continue;
                }
            }
            if let Some((fused, consumed_next)) = self.fused_loop(&s, rest.peek()) {
                out.push(Stmt::FusedLoop(Box::new(fused)));
                if consumed_next {
                    rest.next();
                }
                continue;
            }
            out.push(self.stmt(s));
        }
        conv_chains(out, self.reads)
    }

    fn stmt(&self, s: Stmt) -> Stmt {
        match s {
            Stmt::Assign { name, ty, value } => Stmt::Assign { name, ty, value: self.expr(value) },
            Stmt::Return(value) => Stmt::Return(self.expr(value)),
            Stmt::Assert { cond, message } => Stmt::Assert { cond: self.expr(cond), message: self.message(message) },
            Stmt::Raise { exception, message } => Stmt::Raise { exception, message: self.message(message) },
            Stmt::Effect(value) => Stmt::Effect(self.expr(value)),
            Stmt::Unpack { names, value, tuple } => Stmt::Unpack { names, value: self.expr(value), tuple },
            Stmt::If { cond, then, orelse } => Stmt::If { cond: self.expr(cond), then: self.block(then), orelse: self.block(orelse) },
            Stmt::For { var, start, stop, step, body } => {
                Stmt::For { var, start: self.expr(start), stop: self.expr(stop), step: self.expr(step), body: self.block(body) }
            }
            Stmt::While { cond, body } => Stmt::While { cond: self.expr(cond), body: self.block(body) },
            other @ (Stmt::FusedLoop(_) | Stmt::Break | Stmt::Continue) => other,
        }
    }

    /// An `assert`/`raise` message with its int parts fused.
    fn message(&self, message: Option<Vec<ir::MessagePart>>) -> Option<Vec<ir::MessagePart>> {
        message.map(|parts| {
            parts
                .into_iter()
                .map(|part| match part {
                    ir::MessagePart::Int(e) => ir::MessagePart::Int(self.expr(e)),
                    text => text,
                })
                .collect()
        })
    }

    /// `e` with its fusable groups fused, top-down.
    fn expr(&self, e: Expr) -> Expr {
        if let Some(fused) = self.fused_expr(&e) {
            return fused;
        }
        match e {
            Expr::Tensor { site, op, options, device, args } => {
                Expr::Tensor { site, op, options, device, args: args.into_iter().map(|a| self.expr(a)).collect() }
            }
            Expr::Scalar { op, left, right } => Expr::Scalar { op, left: self.boxed(*left), right: self.boxed(*right) },
            Expr::Neg(inner) => Expr::Neg(self.boxed(*inner)),
            Expr::FloatArith { op, left, right } => Expr::FloatArith { op, left: self.boxed(*left), right: self.boxed(*right) },
            Expr::IntTrueDiv(left, right) => Expr::IntTrueDiv(self.boxed(*left), self.boxed(*right)),
            Expr::FloatNeg(inner) => Expr::FloatNeg(self.boxed(*inner)),
            Expr::IntToFloat(inner) => Expr::IntToFloat(self.boxed(*inner)),
            Expr::IntToFloatExact(inner) => Expr::IntToFloatExact(self.boxed(*inner)),
            Expr::Math { f, arg } => Expr::Math { f, arg: self.boxed(*arg) },
            Expr::Extreme { max, kind, items } => Expr::Extreme { max, kind, items: items.into_iter().map(|e| self.expr(e)).collect() },
            Expr::Tuple(items) => Expr::Tuple(items.into_iter().map(|e| self.expr(e)).collect()),
            Expr::Call { function, args } => Expr::Call { function, args: args.into_iter().map(|e| self.expr(e)).collect() },
            // ints only: nothing to fuse
            comprehension @ Expr::IntComprehension { .. } => comprehension,
            Expr::InPlace { site, op, options, args } => Expr::InPlace { site, op, options, args: args.into_iter().map(|e| self.expr(e)).collect() },
            Expr::Defer { site, what, args } => Expr::Defer { site, what, args: args.into_iter().map(|e| self.expr(e)).collect() },
            Expr::WriteBack { target, value, kernel } => Expr::WriteBack { target: self.boxed(*target), value: self.boxed(*value), kernel },
            Expr::Index { site, tensor, items } => {
                let items = self.index_items(items);
                Expr::Index { site, tensor: self.boxed(*tensor), items }
            }
            Expr::IndexPut { site, tensor, items, value, number } => {
                let items = self.index_items(items);
                Expr::IndexPut { site, tensor: self.boxed(*tensor), items, value: self.boxed(*value), number }
            }
            Expr::Size { tensor, dim } => Expr::Size { tensor: self.boxed(*tensor), dim },
            Expr::Numel(tensor) => Expr::Numel(self.boxed(*tensor)),
            Expr::Item { kind, tensor } => Expr::Item { kind, tensor: self.boxed(*tensor) },
            Expr::Field { tuple, index } => Expr::Field { tuple: self.boxed(*tuple), index },
            Expr::IfElse { cond, then, orelse } => Expr::IfElse { cond: self.boxed(*cond), then: self.boxed(*then), orelse: self.boxed(*orelse) },
            Expr::BoolToInt(inner) => Expr::BoolToInt(self.boxed(*inner)),
            Expr::IntTruthy(inner) => Expr::IntTruthy(self.boxed(*inner)),
            Expr::TensorTruth { site, any, tensor } => Expr::TensorTruth { site, any, tensor: self.boxed(*tensor) },
            Expr::Not(inner) => Expr::Not(self.boxed(*inner)),
            Expr::Compare { kind, first, rest } => Expr::Compare {
                kind,
                first: self.boxed(*first),
                rest: rest.into_iter().map(|(op, r)| (op, self.expr(r))).collect(),
            },
            Expr::BoolOp { and, values } => Expr::BoolOp { and, values: values.into_iter().map(|v| self.expr(v)).collect() },
            leaf @ (Expr::Local { .. } | Expr::Int(_) | Expr::Bool(_) | Expr::Float(_) | Expr::Fused { .. }) => leaf,
        }
    }

    fn boxed(&self, e: Expr) -> Box<Expr> {
        Box::new(self.expr(e))
    }

    fn index_items(&self, items: Vec<IndexItem>) -> Vec<IndexItem> {
        items
            .into_iter()
            .map(|item| match item {
                IndexItem::Int(e) => IndexItem::Int(self.expr(e)),
                IndexItem::Slice(a, b, c) => IndexItem::Slice(a.map(|e| self.expr(e)), b.map(|e| self.expr(e)), c.map(|e| self.expr(e))),
                IndexItem::Tensor(e) => IndexItem::Tensor(self.expr(e)),
                IndexItem::List(items) => IndexItem::List(items.into_iter().map(|e| self.expr(e)).collect()),
                other => other,
            })
            .collect()
    }

    /// `e` as one fused node, its operands fused in turn, if it is a fusable group.
    fn fused_expr(&self, e: &Expr) -> Option<Expr> {
        if let Some((x, eps, weight, sites)) = match_rms_norm(e, self.pending) {
            if self.pending.is_some_and(|p| p.sites.iter().all(|s| sites.contains(s))) {
                self.absorbed.set(true);
            }
            let (weight, weight_left) = weight.map_or((None, false), |(w, left)| (Some(Box::new(w.clone())), left));
            let kernel = Fused::RmsNorm { input: Box::new(x.clone()), eps: self.boxed(eps.clone()), weight, weight_left };
            return Some(Expr::Fused { kernel, sites });
        }
        if let Some((site, product, op, number)) = match_scale(e) {
            let kernel = Fused::Scale { input: self.boxed(product.clone()), op, number: self.boxed(number.clone()) };
            return Some(Expr::Fused { kernel, sites: vec![site] });
        }
        if let Some(plan) = match_epilogue(e) {
            let kernel = Fused::Epilogue {
                product: plan.product,
                x: self.boxed(plan.x.clone()),
                w: self.boxed(plan.w.clone()),
                b: plan.b.map(|b| self.boxed(b.clone())),
                acts: plan.acts,
                reduce: plan.reduce,
            };
            return Some(Expr::Fused { kernel, sites: plan.sites });
        }
        if let Some((operands, program, sites)) = elementwise_chain(e) {
            let operands = operands.into_iter().map(|o| self.expr(o)).collect();
            return Some(Expr::Fused { kernel: Fused::Elementwise { operands, program }, sites });
        }
        if let Some((input, stages, pool, sites)) = nested_conv_chain(e) {
            return Some(Expr::Fused { kernel: Fused::ConvChain { input: self.boxed(input.clone()), stages, pool }, sites });
        }
        if let Some((acts, sites, base)) = acts_on_fresh_result(e) {
            return Some(Expr::Fused { kernel: Fused::Acts { input: self.boxed(base.clone()), acts }, sites });
        }
        let (site, op, options, [arg]) = cpu_op(e)? else { return None };
        let reduce = reduction(op, options)?;
        tensor_local(arg)?;
        Some(Expr::Fused { kernel: Fused::Reduce { input: Box::new(arg.clone()), reduce }, sites: vec![site] })
    }

    /// The `for` statement `s` as one fused loop if it is a weight-tied layer loop whose
    /// temporaries and loop variable are dead after it — or, when `next` is a `sum`/`mean` of
    /// the loop's result that is its last use, both statements as one reducing loop (then the
    /// flag says `next` was consumed).
    fn fused_loop(&self, s: &Stmt, next: Option<&Stmt>) -> Option<(FusedLoop, bool)> {
        let Stmt::For { var, start, stop, step, body } = s else { return None };
        let mut layer = LoopStep::default();
        let acts = layer.body(body)?;
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
        let reads_outside = |name: &str| count(self.reads, name).saturating_sub(count(&inside, name));
        if !layer.temps.iter().all(|t| reads_outside(t) == 0) || reads_outside(var) != 0 {
            return None;
        }
        // after a `return`, nothing reads `hidden`; after an assignment, nothing else may
        let consumer = next.and_then(|n| reduction_of(n, hidden)).filter(|c| c.target.is_none() || reads_outside(hidden) == 1);
        let mut sites = layer.sites;
        let (result, reduce) = match &consumer {
            None => (LoopResult::Hidden, None),
            Some(c) => {
                sites.push(c.site);
                (c.target.map_or(LoopResult::Return, |t| LoopResult::Assign(t.to_string())), Some(c.reduce))
            }
        };
        let fused = FusedLoop {
            hidden: hidden.to_string(),
            weight: weight.to_string(),
            bias: bias.cloned(),
            var: var.clone(),
            temps: layer.temps.iter().map(|t| t.to_string()).collect(),
            start: start.clone(),
            stop: stop.clone(),
            step: step.clone(),
            acts,
            reduce,
            result,
            sites,
        };
        Some((fused, consumer.is_some()))
    }
}
