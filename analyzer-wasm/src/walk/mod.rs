//! The walk: the per-function pass that types locals flow-sensitively, asks [`crate::claim`]
//! about every torch site, records every reason to fall back, and builds the [`crate::ir`].
//!
//! Split by what it visits, as ruff's checker is: [`signature`] (parameters, return,
//! decorators), [`stmt`] (statements and control flow), [`expr`] (names, constants, scalar
//! operators, comparisons), [`call`] (calls and methods, and every site record). [`env`] is
//! the flow-sensitive environment and [`locals`] Python's scoping rule.

mod call;
mod comprehension;
pub mod env;
mod expr;
/// The local an element of a tuple, list or distribution local lives in (`s#0`), also the
/// body parameter of an int-sequence parameter's element (`lower`).
pub(crate) use expr::element_name;
mod index;
pub mod locals;
mod loops;
pub mod optional;
mod signature;
mod stmt;
pub mod variants;

use crate::claim::Lit;
use crate::ir;
use crate::parse::LineIndex;
use crate::report::{Diagnostic, Outcome, Param, Site};
use crate::resolve::annotations::Promise;
use crate::resolve::ModuleScope;
use crate::rules::{self, Code};
use crate::ty::Ty;
use env::Env;
use ruff_python_ast as ast;
use ruff_text_size::{Ranged, TextRange};
use std::collections::{BTreeMap, BTreeSet};

/// Another top-level function of the module, as a call of it is typed: its parameters and
/// its (non-tuple) return type, from its annotations.
#[derive(Debug, Clone)]
pub struct Callee {
    /// its index among the module's functions (the report's order)
    pub index: usize,
    pub params: Vec<(String, Ty)>,
    /// each parameter's literal default, as a value (`signature::literal_default`)
    pub defaults: Vec<Option<(Ty, crate::claim::Lit, Option<crate::ir::Expr>)>>,
    pub returns: Ty,
    /// the element types when it returns a tuple (`returns` is then `Ty::Tuple(n)`)
    pub returns_tuple: Vec<Ty>,
}

/// The functions of the module that calls may target, by name.
pub type Callees = std::collections::BTreeMap<String, Callee>;

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
    /// the module functions it calls (their indices): it is native only if they all are
    pub calls: BTreeSet<usize>,
}

impl Analyzed {
    /// An entry with nothing analyzed (async functions).
    pub fn empty() -> Analyzed {
        Analyzed { params: Vec::new(), returns: None, sites: Vec::new(), diagnostics: Vec::new(), ir: None, calls: BTreeSet::new() }
    }
}

/// An evaluated expression.
#[derive(Debug, Clone)]
struct Val {
    ty: Ty,
    lit: Lit,
    ir: Option<ir::Expr>,
    /// the elements of a tuple value (`ty` is `Ty::Tuple(n)`); tuples are not IR values
    /// themselves: they are unpacked, indexed, passed as shapes or returned
    elems: Option<Vec<Val>>,
    /// when `ir` is None: a diagnostic or non-claimed site already explains why
    explained: bool,
    /// the failed site (rejected or not covered) whose result this unknown value is: a site
    /// that fails only because of it is a knock-on of that site (`Site::caused_by`)
    cause: Option<usize>,
    /// a tensor whose storage is provably not a parameter's (see `Env::bind_fresh`); a new
    /// list nothing else refers to yet (a display, `list(…)`, `.copy()`)
    fresh: bool,
    /// a tuple's Python type, as a `return` of it gives it (an op's `(values, indices)` pair is
    /// eager's `torch.return_types` record); None where it depends on the path taken
    pair: Option<ir::ReturnedPair>,
}

