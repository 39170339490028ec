//! Lane: tensor creation — `torch.arange(end)`, `torch.arange(start, end[, step])` of Python
//! ints, int64 by default or `dtype=torch.float32`; `torch.zeros` / `empty` / `ones` (sizes as
//! ints or one tuple; `empty`'s values unspecified, as eager's) and `torch.full(size, value)`
//! (the dtype from the value, as eager infers it), in float32, int64 or bool; all on the CPU
//! (`device` omitted, `"cpu"` or a CPU tensor's `.device`). `torch.zeros_like` / `ones_like` / `full_like` keep the input's type;
//! `torch.tensor(number)` is a 0-dim float32 tensor. libtorch's
//! kernels: eager's values and its errors (a zero step, a negative size).

use super::{keyword, keywords_only, Decision, Lit, Query};
use crate::ir::{Op, Options};
use crate::rules;
use crate::ty::{Device, Dtype, TensorTy, Ty};

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    match op {
        Op::Arange => arange(q, op, path),
        Op::Linspace => linspace(q, op, path),
        Op::Zeros | Op::Empty | Op::Ones | Op::Full => sized(q, op, path),
        Op::ZerosLike | Op::OnesLike | Op::FullLike => like(q, op, path),
        Op::Meshgrid => meshgrid(q, op, path),
        Op::ScalarTensor => scalar_tensor(q, op, path),
        other => super::not_in_lane(other),
    }
}

