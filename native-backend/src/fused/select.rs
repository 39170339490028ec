//! Selections by a bool mask: `torch.where(mask, a, b)` of two float32 tensors of the mask's
//! shape, and `x.masked_fill(mask, value)` of a float32 `x` whose trailing dims the mask
//! covers (same shape, or a causal mask broadcast over batch and heads), all contiguous. One
//! select loop, split over torch's threads like the elementwise pass. Small, eager's cost is
//! TensorIterator's set-up; large, its kernels branch per element (about 3 ns an element on a
//! random mask) where these loops do not branch.

use tch::{Device, Kind, Tensor};

use super::dense::{self, Dense};
use crate::error::Result;
use crate::facts::{self, Facts};
use crate::parallel::DisjointParts;

/// The selection, or `None` when the operands are not ones this loop takes (the caller then
/// calls libtorch, which also broadcasts, promotes and raises eager's errors).
pub fn where_same_shape(mask: &Tensor, a: &Tensor, b: &Tensor) -> Option<Result<Tensor>> {
    let (av, bv) = (Dense::of(a)?, Dense::of(b)?);
    let m = Facts::of(mask)?;
    if m.device != Device::Cpu || !m.is_kind(Kind::Bool) || m.rank != av.rank || av.rank != bv.rank {
        return None;
    }
    if m.sizes[..m.rank] != av.shape()[..] || (av.rows, av.cols) != (bv.rows, bv.cols) {
        return None;
    }
    let (contiguous, mask_ptr) = facts::contiguous_data(mask)?;
    if !contiguous {
        return None;
    }
    Some(select(mask_ptr as *const u8, av, bv))
}

fn select(mask_ptr: *const u8, a: Dense, b: Dense) -> Result<Tensor> {
    let (out, o) = dense::empty(&a.shape())?;
    let len = a.len();
    if len == 0 {
        return Ok(out);
    }
    // SAFETY: the mask is a live contiguous bool tensor of `len` bytes (one byte per element,
    // 0 or 1); `a`, `b` are live inputs read only; `o` is the fresh output, written only here.
    let (mask, a, b, o) = unsafe { (std::slice::from_raw_parts(mask_ptr, len), a.values(), b.values(), o.values_mut()) };
    let parts = DisjointParts::new(o);
    super::for_each_segment(len, &|start, stop| {
        // SAFETY: the segments of one call are disjoint.
        let o = unsafe { parts.part(start, stop - start) };
        select_range(o, &mask[start..stop], &a[start..stop], &b[start..stop]);
    });
    Ok(out)
}

/// A select on bits, without a branch: a random mask would mispredict one branch in two,
/// which is what makes eager's kernel slow here; this form compiles to vector blends.
fn select_range(o: &mut [f32], mask: &[u8], a: &[f32], b: &[f32]) {
    for (((o, &m), &a), &b) in o.iter_mut().zip(mask).zip(a).zip(b) {
        let keep_a = u32::from(m != 0).wrapping_neg();
        *o = f32::from_bits((a.to_bits() & keep_a) | (b.to_bits() & !keep_a));
    }
}

/// `x.masked_fill(mask, value)`, or `None` when the operands are not ones this loop takes:
/// `x` contiguous float32, the mask a contiguous bool tensor whose shape is `x`'s trailing
/// dims (leading 1s aside), and `value` representable in float32 (eager raises for a finite
/// value beyond float32's range; libtorch's path then raises it).
pub fn masked_fill(x: &Tensor, mask: &Tensor, value: f64) -> Option<Result<Tensor>> {
    let (xf, mf) = (Facts::of(x)?, Facts::of(mask)?);
    if xf.device != Device::Cpu || !xf.is_kind(Kind::Float) || mf.device != Device::Cpu || !mf.is_kind(Kind::Bool) {
        return None;
    }
    if value.is_finite() && value.abs() > f64::from(f32::MAX) || mf.rank > xf.rank {
        return None;
    }
    let (x_sizes, mask_sizes) = (x.size(), mask.size());
    let covered = mask_sizes.iter().skip_while(|&&d| d == 1).copied().collect::<Vec<_>>();
    if x_sizes[x_sizes.len() - covered.len()..] != covered[..] {
        return None;
    }
    let ((x_contiguous, x_ptr), (mask_contiguous, mask_ptr)) = (facts::contiguous_data(x)?, facts::contiguous_data(mask)?);
    if !x_contiguous || !mask_contiguous {
        return None;
    }
    Some(fill(x_ptr, &x_sizes, mask_ptr as *const u8, covered.iter().product::<i64>() as usize, value as f32))
}

fn fill(x_ptr: *const f32, shape: &[i64], mask_ptr: *const u8, period: usize, value: f32) -> Result<Tensor> {
    let out = Tensor::f_empty(shape, (Kind::Float, Device::Cpu))?;
    let len = shape.iter().product::<i64>() as usize;
    if len == 0 {
        return Ok(out);
    }
    let (_, out_ptr) = facts::contiguous_data(&out).expect("a fresh float32 tensor is contiguous");
    // SAFETY: `x` is a live contiguous float32 tensor of `len` elements, read only; the mask a
    // live contiguous bool tensor of `period` bytes (period divides len: the mask's shape is
    // x's trailing dims); the output is fresh, written only here.
    let (x, mask, o) = unsafe {
        (std::slice::from_raw_parts(x_ptr, len), std::slice::from_raw_parts(mask_ptr, period), std::slice::from_raw_parts_mut(out_ptr, len))
    };
    let parts = DisjointParts::new(o);
    super::for_each_segment(len, &|start, stop| {
        // SAFETY: the segments of one call are disjoint.
        let o = unsafe { parts.part(start, stop - start) };
        // runs of the mask's period, each a vectorisable loop
        let (mut i, mut j) = (start, start % period);
        while i < stop {
            let run = (stop - i).min(period - j);
            fill_range(&mut o[i - start..i - start + run], &mask[j..j + run], &x[i..i + run], value);
            (i, j) = (i + run, 0);
        }
    });
    Ok(out)
}

fn fill_range(o: &mut [f32], mask: &[u8], x: &[f32], value: f32) {
    let value = value.to_bits();
    for ((o, &m), &x) in o.iter_mut().zip(mask).zip(x) {
        let fill = u32::from(m != 0).wrapping_neg();
        *o = f32::from_bits((value & fill) | (x.to_bits() & !fill));
    }
}