impl Val {
    fn lowered(ty: Ty, lit: Lit, ir: ir::Expr) -> Val {
        Val { ty, lit, ir: Some(ir), elems: None, explained: false, cause: None, fresh: false, pair: Some(ir::ReturnedPair::Tuple) }
    }
    fn opaque(ty: Ty, lit: Lit) -> Val {
        Val { ty, lit, ir: None, elems: None, explained: false, cause: None, fresh: false, pair: Some(ir::ReturnedPair::Tuple) }
    }
    /// A tuple of `elems` (explained when any element is).
    fn tuple(elems: Vec<Val>) -> Val {
        Val::sequence(Ty::Tuple(0), elems)
    }
    /// A tuple or list (as `kind` is) of `elems`.
    fn sequence(kind: Ty, elems: Vec<Val>) -> Val {
        let explained = elems.iter().any(|e| e.explained);
        let n = u8::try_from(elems.len()).unwrap_or(u8::MAX);
        Val { ty: kind.with_items(n), lit: Lit::NotLiteral, ir: None, elems: Some(elems), explained, cause: None, fresh: false, pair: Some(ir::ReturnedPair::Tuple) }
    }
    /// The elements of a tuple or list (not a distribution's stored tensors, which are no
    /// sequence: `len(d)`, `*d`, `d[0]` are eager's TypeError).
    fn sequence_items(&self) -> Option<Vec<Val>> {
        self.ty.items().and(self.elems.clone())
    }
    fn explained(ty: Ty) -> Val {
        Val { ty, lit: Lit::NotLiteral, ir: None, elems: None, explained: true, cause: None, fresh: false, pair: Some(ir::ReturnedPair::Tuple) }
    }
    /// The unknown result of the failed site `site`.
    fn failed_at(site: usize) -> Val {
        Val { cause: Some(site), ..Val::explained(Ty::Unknown) }
    }
    /// The unknown result of an expression that fails only because `inputs` did (no site of
    /// its own): it keeps their first cause, so later knock-ons link to the root.
    fn knock_on<'v>(inputs: impl IntoIterator<Item = &'v Val>) -> Val {
        let mut causes = BTreeSet::new();
        inputs.into_iter().for_each(|v| v.causes(&mut causes));
        Val { cause: causes.first().copied(), ..Val::explained(Ty::Unknown) }
    }
    /// The failed sites this value's unknown parts come from (its own cause, its elements').
    fn causes(&self, into: &mut BTreeSet<usize>) {
        into.extend(self.cause);
        for elem in self.elems.iter().flatten() {
            elem.causes(into);
        }
    }
    /// The value as a claim sees it: its type and literal; a tuple of Python ints as
    /// `Lit::Ints`; a list as the tuple of its elements (torch takes either for sizes, dims
    /// and pads).
    fn operand(&self) -> crate::claim::Operand {
        let lit = match &self.elems {
            Some(elems) if elems.iter().all(|e| e.ty == Ty::Int) => {
                Lit::Ints(elems.iter().map(|e| if let Lit::Int(v) = e.lit { Some(v) } else { None }).collect())
            }
            _ => self.lit.clone(),
        };
        let ty = match self.ty {
            Ty::List(n) => Ty::Tuple(n),
            other => other,
        };
        crate::claim::Operand { ty, lit }
    }
    /// The IR of the value; a tuple's is its elements' (`Expr::Tuple`).
    fn ir(&self) -> Option<ir::Expr> {
        match (&self.ir, &self.elems) {
            (Some(e), _) => Some(e.clone()),
            (None, Some(elems)) => elems.iter().map(Val::ir).collect::<Option<Vec<_>>>().map(ir::Expr::Tuple),
            (None, None) => None,
        }
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
    /// element types of a tuple return annotation
    returns_tuple: Vec<Ty>,
    /// the Python type of the tuple the first `return` of one gives (the others must agree)
    returned_pair: Option<ir::ReturnedPair>,
    /// synthetic locals made so far (`#0`, `#1`, … : never Python names)
    temps: usize,
    callees: &'a Callees,
    calls: BTreeSet<usize>,
    /// the call an assignment unpacks into this many names (`a, b = t.chunk(2)`): the one
    /// place a parts op (chunk/split/unbind) is lowered
    unpacking: Option<(TextRange, usize)>,
    /// the element types of the tuple a module function call just returned (read by the
    /// statement that unpacks or returns it)
    returned_tuple: Vec<Ty>,
    /// per enclosing loop, innermost last: the environments at its `break`s and `continue`s
    loop_exits: Vec<LoopExits>,
    /// specialised copies of helpers called with other types than their annotations
    spec: &'a variants::Specialiser<'a>,
    /// a specialised copy: the return type is the first `return`'s, not the annotation's
    infer_returns: bool,
    /// what an open return annotation (`-> torch.Tensor`) promises of the inferred type
    promise: Option<Promise>,
    /// how many branches of run-time conditions enclose the code being walked: an in-place
    /// write into an argument there is deferred to Python (`Walker::deferred_write`)
    conditional: usize,
    /// how many run-time branches enclose the code being walked, counting the rest of a block
    /// walked once per branch (`Walker::if_with_tail`): a `return` there of another type than
    /// the annotation's is refused at run time instead of failing the function (TL404)
    on_branch: usize,
    /// iterations of `for … in [a, b]` loops unrolled so far (`loops::MAX_UNROLLED`)
    unrolled: usize,
    /// locals bound to the unknown result of a failed site, and that site (see `Val::cause`)
    failed_locals: BTreeMap<String, usize>,
    /// `if`s whose tail was walked once per branch so far (`stmt::MAX_TAIL_SPLITS`)
    tail_splits: usize,
    /// the targets of the list comprehensions being unrolled and the items they stand for,
    /// innermost last (read before the function's locals: `comprehension`)
    comprehension: Vec<(String, Val)>,
}