/// `torch.meshgrid(a, b, indexing="ij")` of two rank-1 tensors of one dtype: the pair of
/// rank-2 grids (the result type is one grid's; the walk makes the pair, taken apart where it
/// is unpacked, returned or indexed). Omitted, `indexing` is "ij" (eager warns, Python's
/// warning is not repeated). Three or more tensors, or a list of them, stay Python.
fn meshgrid(q: &Query, op: Op, path: &str) -> Decision {
    let bound = match super::params::bind(q, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    match (bound.tensor("a"), bound.tensor("b")) {
        (Some(a), Some(b)) if a.rank == 1 && b.rank == 1 && a.dtype == b.dtype => match TensorTy::new(a.dtype, a.device, 2) {
            Some(grid) => bound.claim(&rules::MESHGRID, op, grid),
            None => Decision::reject(&rules::BAD_RANKS, format!("{path}: no rank-2 type")),
        },
        _ => Decision::reject(&rules::BAD_RANKS, format!("{path}: two rank-1 tensors of one dtype are claimed")),
    }
}

/// The dtypes a created or converted tensor may have, in the order of the `dtype` choice of the
/// op table.
pub const DTYPES: [(&str, Dtype); 4] = [("torch.float32", Dtype::F32), ("torch.int64", Dtype::I64), ("torch.bool", Dtype::Bool), ("torch.int32", Dtype::I32)];

/// The `dtype=` keyword of a created tensor: `inferred` when omitted or None, else a dtype
/// known while analysing that has tensor types.
fn dtype_keyword(q: &Query, path: &str, inferred: Dtype) -> Result<Dtype, Decision> {
    match keyword(q, "dtype").map(|(_, v)| &v.lit) {
        None | Some(Lit::None) => Ok(inferred),
        Some(Lit::Dtype(name)) => match DTYPES.iter().find(|(n, _)| n == name) {
            Some((_, d)) => Ok(*d),
            None => Err(Decision::reject(&rules::BAD_KEYWORD, format!("{path}: dtype {name} has no tensor type here"))),
        },
        Some(_) => Err(Decision::reject(&rules::BAD_KEYWORD, format!("{path}: `dtype` must be a dtype known while analysing"))),
    }
}

/// A `device=` read from a value of unresolved type (`device=h.device` of an untyped `h`) is a
/// knock-on of what left it unresolved, not a device this lane refuses.
fn device_resolved(q: &Query, path: &str) -> Result<(), Decision> {
    match keyword(q, "device") {
        // (a device known while analysing is a `Lit::Device` of no Python type of ours)
        Some((_, v)) if v.ty == Ty::Unknown && v.lit == Lit::NotLiteral => Err(Decision::Unresolved(format!("the `device` of {path} has an unresolved type"))),
        _ => Ok(()),
    }
}

/// `device=` omitted, `"cpu"` or a CPU tensor's `.device`; `requires_grad=` omitted or False.
fn on_the_cpu(q: &Query, path: &str) -> Result<(), Decision> {
    device_resolved(q, path)?;
    match keyword(q, "device").map(|(_, v)| &v.lit) {
        None | Some(Lit::Device("cpu")) => {}
        Some(Lit::Str(s)) if s == "cpu" => {}
        Some(_) => return Err(Decision::reject(&rules::CUDA_UNSUPPORTED, format!("{path}: only the CPU is claimed for created tensors"))),
    }
    match keyword(q, "requires_grad").map(|(_, v)| &v.lit) {
        None | Some(Lit::Bool(false)) => Ok(()),
        Some(_) => Err(Decision::reject(&rules::BAD_KEYWORD, format!("{path}: only `requires_grad=False` is lowered (native results never require grad)"))),
    }
}

/// `torch.zeros(size…)`, `torch.empty(size…)`, `torch.ones(size…)` (the walk packs the sizes
/// into one tuple) and `torch.full(size, fill_value)`.
fn sized(q: &Query, op: Op, path: &str) -> Decision {
    let rule = match op {
        Op::Zeros => &rules::ZEROS,
        Op::Empty => &rules::EMPTY,
        Op::Ones => &rules::ONES,
        _ => &rules::FULL,
    };
    if let Err(d) = keywords_only(q, &["dtype", "device", "requires_grad"], path).and_then(|_| on_the_cpu(q, path)) {
        return d;
    }
    let wanted = if op == Op::Full { 2 } else { 1 };
    if q.starred || q.args.len() != wanted {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} takes the sizes (ints or one tuple of them){}", if op == Op::Full { " and the fill value" } else { "" }));
    }
    let rank = match (&q.args[0].ty, &q.args[0].lit) {
        (Ty::Tuple(_), Lit::Ints(sizes)) => sizes.len(),
        (Ty::Int, _) => 1,
        (Ty::Unknown, _) => return Decision::Unresolved(format!("the sizes of {path} have an unresolved type")),
        _ => return Decision::reject(&rules::BAD_ARITY, format!("{path}: the sizes must be Python ints")),
    };
    let inferred = match q.args.get(1).map(|f| f.ty) {
        None | Some(Ty::Float) => Dtype::F32,
        Some(Ty::Int) => Dtype::I64,
        Some(Ty::Bool) => Dtype::Bool,
        Some(Ty::Unknown) => return Decision::Unresolved(format!("the fill value of {path} has an unresolved type")),
        Some(other) => return Decision::reject(&rules::SCALAR_OPERAND, format!("{path}: the fill value is {} (a Python number is claimed)", other.describe())),
    };
    let dtype = match dtype_keyword(q, path, inferred) {
        Ok(d) => d,
        Err(d) => return d,
    };
    let choice = DTYPES.iter().position(|(_, d)| *d == dtype).unwrap_or(0) as u8;
    let Some(result) = u8::try_from(rank).ok().and_then(|r| TensorTy::new(dtype, Device::Cpu, r)) else {
        return Decision::reject(&rules::BAD_RANKS, format!("{path}: no tensor type has rank {rank}"));
    };
    let operands = (0..wanted).map(super::OperandRef::Arg).collect();
    let present = if op == Op::Full { 0b11 } else { 0b1 };
    Decision::Claimed(super::Claim { rule, result, op, options: Options::Params { present, choice }, operands })
}

