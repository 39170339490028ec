//! `torch.isin(elements, test_elements)` with a few test elements (the EOS ids a stopping
//! criterion checks, the tokens a logits processor suppresses): one pass over the elements,
//! each compared with every test element. Eager's kernel for few test elements builds the
//! `elements × test` comparison tensor and reduces it (`(elements[..., None] == test).any(-1)`);
//! membership is the same `==` (NaN is never a member, `-0.0` is one of `0.0`), so the result
//! is eager's bit for bit.

use tch::{Device, Kind, Tensor};

use crate::error::Result;
use crate::facts;
use crate::parallel::DisjointParts;

/// Most test elements this loop compares one by one (eager itself switches to sorting only
/// far above typical id lists).
const MAX_TEST_ELEMENTS: i64 = 64;

/// The membership tensor, or `None` when the operands are not ones this loop takes (not both
/// contiguous CPU tensors of one dtype, float32 or int64, or too many test elements): the
/// caller then calls libtorch, which also promotes and raises eager's errors.
pub fn isin_few(elements: &Tensor, test: &Tensor, invert: bool) -> Option<Result<Tensor>> {
    let kind = elements.f_kind().ok()?;
    if !matches!(kind, Kind::Int64 | Kind::Float) || test.f_kind().ok()? != kind {
        return None;
    }
    if elements.device() != Device::Cpu || test.device() != Device::Cpu {
        return None;
    }
    let (count, tests) = (elements.numel(), test.numel());
    if tests == 0 || tests as i64 > MAX_TEST_ELEMENTS {
        return None;
    }
    let ((elements_contiguous, elements_ptr), (test_contiguous, test_ptr)) = (facts::contiguous_data(elements)?, facts::contiguous_data(test)?);
    if !elements_contiguous || !test_contiguous {
        return None;
    }
    Some(membership(elements, kind, elements_ptr as *const u8, count, test_ptr as *const u8, tests, invert))
}

fn membership(elements: &Tensor, kind: Kind, elements_ptr: *const u8, count: usize, test_ptr: *const u8, tests: usize, invert: bool) -> Result<Tensor> {
    let out = Tensor::f_empty(elements.size(), (Kind::Bool, Device::Cpu))?;
    if count == 0 {
        return Ok(out);
    }
    let (_, out_ptr) = facts::contiguous_data(&out).expect("a fresh bool tensor is contiguous");
    // SAFETY: `out` is the fresh contiguous bool output of `count` bytes, written only here.
    let flags = unsafe { std::slice::from_raw_parts_mut(out_ptr as *mut u8, count) };
    let parts = DisjointParts::new(flags);
    match kind {
        Kind::Int64 => {
            // SAFETY: live contiguous int64 tensors of `count` and `tests` elements, read only.
            let (values, test) = unsafe { (std::slice::from_raw_parts(elements_ptr as *const i64, count), std::slice::from_raw_parts(test_ptr as *const i64, tests)) };
            super::for_each_segment(count, &|start, stop| {
                // SAFETY: the segments of one call are disjoint.
                let flags = unsafe { parts.part(start, stop - start) };
                mark(flags, &values[start..stop], test, invert);
            });
        }
        _ => {
            // SAFETY: live contiguous float32 tensors of `count` and `tests` elements, read only.
            let (values, test) = unsafe { (std::slice::from_raw_parts(elements_ptr as *const f32, count), std::slice::from_raw_parts(test_ptr as *const f32, tests)) };
            super::for_each_segment(count, &|start, stop| {
                // SAFETY: the segments of one call are disjoint.
                let flags = unsafe { parts.part(start, stop - start) };
                mark(flags, &values[start..stop], test, invert);
            });
        }
    }
    Ok(out)
}

/// 1 where the value equals a test element (0 with `invert`), by `==` on the values.
fn mark<T: PartialEq + Copy>(flags: &mut [u8], values: &[T], test: &[T], invert: bool) {
    for (flag, value) in flags.iter_mut().zip(values) {
        let member = test.iter().fold(false, |found, t| found | (*t == *value));
        *flag = u8::from(member != invert);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership_is_eagers_equality() {
        let mut flags = [0u8; 5];
        mark(&mut flags, &[1.0f32, f32::NAN, -0.0, 2.5, 3.0], &[0.0, f32::NAN, 3.0], false);
        assert_eq!(flags, [0, 0, 1, 0, 1]);
        mark(&mut flags, &[1i64, 7, 7, -2, 0], &[7, 0], true);
        assert_eq!(flags, [1, 0, 0, 1, 0]);
    }
}
