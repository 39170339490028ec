//! Expressions other than calls: constants, names, binary operators (a torch site when an
//! operand is a tensor, checked int arithmetic otherwise), unary and boolean operators,
//! comparisons.

use super::{Val, Walker, MAX_DEPTH};
use crate::claim::{self, Decision, Lit, Operand, Query, Target};
use crate::ir::{self, CmpOp, FloatOp, ScalarKind, ScalarOp};
use crate::resolve::{Binding, Number};
use crate::report::SiteKind;
use crate::rules;
use crate::ty::Ty;
use ruff_python_ast::{self as ast, Expr, Number as Literal, Operator};
use ruff_text_size::{Ranged, TextRange};
use torchlower_ops::unclaimed::VIEW_ATTRIBUTES;

impl Walker<'_> {

    pub(super) fn expr(&mut self, e: &Expr) -> Val {
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
            Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) | Expr::NoneLiteral(_) | Expr::StringLiteral(_) | Expr::BytesLiteral(_) | Expr::EllipsisLiteral(_) => self.literal(e),
            Expr::Name(n) => self.name(n.id.as_str(), n.range()),
            Expr::BinOp(b) => {
                let l = self.expr(&b.left);
                let r = self.expr(&b.right);
                self.binop(b.op, false, l, r, b.range())
            }
            Expr::UnaryOp(u) => self.unary(u),
            Expr::BoolOp(b) => self.bool_op(b),
            Expr::Compare(c) => self.compare(c),
            Expr::Call(c) => self.call(c),
            Expr::Tuple(ast::ExprTuple { elts, .. }) => self.display(elts, Ty::Tuple(0)),
            Expr::List(ast::ExprList { elts, .. }) => self.display(elts, Ty::List(0)),
            Expr::Subscript(s) => self.subscript(s),
            Expr::If(e) => self.if_else(e),
            Expr::Attribute(a) => {
                let locals = &self.locals;
                if let Some(path) = self.scope.dotted_path(e, &|n| locals.contains(n)) {
                    if let Some(v) = math_constant(&path) {
                        return Val::lowered(Ty::Float, Lit::Float(v), ir::Expr::Float(v));
                    }
                    if let Some(dtype) = torch_dtype(&path) {
                        return Val::opaque(Ty::Str, Lit::Dtype(dtype));
                    }
                    // e.g. `torch.float64` as an option value: the consumer decides
                    return Val::opaque(Ty::Unknown, Lit::NotLiteral);
                }
                if let Some(v) = self.finfo(&a.value, a.attr.as_str()) {
                    return v;
                }
                let recv = self.expr(&a.value);
                // `t.max(dim).values` / `.indices`
                if let (Ty::Tuple(2), Some(pair @ ir::Expr::Tensor { op: ir::Op::MaxDim | ir::Op::MinDim | ir::Op::Topk | ir::Op::Sort, .. }), "values" | "indices") = (recv.ty, &recv.ir, a.attr.as_str()) {
                    let index = usize::from(a.attr.as_str() == "indices");
                    let types = std::mem::take(&mut self.returned_tuple);
                    let ty = types.get(index).copied().unwrap_or(Ty::Unknown);
                    return Val::lowered(ty, Lit::NotLiteral, ir::Expr::Field { tuple: Box::new(pair.clone()), index });
                }
                // `r.values` / `r.indices` of a local holding such a pair (`r = t.topk(k)`)
                if let (Some(ir::ReturnedPair::Record(_)), Some(items), "values" | "indices") = (recv.pair, recv.sequence_items(), a.attr.as_str()) {
                    if let [values, indices] = &items[..] {
                        return if a.attr.as_str() == "values" { values.clone() } else { indices.clone() };
                    }
                }
                if let (Ty::Distribution(kind), Some(stored)) = (recv.ty, recv.elems.clone()) {
                    return self.distribution_attribute(kind, stored, a.attr.as_str(), a.range());
                }
                if let Ty::Tensor(t) = recv.ty {
                    match a.attr.as_str() {
                        "shape" => return self.shape_tuple(recv, t.rank, a.range()),
                        // the rank is static (the boundary checked it)
                        "ndim" => return Val::lowered(Ty::Int, Lit::Int(i64::from(t.rank)), ir::Expr::Int(i64::from(t.rank))),
                        // static too: option values for `.to(x.dtype)`, `device=x.device`
                        "dtype" => return Val::opaque(Ty::Str, Lit::Dtype(dtype_name(t.dtype))),
                        "device" => return Val::opaque(Ty::Str, Lit::Device(device_name(t.device))),
                        "is_cuda" => {
                            let cuda = t.device == crate::ty::Device::Cuda0;
                            return Val::lowered(Ty::Bool, Lit::Bool(cuda), ir::Expr::Bool(cuda));
                        }
                        _ => {}
                    }
                }
                // `x.device.type`: "cpu" or "cuda"
                if let (Lit::Device(device), "type") = (&recv.lit, a.attr.as_str()) {
                    let kind = device.split(':').next().unwrap_or(device);
                    return Val::opaque(Ty::Str, Lit::Str(kind.to_string()));
                }
                let operand = Operand { ty: recv.ty, lit: Lit::NotLiteral };
                if let Some(decision) = claim::views::attribute(&operand, a.attr.as_str()) {
                    return self.site((SiteKind::Method, format!("Tensor.{}", a.attr)), decision, a.range(), Some(recv), &[], &[]);
                }
                if matches!(recv.ty, Ty::Tensor(_)) && VIEW_ATTRIBUTES.contains(&a.attr.as_str()) {
                    self.diag(&rules::VIEW_OP, format!("`.{}` is a view of the tensor", a.attr), a.range());
                } else if !recv.explained {
                    self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("attribute `.{}` is not lowered", a.attr), a.range());
                }
                Val::explained(Ty::Unknown)
            }
            Expr::ListComp(comp) => self.list_comprehension(comp),
            Expr::Lambda(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
                self.diag(&rules::NESTED_SCOPE, format!("{} inside a native function", expr_kind(e)), e.range());
                Val::explained(Ty::Unknown)
            }
            other => {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("{} is not lowered", expr_kind(other)), other.range());
                Val::explained(Ty::Unknown)
            }
        }
    }

    fn literal(&mut self, e: &Expr) -> Val {
        match e {
            Expr::BooleanLiteral(b) => Val::lowered(Ty::Bool, Lit::Bool(b.value), ir::Expr::Bool(b.value)),
            Expr::NumberLiteral(n) => match &n.value {
                Literal::Int(i) => match i.as_i64() {
                    Some(v) => Val::lowered(Ty::Int, Lit::Int(v), ir::Expr::Int(v)),
                    None => {
                        self.diag(&rules::INT_OUT_OF_RANGE, "integer literal does not fit in 64 bits".into(), n.range());
                        Val::explained(Ty::Int)
                    }
                },
                Literal::Float(v) => Val::lowered(Ty::Float, Lit::Float(*v), ir::Expr::Float(*v)),
                Literal::Complex { .. } => Val::opaque(Ty::Unknown, Lit::NotLiteral),
            },
            Expr::NoneLiteral(_) => Val::opaque(Ty::NoneVal, Lit::None),
            Expr::StringLiteral(s) => Val::opaque(Ty::Str, Lit::Str(s.value.to_str().to_string())),
            _ => Val::opaque(Ty::Unknown, Lit::NotLiteral),
        }
    }

    pub(super) fn name(&mut self, name: &str, range: TextRange) -> Val {
        if let Some((_, item)) = self.comprehension.iter().rev().find(|(target, _)| target == name) {
            return item.clone();
        }
        if !self.locals.contains(name) {
            if let Some(Binding::Number(number)) = self.scope.get(name) {
                return number_val(*number);
            }
            self.diag(&rules::UNBOUND_NAME, format!("`{name}` is not a local of the function (module globals other than number constants and builtins are not lowered)"), range);
            return Val::explained(Ty::Unknown);
        }
        match self.env.get(name) {
            None => {
                self.diag(&rules::UNBOUND_NAME, format!("`{name}` is read before it is assigned"), range);
                Val::explained(Ty::Unknown)
            }
            Some(b) if b.conflicting => {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`{name}` has different types on the paths that reach here (a tensor of another rank, or another type)"), range);
                Val::explained(Ty::Unknown)
            }
            Some(b) if !b.definite => {
                self.diag(&rules::UNBOUND_NAME, format!("`{name}` may be unbound here (not assigned on every path)"), range);
                Val::explained(b.ty)
            }
            Some(b) => match b.ty {
                Ty::Tensor(_) | Ty::Int | Ty::Bool | Ty::Float => {
                    let lit = self.env.static_value(name).cloned().unwrap_or(Lit::NotLiteral);
                    let mut v = Val::lowered(b.ty, lit, ir::Expr::Local { name: name.to_string(), ty: b.ty });
                    v.fresh = self.env.is_fresh(name);
                    v
                }
                Ty::Tuple(n) | Ty::List(n) => {
                    self.env.share_list(name);
                    let mut v = Val::sequence(b.ty, (0..n).map(|i| self.element(name, i)).collect());
                    v.pair = self.env.pair(name);
                    v
                }
                Ty::Distribution(kind) => {
                    let stored: Vec<Val> = (0..kind.tensors()).map(|i| self.element(name, i)).collect();
                    let explained = stored.iter().any(|e| e.explained);
                    Val { elems: Some(stored), explained, ..Val::opaque(b.ty, Lit::NotLiteral) }
                }
                // a parameter specialised on None, or a local assigned None on every path
                Ty::NoneVal => Val::opaque(Ty::NoneVal, Lit::None),
                Ty::Str => match self.env.static_value(name) {
                    Some(value) => Val::opaque(Ty::Str, value.clone()),
                    None => Val::explained(Ty::Str),
                },
                // an unknown local was already reported where it was bound
                other => Val { cause: self.failed_locals.get(name).copied(), ..Val::explained(other) },
            },
        }
    }

    /// `t.shape` / `t.size()` of a tensor local: a tuple of its sizes (ints).
    pub(super) fn shape_tuple(&mut self, tensor: Val, rank: u8, range: TextRange) -> Val {
        match self.local_tensor(tensor, range, "`.shape`") {
            Some(local) => Val::tuple((0..usize::from(rank)).map(|dim| size_val(&local, dim)).collect()),
            None => Val::explained(Ty::Unknown),
        }
    }

    /// The IR of a tensor read from a local (shape queries repeat it, so it must be a read).
    pub(super) fn local_tensor(&mut self, tensor: Val, range: TextRange, what: &str) -> Option<ir::Expr> {
        match tensor.ir {
            Some(local @ ir::Expr::Local { .. }) => Some(local),
            Some(_) => {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("{what} of an expression is not lowered; assign the tensor to a name first"), range);
                None
            }
            None => None,
        }
    }

    /// `a if cond else b`: both branches of one lowerable type; a static condition keeps
    /// only the branch Python evaluates.
    fn if_else(&mut self, e: &ast::ExprIf) -> Val {
        let Some(cond) = self.condition(&e.test) else {
            let _ = (self.expr(&e.body), self.expr(&e.orelse));
            return Val::explained(Ty::Unknown);
        };
        if let ir::Expr::Bool(taken) = cond {
            return self.expr(if taken { &e.body } else { &e.orelse });
        }
        self.conditional += 1;
        let (then, orelse) = (self.expr(&e.body), self.expr(&e.orelse));
        self.conditional -= 1;
        if then.ty != orelse.ty || then.elems.is_some() {
            if !(then.explained || orelse.explained) {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("a conditional expression of {} and {} is not lowered", then.ty.describe(), orelse.ty.describe()), e.range());
            }
            return Val::explained(Ty::Unknown);
        }
        let ty = then.ty;
        match (self.need(then, e.range(), "conditional expression"), self.need(orelse, e.range(), "conditional expression")) {
            (Some(a), Some(b)) => Val::lowered(ty, Lit::NotLiteral, ir::Expr::IfElse { cond: Box::new(cond), then: Box::new(a), orelse: Box::new(b) }),
            _ => Val::explained(ty),
        }
    }

    /// A tuple or list display (as `kind` is); `*t` of a tuple of known length is its
    /// elements, as Python unpacks it (`(*input_shape, -1, head_dim)`).
    fn display(&mut self, elts: &[Expr], kind: Ty) -> Val {
        let mut elems = Vec::with_capacity(elts.len());
        for e in elts {
            let Expr::Starred(starred) = e else {
                elems.push(self.expr(e));
                continue;
            };
            let v = self.expr(&starred.value);
            match v.sequence_items() {
                Some(inner) => elems.extend(inner),
                None => {
                    if !v.explained {
                        self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`*` of {} in a display is not lowered", v.ty.describe()), e.range());
                    }
                    return Val::explained(Ty::Unknown);
                }
            }
        }
        let mut made = Val::sequence(kind, elems);
        made.fresh = matches!(kind, Ty::List(_));
        made
    }

    /// Element `i` of the tuple local `name` (the local `name#i`).
    pub(super) fn element(&self, name: &str, i: u8) -> Val {
        let local = element_name(name, i);
        match self.env.get(&local) {
            Some(b) if matches!(b.ty, Ty::Tensor(_) | Ty::Int | Ty::Bool | Ty::Float) => {
                let mut v = Val::lowered(b.ty, Lit::NotLiteral, ir::Expr::Local { name: local.clone(), ty: b.ty });
                v.fresh = self.env.is_fresh(&local);
                v
            }
            // a tuple of tuples (Swin's `h_slices`): the inner one's elements `name#i#j`
            Some(b) if b.ty.items().is_some() => Val::sequence(b.ty, (0..b.ty.items().unwrap_or(0)).map(|j| self.element(&local, j)).collect()),
            Some(b) if b.ty == Ty::NoneVal => Val::opaque(Ty::NoneVal, Lit::None),
            Some(b) => match self.env.static_value(&local) {
                Some(value) if b.ty == Ty::Str => Val::opaque(Ty::Str, value.clone()),
                _ => Val::explained(b.ty),
            },
            None => Val::explained(Ty::Unknown),
        }
    }

    pub(super) fn binop(&mut self, op: Operator, augmented: bool, l: Val, r: Val, range: TextRange) -> Val {
        // tuple (or list) concatenation; a list and a tuple are eager's TypeError
        if let (Some(a), Some(b), Operator::Add) = (&l.sequence_items(), &r.sequence_items(), op) {
            if l.ty.sequence_name() != r.ty.sequence_name() {
                let message = format!("can only concatenate {} (not \"{}\") to {}: eager raises TypeError", l.ty.sequence_name(), r.ty.sequence_name(), l.ty.sequence_name());
                self.diag(&rules::UNSUPPORTED_EXPRESSION, message, range);
                return Val::explained(Ty::Unknown);
            }
            // a new sequence (a new list nothing else refers to)
            let mut joined = Val::sequence(l.ty, a.iter().chain(b).cloned().collect());
            joined.fresh = matches!(l.ty, Ty::List(_));
            return joined;
        }
        // an operand that already failed (and was reported) next to a non-tensor: no new site
        let failed = |v: &Val| v.explained && v.ty == Ty::Unknown;
        let tensor = |v: &Val| matches!(v.ty, Ty::Tensor(_));
        if (failed(&l) && !tensor(&r)) || (failed(&r) && !tensor(&l)) {
            return Val::knock_on([&l, &r]);
        }
        let operands = [Operand { ty: l.ty, lit: l.lit.clone() }, Operand { ty: r.ty, lit: r.lit.clone() }];
        let q = Query { target: Target::BinOp { op, augmented }, receiver: None, args: &operands, keywords: &[], starred: false };
        let decision = claim::decide(&q);
        if decision != Decision::NotASite {
            return self.site(claim::describe_target(Target::BinOp { op, augmented }), decision, range, None, &[l, r], &[]);
        }
        // scalar arithmetic
        let number = |t: Ty| t.is_scalar_int() || t == Ty::Float;
        if number(l.ty) && number(r.ty) && (l.ty == Ty::Float || r.ty == Ty::Float || matches!(op, Operator::Div | Operator::Pow)) {
            return self.float_binop(op, l, r, range);
        }
        if !(l.ty.is_scalar_int() && r.ty.is_scalar_int()) {
            if !(l.explained || r.explained) {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`{}` on {} and {} is not lowered", claim::operator_symbol(op), l.ty.describe(), r.ty.describe()), range);
            }
            return Val::knock_on([&l, &r]);
        }
        let sop = match op {
            Operator::Add => ScalarOp::Add,
            Operator::Sub => ScalarOp::Sub,
            Operator::Mult => ScalarOp::Mul,
            Operator::FloorDiv => ScalarOp::FloorDiv,
            Operator::Mod => ScalarOp::Mod,
            other => {
                self.diag(&rules::SCALAR_OPERATOR, format!("scalar operator `{}` is not lowered", claim::operator_symbol(other)), range);
                return Val::explained(Ty::Unknown);
            }
        };
        // two ints known while analysing (`x.ndim - 1`): the value, as CPython computes it,
        // where it fits in 64 bits (otherwise computed, and refused, at run time)
        if let (Lit::Int(a), Lit::Int(b)) = (&l.lit, &r.lit) {
            if let Some(v) = fold_int(sop, *a, *b) {
                return Val::lowered(Ty::Int, Lit::Int(v), ir::Expr::Int(v));
            }
        }
        let li = self.int_operand(l, range, "operand");
        let ri = self.int_operand(r, range, "operand");
        match (li, ri) {
            (Some(a), Some(b)) => Val::lowered(Ty::Int, Lit::NotLiteral, ir::Expr::Scalar { op: sop, left: Box::new(a), right: Box::new(b) }),
            _ => Val::explained(Ty::Int),
        }
    }

    /// Python float arithmetic (an operand is a float, or `/` and `**` on ints): int operands
    /// become floats as CPython converts them; `int / int` and `int ** literal` keep CPython's
    /// own rules.
    fn float_binop(&mut self, op: Operator, l: Val, r: Val, range: TextRange) -> Val {
        let ints = l.ty.is_scalar_int() && r.ty.is_scalar_int();
        if ints && op == Operator::Pow {
            // int ** int is an int for a non-negative exponent and a float otherwise: a
            // literal exponent has a static type; an int known only at run time is taken as
            // the sizes code computes (`2 ** math.floor(math.log2(n))`), and a negative one
            // refuses natively (auto mode reruns Python)
            if matches!(r.lit, Lit::Int(k) if k < 0) {
                self.diag(&rules::SCALAR_OPERATOR, "`**` on ints with a negative literal exponent (a float) is not lowered".into(), range);
                return Val::explained(Ty::Unknown);
            }
            return match (self.int_operand(l, range, "operand"), self.int_operand(r, range, "operand")) {
                (Some(a), Some(b)) => Val::lowered(Ty::Int, Lit::NotLiteral, ir::Expr::Scalar { op: ScalarOp::Pow, left: Box::new(a), right: Box::new(b) }),
                _ => Val::explained(Ty::Int),
            };
        }
        if ints && op == Operator::Div {
            return match (self.int_operand(l, range, "operand"), self.int_operand(r, range, "operand")) {
                (Some(a), Some(b)) => Val::lowered(Ty::Float, Lit::NotLiteral, ir::Expr::IntTrueDiv(Box::new(a), Box::new(b))),
                _ => Val::explained(Ty::Float),
            };
        }
        let fop = match op {
            Operator::Add => FloatOp::Add,
            Operator::Sub => FloatOp::Sub,
            Operator::Mult => FloatOp::Mul,
            Operator::Div => FloatOp::Div,
            Operator::Pow => FloatOp::Pow,
            other => {
                self.diag(&rules::SCALAR_OPERATOR, format!("float operator `{}` is not lowered", claim::operator_symbol(other)), range);
                return Val::explained(Ty::Unknown);
            }
        };
        match (float_operand(l), float_operand(r)) {
            (Some(a), Some(b)) => Val::lowered(Ty::Float, Lit::NotLiteral, ir::Expr::FloatArith { op: fop, left: Box::new(a), right: Box::new(b) }),
            _ => Val::explained(Ty::Float),
        }
    }

    fn unary(&mut self, u: &ast::ExprUnaryOp) -> Val {
        let v = self.expr(&u.operand);
        match (u.op, v.ty) {
            (ast::UnaryOp::USub, Ty::Float) => match (v.lit, v.ir) {
                // fold literals so that `-1e-5` stays a literal
                (Lit::Float(x), _) => Val::lowered(Ty::Float, Lit::Float(-x), ir::Expr::Float(-x)),
                (_, Some(e)) => Val::lowered(Ty::Float, Lit::NotLiteral, ir::Expr::FloatNeg(Box::new(e))),
                (_, None) => Val::explained(Ty::Float),
            },
            (ast::UnaryOp::UAdd, Ty::Float) => v,
            (ast::UnaryOp::USub, Ty::Tensor(_)) => {
                let operand = Operand { ty: v.ty, lit: Lit::NotLiteral };
                let decision = claim::negation(&operand);
                self.site((SiteKind::Binop, "unary -".to_string()), decision, u.range(), Some(v), &[], &[])
            }
            (ast::UnaryOp::USub, Ty::Int | Ty::Bool) => {
                // fold literals so that `dim=-1` stays a literal
                if let Lit::Int(n) = v.lit {
                    if let Some(neg) = n.checked_neg() {
                        return Val::lowered(Ty::Int, Lit::Int(neg), ir::Expr::Int(neg));
                    }
                }
                match self.int_operand(v, u.range(), "operand of unary -") {
                    Some(e) => Val::lowered(Ty::Int, Lit::NotLiteral, ir::Expr::Neg(Box::new(e))),
                    None => Val::explained(Ty::Int),
                }
            }
            (ast::UnaryOp::UAdd, Ty::Int | Ty::Bool) => match self.int_operand(v, u.range(), "operand of unary +") {
                Some(e) => Val::lowered(Ty::Int, Lit::NotLiteral, e),
                None => Val::explained(Ty::Int),
            },
            // a static operand (`not isinstance(a, torch.Tensor)`): static too, so an `if` on it
            // walks only the branch Python takes
            (ast::UnaryOp::Not, Ty::Bool | Ty::Int) if matches!(v.lit, Lit::Bool(_) | Lit::Int(_)) => {
                let taken = matches!(v.lit, Lit::Bool(false) | Lit::Int(0));
                Val::lowered(Ty::Bool, Lit::Bool(taken), ir::Expr::Bool(taken))
            }
            (ast::UnaryOp::Not, Ty::Bool) => match v.ir {
                Some(e) => Val::lowered(Ty::Bool, Lit::NotLiteral, ir::Expr::Not(Box::new(e))),
                None => Val::explained(Ty::Bool),
            },
            (ast::UnaryOp::Not, Ty::Int) => match v.ir {
                Some(e) => Val::lowered(Ty::Bool, Lit::NotLiteral, ir::Expr::Not(Box::new(ir::Expr::IntTruthy(Box::new(e))))),
                None => Val::explained(Ty::Bool),
            },
            // `~mask`: logical not of a bool tensor
            (ast::UnaryOp::Invert, Ty::Tensor(t)) if t.dtype == crate::ty::Dtype::Bool => {
                let operand = Operand { ty: v.ty, lit: Lit::NotLiteral };
                let q = claim::Query { target: claim::Target::Method("logical_not"), receiver: Some(&operand), args: &[], keywords: &[], starred: false };
                let decision = claim::decide(&q);
                self.site((SiteKind::Binop, "unary ~".to_string()), decision, u.range(), Some(v), &[], &[])
            }
            (_, Ty::Unknown) if v.explained => Val::explained(Ty::Unknown),
            (op, ty) => {
                let sym = match op {
                    ast::UnaryOp::USub => "-",
                    ast::UnaryOp::UAdd => "+",
                    ast::UnaryOp::Not => "not",
                    ast::UnaryOp::Invert => "~",
                };
                let hint = if matches!(ty, Ty::Tensor(_)) { " (use torch.neg)" } else { "" };
                self.diag(&rules::SCALAR_OPERATOR, format!("unary `{sym}` on {} is not lowered{hint}", ty.describe()), u.range());
                Val::explained(Ty::Unknown)
            }
        }
    }

    fn bool_op(&mut self, b: &ast::ExprBoolOp) -> Val {
        let vals: Vec<Val> = b.values.iter().map(|v| self.expr(v)).collect();
        if vals.iter().any(|v| v.ty != Ty::Bool) {
            if !vals.iter().any(|v| v.explained) {
                self.diag(&rules::SCALAR_OPERATOR, "`and`/`or` are lowered on bool operands only".into(), b.range());
            }
            return Val::explained(Ty::Unknown);
        }
        let and = matches!(b.op, ast::BoolOp::And);
        // all static (`isinstance(d, str) and d != "mps"`): the value, as Python computes it
        let literals: Option<Vec<bool>> = vals.iter().map(|v| if let Lit::Bool(x) = v.lit { Some(x) } else { None }).collect();
        if let Some(literals) = literals {
            let value = if and { literals.iter().all(|x| *x) } else { literals.iter().any(|x| *x) };
            return Val::lowered(Ty::Bool, Lit::Bool(value), ir::Expr::Bool(value));
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
        // `x is None` / `x is not None` of a typed value: static (an annotated parameter is
        // never None: the boundary refuses None)
        if let ([op], [other]) = (&c.ops[..], rest.as_slice()) {
            if matches!(op, ast::CmpOp::Is | ast::CmpOp::IsNot) {
                let known = |v: &Val| matches!(v.ty, Ty::Tensor(_) | Ty::Int | Ty::Bool | Ty::Float | Ty::Tuple(_) | Ty::List(_)) && (v.ir.is_some() || v.elems.is_some());
                let none = |v: &Val| v.ty == Ty::NoneVal;
                if (known(&first) && none(other)) || (none(&first) && known(other)) {
                    let value = matches!(op, ast::CmpOp::IsNot);
                    return Val::lowered(Ty::Bool, Lit::Bool(value), ir::Expr::Bool(value));
                }
                if none(&first) && none(other) {
                    let value = matches!(op, ast::CmpOp::Is);
                    return Val::lowered(Ty::Bool, Lit::Bool(value), ir::Expr::Bool(value));
                }
            }
        }
        // `x.device.type != "mps"`, `x.dtype == torch.float32`: static
        if let ([op @ (ast::CmpOp::Eq | ast::CmpOp::NotEq)], [other]) = (&c.ops[..], rest.as_slice()) {
            if let Some(equal) = static_equal(&first.lit, &other.lit) {
                let value = equal == matches!(op, ast::CmpOp::Eq);
                return Val::lowered(Ty::Bool, Lit::Bool(value), ir::Expr::Bool(value));
            }
        }
        // `x.shape[1:] == w.shape`: tuples of ints are equal when their lengths are and every
        // pair of elements is (`!=` the negation)
        if let ([op @ (ast::CmpOp::Eq | ast::CmpOp::NotEq)], [other]) = (&c.ops[..], rest.as_slice()) {
            if let (Some(a), Some(b)) = (&first.sequence_items(), &other.sequence_items()) {
                if a.iter().chain(b).all(|e| e.ty == Ty::Int && e.ir.is_some()) {
                    let equal = matches!(op, ast::CmpOp::Eq);
                    // a list never equals a tuple (`x.shape == [2, 3]` is False)
                    if a.len() != b.len() || first.ty.sequence_name() != other.ty.sequence_name() {
                        return Val::lowered(Ty::Bool, Lit::Bool(!equal), ir::Expr::Bool(!equal));
                    }
                    let pairs: Vec<ir::Expr> = a
                        .iter()
                        .zip(b)
                        .filter_map(|(x, y)| Some(ir::Expr::Compare { kind: ScalarKind::Int, first: Box::new(x.ir.clone()?), rest: vec![(CmpOp::Eq, y.ir.clone()?)] }))
                        .collect();
                    let all = if pairs.is_empty() { ir::Expr::Bool(true) } else { ir::Expr::BoolOp { and: true, values: pairs } };
                    let value = if equal { all } else { ir::Expr::Not(Box::new(all)) };
                    return Val::lowered(Ty::Bool, Lit::NotLiteral, value);
                }
            }
        }
        // `w.dtype in [torch.float16, torch.bfloat16]`: static when every element is
        if let ([op @ (ast::CmpOp::In | ast::CmpOp::NotIn)], [other]) = (&c.ops[..], rest.as_slice()) {
            let found = other.elems.as_ref().and_then(|elems| {
                elems.iter().map(|e| static_equal(&first.lit, &e.lit)).collect::<Option<Vec<bool>>>()
            });
            if let Some(found) = found {
                let value = found.contains(&true) == matches!(op, ast::CmpOp::In);
                return Val::lowered(Ty::Bool, Lit::Bool(value), ir::Expr::Bool(value));
            }
        }
        let all: Vec<&Val> = std::iter::once(&first).chain(rest.iter()).collect();
        if all.iter().any(|v| matches!(v.ty, Ty::Tensor(_))) {
            // a tensor comparison: one operator is a torch site (a bool tensor); a chain would
            // take the truth value of a tensor
            let sym = c.ops.first().map(ast::CmpOp::as_str).unwrap_or("==");
            let decision = match rest.as_slice() {
                [right] => {
                    let operands = [first.operand(), right.operand()];
                    claim::decide(&Query { target: Target::Compare(sym), receiver: None, args: &operands, keywords: &[], starred: false })
                }
                _ => Decision::reject(&rules::UNSUPPORTED_TARGET, "a chained comparison of tensors takes a tensor's truth value (eager raises for more than one element)"),
            };
            let operands: Vec<Val> = std::iter::once(first).chain(rest).collect();
            return self.site((SiteKind::Binop, sym.to_string()), decision, c.range(), None, &operands, &[]);
        }
        let floats = all.iter().any(|v| v.ty == Ty::Float) && all.iter().all(|v| v.ty == Ty::Float || v.ty.is_scalar_int());
        if all.iter().any(|v| !v.ty.is_scalar_int()) && !floats {
            if !all.iter().any(|v| v.explained) {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, "comparisons are lowered on int, bool and float operands only".into(), c.range());
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
                    self.diag(&rules::SCALAR_OPERATOR, format!("`{}` comparisons are not lowered", other.as_str()), c.range());
                    return Val::explained(Ty::Bool);
                }
            };
            ops.push(o);
        }
        // ints known while analysing (`len(x.shape) > 1`, `x.dim() == 4`): a static bool, so
        // an `if` on it keeps only the branch Python takes
        let literals: Option<Vec<i64>> = all.iter().map(|v| if let (Ty::Int, Lit::Int(n)) = (v.ty, &v.lit) { Some(*n) } else { None }).collect();
        if let Some(values) = literals {
            let holds = ops.iter().zip(values.windows(2)).all(|(op, pair)| match op {
                CmpOp::Eq => pair[0] == pair[1],
                CmpOp::Ne => pair[0] != pair[1],
                CmpOp::Lt => pair[0] < pair[1],
                CmpOp::Le => pair[0] <= pair[1],
                CmpOp::Gt => pair[0] > pair[1],
                CmpOp::Ge => pair[0] >= pair[1],
            });
            return Val::lowered(Ty::Bool, Lit::Bool(holds), ir::Expr::Bool(holds));
        }
        let kind = if floats {
            ScalarKind::Float
        } else if all.iter().all(|v| v.ty == Ty::Bool) {
            ScalarKind::Bool
        } else {
            ScalarKind::Int
        };
        let convert = |w: &mut Self, v: Val| -> Option<ir::Expr> {
            match kind {
                ScalarKind::Bool => v.ir,
                ScalarKind::Int => w.int_operand(v, c.range(), "comparison operand"),
                // CPython compares an int with a float exactly: an int is converted only where
                // that is exact (|n| ≤ 2**53), else native code refuses (tl::scalar::exact_float)
                ScalarKind::Float => match v.ty {
                    Ty::Float => v.ir,
                    _ => float_operand(v).map(|e| match e {
                        ir::Expr::IntToFloat(inner) => ir::Expr::IntToFloatExact(inner),
                        other => other,
                    }),
                },
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

}

/// `t.shape[dim]` of the tensor local `local`.
pub(super) fn size_val(local: &ir::Expr, dim: usize) -> Val {
    Val::lowered(Ty::Int, Lit::NotLiteral, ir::Expr::Size { tensor: Box::new(local.clone()), dim })
}

/// The local holding element `i` of the tuple local `name`.
pub(crate) fn element_name(name: &str, i: u8) -> String {
    format!("{name}#{i}")
}

/// A module-level number constant as a literal value.
fn number_val(number: Number) -> Val {
    match number {
        Number::Int(v) => Val::lowered(Ty::Int, Lit::Int(v), ir::Expr::Int(v)),
        Number::Float(bits) => {
            let v = f64::from_bits(bits);
            Val::lowered(Ty::Float, Lit::Float(v), ir::Expr::Float(v))
        }
    }
}

/// A number as a Python float: a float as it is, an int (or bool) converted as CPython does.
pub(super) fn float_operand(v: Val) -> Option<ir::Expr> {
    let e = v.ir?;
    Some(match v.ty {
        Ty::Float => e,
        Ty::Int => ir::Expr::IntToFloat(Box::new(e)),
        Ty::Bool => ir::Expr::IntToFloat(Box::new(ir::Expr::BoolToInt(Box::new(e)))),
        _ => return None,
    })
}

fn expr_kind(e: &Expr) -> &'static str {
    match e {
        Expr::BoolOp(_) => "boolean operation",
        Expr::Named(_) => "assignment expression (:=)",
        Expr::BinOp(_) => "binary operation",
        Expr::UnaryOp(_) => "unary operation",
        Expr::Lambda(_) => "lambda",
        Expr::If(_) => "conditional expression",
        Expr::Dict(_) => "dict display",
        Expr::Set(_) => "set display",
        Expr::ListComp(_) => "list comprehension",
        Expr::SetComp(_) => "set comprehension",
        Expr::DictComp(_) => "dict comprehension",
        Expr::Generator(_) => "generator expression",
        Expr::Await(_) => "await",
        Expr::Yield(_) | Expr::YieldFrom(_) => "yield",
        Expr::Compare(_) => "comparison",
        Expr::Call(_) => "call",
        Expr::FString(_) => "f-string",
        Expr::TString(_) => "t-string",
        Expr::StringLiteral(_) | Expr::BytesLiteral(_) | Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) | Expr::NoneLiteral(_) | Expr::EllipsisLiteral(_) => "constant",
        Expr::Attribute(_) => "attribute",
        Expr::Subscript(_) => "subscript",
        Expr::Starred(_) => "starred expression",
        Expr::Name(_) => "name",
        Expr::List(_) => "list display",
        Expr::Tuple(_) => "tuple",
        Expr::Slice(_) => "slice",
        Expr::IpyEscapeCommand(_) => "IPython escape command",
    }
}

