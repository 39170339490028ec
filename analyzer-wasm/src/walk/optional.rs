//! `Optional[<marker>]` parameters (Swin's `logit_scale: Optional[Tensor] = None`) and
//! `Optional[int]` / `Optional[float]` / `Optional[bool]` ones (DeepCTR's `maxlen=None`): whether a
//! call passes None or the value only the call says, and the body's `x is None` tests depend
//! on it. The function is walked once per combination, as specialised copies
//! ([`super::variants`]) in which those tests are decided; when every copy is native the
//! function is too, and its entry runs the copy for the arguments it gets (`ir::Dispatch`).

use super::variants::Specialiser;
use super::Analyzed;
use crate::ir;
use crate::resolve::annotations::{is_open_parameter, resolve_parameter_annotation, resolve_promise, Promise};
use crate::resolve::ModuleScope;
use crate::rules;
use crate::ty::Ty;
use ruff_python_ast as ast;

/// Most `Optional[<marker>]` parameters a dispatching function has (2^n copies).
pub const MAX_OPTIONAL: usize = 3;

/// What the TL101 message of an optional marker says (`signature`), to find it again.
const MAY_BE_NONE: &str = "may be None";

/// The `Optional[<marker>]` / `Optional[int]` (float, bool) parameters of `def`: (position, the
/// type of a value that is not None).
pub fn optional_markers(def: &ast::StmtFunctionDef, scope: &ModuleScope) -> Vec<(usize, Ty)> {
    parameters(def)
        .enumerate()
        .filter_map(|(position, p)| {
            let annotation = p.parameter.annotation.as_deref()?;
            if resolve_parameter_annotation(scope, annotation).is_some() || !is_open_parameter(scope, annotation) {
                return None;
            }
            match resolve_promise(scope, annotation) {
                Some(Promise::Is(ty @ (Ty::Tensor(_) | Ty::Int | Ty::Float | Ty::Bool))) => Some((position, ty)),
                _ => None,
            }
        })
        .collect()
}

fn parameters(def: &ast::StmtFunctionDef) -> impl Iterator<Item = &ast::ParameterWithDefault> {
    def.parameters.posonlyargs.iter().chain(def.parameters.args.iter())
}

/// `def` as a dispatch over its copies for its `optional` parameters ([`optional_markers`]),
/// or `first` (its walk with them open, which falls back) with its TL101 notes saying why not.
pub fn dispatch(def: &ast::StmtFunctionDef, spec: &Specialiser<'_>, first: Analyzed, optional: &[(usize, Ty)]) -> Analyzed {
    match copies(def, spec, &first, optional) {
        Ok(dispatching) => dispatching,
        Err(why) => {
            let mut first = first;
            let value = if optional.iter().all(|(_, t)| matches!(t, Ty::Tensor(_))) { "a tensor" } else { "a value" };
            for d in first.diagnostics.iter_mut().filter(|d| d.code == rules::PARAM_UNANNOTATED.code && d.message.contains(MAY_BE_NONE)) {
                d.message.push_str(&format!("; walked once for None and once for {value}, {why}"));
            }
            first
        }
    }
}

fn copies(def: &ast::StmtFunctionDef, spec: &Specialiser<'_>, first: &Analyzed, optional: &[(usize, Ty)]) -> Result<Analyzed, String> {
    if optional.len() > MAX_OPTIONAL {
        return Err(format!("it has more than {MAX_OPTIONAL} optional tensor parameters"));
    }
    // every other parameter and the return have their types (a signature problem stays one)
    let optional_note = |d: &crate::report::Diagnostic| d.code == rules::PARAM_UNANNOTATED.code && d.message.contains(MAY_BE_NONE);
    // an open return (`-> torch.Tensor`) that the walk with the optional parameters untyped
    // could not infer is the copies' to say (TL103 there is a knock-on)
    let knock_on = |d: &crate::report::Diagnostic| d.code == rules::RETURN_UNANNOTATED.code && d.message.contains("leaves the return type open");
    if first.diagnostics.iter().any(|d| d.code.starts_with("TL10") && !optional_note(d) && !knock_on(d)) {
        return Err("the signature has other problems".to_string());
    }
    let Some(of) = spec.index_of(def) else { return Err("it cannot be specialised".to_string()) };
    let names: Vec<&str> = parameters(def).map(|p| p.parameter.name.as_str()).collect();
    let annotated: Vec<Ty> = parameters(def)
        .map(|p| p.parameter.annotation.as_deref().and_then(|a| resolve_parameter_annotation(spec.scope, a)).unwrap_or(Ty::Unknown))
        .collect();
    let mut copies = Vec::new();
    let mut returns: Option<(Ty, Vec<Ty>)> = None;
    for combination in 0..(1usize << optional.len()) {
        let mut types = annotated.clone();
        let mut given = Vec::new();
        for (bit, (position, t)) in optional.iter().enumerate() {
            let tensor = combination & (1 << bit) != 0;
            types[*position] = if tensor { *t } else { Ty::NoneVal };
            let value = match t {
                _ if !tensor => "None",
                Ty::Int => "an int",
                Ty::Float => "a float",
                Ty::Bool => "a bool",
                _ => "a tensor",
            };
            given.push(format!("{} {value}", names[*position]));
        }
        let (index, ret, tuple) = spec.variant(of, &types).map_err(|why| format!("with {}: {}", given.join(", "), why.replace("with these types ", "")))?;
        match &returns {
            None => returns = Some((ret, tuple)),
            Some(r) if *r == (ret, tuple.clone()) => {}
            Some(_) => return Err("its copies return different types".to_string()),
        }
        copies.push(index);
    }
    let (ret, tuple) = returns.unwrap_or((Ty::Unknown, Vec::new()));
    let text = super::returns_text(Some(ret), &tuple);
    if first.returns.is_some() && first.returns != text {
        return Err(format!("its copies return {}, not the annotated {}", text.unwrap_or_default(), first.returns.clone().unwrap_or_default()));
    }
    let all_tensors = *copies.last().unwrap_or(&of);
    let mut params: Vec<(String, Ty)> = names.iter().map(|n| n.to_string()).zip(annotated).collect();
    let mut report_params = first.params.clone();
    for (position, t) in optional {
        params[*position].1 = *t;
        if let Some(p) = report_params.get_mut(*position) {
            p.ty = t.marker().map(|m| format!("Optional[{m}]"));
        }
    }
    // the sites and notes are the copies' (each under `specialisations`, with its Rust): the
    // function itself has no body of its own
    let ir = ir::Function {
        params,
        returns: ret,
        returns_tuple: tuple,
        returned_pair: ir::ReturnedPair::Of(all_tensors),
        writes_arguments: false,
        body: Vec::new(),
        dispatch: Some(ir::Dispatch { optional: optional.iter().map(|(p, _)| *p).collect(), copies: copies.clone() }),
    };
    Ok(Analyzed { params: report_params, returns: text, sites: Vec::new(), diagnostics: Vec::new(), ir: Some(ir), calls: copies.into_iter().collect() })
}
