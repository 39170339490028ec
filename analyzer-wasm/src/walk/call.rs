//! Calls: the callee resolved to a torch function path or a method on a receiver, the
//! arguments evaluated, the claim asked, and the site recorded (the one place a [`Site`] is
//! built from a decision).

use super::{variants, Val, Walker};
use crate::claim::{self, Decision, Keyword, Lit, Operand, OperandRef, Query, Target};
use crate::ir;
use crate::report::{Outcome, Site, SiteKind};
use crate::rules;
use crate::ty::Ty;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

/// Positional values, keyword (name, value) pairs, and whether a `*args` was present.
pub(super) type EvaluatedArgs = (Vec<Val>, Vec<(Option<String>, Val)>, bool);

impl Walker<'_> {
    pub(super) fn call(&mut self, c: &ast::ExprCall) -> Val {
        let locals = &self.locals;
        let path = self.scope.dotted_path(&c.func, &|n| locals.contains(n));
        let mut receiver: Option<Val> = None;
        let method_name: Option<String>;
        match (&*c.func, &path) {
            (_, Some(p)) if p == "math.sqrt" => return self.number_call(c, "math.sqrt", Some(ir::MathFn::Sqrt)),
            (_, Some(p)) if p == "math.log" => return self.number_call(c, "math.log", Some(ir::MathFn::Log)),
            (_, Some(p)) if p == "math.exp" => return self.number_call(c, "math.exp", Some(ir::MathFn::Exp)),
            (_, Some(p)) if p == "math.log2" => return self.number_call(c, "math.log2", Some(ir::MathFn::Log2)),
            (_, Some(p)) if p == "math.floor" => return self.rounding_call(c, "math.floor", ir::MathFn::Floor),
            (_, Some(p)) if p == "math.ceil" => return self.rounding_call(c, "math.ceil", ir::MathFn::Ceil),
            // `if torch.jit.is_tracing():` guards (Transformers' ViT): native code is never
            // traced, scripted or compiled, so they are the literal False eager's call returns
            (_, Some(p))
                if matches!(p.as_str(), "torch.jit.is_tracing" | "torch.jit.is_scripting" | "torch.compiler.is_compiling" | "torch._dynamo.is_compiling")
                    && c.arguments.args.is_empty()
                    && c.arguments.keywords.is_empty() =>
            {
                return Val::lowered(Ty::Bool, Lit::Bool(false), ir::Expr::Bool(false));
            }
            (_, Some(p)) if p == "math.trunc" => return self.rounding_call(c, "math.trunc", ir::MathFn::Trunc),
            // `int(2 * max(q, k) - 1)`, `int(math.sqrt(n))`: CPython truncates a float toward zero
            (Expr::Name(n), None) if n.id.as_str() == "int" && !locals.contains("int") && self.scope.is_builtin("int") => {
                return self.rounding_call(c, "int", ir::MathFn::Trunc);
            }
            (Expr::Name(n), None) if n.id.as_str() == "float" && !locals.contains("float") && self.scope.is_builtin("float") => {
                return self.number_call(c, "float", None);
            }
            (Expr::Name(n), None) if n.id.as_str() == "len" && !locals.contains("len") && self.scope.is_builtin("len") => {
                return self.len_call(c);
            }
            (Expr::Name(n), None) if matches!(n.id.as_str(), "min" | "max") && !locals.contains(n.id.as_str()) && self.scope.is_builtin(n.id.as_str()) => {
                return self.extreme_call(c, n.id.as_str() == "max");
            }
            (Expr::Name(n), None) if n.id.as_str() == "isinstance" && !locals.contains("isinstance") && self.scope.is_builtin("isinstance") => {
                return self.isinstance_call(c);
            }
            (_, Some(p)) if p == "torch.tensor" && c.arguments.keywords.is_empty() && matches!(&c.arguments.args[..], [Expr::ListComp(_)]) => {
                let Expr::ListComp(comp) = &c.arguments.args[0] else { unreachable!("matched above") };
                return self.int_comprehension(c, comp);
            }
            (Expr::Name(n), None) if n.id.as_str() == "sum" && !locals.contains("sum") && self.scope.is_builtin("sum") => {
                return self.sum_call(c);
            }
            (Expr::Name(n), None) if matches!(n.id.as_str(), "list" | "tuple") && !locals.contains(n.id.as_str()) && self.scope.is_builtin(n.id.as_str()) => {
                let kind = if n.id.as_str() == "list" { Ty::List(0) } else { Ty::Tuple(0) };
                return self.sequence_call(c, kind);
            }
            (Expr::Name(n), None) if !locals.contains(n.id.as_str()) && self.callees.contains_key(n.id.as_str()) => {
                let callee = self.callees[n.id.as_str()].clone();
                return self.helper_call(c, n.id.as_str(), &callee);
            }
            (_, Some(_)) => method_name = None,
            (Expr::Attribute(a), None) => {
                receiver = Some(self.expr(&a.value));
                method_name = Some(a.attr.to_string());
            }
            (Expr::Name(n), None) => {
                // a builtin, a local or an unresolved module name: not a torch site
                let _ = self.args(c);
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("call of `{}` is not lowered", n.id), c.range());
                return Val::explained(Ty::Unknown);
            }
            (_, None) => {
                let _ = self.expr(&c.func);
                let _ = self.args(c);
                self.diag(&rules::UNSUPPORTED_EXPRESSION, "call of a computed callee is not lowered".into(), c.range());
                return Val::explained(Ty::Unknown);
            }
        }
        self.torch_call(c, path, receiver, method_name)
    }

    /// The rest of [`Self::call`] once the callee is known to be a torch path or a method:
    /// kept out of `call`'s own frame, which every call chain (`x.a().b()…`, `f(1)(2)…`)
    /// stacks once per link.
    #[inline(never)]
    fn torch_call(&mut self, c: &ast::ExprCall, path: Option<String>, mut receiver: Option<Val>, method_name: Option<String>) -> Val {
        // `shape = size.copy()` of a list: a new list of the same elements
        if let (Some("copy"), Some(Ty::List(_))) = (method_name.as_deref(), receiver.as_ref().map(|r| r.ty)) {
            let (args, keywords, starred) = self.args(c);
            let list = receiver.take().expect("a receiver");
            if !args.is_empty() || !keywords.is_empty() || starred {
                self.diag(&rules::BAD_ARITY, "`list.copy()` takes no arguments (TypeError)".into(), c.range());
                return Val::explained(Ty::Unknown);
            }
            let mut copy = Val::sequence(list.ty, list.elems.unwrap_or_default());
            copy.fresh = true;
            return copy;
        }
        // `d.log_prob(a)`, `d.entropy()` of a distribution local
        if let (Some(name), Some(Ty::Distribution(kind))) = (method_name.as_deref(), receiver.as_ref().map(|r| r.ty)) {
            let stored = receiver.take().and_then(|r| r.elems).unwrap_or_default();
            let (args, keywords, _) = self.args(c);
            let types: Vec<Ty> = stored.iter().map(|v| v.ty).collect();
            let arg_ops: Vec<Operand> = args.iter().map(Val::operand).collect();
            let decision = claim::distributions::method(kind, name, &types, &arg_ops, keywords.len());
            let operands: Vec<Val> = stored.into_iter().chain(args).collect();
            return self.site((SiteKind::Method, format!("{}.{name}", kind.name())), decision, c.range(), None, &operands, &[]);
        }
        // a distribution is lowered only as the value of `d = Categorical(…)` (or used at once
        // as an assignment's whole value, `hoist_distribution`)
        if path.as_deref().is_some_and(|p| claim::distributions::constructor(p).is_some()) {
            let _ = self.args(c);
            let decision = Decision::reject(&rules::UNSUPPORTED_TARGET, "a distribution is lowered when assigned to a name (`d = Categorical(logits=x)`) or used at once as an assignment's value (`e = Categorical(logits=x).entropy()`)");
            let target = claim::describe_target(Target::Function(path.as_deref().unwrap_or_default()));
            return self.site(target, decision, c.range(), None, &[], &[]);
        }
        if let (Some(name), Some(Ty::Tensor(t))) = (method_name.as_deref(), receiver.as_ref().map(|r| r.ty)) {
            // `t.is_floating_point()`: static, from the annotated dtype
            if matches!(name, "is_floating_point" | "is_complex") && c.arguments.args.is_empty() && c.arguments.keywords.is_empty() {
                let value = name == "is_floating_point" && t.dtype == crate::ty::Dtype::F32;
                return Val::lowered(Ty::Bool, Lit::Bool(value), ir::Expr::Bool(value));
            }
            if name == "item" {
                let tensor = receiver.take().expect("a receiver");
                return self.item(c, tensor, t);
            }
            if matches!(name, "size" | "dim" | "ndimension" | "numel") {
                let tensor = receiver.take().expect("a receiver");
                return self.shape_method(c, name, tensor, t.rank);
            }
            let fresh = receiver.as_ref().is_some_and(|r| r.fresh);
            let in_place_op = match name {
                "relu_" => Some(ir::Op::Relu),
                "add_" => Some(ir::Op::Add),
                "sub_" => Some(ir::Op::Sub),
                "mul_" => Some(ir::Op::Mul),
                "div_" => Some(ir::Op::Div),
                _ => None,
            };
            let plain_args = c.arguments.keywords.is_empty() && c.arguments.args.len() == usize::from(name != "relu_") && !c.arguments.args.iter().any(|a| matches!(a, Expr::Starred(_)));
            // `x.mul_(y)` / `x.add_(3.).clamp_(0., 6.)` on an argument, on a branch: deferred
            let base = name.strip_suffix('_').filter(|b| !b.is_empty() && !name.starts_with('_'));
            let known = base.is_some_and(|b| ir::Op::from_method(b).is_some());
            if known && receiver.as_ref().is_some_and(|r| self.defers_write(r)) {
                let (args, keywords, _) = self.args(c);
                let local = receiver.take().expect("a receiver");
                let operands = args.into_iter().chain(keywords.into_iter().map(|(_, v)| v)).collect();
                return self.deferred_write((SiteKind::Method, format!("Tensor.{name}")), local, operands, c.range());
            }
            if let (Some(op), true, true) = (in_place_op, fresh, plain_args) {
                let other = c.arguments.args.first().map(|a| self.expr(a));
                let local = receiver.take().expect("a receiver");
                return self.in_place((SiteKind::Method, format!("Tensor.{name}")), op, local, other, c.range());
            }
            if let (Some(base), true, None, crate::ty::Device::Cpu) = (base, fresh, in_place_op, t.device) {
                if matches!(base, "zero" | "fill") || ir::Op::from_method(base).is_some() {
                    let local = receiver.take().expect("a receiver");
                    return self.write_back(c, name, base, local);
                }
            }
            if matches!(name, "float" | "long" | "int" | "bool" | "to" | "type_as" | "type") {
                match self.conversion(c, name, t) {
                    Some(Conversion::Itself) => return receiver.take().expect("a receiver"),
                    Some(Conversion::Explained) => return Val::explained(Ty::Unknown),
                    Some(Conversion::To(dtype)) => {
                        let decision = claim::creation::conversion(t, dtype);
                        let q = Query { target: Target::Method(name), receiver: None, args: &[], keywords: &[], starred: false };
                        let decision = claim::cuda_gate(&q, decision);
                        return self.site((SiteKind::Method, format!("Tensor.{name}")), decision, c.range(), receiver.take(), &[], &[]);
                    }
                    None => {}
                }
            }
        }
        let (mut args, keywords, starred) = self.args(c);
        // `x.new_zeros(sizes)` / `new_ones` / `new_empty` / `new_full(sizes, v)` of a CPU tensor
        // local: `torch.zeros(sizes, dtype=x.dtype)` …, a new tensor of its dtype and device
        let (path, method_name, keywords) = match (method_name.as_deref(), receiver.as_ref().map(|r| (r.ty, &r.ir))) {
            (Some(m @ ("new_zeros" | "new_ones" | "new_empty" | "new_full")), Some((Ty::Tensor(t), Some(ir::Expr::Local { .. })))) if t.device == crate::ty::Device::Cpu => {
                receiver = None;
                let mut keywords = keywords;
                if !keywords.iter().any(|(k, _)| k.as_deref() == Some("dtype")) {
                    keywords.push((Some("dtype".to_string()), Val::opaque(Ty::Str, Lit::Dtype(super::expr::dtype_name(t.dtype)))));
                }
                (Some(format!("torch.{}", &m["new_".len()..])), None, keywords)
            }
            _ => (path, method_name, keywords),
        };
        // `F.relu(h, inplace=True)`, `F.silu(h, inplace=True)`…: on a local that aliases no
        // parameter the write is lowered; on a possible parameter under a run-time branch it is
        // deferred to Python
        let inplace_true = keywords.iter().any(|(k, v)| k.as_deref() == Some("inplace") && v.lit == Lit::Bool(true));
        let activation = path.as_deref().and_then(in_place_activation);
        if let (Some(op), true, 1, false, 1) = (activation, inplace_true, keywords.len(), starred, args.len()) {
            let target = (SiteKind::Call, path.clone().unwrap_or_default());
            if self.defers_write(&args[0]) {
                return self.deferred_write(target, args.remove(0), Vec::new(), c.range());
            }
            if args[0].fresh {
                return self.in_place(target, op, args.remove(0), None, c.range());
            }
            if op != ir::Op::Relu && matches!(args[0].ty, Ty::Tensor(_)) {
                // F.relu keeps the seed's TL220 (its lane)
                let short = target.1.trim_start_matches("torch.nn.functional.");
                let decision = Decision::reject(&rules::IN_PLACE, format!("F.{short}(…, inplace=True) writes into its input, which may be a parameter's"));
                return self.site(target, decision, c.range(), None, &args, &[]);
            }
        }
        // where eager's signature takes one sequence, a lone int or tensor is its TypeError
        // (`torch.reshape(x, -1)`, `F.layer_norm(x, 4)`, `torch.cat(x)`): not claimed
        let lone_int = |a: &Val| a.elems.is_none() && a.ty == Ty::Int;
        let lone_tensor = |a: &Val| a.elems.is_none() && matches!(a.ty, Ty::Tensor(_));
        let sequence_at: Option<(usize, &dyn Fn(&Val) -> bool)> = match path.as_deref() {
            Some("torch.reshape" | "torch.permute" | "torch.nn.functional.layer_norm" | "torch.layer_norm") => Some((1, &lone_int)),
            Some("torch.cat" | "torch.concat" | "torch.concatenate" | "torch.stack") => Some((0, &lone_tensor)),
            _ => None,
        };
        if let Some((index, is_lone)) = sequence_at {
            if let (Some(p), true) = (&path, args.get(index).is_some_and(is_lone)) {
                let decision = Decision::reject(&rules::BAD_ARITY, format!("{p}: argument {} must be a tuple or list (eager raises TypeError)", index + 1));
                return self.site((SiteKind::Call, p.clone()), decision, c.range(), None, &args, &[]);
            }
        }
        // a shape or permutation given as one tuple is the same as its ints one by one
        let takes_sizes = matches!(method_name.as_deref(), Some("view" | "reshape" | "permute" | "expand"))
            || matches!(path.as_deref(), Some("torch.reshape" | "torch.permute"));
        if takes_sizes && args.last().is_some_and(|a| a.elems.is_some()) {
            let elems = args.pop().and_then(|a| a.elems).unwrap_or_default();
            args.extend(elems);
        }
        // the sizes of `torch.zeros(b, 1, d)` are one tuple, as `torch.zeros((b, 1, d))` gives them
        let packs_sizes = matches!(path.as_deref(), Some("torch.zeros" | "torch.empty" | "torch.ones")) || matches!(method_name.as_deref(), Some("repeat" | "flip"));
        if packs_sizes && !args.is_empty() && args.iter().all(|a| a.ty == Ty::Int) {
            let sizes = std::mem::take(&mut args);
            args.push(Val::tuple(sizes));
        }
        // the normalized shape of `F.layer_norm(x, (n,), …)` is ints after the input
        let layer_norm = matches!(path.as_deref(), Some("torch.nn.functional.layer_norm" | "torch.layer_norm"));
        if layer_norm && args.get(1).is_some_and(|a| a.elems.is_some()) {
            let elems = args.remove(1).elems.unwrap_or_default();
            args.splice(1..1, elems);
        }
        // `torch.einsum(eq, [a, b])`: the operands one by one, as `torch.einsum(eq, a, b)`
        if path.as_deref() == Some("torch.einsum") && args.len() == 2 && args[1].elems.is_some() {
            let elems = args.remove(1).elems.unwrap_or_default();
            args.extend(elems);
        }
        // `torch.tensordot(a, b, dims)`: the two lists of contracted dims the op row takes
        let (args, keywords) = match path.as_deref() {
            Some("torch.tensordot") => match tensordot_operands(args, keywords) {
                Ok(operands) => (operands, Vec::new()),
                Err((message, operands)) => {
                    let decision = Decision::reject(&rules::BAD_KEYWORD, message);
                    return self.site((SiteKind::Call, "torch.tensordot".into()), decision, c.range(), None, &operands, &[]);
                }
            },
            _ => (args, keywords),
        };
        // `torch.arange(0, lengths.max(), 1)`: eager reads a rank-0 int64 bound as its one
        // element (an int64 result), as `.item()` does
        let (args, keywords) = match path.as_deref() {
            Some("torch.arange") => (args.into_iter().map(rank0_int_as_item).collect(), keywords.into_iter().map(|(k, v)| (k, rank0_int_as_item(v))).collect()),
            _ => (args, keywords),
        };
        let mut args = args;
        // the tensors of `torch.cat([a, b], dim)` are its leading arguments
        let joins = matches!(path.as_deref(), Some("torch.cat" | "torch.concat" | "torch.concatenate" | "torch.stack"));
        if joins && args.first().is_some_and(|a| a.elems.is_some()) {
            let elems = args.remove(0).elems.unwrap_or_default();
            args.splice(0..0, elems);
        }
        let arg_ops: Vec<Operand> = args.iter().map(Val::operand).collect();
        let kw_ops: Vec<Keyword> = keywords.iter().map(|(n, v)| Keyword { name: n.clone(), value: v.operand() }).collect();
        let recv_op = receiver.as_ref().map(Val::operand);
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
                Target::BinOp { .. } | Target::Compare(_) => "operation".to_string(),
            };
            if !receiver.as_ref().is_some_and(|r| r.explained) {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("{what} is not lowered"), c.range());
            }
            return Val::explained(Ty::Unknown);
        }
        let decision = keywords_in_evaluation_order(decision, &args, &keywords);
        // `t.max(dim)`, `t.topk(k)`: the (values, indices) pair, a tuple value of the IR op
        let pair = match &decision {
            Decision::Claimed(claim) if matches!(claim.op, ir::Op::MaxDim | ir::Op::MinDim | ir::Op::Topk | ir::Op::Sort) => {
                crate::ty::TensorTy::new(crate::ty::Dtype::I64, claim.result.device, claim.result.rank).map(|i| vec![Ty::Tensor(claim.result), Ty::Tensor(i)])
            }
            // `F.multi_head_attention_forward(…, need_weights=False)`: `(output, None)`
            Decision::Claimed(claim) if claim.op == ir::Op::MultiHeadAttentionForward => Some(vec![Ty::Tensor(claim.result), Ty::NoneVal]),
            // `torch.meshgrid(y, x)`: the pair of grids
            Decision::Claimed(claim) if claim.op == ir::Op::Meshgrid => Some(vec![Ty::Tensor(claim.result); 2]),
            // `torch.where(cond)`: a 1-tuple of indices
            Decision::Claimed(claim) if claim.op == ir::Op::WhereNonzero => Some(vec![Ty::Tensor(claim.result)]),
            _ => None,
        };
        // a rank-0 pair would hold int64 rank-0 indices, which have no type
        let decision = match decision {
            Decision::Claimed(claim) if pair.is_none() && matches!(claim.op, ir::Op::MaxDim | ir::Op::MinDim | ir::Op::Topk | ir::Op::Sort) => {
                Decision::reject(&rules::RANK0_RESULT, format!("`{}` of a rank-{} tensor returns int64 rank-{} indices", claim.op.name(), claim.result.rank, claim.result.rank))
            }
            other => other,
        };
        let kw_vals: Vec<Val> = keywords.into_iter().map(|(_, v)| v).collect();
        let parts = matches!(&decision, Decision::Claimed(claim) if claim.op.info().signature == torchlower_ops::Signature::Parts);
        let unpacked_here = self.unpacking.filter(|(range, count)| *range == c.range() && *count != usize::MAX).map(|(_, count)| count);
        let decision = match (parts, unpacked_here, decision) {
            (true, Some(count), Decision::Claimed(mut claim)) => {
                match claim.options {
                    ir::Options::Dim(dim) => claim.options = ir::Options::Parts { dim, count },
                    ir::Options::DynDim => claim.options = ir::Options::PartsDyn { count },
                    _ => {}
                }
                Decision::Claimed(claim)
            }
            (true, None, Decision::Claimed(claim)) => Decision::reject(
                &rules::UNSUPPORTED_TARGET,
                format!("`{}` is lowered only as the value unpacked by an assignment (`a, b = t.{}(…)`)", claim.op.name(), claim.op.name()),
            ),
            (_, _, other) => other,
        };
        let v = self.site(claim::describe_target(target), decision, c.range(), receiver, &args, &kw_vals);
        match (pair, v.ir.clone()) {
            (Some(types), Some(ir)) => {
                let n = types.len() as u8;
                self.returned_tuple = types;
                let pair = match &ir {
                    ir::Expr::Tensor { op: ir::Op::MaxDim, .. } => ir::ReturnedPair::Record("max"),
                    ir::Expr::Tensor { op: ir::Op::MinDim, .. } => ir::ReturnedPair::Record("min"),
                    ir::Expr::Tensor { op: ir::Op::Topk, .. } => ir::ReturnedPair::Record("topk"),
                    ir::Expr::Tensor { op: ir::Op::Sort, .. } => ir::ReturnedPair::Record("sort"),
                    _ => ir::ReturnedPair::Tuple,
                };
                // the results are fresh as the op's single result would be (`topk` allocates)
                Val { pair: Some(pair), fresh: v.fresh, ..Val::lowered(Ty::Tuple(n), Lit::NotLiteral, ir) }
            }
            _ => v,
        }
    }

    /// `torch.tensor([elt for i in range(a) for j in range(b)])` (DLRM's interaction indices):
    /// the loops lowered natively into an int64 rank-1 tensor (`Expr::IntComprehension`).
    /// The comprehension's names live only inside it, as in Python 3; a name another local
    /// of the function also has is not taken (the two would share one Rust local).
    fn int_comprehension(&mut self, c: &ast::ExprCall, comp: &ast::ExprListComp) -> Val {
        let mut loops = Vec::new();
        let mut problem = None;
        for g in &comp.generators {
            let name = match &g.target {
                Expr::Name(n) if !self.locals.contains(n.id.as_str()) => n.id.to_string(),
                _ => {
                    problem = Some("its loop names must be plain names no other local of the function has");
                    break;
                }
            };
            if g.is_async || !g.ifs.is_empty() {
                problem = Some("`if` clauses and `async for` are not lowered");
                break;
            }
            // `range` reports its own problems
            let Some((start, stop, step)) = self.range_call(&g.iter) else { break };
            self.locals.insert(name.clone());
            self.env.bind(&name, Ty::Int);
            loops.push((name, start, stop, step));
        }
        let elt = if problem.is_none() && loops.len() == comp.generators.len() {
            let v = self.expr(&comp.elt);
            self.int_operand(v, comp.elt.range(), "list element")
        } else {
            None
        };
        for (name, ..) in &loops {
            self.locals.remove(name);
            self.env.unbind(name);
        }
        if let Some(problem) = problem {
            self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("torch.tensor of a list comprehension: {problem}"), c.range());
            return Val::explained(Ty::Unknown);
        }
        let Some(elt) = elt else { return Val::explained(Ty::Unknown) };
        let result = crate::ty::TensorTy { dtype: crate::ty::Dtype::I64, device: crate::ty::Device::Cpu, rank: 1 };
        let claim = claim::Claim { rule: &rules::TENSOR_OF_INTS, result, op: ir::Op::TensorOfInts, options: ir::Options::None, operands: Vec::new() };
        let v = self.site((SiteKind::Call, "torch.tensor".to_string()), Decision::Claimed(claim), c.range(), None, &[], &[]);
        match v.ir {
            Some(ir::Expr::Tensor { site, .. }) => {
                let mut made = Val::lowered(v.ty, Lit::NotLiteral, ir::Expr::IntComprehension { site, loops, elt: Box::new(elt) });
                made.fresh = true;
                made
            }
            _ => v,
        }
    }

    /// `isinstance(v, torch.Tensor)` (or `int`, `float`, `bool`, `str`) of a typed or static
    /// value: static, as the boundary checked the type.
    fn isinstance_call(&mut self, c: &ast::ExprCall) -> Val {
        let static_answer = match (&c.arguments.args[..], c.arguments.keywords.is_empty()) {
            ([value, class], true) => {
                let v = self.expr(value);
                let locals = &self.locals;
                let class_path = self.scope.dotted_path(class, &|n| locals.contains(n));
                let builtin = |name: &str| matches!(class, Expr::Name(n) if n.id.as_str() == name && !locals.contains(name) && self.scope.is_builtin(name));
                match v.ty {
                    _ if v.explained => return Val::knock_on([&v]),
                    Ty::Tensor(_) if class_path.as_deref() == Some("torch.Tensor") => Some(true),
                    Ty::Tensor(_) if builtin("int") || builtin("float") || builtin("bool") => Some(false),
                    Ty::Int | Ty::Float | Ty::Bool if class_path.as_deref() == Some("torch.Tensor") => Some(false),
                    Ty::Int if builtin("int") => Some(true),
                    // an int parameter may hold a bool at run time
                    Ty::Int if builtin("bool") => None,
                    Ty::Float if builtin("float") => Some(true),
                    // bool is a subclass of int
                    Ty::Bool if builtin("bool") || builtin("int") => Some(true),
                    Ty::Int | Ty::Float | Ty::Bool if builtin("int") || builtin("float") || builtin("bool") => Some(false),
                    // a static string (`device_type = x.device.type`), dtype or device
                    Ty::Str if builtin("str") => match v.lit {
                        Lit::Str(_) => Some(true),
                        Lit::Dtype(_) | Lit::Device(_) => Some(false),
                        _ => None,
                    },
                    Ty::Tensor(_) | Ty::Int | Ty::Float | Ty::Bool if builtin("str") => Some(false),
                    _ => None,
                }
            }
            _ => None,
        };
        match static_answer {
            Some(value) => Val::lowered(Ty::Bool, Lit::Bool(value), ir::Expr::Bool(value)),
            None => {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, "`isinstance` is lowered on a typed value and torch.Tensor, int, float, bool or str only".into(), c.range());
                Val::explained(Ty::Unknown)
            }
        }
    }

    /// `math.sqrt(x)`, `math.log(x)`, `math.exp(x)` (`f` given) or `float(x)` (`f` None) of
    /// one int or float: a float.
    fn number_call(&mut self, c: &ast::ExprCall, name: &str, f: Option<ir::MathFn>) -> Val {
        let (args, keywords, starred) = self.args(c);
        let [arg] = args.as_slice() else {
            self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`{name}` takes one positional argument here"), c.range());
            return Val::explained(Ty::Unknown);
        };
        // `float("-inf")`, `float("nan")`, `float("1e-4")`: a float literal, as CPython parses it
        if let (None, Lit::Str(text), true) = (f, &arg.lit, keywords.is_empty()) {
            let parsed = text.trim().parse::<f64>().ok().filter(|_| !text.contains('_'));
            if let Some(v) = parsed {
                return Val::lowered(Ty::Float, Lit::Float(v), ir::Expr::Float(v));
            }
            self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`float({text:?})` is not a float literal CPython accepts here"), c.range());
            return Val::explained(Ty::Unknown);
        }
        if starred || !keywords.is_empty() || !(arg.ty.is_scalar_int() || arg.ty == Ty::Float) {
            if !arg.explained {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`{name}` of {} is not lowered", arg.ty.describe()), c.range());
            }
            return Val::knock_on([arg]);
        }
        let Some(value) = super::expr::float_operand(arg.clone()) else { return Val::explained(Ty::Float) };
        match f {
            Some(f) => Val::lowered(Ty::Float, Lit::NotLiteral, ir::Expr::Math { f, arg: Box::new(value) }),
            None => Val::lowered(Ty::Float, Lit::NotLiteral, value),
        }
    }

    /// `math.floor(x)` / `math.ceil(x)` / `math.trunc(x)` / `int(x)`: an int (a float's NaN and
    /// ±inf raise CPython's errors; one beyond 64 bits refuses natively); an int argument is
    /// returned as it is.
    fn rounding_call(&mut self, c: &ast::ExprCall, name: &str, f: ir::MathFn) -> Val {
        let (args, keywords, starred) = self.args(c);
        match (args.as_slice(), keywords.is_empty(), starred) {
            ([arg], true, false) if arg.ty == Ty::Int => arg.clone(),
            ([arg], true, false) if arg.ty == Ty::Float => match arg.ir.clone() {
                Some(value) => Val::lowered(Ty::Int, Lit::NotLiteral, ir::Expr::Math { f, arg: Box::new(value) }),
                None => Val::explained(Ty::Int),
            },
            ([arg], true, false) if arg.explained => Val::knock_on([arg]),
            _ => {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`{name}` is lowered for one int or float"), c.range());
                Val::knock_on(&args)
            }
        }
    }

    /// `min(a, b, …)` / `max(…)` of two or more ints, or of floats: CPython's first extreme.
    /// Mixed ints and floats are not lowered (CPython returns whichever object wins, so the
    /// result's type would depend on the values).
    fn extreme_call(&mut self, c: &ast::ExprCall, max: bool) -> Val {
        let name = if max { "max" } else { "min" };
        let (args, keywords, starred) = self.args(c);
        let kind = match args.first().map(|a| a.ty) {
            Some(Ty::Int) => ir::ScalarKind::Int,
            Some(Ty::Float) => ir::ScalarKind::Float,
            _ => ir::ScalarKind::Bool,
        };
        let same = args.iter().all(|a| a.ty == args[0].ty) && kind != ir::ScalarKind::Bool;
        if starred || !keywords.is_empty() || args.len() < 2 || !same {
            if !args.iter().any(|a| a.explained) {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`{name}` is lowered for two or more ints, or two or more floats"), c.range());
            }
            return Val::knock_on(&args);
        }
        let ty = args[0].ty;
        // all literal: the value, as CPython computes it
        let literal = match kind {
            ir::ScalarKind::Int => {
                let ints: Option<Vec<i64>> = args.iter().map(|a| if let Lit::Int(i) = a.lit { Some(i) } else { None }).collect();
                ints.and_then(|v| if max { v.iter().copied().max() } else { v.iter().copied().min() }).map(Lit::Int)
            }
            _ => None,
        };
        let Some(items) = args.into_iter().map(|a| a.ir).collect::<Option<Vec<_>>>() else { return Val::explained(Ty::Unknown) };
        match literal {
            Some(Lit::Int(v)) => Val::lowered(ty, Lit::Int(v), ir::Expr::Int(v)),
            _ => Val::lowered(ty, Lit::NotLiteral, ir::Expr::Extreme { max, kind, items }),
        }
    }

    /// Whether an in-place write into `target` is deferred to Python rather than rejected: it
    /// may alias a parameter, and it sits on a branch of a run-time condition (so the other
    /// branch can run natively). See [`rules::DEFERRED_WRITE`].
    pub(super) fn defers_write(&self, target: &Val) -> bool {
        self.conditional > 0 && !target.fresh && matches!(target.ty, Ty::Tensor(t) if t.device == crate::ty::Device::Cpu)
    }

    /// An in-place write into `local`, a tensor that may be a parameter, on a branch of a
    /// run-time condition: the site is claimed as deferred, and native code refuses when it is
    /// reached (`Expr::Defer`). The value has `local`'s type and, like eager's result, may
    /// alias a parameter (so a chained `x.add_(3).clamp_(0, 6)` defers too).
    pub(super) fn deferred_write(&mut self, target: (SiteKind, String), local: Val, operands: Vec<Val>, range: TextRange) -> Val {
        let Ty::Tensor(t) = local.ty else { return Val::explained(Ty::Unknown) };
        let what = match target.0 {
            SiteKind::Binop => format!("`{}`", target.1),
            _ => format!("`{}`", target.1.trim_start_matches("Tensor.")),
        };
        let claim = claim::Claim { rule: &rules::DEFERRED_WRITE, result: t, op: ir::Op::Mul, options: ir::Options::None, operands: Vec::new() };
        let v = self.site(target, Decision::Claimed(claim), range, None, &[], &[]);
        // the tensor operands are computed (their sites have code), then the write refuses
        let args: Option<Vec<ir::Expr>> = std::iter::once(&local).chain(&operands).filter(|o| matches!(o.ty, Ty::Tensor(_))).map(|o| o.ir.clone()).collect();
        match (v.ir, args) {
            (Some(ir::Expr::Tensor { site, .. }), Some(args)) => Val::lowered(local.ty, Lit::NotLiteral, ir::Expr::Defer { site, what, args }),
            _ => Val::explained(local.ty),
        }
    }

    /// An in-place op (`op`: relu, add, sub, mul, div, or `|`/`&`/`^` of bool tensors) on `local`, a tensor whose storage is
    /// not a parameter's: typed as its out-of-place form, which must keep `local`'s type, then
    /// lowered in place (`Expr::InPlace`). `target` is the site's kind and name.
    pub(super) fn in_place(&mut self, target: (SiteKind, String), op: ir::Op, local: Val, other: Option<Val>, range: TextRange) -> Val {
        let local_op = Operand { ty: local.ty, lit: Lit::NotLiteral };
        let other_ops: Vec<Operand> = other.iter().map(|v| Operand { ty: v.ty, lit: v.lit.clone() }).collect();
        let out_of_place = match (op, other_ops.first()) {
            (ir::Op::Relu, None) => claim::decide(&Query { target: Target::Method("relu"), receiver: Some(&local_op), args: &[], keywords: &[], starred: false }),
            // an activation of `in_place_activation`, called without `inplace`
            (_, None) if target.0 == SiteKind::Call => {
                claim::decide(&Query { target: Target::Function(&target.1), receiver: None, args: std::slice::from_ref(&local_op), keywords: &[], starred: false })
            }
            (_, Some(rhs)) => {
                let symbol = match op {
                    ir::Op::Add => ast::Operator::Add,
                    ir::Op::Sub => ast::Operator::Sub,
                    ir::Op::Mul => ast::Operator::Mult,
                    ir::Op::LogicalOr => ast::Operator::BitOr,
                    ir::Op::LogicalAnd => ast::Operator::BitAnd,
                    ir::Op::LogicalXor => ast::Operator::BitXor,
                    _ => ast::Operator::Div,
                };
                let args = [local_op.clone(), rhs.clone()];
                claim::decide(&Query { target: Target::BinOp { op: symbol, augmented: false }, receiver: None, args: &args, keywords: &[], starred: false })
            }
            _ => Decision::reject(&rules::BAD_ARITY, "in-place op with these arguments"),
        };
        // the arithmetic and relu have rules of their own for the in-place form; the other
        // activations claim it under their own rule (the same op, written into the input)
        let rule = match op {
            ir::Op::Relu => Some(&rules::RELU_IN_PLACE),
            ir::Op::Add => Some(&rules::ADD_IN_PLACE),
            ir::Op::Sub => Some(&rules::SUB_IN_PLACE),
            ir::Op::Mul => Some(&rules::MUL_IN_PLACE),
            ir::Op::Div => Some(&rules::DIV_IN_PLACE),
            _ => None,
        };
        let decision = match out_of_place {
            // libtorch's in-place kernels would run on the GPU: no kernel of ours writes in place
            Decision::Claimed(c) if c.result.device == crate::ty::Device::Cuda0 => {
                Decision::reject(&rules::CUDA_UNSUPPORTED, "in-place ops on cuda:0 are not lowered yet")
            }
            Decision::Claimed(c) if Ty::Tensor(c.result) == local.ty && (rule.is_none() || matches!(c.options, ir::Options::None | ir::Options::ScalarRight)) => {
                let operands = if other.is_some() { vec![OperandRef::Receiver, OperandRef::Arg(0)] } else { vec![OperandRef::Receiver] };
                Decision::Claimed(claim::Claim { rule: rule.unwrap_or(c.rule), result: c.result, op: c.op, options: c.options, operands })
            }
            Decision::Claimed(c) => Decision::reject(&rules::IN_PLACE, format!("the result ({}) would not fit the updated tensor ({})", Ty::Tensor(c.result).describe(), local.ty.describe())),
            other => other,
        };
        let others: Vec<Val> = other.into_iter().collect();
        let v = self.site(target, decision, range, Some(local), &others, &[]);
        match v.ir {
            Some(ir::Expr::Tensor { site, op, options, args, .. }) => {
                let mut updated = Val::lowered(v.ty, Lit::NotLiteral, ir::Expr::InPlace { site, op, options, args });
                updated.fresh = true;
                updated
            }
            _ => v,
        }
    }

    /// `t.clamp_(max=…)`, `t.zero_()`, `t.fill_(v)`, `t.sigmoid_()` … on a local whose storage
    /// is not a parameter's (Transformers' `last_ind.clamp_(max=…)`): the op computed out of
    /// place (`t.clamp(…)`, `torch.zeros_like(t)`, `torch.full_like(t, v)`), claimed under its
    /// own rule, then written into the local's storage, as eager's in-place kernel leaves it;
    /// views of the local see the write. Claimed when the other operands are Python numbers
    /// (so the result has the local's shape, and no error depends on the form) and the result
    /// has the local's type (eager's in-place ops cannot change it); the views' in-place
    /// methods (`t_()`, `unsqueeze_()`, which change metadata, not values) are not. A tensor
    /// operand is taken by `masked_fill_` only, through eager's own in-place kernel (the mask
    /// broadcasts to the local's shape, with eager's error otherwise). The receiver is a local
    /// or an indexed view of one: it is read twice (written into, and the op's operand), which
    /// only a name or a view of one allows (`torch.multinomial(p, 1).clamp_(…)` would draw twice).
    fn write_back(&mut self, c: &ast::ExprCall, name: &str, base: &str, local: Val) -> Val {
        let (args, keywords, starred) = self.args(c);
        let target_ir = local.ir.clone();
        let named = match &target_ir {
            Some(ir::Expr::Local { .. }) => true,
            Some(ir::Expr::Index { tensor, .. }) => matches!(**tensor, ir::Expr::Local { .. }),
            _ => false,
        };
        let local_op = local.operand();
        let arg_ops: Vec<Operand> = args.iter().map(Val::operand).collect();
        let kw_ops: Vec<Keyword> = keywords.iter().map(|(n, v)| Keyword { name: n.clone(), value: v.operand() }).collect();
        let kw_vals: Vec<Val> = keywords.into_iter().map(|(_, v)| v).collect();
        let function = match base {
            "zero" => Some("torch.zeros_like"),
            "fill" => Some("torch.full_like"),
            _ => None,
        };
        let decision = match function {
            Some(path) => {
                let operands: Vec<Operand> = std::iter::once(local_op.clone()).chain(arg_ops.iter().cloned()).collect();
                claim::decide(&Query { target: Target::Function(path), receiver: None, args: &operands, keywords: &kw_ops, starred })
            }
            None => claim::decide(&Query { target: Target::Method(base), receiver: Some(&local_op), args: &arg_ops, keywords: &kw_ops, starred }),
        };
        let tensor_operand = args.iter().chain(&kw_vals).any(|v| matches!(v.ty, Ty::Tensor(_)));
        let kernel = base == "masked_fill";
        // `one_hot.scatter_(-1, x.unsqueeze(-1), 1)`: the index is the one tensor, and it cannot
        // share the local's storage (an int64 tensor, the local is not), so computing the
        // scatter out of place and writing it back is eager's in-place result
        let scattered_number = base == "scatter"
            && matches!(local.ty, Ty::Tensor(t) if t.dtype != crate::ty::Dtype::I64)
            && args.iter().chain(&kw_vals).filter(|v| matches!(v.ty, Ty::Tensor(_))).count() == 1
            && args.len() == 3
            && matches!(args[2].ty, Ty::Int | Ty::Float);
        let decision = match decision {
            Decision::Claimed(c) if c.op.info().lane == torchlower_ops::Lane::Views => {
                Decision::reject(&rules::IN_PLACE, format!("`.{name}()` changes the tensor's shape or strides in place, which is not lowered"))
            }
            Decision::Claimed(c) if Ty::Tensor(c.result) != local.ty => {
                Decision::reject(&rules::IN_PLACE, format!("`.{name}()`: the result ({}) would not fit the updated tensor ({})", Ty::Tensor(c.result).describe(), local.ty.describe()))
            }
            Decision::Claimed(_) if !named => {
                Decision::reject(&rules::IN_PLACE, format!("`.{name}()` on a computed value (not a local or a view of one) is not lowered"))
            }
            Decision::Claimed(_) if tensor_operand && !kernel && !scattered_number => {
                Decision::reject(&rules::IN_PLACE, format!("`.{name}()` with a tensor operand is not lowered (Python numbers are; `masked_fill_` takes its mask, `scatter_` its index)"))
            }
            other => other,
        };
        let target = (SiteKind::Method, format!("Tensor.{name}"));
        let v = match function {
            Some(_) => {
                let operands: Vec<Val> = std::iter::once(local).chain(args).collect();
                self.site(target, decision, c.range(), None, &operands, &kw_vals)
            }
            None => self.site(target, decision, c.range(), Some(local), &args, &kw_vals),
        };
        match (v.ir, target_ir) {
            (Some(value @ ir::Expr::Tensor { .. }), Some(target)) => {
                let mut updated = Val::lowered(v.ty, Lit::NotLiteral, ir::Expr::WriteBack { target: Box::new(target), value: Box::new(value), kernel });
                updated.fresh = true;
                updated
            }
            _ => Val::explained(v.ty),
        }
    }

    /// `t.item()` of a CPU tensor: its one element as the Python number eager gives (a float
    /// for float32, an int for int64 / int32, a bool for bool), the count checked at run time.
    fn item(&mut self, c: &ast::ExprCall, tensor: Val, t: crate::ty::TensorTy) -> Val {
        let (args, keywords, starred) = self.args(c);
        if starred || !keywords.is_empty() || !args.is_empty() {
            self.diag(&rules::BAD_ARITY, "`.item()` takes no arguments (eager raises TypeError)".into(), c.range());
            return Val::explained(Ty::Unknown);
        }
        if t.device != crate::ty::Device::Cpu {
            self.diag(&rules::CUDA_UNSUPPORTED, "`.item()` of a cuda:0 tensor is CPU-only so far (a device-to-host read)".into(), c.range());
            return Val::explained(Ty::Unknown);
        }
        let Some(value) = tensor.ir else { return Val::explained(Ty::Unknown) };
        let (ty, kind) = match t.dtype {
            crate::ty::Dtype::F32 => (Ty::Float, ir::ScalarKind::Float),
            crate::ty::Dtype::I64 | crate::ty::Dtype::I32 => (Ty::Int, ir::ScalarKind::Int),
            crate::ty::Dtype::Bool => (Ty::Bool, ir::ScalarKind::Bool),
        };
        Val::lowered(ty, Lit::NotLiteral, ir::Expr::Item { kind, tensor: Box::new(value) })
    }

    /// `t.size()`, `t.size(d)` (literal `d`, negative too), `t.dim()`, `t.numel()` of a tensor
    /// local: Python ints (a tuple for `size()`).
    fn shape_method(&mut self, c: &ast::ExprCall, name: &str, tensor: Val, rank: u8) -> Val {
        let (args, keywords, starred) = self.args(c);
        if starred || !keywords.is_empty() || args.len() > usize::from(name == "size") {
            self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`.{name}()` with these arguments is not lowered"), c.range());
            return Val::explained(Ty::Unknown);
        }
        match (name, args.first()) {
            ("dim" | "ndimension", _) => Val::lowered(Ty::Int, Lit::Int(i64::from(rank)), ir::Expr::Int(i64::from(rank))),
            ("numel", _) => match self.local_tensor(tensor, c.range(), "`.numel()`") {
                Some(local) => Val::lowered(Ty::Int, Lit::NotLiteral, ir::Expr::Numel(Box::new(local))),
                None => Val::explained(Ty::Unknown),
            },
            (_, None) => self.shape_tuple(tensor, rank, c.range()),
            (_, Some(dim)) => {
                let rank = i64::from(rank);
                match dim.lit {
                    Lit::Int(d) if (-rank..rank).contains(&d) => match self.local_tensor(tensor, c.range(), "`.size(dim)`") {
                        Some(local) => super::expr::size_val(&local, d.rem_euclid(rank) as usize),
                        None => Val::explained(Ty::Unknown),
                    },
                    Lit::Int(d) => {
                        self.diag(&rules::DIM_OUT_OF_RANGE, format!("`.size({d})` of a rank-{rank} tensor raises IndexError"), c.range());
                        Val::explained(Ty::Unknown)
                    }
                    _ => {
                        self.diag(&rules::DIM_NOT_LITERAL, "`.size(dim)` with a dim that is not an int literal is not lowered".into(), c.range());
                        Val::explained(Ty::Unknown)
                    }
                }
            }
        }
    }

    /// What `t.float()`, `t.to(torch.float32)`, `t.to(x.dtype)`, `t.type(…)`, `t.type_as(x)`
    /// do to a tensor of type `t`: nothing (eager returns `t` itself, and so does native code),
    /// a copy in another dtype of the vocabulary on the same device (`Convert`), or something
    /// else (a transfer or another dtype: `None`, the transfer lane rejects it).
    fn conversion(&mut self, c: &ast::ExprCall, name: &str, t: crate::ty::TensorTy) -> Option<Conversion> {
        let (own, device) = (super::expr::dtype_name(t.dtype), super::expr::device_name(t.device));
        if c.arguments.args.iter().any(|a| matches!(a, Expr::Starred(_))) {
            return None;
        }
        let no_keywords = c.arguments.keywords.is_empty();
        let to = |target: &'static str| Some(if target == own { Conversion::Itself } else { Conversion::To(target) });
        match (name, &c.arguments.args[..]) {
            ("float", []) if no_keywords => return to("torch.float32"),
            ("long", []) if no_keywords => return to("torch.int64"),
            ("int", []) if no_keywords => return to("torch.int32"),
            ("bool", []) if no_keywords => return to("torch.bool"),
            ("type_as", [arg]) if no_keywords => {
                let v = self.expr(arg);
                return match v.ty {
                    _ if v.explained => Some(Conversion::Explained),
                    Ty::Tensor(other) if other.device == t.device => to(super::expr::dtype_name(other.dtype)),
                    _ => None,
                };
            }
            ("to", args) if args.len() <= 2 => {}
            ("type", [_]) if no_keywords => {}
            _ => return None,
        }
        // `.to(dtype)`, `.to(device)`, `.to(device, dtype)`, `.to(dtype=…, device=…)`: every
        // device given is the tensor's own; the dtype (if any) picks the copy
        let mut values: Vec<Lit> = Vec::new();
        for arg in c.arguments.args.iter() {
            let v = self.expr(arg);
            if v.explained {
                return Some(Conversion::Explained);
            }
            // `.to(other)` (Llama's `cache_k.to(xq)`): to the other tensor's dtype and device,
            // as `type_as`; another device is a transfer (TL205)
            if let (Ty::Tensor(other), 1, true) = (v.ty, c.arguments.args.len(), no_keywords) {
                return (other.device == t.device).then(|| to(super::expr::dtype_name(other.dtype))).flatten();
            }
            values.push(v.lit);
        }
        for k in c.arguments.keywords.iter() {
            let v = self.expr(&k.value);
            if v.explained {
                return Some(Conversion::Explained);
            }
            match (k.arg.as_ref().map(|a| a.as_str()), v.lit) {
                (Some("dtype"), lit @ Lit::Dtype(_)) | (Some("device"), lit @ (Lit::Device(_) | Lit::Str(_))) => values.push(lit),
                (Some("copy" | "non_blocking"), Lit::Bool(false)) => {}
                _ => return None,
            }
        }
        let own_device = |lit: &Lit| match lit {
            Lit::Device(d) => *d == device,
            // a device string naming the device exactly ("cpu", "cuda:0")
            Lit::Str(s) => s == device,
            _ => false,
        };
        let dtypes: Vec<&'static str> = values.iter().filter_map(|l| if let Lit::Dtype(d) = l { Some(*d) } else { None }).collect();
        if values.is_empty() || dtypes.len() > 1 || !values.iter().all(|l| matches!(l, Lit::Dtype(_)) || own_device(l)) {
            return None;
        }
        match dtypes.first() {
            None => Some(Conversion::Itself),
            Some(d) if claim::creation::DTYPES.iter().any(|(name, _)| name == d) => to(d),
            Some(_) => None,
        }
    }

    /// A call of another top-level function of the module: arguments bound to its parameters
    /// (positionally or by name) with exactly the parameter types, so that its native body
    /// runs as Python would run it; the caller is native only if the callee is (`lib.rs`).
    fn helper_call(&mut self, c: &ast::ExprCall, name: &str, callee: &super::Callee) -> Val {
        let (args, keywords, starred) = self.args(c);
        let mut bound: Vec<Option<Val>> = vec![None; callee.params.len()];
        let mut problem = starred.then(|| "starred arguments".to_string());
        if reorders_computation(&args, &keywords, |k| callee.params.iter().position(|(p, _)| p == k)) {
            problem = Some(REORDERED.to_string());
        }
        if args.len() > callee.params.len() {
            problem = Some(format!("{} positional arguments for {} parameters", args.len(), callee.params.len()));
        }
        for (slot, v) in bound.iter_mut().zip(args) {
            *slot = Some(v);
        }
        for (keyword, v) in keywords {
            match keyword.and_then(|k| callee.params.iter().position(|(p, _)| *p == k)) {
                Some(i) if bound[i].is_none() => bound[i] = Some(v),
                _ => problem = Some("a keyword that matches no free parameter".to_string()),
            }
        }
        // an omitted argument with a literal default: that value, as Python passes it
        for (slot, default) in bound.iter_mut().zip(&callee.defaults) {
            if let (None, Some((ty, lit, ir))) = (&slot, default) {
                *slot = Some(match ir {
                    Some(ir) => Val::lowered(*ty, lit.clone(), ir.clone()),
                    None => Val::opaque(*ty, lit.clone()),
                });
            }
        }
        // arguments of other types than the annotations (Python ignores them): a specialised
        // copy of the callee for these types
        let given: Option<Vec<Ty>> = bound.iter().map(|v| v.as_ref().filter(|v| !v.explained).map(|v| v.ty)).collect();
        let mut target = (callee.index, callee.returns, callee.returns_tuple.clone());
        if let (None, Some(types)) = (&problem, given) {
            // an unannotated callee (parameters or return `Unknown`) is always specialised
            let differs = types.iter().zip(&callee.params).any(|(t, (_, want))| t != want) || callee.returns == Ty::Unknown;
            let ints = |v: &Option<Val>| v.as_ref().and_then(|v| v.elems.as_ref()).is_some_and(|e| e.len() <= crate::resolve::annotations::MAX_INT_SEQUENCE && e.iter().all(|e| e.ty == Ty::Int));
            let concrete = types.iter().zip(&bound).all(|(t, v)| match t {
                Ty::Tensor(_) | Ty::Int | Ty::Float | Ty::Bool | Ty::NoneVal => true,
                // a list or tuple of ints: a parameter of that many ints
                Ty::Tuple(_) | Ty::List(_) => ints(v),
                _ => false,
            });
            if differs && concrete {
                match self.spec.variant(callee.index, &types) {
                    Ok(copy) => target = copy,
                    Err(why) => problem = Some(format!("called with ({}): {why}", types.iter().map(|t| t.describe()).collect::<Vec<_>>().join(", "))),
                }
            }
        }
        let params = self.spec_params(&target, &callee.params, &bound);
        let mut irs = Vec::new();
        let arguments_fresh = bound.iter().flatten().all(|v| v.fresh || !matches!(v.ty, Ty::Tensor(_)));
        for ((param, ty), v) in params.iter().zip(bound) {
            match v {
                None => problem = problem.or(Some(format!("no argument for `{param}`"))),
                Some(v) if v.ty != *ty => {
                    if !v.explained {
                        problem = problem.or(Some(format!("`{param}` is {}, the parameter says {}", v.ty.describe(), ty.describe())));
                    } else {
                        problem = problem.or(Some(String::new()));
                    }
                }
                // a parameter that is None has no value in the callee's Rust body
                Some(v) if v.ty == Ty::NoneVal => {}
                // a list or tuple of ints is passed as its ints
                Some(v) if v.ty.items().is_some() => {
                    for element in v.elems.unwrap_or_default() {
                        if element.ty != Ty::Int {
                            problem = problem.or(Some(format!("`{param}` holds {}, where a list or tuple parameter holds ints", element.ty.describe())));
                        } else if let Some(e) = self.need(element, c.range(), "argument") {
                            irs.push(e);
                        } else {
                            problem = problem.or(Some(String::new()));
                        }
                    }
                }
                Some(v) => match self.need(v, c.range(), "argument") {
                    Some(e) => irs.push(e),
                    None => problem = problem.or(Some(String::new())),
                },
            }
        }
        // a tuple result is lowered only where a statement takes it apart or returns it
        let statement_value = self.unpacking.is_some_and(|(range, _)| range == c.range());
        let (function, returns, returns_tuple) = target;
        if problem.is_none() && !returns_tuple.is_empty() && !statement_value {
            problem = Some(format!("`{name}` returns a tuple, which is lowered only as `a, b = {name}(…)` or `return {name}(…)`"));
        }
        // the callee can return only new tensors or its arguments (and views of them): with
        // every tensor argument fresh, so is the result (`log_prob = f(d.log_prob(a));
        // log_prob -= …` updates nothing of the caller's)
        let fresh = matches!(returns, Ty::Tensor(_)) && arguments_fresh;
        match problem {
            None => {
                self.calls.insert(function);
                self.returned_tuple = returns_tuple;
                let mut v = Val::lowered(returns, Lit::NotLiteral, ir::Expr::Call { function, args: irs });
                v.fresh = fresh;
                v.pair = Some(ir::ReturnedPair::Of(function));
                v
            }
            Some(why) => {
                if !why.is_empty() {
                    self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("call of `{name}`: {why}"), c.range());
                }
                Val::explained(Ty::Unknown)
            }
        }
    }

    /// The parameter types a call binds against: the annotations, or for a specialised copy
    /// (`target` not the callee itself) the argument types it was made for.
    fn spec_params(&self, target: &variants::Specialised, annotated: &[(String, Ty)], bound: &[Option<Val>]) -> Vec<(String, Ty)> {
        if target.0 < self.spec.functions {
            return annotated.to_vec();
        }
        annotated.iter().zip(bound).map(|((name, ty), v)| (name.clone(), v.as_ref().map_or(*ty, |v| v.ty))).collect()
    }

    /// `sum(seq)` of a tuple or list of known length whose elements are Python ints: `0 +
    /// seq[0] + seq[1] + …`, as Python adds them (Swin's `if sum(shift_size) > 0:`).
    fn sum_call(&mut self, c: &ast::ExprCall) -> Val {
        let (args, keywords, starred) = self.args(c);
        let ints = match (args.as_slice(), keywords.is_empty() && !starred) {
            ([v], true) => v.sequence_items().filter(|e| e.iter().all(|e| e.ty == Ty::Int)),
            _ => None,
        };
        let Some(ints) = ints else {
            if !args.iter().any(|a| a.explained) {
                self.diag(&rules::UNSUPPORTED_EXPRESSION, "`sum()` is lowered of one tuple or list of Python ints".into(), c.range());
            }
            return Val::knock_on(&args);
        };
        let zero = Val::lowered(Ty::Int, Lit::Int(0), ir::Expr::Int(0));
        ints.into_iter().fold(zero, |total, item| self.binop(ast::Operator::Add, false, total, item, c.range()))
    }

    /// `list(v)` / `tuple(v)` (as `kind` is) of a tuple or list of known length, or of
    /// nothing: a new sequence of the same elements (a new list nothing else refers to).
    fn sequence_call(&mut self, c: &ast::ExprCall, kind: Ty) -> Val {
        // `tuple(range(1, x.ndim - 1))` (RevIN's reduced dims): the ints, when every bound is
        // known while analysing
        if let ([Expr::Call(inner)], true) = (&c.arguments.args[..], c.arguments.keywords.is_empty()) {
            if let Some(ints) = self.literal_range(inner) {
                let elems = ints.into_iter().map(|i| Val::lowered(Ty::Int, Lit::Int(i), ir::Expr::Int(i))).collect();
                let mut made = Val::sequence(kind, elems);
                made.fresh = matches!(kind, Ty::List(_));
                return made;
            }
        }
        let (args, keywords, starred) = self.args(c);
        let elems = match (args.as_slice(), keywords.is_empty() && !starred) {
            ([], true) => Some(Vec::new()),
            ([v], true) => v.sequence_items(),
            _ => None,
        };
        let Some(elems) = elems else {
            if !args.iter().any(|a| a.explained) {
                let what = args.first().map_or_else(|| "these arguments".to_string(), |v| v.ty.describe());
                self.diag(&rules::UNSUPPORTED_EXPRESSION, format!("`{}()` of {what} is not lowered (of a tuple or list of known length it is)", kind.sequence_name()), c.range());
            }
            return Val::knock_on(&args);
        };
        let mut made = Val::sequence(kind, elems);
        made.fresh = matches!(kind, Ty::List(_));
        made
    }

    /// The ints of `range(…)` (the builtin) when its one to three bounds are int literals or
    /// values known while analysing (`x.ndim - 1`), at most 64 of them; `None` otherwise (then
    /// nothing was evaluated).
    pub(super) fn literal_range(&mut self, c: &ast::ExprCall) -> Option<Vec<i64>> {
        let Expr::Name(f) = &*c.func else { return None };
        if f.id.as_str() != "range" || self.locals.contains("range") || !self.scope.is_builtin("range") || !c.arguments.keywords.is_empty() {
            return None;
        }
        let known = |e: &Expr| -> bool { matches!(e, Expr::NumberLiteral(_) | Expr::BinOp(_) | Expr::UnaryOp(_) | Expr::Attribute(_) | Expr::Name(_)) };
        if c.arguments.args.is_empty() || c.arguments.args.len() > 3 || !c.arguments.args.iter().all(known) {
            return None;
        }
        let mark = self.mark(0);
        let bounds: Vec<Option<i64>> = c.arguments.args.iter().map(|a| match self.expr(a).lit { Lit::Int(v) => Some(v), _ => None }).collect();
        let bounds: Option<Vec<i64>> = bounds.into_iter().collect();
        let (start, stop, step) = match bounds.as_deref() {
            Some(&[stop]) => (0, stop, 1),
            Some(&[start, stop]) => (start, stop, 1),
            Some(&[start, stop, step]) if step != 0 => (start, stop, step),
            _ => {
                // walked again as a plain expression (its diagnostics then)
                self.undo(mark, &mut Vec::new());
                return None;
            }
        };
        let ceil_div = |span: i128, by: i128| (span.max(0) + by - 1) / by;
        let (start, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
        let count = if step > 0 { ceil_div(stop - start, step) } else { ceil_div(start - stop, -step) };
        if count > 64 {
            self.undo(mark, &mut Vec::new());
            return None;
        }
        (0..count).map(|i| i64::try_from(start + i * step).ok()).collect()
    }

    /// `len(t)` (the size of dim 0 of a tensor local) or `len(tup)` (a literal).
    fn len_call(&mut self, c: &ast::ExprCall) -> Val {
        let (args, keywords, starred) = self.args(c);
        match (args.as_slice(), keywords.is_empty() && !starred) {
            ([v], true) if v.sequence_items().is_some() => {
                let n = v.elems.as_ref().map_or(0, Vec::len) as i64;
                Val::lowered(Ty::Int, Lit::Int(n), ir::Expr::Int(n))
            }
            ([v], true) if matches!(v.ty, Ty::Tensor(t) if t.rank == 0) => {
                self.diag(&rules::RANK0_RESULT, "`len()` of a rank-0 tensor raises TypeError".into(), c.range());
                Val::explained(Ty::Unknown)
            }
            ([v], true) if matches!(v.ty, Ty::Tensor(_)) => match self.local_tensor(v.clone(), c.range(), "`len()`") {
                Some(local) => super::expr::size_val(&local, 0),
                None => Val::explained(Ty::Unknown),
            },
            _ => {
                if !args.iter().any(|a| a.explained) {
                    self.diag(&rules::UNSUPPORTED_EXPRESSION, "`len()` of this value is not lowered".into(), c.range());
                }
                Val::knock_on(&args)
            }
        }
    }

    /// Evaluate positional and keyword arguments (for their own sites and types).
    pub(super) fn args(&mut self, c: &ast::ExprCall) -> EvaluatedArgs {
        let mut starred = false;
        let mut args = Vec::new();
        for a in &c.arguments.args {
            if let Expr::Starred(s) = a {
                // `*t` of a tuple of known length is its elements, as Python passes them
                match self.expr(&s.value).sequence_items() {
                    Some(elems) => args.extend(elems),
                    None => starred = true,
                }
                continue;
            }
            args.push(self.expr(a));
        }
        let mut kws = Vec::new();
        for k in &c.arguments.keywords {
            let v = match self.python_type_as_dtype(k) {
                Some(dtype) => Val::opaque(Ty::Str, Lit::Dtype(dtype)),
                None => self.expr(&k.value),
            };
            kws.push((k.arg.as_ref().map(|a| a.to_string()), v));
        }
        (args, kws, starred)
    }

    /// `dtype=bool` / `dtype=int` / `dtype=float`: torch reads a Python type passed as a dtype as
    /// `torch.bool` / `torch.int64` / `torch.float64` (Mamba's `torch.ones(T, T, dtype=bool)`).
    fn python_type_as_dtype(&self, k: &ast::Keyword) -> Option<&'static str> {
        let (Some("dtype"), Expr::Name(n)) = (k.arg.as_ref().map(|a| a.as_str()), &k.value) else { return None };
        let name = n.id.as_str();
        if self.locals.contains(name) || !self.scope.is_builtin(name) {
            return None;
        }
        match name {
            "bool" => Some("torch.bool"),
            "int" => Some("torch.int64"),
            "float" => Some("torch.float64"),
            _ => None,
        }
    }

    /// Record a torch site (`target`: its kind and canonical name, see
    /// [`claim::describe_target`]) with its decision, and report a rejection or a not-covered
    /// site as a diagnostic; returns the value of the site's expression. The one place a
    /// [`Site`] is built.
    pub(super) fn site(&mut self, target: (SiteKind, String), decision: Decision, range: TextRange, receiver: Option<Val>, args: &[Val], kws: &[Val]) -> Val {
        let (kind, target) = target;
        let id = self.sites.len();
        let mut site = Site {
            span: self.index.span(range),
            kind,
            target,
            outcome: Outcome::NotCovered,
            rule: None,
            result_type: None,
            code: None,
            message: None,
            hint: None,
            fused_into: None,
            rust: None,
            rust_range: None,
            caused_by: None,
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
                        OperandRef::Receiver => receiver.as_ref().and_then(Val::ir),
                        OperandRef::Arg(i) => args.get(*i).and_then(Val::ir),
                        OperandRef::Keyword(i) => kws.get(*i).and_then(Val::ir),
                    })
                    .collect();
                // a view shares its input's storage (so do `meshgrid`'s expanded grids); every
                // other claimed op (a copy, a join, a roll) allocates
                let first_fresh = c.operands.first().is_some_and(|r| match r {
                    OperandRef::Receiver => receiver.as_ref().is_some_and(|v| v.fresh),
                    OperandRef::Arg(i) => args.get(*i).is_some_and(|v| v.fresh),
                    OperandRef::Keyword(i) => kws.get(*i).is_some_and(|v| v.fresh),
                });
                let view = (c.op.info().lane == torchlower_ops::Lane::Views && !matches!(c.op, ir::Op::Cat | ir::Op::Stack | ir::Op::Repeat | ir::Op::Clone | ir::Op::Roll | ir::Op::Flip | ir::Op::RepeatInterleave))
                    || c.op == ir::Op::Meshgrid;
                match operand_irs {
                    Some(ops) => {
                        let mut v = Val::lowered(
                            Ty::Tensor(c.result),
                            Lit::NotLiteral,
                            ir::Expr::Tensor { site: id, op: c.op, options: c.options, device: c.result.device, args: ops },
                        );
                        v.fresh = !view || first_fresh;
                        v
                    }
                    None => Val::explained(Ty::Tensor(c.result)),
                }
            }
            Decision::Rejected { code, message } => {
                site.outcome = Outcome::Rejected;
                site.code = Some(code.code.to_string());
                site.message = Some(message.clone());
                site.hint = Some(code.hint.to_string());
                self.diag(code, message, range);
                Val::failed_at(id)
            }
            Decision::NotCovered(message) => {
                site.code = Some(rules::SITE_NOT_COVERED.code.to_string());
                site.message = Some(message.clone());
                site.hint = Some(rules::SITE_NOT_COVERED.hint.to_string());
                self.diag(&rules::SITE_NOT_COVERED, message, range);
                Val::failed_at(id)
            }
            Decision::Unresolved(message) => {
                // a knock-on: linked to the failed sites its inputs came from
                let mut causes = std::collections::BTreeSet::new();
                receiver.iter().chain(args).chain(kws).for_each(|v| v.causes(&mut causes));
                let causes: Vec<usize> = causes.into_iter().collect();
                // an operand nothing reported on (an unknown module attribute, `np.float32`):
                // this site is where the function first fails, a root cause
                let knock_on = !causes.is_empty() || receiver.iter().chain(args).chain(kws).any(|v| v.explained);
                let causes = knock_on.then_some(causes);
                site.code = Some(rules::SITE_NOT_COVERED.code.to_string());
                site.message = Some(message.clone());
                site.hint = Some(rules::SITE_NOT_COVERED.hint.to_string());
                site.caused_by = causes.clone();
                self.diag(&rules::SITE_NOT_COVERED, message, range);
                if let Some(diagnostic) = self.diags.last_mut() {
                    diagnostic.caused_by = causes;
                }
                Val::failed_at(id)
            }
            Decision::NotASite => Val::explained(Ty::Unknown),
        };
        self.sites.push(site);
        val
    }
}

