//! Printing of the fusion pass's nodes ([`crate::fuse`]) as `tl::fused` calls. Every site a
//! fused node covers points at the whole call.

use super::mangle::{local_ident, RustKind};
use super::FnEmitter;
use crate::ir::{ActTree, ConvStage, Expr, Fused, FusedLoop, LoopResult, Reduce, Step, Unary};
use std::fmt::Write as _;

/// `tl::fused::Reduce` constructor text.
fn reduce_text(r: Reduce) -> String {
    let kind = if r.mean { "Mean" } else { "Sum" };
    format!("tl::fused::Reduce::{kind} {{ dim: {}, keepdim: {} }}", r.dim, r.keepdim)
}

/// `&[tl::fused::Unary::Relu, …]` (the variants are the op table's names).
fn acts_text(acts: &[Unary]) -> String {
    let items: Vec<String> = acts.iter().map(|a| format!("tl::fused::Unary::{a:?}")).collect();
    format!("&[{}]", items.join(", "))
}

fn step_text(step: Step) -> String {
    match step {
        Step::Load(index) => format!("tl::fused::Step::Load({index})"),
        Step::Unary(op) => format!("tl::fused::Step::Unary(tl::fused::Unary::{op:?})"),
        Step::Binary(op) => format!("tl::fused::Step::Binary(tl::fused::Binary::{op:?})"),
    }
}

impl FnEmitter<'_> {
    pub(super) fn fused_expr(&mut self, kernel: &Fused, sites: &[usize]) {
        let start = self.out.len();
        if let Fused::Elementwise { operands, program } = kernel {
            // One unary op: the elementwise kernel's short form.
            let text = match (operands.as_slice(), program.as_slice()) {
                ([Expr::Local { name, .. }], [Step::Load(0), Step::Unary(op)]) => {
                    Some(format!("tl::fused::unary(tl::fused::Unary::{op:?}, {})?", self.tensor_ref(name)))
                }
                _ => None,
            };
            if let Some(text) = text {
                self.out.push_str(&text);
                self.link_sites(sites, start);
                return;
            }
        }
        if let Fused::ConvChain { input, stages, pool } = kernel {
            self.conv_chain(input, stages, pool.as_deref());
            self.link_sites(sites, start);
            return;
        }
        let _ = write!(self.out, "tl::fused::{}(", kernel.kernel_name());
        match kernel {
            Fused::Epilogue { x, w, b, acts, reduce, .. } => {
                self.borrow(Some(x));
                self.out.push_str(", ");
                self.borrow(Some(w));
                self.out.push_str(", ");
                self.optional_borrow(b.as_deref());
                let reduce = reduce.map_or_else(|| "None".to_string(), |r| format!("Some({})", reduce_text(r)));
                let _ = write!(self.out, ", {}, {reduce})?", acts_text(acts));
            }
            Fused::Elementwise { operands, program } => {
                self.out.push_str("&[");
                for (i, operand) in operands.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.borrow(Some(operand));
                }
                let steps: Vec<String> = program.iter().map(|s| step_text(*s)).collect();
                let _ = write!(self.out, "], &[{}])?", steps.join(", "));
            }
            Fused::Reduce { input, reduce } => {
                self.borrow(Some(input));
                let _ = write!(self.out, ", {})?", reduce_text(*reduce));
            }
            Fused::RmsNorm { input, eps, weight, weight_left } => {
                self.borrow(Some(input));
                self.out.push_str(", ");
                self.expr(eps);
                self.out.push_str(", ");
                match weight {
                    Some(w) => {
                        self.out.push_str("Some((");
                        self.borrow(Some(w));
                        let side = if *weight_left { "Left" } else { "Right" };
                        let _ = write!(self.out, ", tl::fused::WeightSide::{side}))");
                    }
                    None => self.out.push_str("None"),
                }
                self.out.push_str(")?");
            }
            Fused::Scale { input, op, number } => {
                // the product by value (a fresh tensor the kernel scales in place), computed
                // before the number as Python computes it
                self.expr(input);
                let _ = write!(self.out, ", tl::fused::Binary::{op:?}, ");
                self.expr(number);
                self.out.push_str(")?");
            }
            Fused::Acts { input, acts } => {
                // the fresh tensor by value: the kernel owns and overwrites it
                self.expr(input);
                let _ = write!(self.out, ", {})?", acts_text(acts));
            }
            Fused::ConvChain { .. } => {}
        }
        self.link_sites(sites, start);
    }

    /// `tl::fused::ConvChain::new(&x)?.conv2d(w, b, …, &[acts])?….max_pool2d(…)?.finish()?`:
    /// each stage's arguments as its op prints them, less the input the chain holds.
    fn conv_chain(&mut self, input: &Expr, stages: &[ConvStage], pool: Option<&Expr>) {
        self.out.push_str("tl::fused::ConvChain::new(");
        self.borrow(Some(input));
        self.out.push_str(")?");
        for stage in stages {
            if let Expr::Tensor { op, options, args, .. } = &stage.conv {
                self.out.push_str(".conv2d(");
                self.params_after_input(*op, *options, args);
                let _ = write!(self.out, ", {})?", acts_text(&stage.acts));
            }
        }
        if let Some(Expr::Tensor { op, options, args, .. }) = pool {
            self.out.push_str(".max_pool2d(");
            self.params_after_input(*op, *options, args);
            self.out.push_str(")?");
        }
        self.out.push_str(".finish()?");
    }

    /// One `iterate_matmul_epilogue` / `iterate_matmul_reduce` statement. The caller has
    /// already indented the line.
    pub(super) fn fused_loop(&mut self, l: &FusedLoop, level: usize) {
        let hidden_var = local_ident(&l.hidden, RustKind::Tensor);
        match &l.result {
            LoopResult::Return => self.out.push_str("return Ok("),
            LoopResult::Assign(target) => {
                let _ = write!(self.out, "{} = ", local_ident(target, RustKind::Tensor));
            }
            LoopResult::Hidden => {
                let _ = write!(self.out, "{hidden_var} = ");
            }
        }
        let call_start = self.out.len();
        let (hidden, weight) = (self.tensor_ref(&l.hidden), self.tensor_ref(&l.weight));
        let _ = write!(self.out, "tl::fused::{}({hidden}, {weight}, ", l.kernel_name());
        self.optional_borrow(l.bias.as_ref());
        self.out.push_str(", tl::scalar::range(");
        self.expr(&l.start);
        self.out.push_str(", ");
        self.expr(&l.stop);
        self.out.push_str(", ");
        self.expr(&l.step);
        self.out.push_str(")?, |it| -> tl::Result<&'static [tl::fused::Unary]> {\n");
        self.indent(level + 1);
        let _ = writeln!(self.out, "let {}: i64 = it;", local_ident(&l.var, RustKind::Int));
        self.indent(level + 1);
        self.act_tree(&l.acts, level + 1);
        self.out.push('\n');
        self.indent(level);
        self.out.push('}');
        match l.reduce {
            Some(r) => {
                let _ = write!(self.out, ", {})?", reduce_text(r));
            }
            None => self.out.push_str(")?"),
        }
        self.link_sites(&l.sites, call_start);
        self.out.push_str(if l.result == LoopResult::Return { ");\n" } else { ";\n" });
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

    pub(super) fn optional_borrow(&mut self, e: Option<&Expr>) {
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