impl Walker<'_> {
    /// `d.probs`, `d.mean`, … of a distribution local: one of its stored tensors, or a claimed
    /// op on them.
    fn distribution_attribute(&mut self, kind: crate::ty::Distribution, stored: Vec<Val>, attr: &str, range: TextRange) -> Val {
        let types: Vec<Ty> = stored.iter().map(|v| v.ty).collect();
        match claim::distributions::attribute(kind, attr, &types) {
            Some(claim::distributions::Attribute::Stored(i)) => stored.into_iter().nth(usize::from(i)).unwrap_or_else(|| Val::explained(Ty::Unknown)),
            Some(claim::distributions::Attribute::Op(decision)) => self.site((SiteKind::Method, format!("{}.{attr}", kind.name())), decision, range, None, &stored, &[]),
            None => {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("attribute `.{attr}` of a {} distribution is not lowered", kind.name()), range);
                Val::explained(Ty::Unknown)
            }
        }
    }

    /// `torch.finfo(x.dtype).eps` & co. for float32 (or `torch.finfo()`, the default dtype):
    /// the constants eager's `finfo` gives, as Python floats.
    fn finfo(&mut self, value: &Expr, attr: &str) -> Option<Val> {
        let Expr::Call(c) = value else { return None };
        let locals = &self.locals;
        if self.scope.dotted_path(&c.func, &|n| locals.contains(n)).as_deref() != Some("torch.finfo") || !c.arguments.keywords.is_empty() {
            return None;
        }
        let float32 = match &c.arguments.args[..] {
            [] => true,
            [dtype] => self.expr(dtype).lit == Lit::Dtype("torch.float32"),
            _ => false,
        };
        let v = match (float32, attr) {
            (true, "eps") => f64::from(f32::EPSILON),
            (true, "max") => f64::from(f32::MAX),
            (true, "min") => f64::from(f32::MIN),
            (true, "tiny" | "smallest_normal") => f64::from(f32::MIN_POSITIVE),
            (true, "resolution") => 1e-6,
            (true, "bits") => return Some(Val::lowered(Ty::Int, Lit::Int(32), ir::Expr::Int(32))),
            _ => return None,
        };
        Some(Val::lowered(Ty::Float, Lit::Float(v), ir::Expr::Float(v)))
    }
}