/// `torch.linspace(start, end, steps)` of Python numbers: float32 (`dtype` omitted, None or
/// float32) on the CPU, rank 1.
fn linspace(q: &Query, op: Op, path: &str) -> Decision {
    if let Err(d) = keywords_only(q, &["start", "end", "steps", "dtype", "device", "requires_grad"], path).and_then(|_| on_the_cpu(q, path)) {
        return d;
    }
    match dtype_keyword(q, path, Dtype::F32) {
        Ok(Dtype::F32) => {}
        Ok(other) => return Decision::reject(&rules::BAD_KEYWORD, format!("{path}: dtype {other:?} is not claimed (float32 is)")),
        Err(d) => return d,
    }
    // bound without the keywords the lane has read
    let keywords: Vec<super::Keyword> = q.keywords.iter().filter(|k| !matches!(k.name.as_deref(), Some("dtype" | "device" | "requires_grad"))).cloned().collect();
    let mut bound = match super::params::bind(&Query { keywords: &keywords, ..*q }, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    // the operands are the call's own: keyword indices into the unfiltered list
    bound.operands = bound
        .operands
        .iter()
        .map(|at| match at {
            super::OperandRef::Keyword(i) => {
                let name = keywords[*i].name.clone();
                super::OperandRef::Keyword(q.keywords.iter().position(|k| k.name == name).unwrap_or(*i))
            }
            other => *other,
        })
        .collect();
    match TensorTy::new(Dtype::F32, Device::Cpu, 1) {
        Some(result) => bound.claim(&rules::LINSPACE, op, result),
        None => Decision::reject(&rules::BAD_RANKS, format!("{path}: no result type")),
    }
}

/// `torch.tensor(number, dtype=…)`: a 0-dim tensor, as `torch.full((), number)` makes it
/// (eager converts the number to the dtype the same way); only float32 has a 0-dim type.
fn scalar_tensor(q: &Query, op: Op, path: &str) -> Decision {
    if let Err(d) = keywords_only(q, &["dtype", "device", "requires_grad"], path).and_then(|_| on_the_cpu(q, path)) {
        return d;
    }
    let inferred = match (q.starred, q.args) {
        (false, [data]) => match data.ty {
            Ty::Float => Dtype::F32,
            Ty::Int => Dtype::I64,
            Ty::Bool => Dtype::Bool,
            Ty::Unknown => return Decision::Unresolved(format!("the data of {path} has an unresolved type")),
            Ty::Tuple(_) | Ty::List(_) => {
                return Decision::reject(&rules::SCALAR_OPERAND, format!("{path} of a list or tuple is not claimed (a Python number is; a list only as an int comprehension)"));
            }
            other => return Decision::reject(&rules::SCALAR_OPERAND, format!("{path} of {} is not claimed (a Python number is)", other.describe())),
        },
        _ => return Decision::reject(&rules::BAD_ARITY, format!("{path} takes the data as one positional argument")),
    };
    let dtype = match dtype_keyword(q, path, inferred) {
        Ok(d) => d,
        Err(d) => return d,
    };
    let Some(result) = TensorTy::new(dtype, Device::Cpu, 0) else {
        return Decision::reject(&rules::BAD_RANKS, format!("{path}: a 0-dim {} tensor has no type here (float32 has)", DTYPES.iter().find(|(_, d)| *d == dtype).map_or("", |(n, _)| *n)));
    };
    let choice = DTYPES.iter().position(|(_, d)| *d == dtype).unwrap_or(0) as u8;
    Decision::Claimed(super::Claim { rule: &rules::SCALAR_TENSOR, result, op, options: Options::Params { present: 0b1, choice }, operands: vec![super::OperandRef::Arg(0)] })
}

/// `torch.zeros_like(t)`, `ones_like(t)`, `full_like(t, fill_value)`: the input's type
/// (`dtype` omitted, None or the input's own).
fn like(q: &Query, op: Op, path: &str) -> Decision {
    let rule = match op {
        Op::ZerosLike => &rules::ZEROS_LIKE,
        Op::OnesLike => &rules::ONES_LIKE,
        _ => &rules::FULL_LIKE,
    };
    let options: Vec<super::Keyword> = q.keywords.iter().filter(|k| !matches!(k.name.as_deref(), Some("dtype" | "device" | "requires_grad"))).cloned().collect();
    let bare = Query { keywords: &options, ..*q };
    let bound = match super::params::bind(&bare, op, path) {
        Ok(b) => b,
        Err(d) => return d,
    };
    let Some(t) = bound.tensor("input") else { return Decision::reject(&rules::BAD_ARITY, format!("{path} needs the input tensor")) };
    if op == Op::FullLike && !matches!(q.args.get(1).or_else(|| keyword(q, "fill_value").map(|(_, v)| v)).map(|v| v.ty), Some(Ty::Int | Ty::Float | Ty::Bool)) {
        return Decision::reject(&rules::SCALAR_OPERAND, format!("{path}: the fill value must be a Python number"));
    }
    let own = DTYPES.iter().find(|(_, d)| *d == t.dtype).map(|(n, _)| *n).unwrap_or_default();
    match keyword(q, "dtype").map(|(_, v)| &v.lit) {
        None | Some(Lit::None) => {}
        Some(Lit::Dtype(name)) if *name == own => {}
        Some(_) => return Decision::reject(&rules::BAD_KEYWORD, format!("{path}: a `dtype` other than the input's is not lowered")),
    }
    let device = if t.device == Device::Cpu { "cpu" } else { "cuda:0" };
    if let Err(d) = device_resolved(q, path) {
        return d;
    }
    match keyword(q, "device").map(|(_, v)| &v.lit) {
        None | Some(Lit::None) => {}
        Some(Lit::Device(d)) if *d == device => {}
        Some(Lit::Str(s)) if s == device => {}
        Some(_) => return Decision::reject(&rules::DEVICE_TRANSFER, format!("{path}: a `device` other than the input's is not lowered")),
    }
    if !matches!(keyword(q, "requires_grad").map(|(_, v)| &v.lit), None | Some(Lit::Bool(false))) {
        return Decision::reject(&rules::BAD_KEYWORD, format!("{path}: only `requires_grad=False` is lowered (native results never require grad)"));
    }
    bound.claim(rule, op, t)
}

fn arange(q: &Query, op: Op, path: &str) -> Decision {
    if let Err(d) = keywords_only(q, &["start", "end", "step", "dtype", "device"], path) {
        return d;
    }
    if q.starred || q.args.len() > 3 {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} takes one to three Python ints"));
    }
    // the bounds (start, end, step): positionally one argument is `end`; with a bound given
    // by keyword, positional arguments fill start, end, step in order (eager's signatures)
    let by_keyword = ["start", "end", "step"].map(|name| keyword(q, name).map(|(i, _)| super::OperandRef::Keyword(i)));
    let mut slots: [Option<super::OperandRef>; 3] = [None; 3];
    if by_keyword.iter().all(Option::is_none) {
        let positions: &[usize] = match q.args.len() {
            1 => &[1],
            2 => &[0, 1],
            _ => &[0, 1, 2],
        };
        for (i, &slot) in positions.iter().enumerate() {
            slots[slot] = Some(super::OperandRef::Arg(i));
        }
    } else {
        for (i, slot) in slots.iter_mut().enumerate().take(q.args.len()) {
            *slot = Some(super::OperandRef::Arg(i));
        }
        for (slot, given) in by_keyword.into_iter().enumerate() {
            if let Some(at) = given {
                if slots[slot].is_some() {
                    return Decision::reject(&rules::BAD_ARITY, format!("{path}: a bound given both positionally and by keyword (TypeError)"));
                }
                slots[slot] = Some(at);
            }
        }
    }
    if slots[1].is_none() {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} needs `end`"));
    }
    let bounds = slots.iter().flatten().map(|&at| match at {
        super::OperandRef::Arg(i) => &q.args[i],
        super::OperandRef::Keyword(i) => &q.keywords[i].value,
        super::OperandRef::Receiver => &q.args[0],
    });
    if let Some(bad) = bounds.clone().find(|a| a.ty != Ty::Int) {
        return match bad.ty {
            Ty::Unknown => Decision::Unresolved(format!("a bound of {path} has an unresolved type")),
            other => Decision::reject(&rules::SCALAR_OPERAND, format!("{path} of {} (Python ints are claimed; float bounds round differently)", other.describe())),
        };
    }
    let (dtype, choice) = match keyword(q, "dtype").map(|(_, v)| &v.lit) {
        None | Some(Lit::Dtype("torch.int64")) => (Dtype::I64, 0),
        Some(Lit::Dtype("torch.float32")) => (Dtype::F32, 1),
        Some(Lit::Dtype("torch.int32")) => (Dtype::I32, 2),
        Some(_) => return Decision::reject(&rules::BAD_KEYWORD, format!("{path}: `dtype` must be torch.int64 (torch.long), torch.int32 (torch.int) or torch.float32")),
    };
    if let Err(d) = device_resolved(q, path) {
        return d;
    }
    match keyword(q, "device").map(|(_, v)| &v.lit) {
        None | Some(Lit::Device("cpu")) => {}
        Some(Lit::Str(s)) if s == "cpu" => {}
        Some(_) => return Decision::reject(&rules::CUDA_UNSUPPORTED, format!("{path}: only the CPU is claimed for created tensors")),
    }
    // bit i: parameter i of (start, end, step) is given; operands in that order
    let present = slots.iter().enumerate().filter(|(_, s)| s.is_some()).fold(0u32, |bits, (i, _)| bits | 1 << i);
    let operands = slots.iter().flatten().copied().collect();
    let result = TensorTy { dtype, device: Device::Cpu, rank: 1 };
    Decision::Claimed(super::Claim { rule: &rules::ARANGE, result, op, options: Options::Params { present, choice }, operands })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Lit, Operand};
    use crate::ty::Ty;

    #[test]
    fn ranges_of_ints() {
        let long = Operand { ty: Ty::Unknown, lit: Lit::Dtype("torch.int64") };
        let float = Operand { ty: Ty::Unknown, lit: Lit::Dtype("torch.float32") };
        let cpu = Operand { ty: Ty::Unknown, lit: Lit::Device("cpu") };
        assert_eq!(outcome(&call("torch.arange", &[int(4)], &[])), ("torchlower/arange".into(), "TensorI64Cpu1D".into()));
        assert_eq!(outcome(&call("torch.arange", &[int(0), int(4)], &[kw("dtype", long), kw("device", cpu)])).0, "torchlower/arange");
        assert_eq!(outcome(&call("torch.arange", &[int(0), int(9), int(2)], &[kw("dtype", float.clone())])).1, "TensorF32Cpu1D");
        assert_eq!(outcome(&call("torch.arange", &[int(4)], &[kw("device", string("cuda"))])).0, "TL209");
        assert_eq!(outcome(&call("torch.arange", &[int(4)], &[kw("layout", none())])).0, "TL201");
        // bounds by keyword, as diffusers writes them
        assert_eq!(outcome(&call("torch.arange", &[], &[kw("start", int(0)), kw("end", int(4)), kw("dtype", float.clone())])).1, "TensorF32Cpu1D");
        assert_eq!(outcome(&call("torch.arange", &[int(1)], &[kw("end", int(4))])).0, "torchlower/arange");
        assert_eq!(outcome(&call("torch.arange", &[int(1)], &[kw("start", int(4))])).0, "TL202");
        assert_eq!(outcome(&call("torch.arange", &[super::super::Operand { ty: Ty::Float, lit: Lit::Float(0.5) }], &[])).0, "TL242");
    }
}

/// `t.to(dtype)`, `.float()`, `.long()`, `.bool()`, `.type(dtype)`, `.type_as(y)` to another
/// dtype of the vocabulary (`dtype` as the walk names it), on the tensor's own device: a copy.
pub fn conversion(t: TensorTy, dtype: &str) -> Decision {
    let Some((choice, (_, target))) = DTYPES.iter().enumerate().find(|(_, (name, _))| *name == dtype) else {
        return Decision::reject(&rules::DEVICE_TRANSFER, format!("a conversion to {dtype} has no tensor type here"));
    };
    match TensorTy::new(*target, t.device, t.rank) {
        Some(result) => Decision::Claimed(super::Claim {
            rule: &rules::TO_DTYPE,
            result,
            op: Op::ToDtype,
            options: Options::Params { present: 1, choice: choice as u8 },
            operands: vec![super::OperandRef::Receiver],
        }),
        None => Decision::reject(&rules::CUDA_UNSUPPORTED, format!("{dtype} tensors have no type on cuda:0 yet")),
    }
}
