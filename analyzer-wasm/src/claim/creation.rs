//! Lane: tensor creation — `torch.arange(end)`, `torch.arange(start, end[, step])` of Python
//! ints, int64 by default or `dtype=torch.float32`, on the CPU (`device` omitted, `"cpu"` or a
//! CPU tensor's `.device`). libtorch's kernel: eager's values and its errors (a zero step, a
//! bound on the wrong side).

use super::{keyword, keywords_only, Decision, Lit, Query};
use crate::ir::{Op, Options};
use crate::rules;
use crate::ty::{Device, Dtype, TensorTy, Ty};

pub fn function(q: &Query, op: Op, path: &str) -> Decision {
    if op != Op::Arange {
        return super::not_in_lane(op);
    }
    if let Err(d) = keywords_only(q, &["dtype", "device"], path) {
        return d;
    }
    if q.starred || q.args.is_empty() || q.args.len() > 3 {
        return Decision::reject(&rules::BAD_ARITY, format!("{path} takes one to three Python ints positionally"));
    }
    if let Some(bad) = q.args.iter().find(|a| a.ty != Ty::Int) {
        return match bad.ty {
            Ty::Unknown => Decision::NotCovered(format!("a bound of {path} has an unresolved type")),
            other => Decision::reject(&rules::SCALAR_OPERAND, format!("{path} of {} (Python ints are claimed; float bounds round differently)", other.describe())),
        };
    }
    let (dtype, choice) = match keyword(q, "dtype").map(|(_, v)| &v.lit) {
        None | Some(Lit::Dtype("torch.int64")) => (Dtype::I64, 0),
        Some(Lit::Dtype("torch.float32")) => (Dtype::F32, 1),
        Some(_) => return Decision::reject(&rules::BAD_KEYWORD, format!("{path}: `dtype` must be torch.int64 (torch.long) or torch.float32")),
    };
    match keyword(q, "device").map(|(_, v)| &v.lit) {
        None | Some(Lit::Device("cpu")) => {}
        Some(Lit::Str(s)) if s == "cpu" => {}
        Some(_) => return Decision::reject(&rules::CUDA_UNSUPPORTED, format!("{path}: only the CPU is claimed for created tensors")),
    }
    // bit i: parameter i of (start, end, step); one argument is `end`
    let present: u32 = match q.args.len() {
        1 => 0b010,
        2 => 0b011,
        _ => 0b111,
    };
    let operands = (0..q.args.len()).map(super::OperandRef::Arg).collect();
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
        assert_eq!(outcome(&call("torch.arange", &[int(0), int(9), int(2)], &[kw("dtype", float)])).1, "TensorF32Cpu1D");
        assert_eq!(outcome(&call("torch.arange", &[int(4)], &[kw("device", string("cuda"))])).0, "TL209");
        assert_eq!(outcome(&call("torch.arange", &[int(4)], &[kw("layout", none())])).0, "TL201");
        assert_eq!(outcome(&call("torch.arange", &[super::super::Operand { ty: Ty::Float, lit: Lit::Float(0.5) }], &[])).0, "TL242");
    }
}