/// The canonical name of a torch dtype path (`torch.float` is `torch.float32`). Dtypes without
/// a tensor type here are static values all the same: `w.dtype in [torch.float16, …]` and
/// `x.dtype != torch.int8` are decided while analysing.
fn torch_dtype(path: &str) -> Option<&'static str> {
    Some(match path {
        "torch.float32" | "torch.float" => "torch.float32",
        "torch.int64" | "torch.long" => "torch.int64",
        "torch.bool" => "torch.bool",
        "torch.float16" | "torch.half" => "torch.float16",
        "torch.bfloat16" => "torch.bfloat16",
        "torch.float64" | "torch.double" => "torch.float64",
        "torch.int32" | "torch.int" => "torch.int32",
        "torch.int16" | "torch.short" => "torch.int16",
        "torch.int8" => "torch.int8",
        "torch.uint8" => "torch.uint8",
        _ => return None,
    })
}

/// The torch dtype of a tensor type, as [`torch_dtype`] names it.
pub(super) fn dtype_name(dtype: crate::ty::Dtype) -> &'static str {
    match dtype {
        crate::ty::Dtype::F32 => "torch.float32",
        crate::ty::Dtype::I64 => "torch.int64",
        crate::ty::Dtype::I32 => "torch.int32",
        crate::ty::Dtype::Bool => "torch.bool",
    }
}