/// Where control leaves a loop body early, and with which environment.
#[derive(Default)]
struct LoopExits {
    breaks: Vec<Env>,
    continues: Vec<Env>,
}

/// Analyze a (sync) top-level function definition.
pub fn analyze_function<'a>(def: &ast::StmtFunctionDef, spec: &'a variants::Specialiser<'a>) -> Analyzed {
    let analyzed = analyze_with(def, spec.scope, spec.index, spec.callees, spec, None, false);
    // `Optional[<marker>]` parameters: one copy per None / tensor combination
    if analyzed.ir.is_none() {
        let markers = optional::optional_markers(def, spec.scope);
        if !markers.is_empty() {
            return optional::dispatch(def, spec, analyzed, &markers);
        }
    }
    if analyzed.ir.is_some() || !analyzed.diagnostics.iter().any(|d| d.code == rules::IN_PLACE.code) {
        return analyzed;
    }
    // writes into arguments (TL203): walked again with the tensor parameters writable, the
    // writes made as eager makes them; kept when that is native and refuses nothing at run
    // time (no TL404 path, no claim of `rules::REFUSES_AT_RUN_TIME`), so no call is ever
    // rerun after a write
    let mut writing = analyze_with(def, spec.scope, spec.index, spec.callees, spec, None, true);
    let refusing = |id: &str| rules::REFUSES_AT_RUN_TIME.iter().any(|r| r.id == id);
    let refuses = writing.diagnostics.iter().any(|d| d.code == rules::RETURN_PATH_REFUSED.code)
        || writing.sites.iter().any(|s| s.rule.as_deref().is_some_and(refusing));
    if writing.ir.is_none() {
        return analyzed;
    }
    if refuses {
        let mut analyzed = analyzed;
        for d in analyzed.diagnostics.iter_mut().filter(|d| d.code == rules::IN_PLACE.code) {
            d.message.push_str("; a write into an argument is lowered only in a function that refuses no call at run time (this one may: a TL404 path, `squeeze(dim)`, a deferred write, training dropout, a distribution check, `torch.tensor` of a list that may be empty)");
        }
        return analyzed;
    }
    let writes: Vec<&Diagnostic> = analyzed.diagnostics.iter().filter(|d| d.code == rules::IN_PLACE.code).collect();
    let lines: Vec<String> = writes.iter().map(|d| d.span.line).collect::<BTreeSet<_>>().iter().map(u32::to_string).collect();
    let span = writes.first().map(|d| d.span).unwrap_or_default();
    writing.diagnostics.push(Diagnostic {
        code: rules::ARGUMENT_WRITES.code.to_string(),
        severity: rules::ARGUMENT_WRITES.severity,
        message: format!("writes into a tensor argument (line {}), as eager does: native code writes into the same tensor", lines.join(", ")),
        hint: Some(rules::ARGUMENT_WRITES.hint.to_string()),
        span,
        caused_by: None,
    });
    writing
}