/// `torch.tensordot(a, b, dims=2)`'s arguments as its op row takes them: `a`, `b` and the two
/// lists of contracted dims, split as `torch.functional.tensordot` splits `dims` (an int `n`:
/// the last `n` dims of `a` with the first `n` of `b`; a pair of lists of ints). An
/// int known only at run time would leave the result's rank open, so it is not claimed. On
/// refusal, the message and the evaluated values (for the site's knock-on links).
fn tensordot_operands(mut args: Vec<Val>, keywords: Vec<(Option<String>, Val)>) -> Result<Vec<Val>, (String, Vec<Val>)> {
    let mut given = args.clone();
    given.extend(keywords.iter().map(|(_, v)| v.clone()));
    let refuse = |why: &str| Err((format!("torch.tensordot: {why}"), given.clone()));
    let mut dims = None;
    for (name, value) in keywords {
        match name.as_deref() {
            Some("dims") if args.len() == 2 => dims = Some(value),
            _ => return refuse("`a` and `b` positionally and `dims` positionally or by keyword are claimed"),
        }
    }
    if args.len() == 3 {
        dims = args.pop();
    }
    if args.len() != 2 {
        return refuse("two tensors and `dims` are claimed");
    }
    // each side a sequence: a pair of plain ints is eager's TypeError (`dims_self` must be
    // a tuple of ints)
    let int_list = |v: &Val| -> Option<Vec<Val>> { v.sequence_items().filter(|items| items.iter().all(|i| i.ty == Ty::Int && i.elems.is_none())) };
    let int = |v: i64| Val::lowered(Ty::Int, Lit::Int(v), ir::Expr::Int(v));
    let (dims_a, dims_b) = match dims {
        None => ((-2..0).map(int).collect(), (0..2).map(int).collect()),
        Some(d) if d.ty == Ty::Int && d.elems.is_none() => match d.lit {
            Lit::Int(n) if (0..=6).contains(&n) => ((-n..0).map(int).collect(), (0..n).map(int).collect()),
            Lit::Int(n) if n < 0 => return refuse(&format!("dims={n} (eager raises RuntimeError)")),
            _ => return refuse("`dims` as an int literal or a pair (the count fixes the result's rank)"),
        },
        Some(d) => match d.sequence_items().as_deref() {
            Some([a, b]) => match (int_list(a), int_list(b)) {
                (Some(a), Some(b)) => (a, b),
                _ => return refuse("`dims` as a pair of lists of ints (a pair of plain ints is eager's TypeError)"),
            },
            _ => return refuse("`dims` as an int or a pair of lists of ints"),
        },
    };
    args.push(Val::sequence(Ty::List(0), dims_a));
    args.push(Val::sequence(Ty::List(0), dims_b));
    Ok(args)
}

