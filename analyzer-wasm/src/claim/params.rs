//! Binding a call to an op's Python signature (`Signature::Params` in the op table): positional
//! and keyword arguments matched to the declared parameters as Python matches them, each
//! checked against its [`Kind`], defaults left to the printed Rust. The lanes of such ops call
//! [`bind`] and decide only what is theirs: ranks and the result type.

use super::{Claim, Decision, Lit, Operand, OperandRef, Query};
use crate::ir::{Op, Options};
use crate::rules::{self, Rule};
use crate::ty::{Device, Dtype, TensorTy, Ty};
use torchlower_ops::{Kind, Param, Signature};

/// A call bound to an op's parameters.
#[derive(Debug)]
pub struct Bound {
    /// The given values that are operands of the IR op, in parameter order.
    pub operands: Vec<OperandRef>,
    /// Bit `i`: parameter `i` was given (and is among `operands`).
    pub present: u32,
    /// The index of the string given to the `Choice` parameter (0 when omitted).
    pub choice: u8,
    /// The tensors given, in parameter order, with the parameter's name.
    pub tensors: Vec<(&'static str, TensorTy)>,
    /// The device of the tensors.
    pub device: Device,
    /// The values given to the other parameters, with the parameter's name: the literal
    /// (`Lit::NotLiteral` for a run-time value) and the type (`int` or `float` for a number).
    pub scalars: Vec<(&'static str, Lit, Ty)>,
}

impl Bound {
    /// The tensor given to the parameter `name`.
    pub fn tensor(&self, name: &str) -> Option<TensorTy> {
        self.tensors.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// The literal given to the parameter `name` (`Lit::Ints` for a tuple of ints).
    pub fn literal(&self, name: &str) -> Option<&Lit> {
        self.scalars.iter().find(|(n, _, _)| *n == name).map(|(_, l, _)| l)
    }

    /// The type of the value given to the non-tensor parameter `name`.
    pub fn scalar_type(&self, name: &str) -> Option<Ty> {
        self.scalars.iter().find(|(n, _, _)| *n == name).map(|(_, _, t)| *t)
    }

    /// The claim of `op` under `rule` with `result`.
    pub fn claim(self, rule: &'static Rule, op: Op, result: TensorTy) -> Decision {
        Decision::Claimed(Claim { rule, result, op, options: Options::Params { present: self.present, choice: self.choice }, operands: self.operands })
    }
}

/// The parameters of `op` (empty for an op of another signature).
pub fn of(op: Op) -> &'static [Param] {
    match op.info().signature {
        Signature::Params(params) => params,
        _ => &[],
    }
}

/// Bind the site's arguments (a method's receiver first) to `op`'s parameters; `form` names
/// the spelling in messages.
pub fn bind(q: &Query, op: Op, form: &str) -> Result<Bound, Decision> {
    let params = of(op);
    if q.starred {
        return Err(Decision::reject(&rules::BAD_ARITY, format!("{form}: starred arguments are not supported")));
    }
    let positional: Vec<(&Operand, OperandRef)> = q
        .receiver
        .map(|r| (r, OperandRef::Receiver))
        .into_iter()
        .chain(q.args.iter().enumerate().map(|(i, a)| (a, OperandRef::Arg(i))))
        .collect();
    if positional.len() > params.len() {
        return Err(Decision::reject(&rules::BAD_ARITY, format!("{form} takes at most {} arguments, got {}", params.len(), positional.len())));
    }
    let mut given: Vec<Option<(&Operand, OperandRef)>> = params.iter().map(|_| None).collect();
    for (slot, value) in positional.into_iter().enumerate() {
        given[slot] = Some(value);
    }
    for (i, kw) in q.keywords.iter().enumerate() {
        let Some(name) = kw.name.as_deref() else {
            return Err(Decision::reject(&rules::BAD_KEYWORD, format!("{form}: `**` keyword arguments are not supported")));
        };
        let Some(slot) = params.iter().position(|p| p.name == name) else {
            return Err(Decision::reject(&rules::BAD_KEYWORD, format!("{form}: the keyword `{name}` is not part of the claimed form (eager has no such parameter, or what it changes is not lowered)")));
        };
        if given[slot].is_some() {
            return Err(Decision::reject(&rules::BAD_KEYWORD, format!("{form}: `{name}` given twice (eager raises TypeError)")));
        }
        given[slot] = Some((&kw.value, OperandRef::Keyword(i)));
    }
    let mut bound = Bound { operands: Vec::new(), present: 0, choice: 0, tensors: Vec::new(), device: Device::Cpu, scalars: Vec::new() };
    let mut device: Option<Device> = None;
    for (slot, (param, value)) in params.iter().zip(given).enumerate() {
        let Some((value, at)) = value else {
            if param.required {
                return Err(Decision::reject(&rules::BAD_ARITY, format!("{form} needs `{}` (eager raises TypeError)", param.name)));
            }
            if param.default.is_none() && !matches!(param.kind, Kind::Fixed(_) | Kind::Choice(_) | Kind::OptTensor | Kind::OptAnyTensor) {
                return Err(Decision::reject(&rules::BAD_ARITY, format!("{form} needs `{}`", param.name)));
            }
            continue;
        };
        if value.ty == Ty::Unknown {
            return Err(Decision::Unresolved(format!("`{}` of {form} has an unresolved type", param.name)));
        }
        let what = format!("{form}: `{}`", param.name);
        let passed = match param.kind {
            Kind::TensorOrNumber | Kind::AnyTensorOrNumber if matches!(value.ty, Ty::Int | Ty::Float) => true,
            Kind::Tensor | Kind::AnyTensor | Kind::OptTensor | Kind::OptAnyTensor | Kind::Indices | Kind::Mask | Kind::TensorOrNumber | Kind::AnyTensorOrNumber => {
                if matches!(param.kind, Kind::OptTensor | Kind::OptAnyTensor) && value.lit == Lit::None {
                    continue;
                }
                let (dtype, wanted) = match param.kind {
                    Kind::Indices => (Dtype::I64, "an int64 tensor"),
                    Kind::Mask => (Dtype::Bool, "a bool tensor"),
                    Kind::TensorOrNumber => (Dtype::F32, "a float32 or int64 tensor or a Python number"),
                    _ => (Dtype::F32, "a float32 tensor"),
                };
                let t = match value.ty {
                    Ty::Tensor(t) if t.dtype == dtype || matches!(param.kind, Kind::AnyTensor | Kind::OptAnyTensor | Kind::AnyTensorOrNumber) => t,
                    Ty::Tensor(t) if param.kind == Kind::TensorOrNumber && t.dtype == Dtype::I64 => t,
                    other => return Err(Decision::reject(&rules::NOT_F32_OPERAND, format!("{what} is {}, not {wanted}", other.describe()))),
                };
                if device.is_some_and(|d| d != t.device) {
                    return Err(Decision::reject(&rules::MIXED_DEVICE, format!("{what}: operands live on different devices (cpu and cuda:0)")));
                }
                device = Some(t.device);
                bound.tensors.push((param.name, t));
                true
            }
            Kind::Int => scalar(value, matches!(value.ty, Ty::Int), &what, "a Python int")?,
            Kind::Float => scalar(value, matches!(value.ty, Ty::Int | Ty::Float), &what, "a Python float or int")?,
            Kind::OptFloat if value.lit == Lit::None => continue,
            Kind::OptFloat => scalar(value, matches!(value.ty, Ty::Int | Ty::Float), &what, "a Python float or int, or None")?,
            Kind::Bool => scalar(value, matches!(value.ty, Ty::Bool), &what, "a Python bool")?,
            Kind::OptInt if value.lit == Lit::None => continue,
            Kind::OptInt => scalar(value, matches!(value.ty, Ty::Int), &what, "a Python int or None")?,
            Kind::OptBool if value.lit == Lit::None => continue,
            Kind::OptBool => scalar(value, matches!(value.ty, Ty::Bool), &what, "a Python bool or None")?,
            Kind::OptInts(_) if value.lit == Lit::None => continue,
            Kind::Ints(_) | Kind::OptInts(_) => {
                let ints = matches!(value.ty, Ty::Int) || matches!(&value.lit, Lit::Ints(v) if !v.is_empty());
                scalar(value, ints, &what, "a Python int or a tuple of them")?
            }
            Kind::IntSeq => {
                let ints = !matches!(value.ty, Ty::Int | Ty::Bool) && matches!(&value.lit, Lit::Ints(v) if !v.is_empty());
                scalar(value, ints, &what, "a tuple or list of Python ints (a lone int is eager's TypeError)")?
            }
            Kind::Choice(choices) => {
                // a string literal picks a string choice; a dtype and None only their own names
                // (`dtype="torch.float32"` is eager's TypeError)
                let named = |c: &&str| c.starts_with("torch.") || *c == "None";
                let picked = match &value.lit {
                    Lit::Str(s) => choices.iter().position(|c| !named(c) && c == s),
                    Lit::Dtype(d) => choices.iter().position(|c| named(c) && c == d),
                    Lit::None => choices.iter().position(|c| *c == "None"),
                    _ => None,
                };
                let Some(index) = picked else {
                    return Err(Decision::reject(&rules::BAD_KEYWORD, format!("{what} must be one of {} (a string literal)", choices.join(", "))));
                };
                bound.choice = index as u8;
                false
            }
            Kind::Fixed(python) => {
                if !fixed_matches(&value.lit, python) {
                    return Err(Decision::reject(&rules::BAD_KEYWORD, format!("{what}: only `{}={python}` (eager's default) is lowered", param.name)));
                }
                false
            }
        };
        if passed {
            bound.present |= 1 << slot;
            bound.operands.push(at);
            if !matches!(value.ty, Ty::Tensor(_)) {
                bound.scalars.push((param.name, value.lit.clone(), value.ty));
            }
        }
    }
    bound.device = device.unwrap_or(Device::Cpu);
    Ok(bound)
}

/// `Ok(true)` when `fits`, else the rejection naming what was `wanted`.
fn scalar(value: &Operand, fits: bool, what: &str, wanted: &str) -> Result<bool, Decision> {
    if fits {
        Ok(true)
    } else {
        Err(Decision::reject(&rules::BAD_KEYWORD, format!("{what} is {} ({wanted} is claimed)", value.ty.describe())))
    }
}

/// A literal equal to the Python literal `python` (`False`, `None`, `1.0`, `0`).
fn fixed_matches(lit: &Lit, python: &str) -> bool {
    match (lit, python) {
        (Lit::None, "None") | (Lit::Bool(false), "False") | (Lit::Bool(true), "True") => true,
        (Lit::Int(v), text) => text.parse::<f64>().is_ok_and(|t| *v as f64 == t),
        (Lit::Float(v), text) => text.parse::<f64>().is_ok_and(|t| *v == t),
        _ => false,
    }
}

/// An elementwise op through its signature: the result has the type of its `input`.
pub fn elementwise(q: &Query, op: Op, rule: &'static Rule, form: &str) -> Decision {
    match bind(q, op, form) {
        Ok(bound) => match bound.tensor("input") {
            Some(input) => bound.claim(rule, op, input),
            None => Decision::reject(&rules::BAD_ARITY, format!("{form} needs the input tensor")),
        },
        Err(d) => d,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::ty::TensorTy as T;

    #[test]
    fn binds_positions_keywords_defaults_and_fixed_options() {
        let x = t(T::F32_CPU_2D);
        assert_eq!(outcome(&call("torch.nn.functional.leaky_relu", &[x.clone()], &[])).0, "torchlower/leaky-relu");
        assert_eq!(outcome(&call("torch.nn.functional.leaky_relu", &[x.clone(), int(0)], &[kw("inplace", boolean(false))])).0, "torchlower/leaky-relu");
        // inplace=True changes what the op is
        assert_eq!(outcome(&call("torch.nn.functional.relu6", &[x.clone()], &[kw("inplace", boolean(true))])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.relu6", &[x.clone()], &[kw("inlace", boolean(false))])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.relu6", &[x.clone(), boolean(false), int(1)], &[])).0, "TL202");
        assert_eq!(outcome(&call("torch.nn.functional.leaky_relu", &[x.clone(), string("a")], &[])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.leaky_relu", &[x.clone(), int(0)], &[kw("negative_slope", int(0))])).0, "TL201");
        assert_eq!(outcome(&call("torch.nn.functional.leaky_relu", &[unknown()], &[])).0, "not_covered");
        assert_eq!(outcome(&method(&x, "log1p", &[], &[])), ("torchlower/log1p".into(), "TensorF32Cpu2D".into()));
    }
}