/// Analyze a function definition; with `params`, as a specialised copy whose parameters have
/// these types (and whose return type is inferred).
fn analyze_with<'a>(
    def: &ast::StmtFunctionDef,
    scope: &'a ModuleScope,
    index: &'a LineIndex<'a>,
    callees: &'a Callees,
    spec: &'a variants::Specialiser<'a>,
    params: Option<&[Ty]>,
    writable: bool,
) -> Analyzed {
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
        returns_tuple: Vec::new(),
        returned_pair: None,
        temps: 0,
        callees,
        calls: BTreeSet::new(),
        unpacking: None,
        returned_tuple: Vec::new(),
        loop_exits: Vec::new(),
        spec,
        infer_returns: params.is_some(),
        promise: None,
        conditional: 0,
        on_branch: 0,
        unrolled: 0,
        comprehension: Vec::new(),
        failed_locals: BTreeMap::new(),
        tail_splits: 0,
    };
    let (report_params, mut param_tys) = w.signature(def);
    if let Some(types) = params {
        if types.len() != param_tys.len() {
            return Analyzed::empty();
        }
        for ((_, ty), given) in param_tys.iter_mut().zip(types) {
            *ty = *given;
        }
        w.returns = None;
        w.returns_tuple.clear();
    }
    let scope = w.scope;
    locals::collect(&def.body, &mut w.locals, 2 * MAX_DEPTH, &|name, module| scope.reimports(name, module));
    for (name, ty) in &param_tys {
        w.locals.insert(name.clone());
        // a writable parameter takes writes as a fresh local does (see `analyze_function`)
        if writable && matches!(ty, Ty::Tensor(t) if t.device == crate::ty::Device::Cpu) {
            w.env.bind_fresh(name, *ty);
        } else {
            w.env.bind(name, *ty);
        }
        // a list or tuple parameter is its ints, each an int parameter of the body
        for i in 0..ty.items().unwrap_or(0) {
            let element = expr::element_name(name, i);
            w.locals.insert(element.clone());
            w.env.bind(&element, Ty::Int);
        }
    }
    let (mut body, mut reachable) = w.block(&def.body);
    // the end of a function that returns None (`-> None`, or no annotation and no `return`
    // of a value) is its `return None`
    if reachable && w.infer_returns && w.returns.is_none() {
        w.returns = Some(Ty::NoneVal);
    }
    if reachable && w.returns == Some(Ty::NoneVal) {
        body.push(ir::Stmt::return_none());
        reachable = false;
    }
    // no annotation and no `return` whose type could stand for it
    if def.returns.is_none() && w.returns.is_none() && params.is_none() {
        let def_range = crate::parse::def_range(w.index.source(), def);
        w.diag(&rules::RETURN_UNANNOTATED, "the function has no return annotation, and no `return` of a typed value to infer it from".into(), def_range);
    }
    if let (Some(promise), Some(annotation)) = (&w.promise, def.returns.as_deref()) {
        w.check_promise(promise.clone(), annotation.range(), params.is_none());
    }
    let unsupported_statement = w.diags.iter().any(|d| d.code == rules::UNSUPPORTED_STATEMENT.code);
    if reachable && !unsupported_statement {
        let end = usize::from(def.range().end());
        w.diag_at(&rules::MISSING_RETURN, "the function can reach its end and return None".to_string(), end, end);
    }
    // a tail walked once per branch (`Walker::if_with_tail`) reports its problems once
    let mut seen = BTreeSet::new();
    w.diags.retain(|d| seen.insert((d.code.clone(), (d.span.line, d.span.col, d.span.end_line, d.span.end_col), d.message.clone())));
    // no `return` lowered: a refused path (TL404) is the function's only outcome, and
    // reported as the mismatch it is (TL401)
    if !lowers_a_return(&body) {
        for d in w.diags.iter_mut().filter(|d| d.code == rules::RETURN_PATH_REFUSED.code) {
            d.code = rules::RETURN_MISMATCH.code.to_string();
            d.severity = rules::RETURN_MISMATCH.severity;
            d.hint = Some(rules::RETURN_MISMATCH.hint.to_string());
            d.message = d.message.split(';').next().unwrap_or_default().replace(" on this path,", " on every path, but").replace(" where the annotation", " the annotation").replace(" where an earlier", " an earlier");
        }
    }
    // TL404 (a return path refused at run time) is a note: the function stays native
    let native = w.diags.iter().all(|d| d.code == rules::RETURN_PATH_REFUSED.code) && w.sites.iter().all(|s| s.outcome == Outcome::Claimed);
    let ir = match (native, w.returns) {
        (true, Some(returns)) => Some(ir::Function { params: param_tys, returns, returns_tuple: w.returns_tuple.clone(), returned_pair: w.returned_pair.unwrap_or_default(), writes_arguments: writable, body, dispatch: None }),
        _ => None,
    };
    let returns = returns_text(w.returns, &w.returns_tuple);
    Analyzed { params: report_params, returns, sites: w.sites, diagnostics: w.diags, ir, calls: w.calls }
}