/// Rust evaluates a call's arguments in parameter order, Python in source order: keywords out
/// of parameter order are fine as long as the arguments that compute something keep their
/// order (so no error can come first in one order and second in the other); locals and
/// literals compute nothing. `slot` finds a keyword's parameter.
fn reorders_computation(args: &[Val], keywords: &[(Option<String>, Val)], slot: impl Fn(&str) -> Option<usize>) -> bool {
    fn simple(v: &Val) -> bool {
        match (&v.ir, &v.elems) {
            (Some(e), _) => matches!(e, ir::Expr::Local { .. } | ir::Expr::Int(_) | ir::Expr::Float(_) | ir::Expr::Bool(_)),
            (None, Some(elems)) => elems.iter().all(simple),
            (None, None) => true,
        }
    }
    // the slots of the values that compute something, in source order: only their relative
    // order can be observed (which error surfaces first); locals and literals move freely
    let positional = args.iter().enumerate().filter(|(_, v)| !simple(v)).map(|(i, _)| Some(i));
    let named = keywords.iter().filter(|(_, v)| !simple(v)).map(|(k, _)| k.as_deref().and_then(&slot));
    let order: Vec<Option<usize>> = positional.chain(named).collect();
    order.windows(2).any(|w| match (w[0], w[1]) {
        (Some(a), Some(b)) => a > b,
        _ => true,
    })
}

