//! Printing a claimed tensor op: `tl::ops::name(…)` (or `tl::cuda::ops::`), its arguments
//! laid out as the op table's signature for the op says.

use super::FnEmitter;
use crate::ir::{Expr, Op, Options};
use super::mangle::{local_ident, RustKind};
use crate::ty::{Device, Ty};
use std::fmt::Write as _;
use torchlower_ops::{Kind, Param, Signature};

impl FnEmitter<'_> {
    /// `tl::ops::name(...)` (or `tl::cuda::ops::`), its arguments as the op table's
    /// signature for the op says.
    pub(super) fn tensor_op(&mut self, op: Op, options: Options, device: Device, args: &[Expr]) {
        let module = match device {
            Device::Cpu => "tl::ops",
            Device::Cuda0 => "tl::cuda::ops",
        };
        let info = op.info();
        // the backend's in-place function of the op (`Expr::WriteBack` with `kernel`)
        let in_place = if std::mem::take(&mut self.in_place_kernel) { "_" } else { "" };
        // a Python number on one side: `{name}_scalar(&t, s)` / `scalar_{name}(s, &t)`
        match (options, args) {
            (Options::ScalarRight, [tensor, number]) => {
                let _ = write!(self.out, "{module}::{}_scalar(", info.name);
                self.borrow(Some(tensor));
                self.out.push_str(", ");
                self.expr(number);
                self.out.push_str(")?");
                return;
            }
            (Options::ScalarLeft, [number, tensor]) => {
                let _ = write!(self.out, "{module}::scalar_{}(", info.name);
                self.expr(number);
                self.out.push_str(", ");
                self.borrow(Some(tensor));
                self.out.push_str(")?");
                return;
            }
            _ => {}
        }
        if let Some(equation) = options.equation() {
            let _ = write!(self.out, "{module}::{}({}, ", info.name, super::mangle::rust_str_literal(equation));
            self.tensor_list(args);
            self.out.push_str(")?");
            return;
        }
        if info.signature == Signature::TensorList {
            let _ = write!(self.out, "{module}::{}(", info.name);
            // a dim known at run time is the last operand
            let (tensors, dim) = match (options, args.split_last()) {
                (Options::DynDim, Some((dim, tensors))) => (tensors, Some(dim)),
                _ => (args, None),
            };
            self.tensor_list(tensors);
            self.out.push_str(", ");
            match (dim, options) {
                (Some(dim), _) => self.expr(dim),
                (None, Options::Dim(dim)) => {
                    let _ = write!(self.out, "{dim}");
                }
                (None, _) => self.out.push('0'),
            }
            self.out.push_str(")?");
            return;
        }
        if let (Signature::Params(params), Options::Params { present, choice }) = (info.signature, options) {
            let _ = write!(self.out, "{module}::{}{in_place}(", info.name);
            self.params(params, present, choice, args);
            self.out.push_str(")?");
            return;
        }
        let _ = write!(self.out, "{module}::{}{in_place}(", info.name);
        self.borrow(args.first());
        match info.signature {
            Signature::Unary => {}
            Signature::Binary | Signature::Product => {
                self.out.push_str(", ");
                self.borrow(args.get(1));
            }
            Signature::Linear => {
                self.out.push_str(", ");
                self.borrow(args.get(1));
                self.out.push_str(", ");
                self.optional_borrow(args.get(2));
            }
            Signature::DimKeepdim | Signature::Dim | Signature::DimPair => match options {
                Options::DimKeepdim(dim, keepdim) => {
                    let _ = write!(self.out, ", {dim}, {keepdim}");
                }
                Options::Dim(dim) => {
                    let _ = write!(self.out, ", {dim}");
                }
                Options::DynDim => {
                    self.out.push_str(", ");
                    if let Some(dim) = args.get(1) {
                        self.expr(dim);
                    }
                }
                Options::DimPair(a, b) => {
                    let _ = write!(self.out, ", {a}, {b}");
                }
                Options::Parts { .. } | Options::PartsDyn { .. } | Options::Bounds(..) | Options::LayerNorm { .. } | Options::Params { .. } | Options::Equation { .. } => {}
                Options::None | Options::ScalarRight | Options::ScalarLeft => {}
            },
            // printed by `Expr::Index` (never an `Expr::Tensor`)
            Signature::Tensor | Signature::Index => {}
            // printed before the match: `f(&[&a, &b], dim)`
            Signature::TensorList => {}
            // `f(&x, &[shape], Option<&w>, Option<&b>, eps)`
            Signature::LayerNorm => {
                let Options::LayerNorm { dims, weight, bias, eps } = options else { return };
                let mut rest = args.iter().skip(1);
                self.out.push_str(", &[");
                for i in 0..dims {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    if let Some(e) = rest.next() {
                        self.expr(e);
                    }
                }
                self.out.push(']');
                for present in [weight, bias] {
                    match if present { rest.next() } else { None } {
                        Some(t) => {
                            self.out.push_str(", Some(");
                            self.borrow(Some(t));
                            self.out.push(')');
                        }
                        None => self.out.push_str(", None"),
                    }
                }
                self.out.push_str(", ");
                match if eps { rest.next() } else { None } {
                    Some(e) => self.expr(e),
                    None => self.out.push_str("1e-5f64"),
                }
            }
            // `f(&t, s)`: a Python number by value
            Signature::TensorNumber => {
                self.out.push_str(", ");
                if let Some(number) = args.get(1) {
                    self.expr(number);
                }
            }
            // `f(&t, Option<Scalar>, Option<Scalar>)`
            Signature::Clamp => {
                let (has_min, has_max) = match options {
                    Options::Bounds(lo, hi) => (lo, hi),
                    _ => (false, false),
                };
                let mut bounds = args.iter().skip(1);
                for present in [has_min, has_max] {
                    self.out.push_str(", ");
                    match if present { bounds.next() } else { None } {
                        Some(bound) => {
                            self.out.push_str("Some(tl::tch::Scalar::from(");
                            self.expr(bound);
                            self.out.push_str("))");
                        }
                        None => self.out.push_str("None"),
                    }
                }
            }
            // printed before the match
            Signature::Params(_) => {}
            // `f(&t, a, dim, count)`: `a` the op's int operand (0 for unbind)
            Signature::Parts => {
                self.out.push_str(", ");
                // `a` (the count or size, absent for unbind), then the dim, then the names' count
                let dynamic = matches!(options, Options::PartsDyn { .. });
                let a = if dynamic { args.get(1).filter(|_| args.len() == 3) } else { args.get(1) };
                match a {
                    // `split` with the sizes as a tuple: `&[a, b, c]`
                    Some(sizes @ Expr::Tuple(_)) => self.ints(Kind::Ints(0), sizes),
                    Some(a) => self.expr(a),
                    None => self.out.push_str("0i64"),
                }
                match options {
                    Options::Parts { dim, count } => {
                        let _ = write!(self.out, ", {dim}, {count}");
                    }
                    Options::PartsDyn { count } => {
                        self.out.push_str(", ");
                        if let Some(dim) = args.last() {
                            self.expr(dim);
                        }
                        let _ = write!(self.out, ", {count}");
                    }
                    _ => {}
                }
            }
            // a shape or permutation from Python ints (literals or int expressions)
            Signature::IntList => {
                self.out.push_str(", &[");
                for (i, item) in args.iter().skip(1).enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.expr(item);
                }
                self.out.push(']');
            }
        }
        self.out.push_str(")?");
    }

    /// The arguments of a claimed op after its input (`tensor, weight, …` → `weight, …`): a
    /// [`Fused::ConvChain`](crate::ir::Fused::ConvChain) stage's method call holds the input.
    pub(super) fn params_after_input(&mut self, op: Op, options: Options, args: &[Expr]) {
        if let (Signature::Params(params), Options::Params { present, choice }, Some((_, rest))) = (op.info().signature, options, args.split_first()) {
            self.params(&params[1..], present >> 1, choice, rest);
        }
    }

    /// The arguments of an op called through its Python signature: each parameter in order,
    /// the given ones from `args` (bit `i` of `present` for parameter `i`), the others as their
    /// Rust default; `choice` picks the string of a `Choice` parameter.
    fn params(&mut self, params: &[Param], present: u32, choice: u8, args: &[Expr]) {
        let mut given = args.iter();
        let mut first = true;
        for (slot, param) in params.iter().enumerate() {
            if matches!(param.kind, Kind::Fixed(_)) {
                continue;
            }
            if !first {
                self.out.push_str(", ");
            }
            first = false;
            if let Kind::Choice(choices) = param.kind {
                let _ = write!(self.out, "{:?}", choices.get(usize::from(choice)).copied().unwrap_or_default());
                continue;
            }
            let value = if present & (1 << slot) != 0 { given.next() } else { None };
            let Some(value) = value else {
                self.out.push_str(param.default.unwrap_or(if matches!(param.kind, Kind::OptTensor | Kind::OptAnyTensor) { "None" } else { "()" }));
                continue;
            };
            match param.kind {
                Kind::Tensor | Kind::AnyTensor | Kind::Indices | Kind::Mask => self.borrow(Some(value)),
                Kind::TensorOrNumber | Kind::AnyTensorOrNumber => {
                    self.out.push_str("tl::ops::Value::from(");
                    self.borrow(Some(value));
                    self.out.push(')');
                }
                Kind::OptTensor | Kind::OptAnyTensor => {
                    self.out.push_str("Some(");
                    self.borrow(Some(value));
                    self.out.push(')');
                }
                Kind::Float => {
                    self.out.push_str("tl::scalar::py_float(");
                    self.expr(value);
                    self.out.push(')');
                }
                Kind::OptFloat => {
                    self.out.push_str("Some(tl::scalar::py_float(");
                    self.expr(value);
                    self.out.push_str("))");
                }
                Kind::OptBool | Kind::OptInt => {
                    self.out.push_str("Some(");
                    self.expr(value);
                    self.out.push(')');
                }
                Kind::OptInts(_) if param.default == Some("None") => {
                    self.out.push_str("Some(");
                    self.ints(param.kind, value);
                    self.out.push(')');
                }
                Kind::Ints(_) | Kind::OptInts(_) | Kind::IntSeq => self.ints(param.kind, value),
                Kind::Int | Kind::Bool => self.expr(value),
                Kind::Choice(_) | Kind::Fixed(_) => {}
            }
        }
    }

    /// `&[&a, &b, …]`: the tensors of a join or an einsum.
    fn tensor_list(&mut self, tensors: &[Expr]) {
        self.out.push_str("&[");
        for (i, tensor) in tensors.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.borrow(Some(tensor));
        }
        self.out.push(']');
    }

    /// `&[a, b]` of a tuple of ints, or `&[n; k]` of one int standing for `k` copies.
    fn ints(&mut self, kind: Kind, value: &Expr) {
        let n = match kind {
            Kind::Ints(n) | Kind::OptInts(n) => n,
            Kind::IntSeq => 0,
            _ => return,
        };
        self.out.push_str("&[");
        match value {
            Expr::Tuple(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.expr(item);
                }
            }
            single => {
                self.expr(single);
                let _ = write!(self.out, "; {}", n.max(1));
            }
        }
        self.out.push(']');
    }

    pub(super) fn borrow(&mut self, e: Option<&Expr>) {
        if let Some(Expr::Local { name, ty: Ty::Tensor(_) }) = e {
            let reference = self.tensor_ref(name);
            self.out.push_str(&reference);
            return;
        }
        self.out.push('&');
        if let Some(e) = e {
            self.expr(e);
        }
    }

    /// `&v_x_t` for a tensor local, or `v_x_t` for a parameter that is a reference already.
    pub(super) fn tensor_ref(&self, name: &str) -> String {
        let ident = local_ident(name, RustKind::Tensor);
        if self.borrowed.contains(&ident) {
            ident
        } else {
            format!("&{ident}")
        }
    }
}