/// Whether two static values of the same kind are equal (strings, dtypes, devices); `None`
/// for anything else, including a string against a device (Python compares those by type).
fn static_equal(a: &Lit, b: &Lit) -> Option<bool> {
    match (a, b) {
        (Lit::Str(x), Lit::Str(y)) => Some(x == y),
        (Lit::Dtype(x), Lit::Dtype(y)) => Some(x == y),
        (Lit::Device(x), Lit::Device(y)) => Some(x == y),
        _ => None,
    }
}

/// The device of a tensor type, as `str(x.device)` gives it.
pub(super) fn device_name(device: crate::ty::Device) -> &'static str {
    match device {
        crate::ty::Device::Cpu => "cpu",
        crate::ty::Device::Cuda0 => "cuda:0",
    }
}

/// `a op b` of two Python ints as CPython computes it (floor division and a modulo with the
/// divisor's sign); `None` where the result leaves 64 bits or CPython raises (a zero divisor).
fn fold_int(op: ScalarOp, a: i64, b: i64) -> Option<i64> {
    match op {
        ScalarOp::Add => a.checked_add(b),
        ScalarOp::Sub => a.checked_sub(b),
        ScalarOp::Mul => a.checked_mul(b),
        ScalarOp::FloorDiv => torchlower_ops::python_int::floor_div(a, b),
        ScalarOp::Mod => torchlower_ops::python_int::floor_mod(a, b),
        _ => None,
    }
}

/// `math.pi` & co. (and NumPy's, SAM's `2 * np.pi * coords`, and torch's, Mamba's
/// `-torch.inf`): the same doubles as CPython's.
fn math_constant(path: &str) -> Option<f64> {
    Some(match path {
        "math.pi" | "numpy.pi" | "torch.pi" => std::f64::consts::PI,
        "math.e" | "numpy.e" | "torch.e" => std::f64::consts::E,
        "math.tau" => std::f64::consts::TAU,
        "math.inf" | "numpy.inf" | "torch.inf" => f64::INFINITY,
        "math.nan" | "numpy.nan" | "torch.nan" => f64::NAN,
        _ => return None,
    })
}