const REORDERED: &str = "keywords out of parameter order around arguments that compute something (Python evaluates them in source order)";

/// A call claimed through its Python signature passes its arguments in parameter order: see
/// [`reorders_computation`].
fn keywords_in_evaluation_order(decision: Decision, args: &[Val], keywords: &[(Option<String>, Val)]) -> Decision {
    let Decision::Claimed(claim) = &decision else { return decision };
    let params = claim::params::of(claim.op);
    if !params.is_empty() && reorders_computation(args, keywords, |k| params.iter().position(|p| p.name == k)) {
        return Decision::reject(&rules::BAD_KEYWORD, REORDERED);
    }
    decision
}

/// What a dtype method does to a tensor (see `Walker::conversion`).
enum Conversion {
    /// the tensor itself
    Itself,
    /// a copy in this dtype (`"torch.float32"` & co.)
    To(&'static str),
    /// an argument could not be evaluated (already explained)
    Explained,
}

/// The activation `path` spells when it may be written into its input with `inplace=True`:
/// `F.relu`, and every op whose signature is the input and `inplace` alone (`F.silu`,
/// `F.hardswish`, `F.relu6`, …), whose in-place kernel (`tl::ops::<name>_`) is eager's.
fn in_place_activation(path: &str) -> Option<ir::Op> {
    if path == "torch.nn.functional.relu" {
        return Some(ir::Op::Relu);
    }
    let op = ir::Op::from_function(path)?;
    matches!(claim::params::of(op), [_, inplace] if inplace.name == "inplace").then_some(op)
}

/// A rank-0 int64 CPU tensor as the Python int `.item()` gives (eager's `arange` reads its
/// bounds so), anything else as it is.
fn rank0_int_as_item(v: Val) -> Val {
    match (v.ty, v.ir) {
        (Ty::Tensor(t), Some(tensor)) if t.rank == 0 && t.dtype == crate::ty::Dtype::I64 && t.device == crate::ty::Device::Cpu => {
            Val::lowered(Ty::Int, Lit::NotLiteral, ir::Expr::Item { kind: ir::ScalarKind::Int, tensor: Box::new(tensor) })
        }
        (ty, ir) => Val { ty, ir, ..v },
    }
}