/// The report's text of a return type: a marker, `int` & co., or `tuple[…]` / `list[…]` of
/// them (`None` for a type without one).
fn returns_text(returns: Option<Ty>, tuple: &[Ty]) -> Option<String> {
    match returns {
        Some(kind @ (Ty::Tuple(_) | Ty::List(_))) => {
            let items: Option<Vec<&str>> = tuple.iter().map(|t| t.marker()).collect();
            items.map(|items| format!("{}[{}]", kind.sequence_name(), items.join(", ")))
        }
        other => other.and_then(|t| t.marker()).map(str::to_string),
    }
}

/// Whether `body` returns a value on some path (its `return`s of another type were lowered
/// as refusals; read from the IR, so a walk undone and redone counts once).
fn lowers_a_return(body: &[ir::Stmt]) -> bool {
    body.iter().any(|s| match s {
        ir::Stmt::Return(_) => true,
        ir::Stmt::If { then, orelse, .. } => lowers_a_return(then) || lowers_a_return(orelse),
        ir::Stmt::For { body, .. } | ir::Stmt::While { body, .. } => lowers_a_return(body),
        _ => false,
    })
}

/// The call signature of a top-level function, when every parameter is positional and has
/// no default or a literal one of its type. A parameter without an annotation (or a missing
/// return annotation) is `Ty::Unknown`: calls then use a copy specialised for the arguments'
/// types, whose return type is inferred (`helper_call`).
pub fn callee(def: &ast::StmtFunctionDef, scope: &ModuleScope, index: usize) -> Option<Callee> {
    use crate::resolve::annotations::{is_open_parameter, resolve_parameter_annotation, resolve_promise};
    let args = &def.parameters;
    if args.vararg.is_some() || args.kwarg.is_some() || !args.kwonlyargs.is_empty() || !def.decorator_list.is_empty() {
        return None;
    }
    let mut defaults = Vec::new();
    let params = args
        .posonlyargs
        .iter()
        .chain(args.args.iter())
        .map(|a| {
            let ty = match a.parameter.annotation.as_deref() {
                None => Ty::Unknown,
                Some(ann) if is_open_parameter(scope, ann) => Ty::Unknown,
                Some(ann) => resolve_parameter_annotation(scope, ann)?,
            };
            defaults.push(match &a.default {
                None => None,
                Some(default) => Some(signature::literal_default(default, ty)?),
            });
            Some((a.parameter.name.to_string(), ty))
        })
        .collect::<Option<Vec<_>>>()?;
    let Some(annotation) = def.returns.as_deref() else {
        return Some(Callee { index, params, defaults, returns: Ty::Unknown, returns_tuple: Vec::new() });
    };
    match (crate::resolve::annotations::resolve_annotation(scope, annotation), crate::resolve::annotations::resolve_tuple_annotation(scope, annotation)) {
        (Some(returns), _) => Some(Callee { index, params, defaults, returns, returns_tuple: Vec::new() }),
        (None, Some(items)) => Some(Callee { index, params, defaults, returns: Ty::Tuple(items.len() as u8), returns_tuple: items }),
        // an open annotation (`-> torch.Tensor`): inferred by the specialised copy
        (None, None) => resolve_promise(scope, annotation).map(|_| Callee { index, params, defaults, returns: Ty::Unknown, returns_tuple: Vec::new() }),
    }
}

impl<'a> Walker<'a> {
    /// After the body: the inferred return type keeps what an open return annotation promises
    /// (`-> torch.Tensor` returns some tensor). `top_level`: not a specialised copy, whose
    /// missing return type its caller reports.
    fn check_promise(&mut self, promise: Promise, annotation: TextRange, top_level: bool) {
        match self.returns {
            Some(ty) if !promise.admits(ty, &self.returns_tuple) => {
                let got = match ty {
                    Ty::Tuple(_) | Ty::List(_) => format!("{}[{}]", ty.sequence_name(), self.returns_tuple.iter().map(|t| t.describe()).collect::<Vec<_>>().join(", ")),
                    other => other.describe(),
                };
                self.diag(&rules::RETURN_MISMATCH, format!("returns {got} but the annotation says {}", promise.describe()), annotation);
            }
            None if top_level => self.diag(
                &rules::RETURN_UNANNOTATED,
                format!("the annotation `{}` leaves the return type open, and no `return` of a typed value gives it", promise.describe()),
                annotation,
            ),
            _ => {}
        }
    }

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
            caused_by: None,
        });
    }

    /// A fresh synthetic local name (`#3`): no Python name contains `#`.
    pub(super) fn temp(&mut self) -> String {
        self.temps += 1;
        format!("#{}", self.temps)
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

}
