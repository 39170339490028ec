//! The hand-written RMSNorm of LLaMA-style code, `x * torch.rsqrt(x.pow(2).mean(-1,
//! keepdim=True) + eps)` (then `* weight`): six libtorch calls and five temporaries in eager,
//! two passes over the rows here.
//!
//! Bit for bit eager's: each square is one float32 product (`pow(x, 2)` is `x * x` in
//! libtorch), the squares' row sums follow torch's order ([`calibrate::sum_over`], libtorch's
//! own sum where ours does not reproduce it), the mean is that sum divided by the row length
//! (eager's `mean` is `sum(…).div_(n)`), `eps` is rounded to float32 as eager's scalar add
//! rounds it, `rsqrt` is `1 / sqrt` (both of libtorch's loops), and each product rounds once.

use tch::Tensor;

use super::calibrate;
use super::dense;
use super::epilogue::Axis;
use super::math;
use crate::error::Result;
use crate::ops;

/// A Python number in float32 arithmetic (`+ eps`, `* scale`): the value eager's kernel uses.
pub trait ScalarOperand: Copy + Into<tch::Scalar> {
    /// The number converted to float32, as `c10::convert<float>` converts it.
    fn as_f32(self) -> f32;
}

impl ScalarOperand for f64 {
    fn as_f32(self) -> f32 {
        self as f32
    }
}

impl ScalarOperand for i64 {
    fn as_f32(self) -> f32 {
        // one rounding, to nearest (not through f64, which could round twice)
        self as f32
    }
}

/// Which side of the normalised rows the weight multiplies: `y * weight` or `weight * y`.
/// The values are the same (IEEE multiplication commutes); eager's error on a weight that
/// does not broadcast names the operands in the source's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightSide {
    Right,
    Left,
}

/// Up to this many elements the two passes run on this thread; above, rows are shared among
/// torch's threads (libtorch's grain size, as its own elementwise kernels split).
const PARALLEL_GRAIN: usize = 32768;

/// `x * rsqrt(mean(x², -1, keepdim=True) + eps)`, then `* weight` on `side` when given.
pub fn rms_norm<S: ScalarOperand>(x: &Tensor, eps: S, weight: Option<(&Tensor, WeightSide)>) -> Result<Tensor> {
    match direct_plan(x, weight.map(|(w, _)| w)) {
        Some(plan) => plan.run(eps.as_f32()),
        None => rms_norm_with_ops(x, eps, weight),
    }
}

/// The chain op by op, as eager runs it (and with eager's errors).
fn rms_norm_with_ops<S: ScalarOperand>(x: &Tensor, eps: S, weight: Option<(&Tensor, WeightSide)>) -> Result<Tensor> {
    let mean_square = ops::mean_dim(&ops::pow(x, 2i64)?, -1, true)?;
    let normalised = ops::mul(x, &ops::rsqrt(&ops::add_scalar(&mean_square, eps)?)?)?;
    match weight {
        None => Ok(normalised),
        Some((w, WeightSide::Right)) => ops::mul(&normalised, w),
        Some((w, WeightSide::Left)) => ops::mul(w, &normalised),
    }
}

/// A contiguous float32 CPU input of rank ≥ 1 seen as `rows × cols`, and its weight's values.
struct DirectPlan<'a> {
    x: &'a Tensor,
    x_values: *const f32,
    rows: usize,
    cols: usize,
    weight: Option<*const f32>,
}

/// The plan when the direct loops take the input: `x` a non-empty contiguous float32 CPU
/// tensor of rank ≥ 1, the weight (if any) a contiguous float32 CPU vector of the row length
/// (any other weight may broadcast to a larger result, or must raise: op by op).
fn direct_plan<'a>(x: &'a Tensor, weight: Option<&Tensor>) -> Option<DirectPlan<'a>> {
    let facts = crate::facts::Facts::of(x)?;
    if facts.rank == 0 || facts.device != tch::Device::Cpu || !facts.is_kind(tch::Kind::Float) {
        return None;
    }
    let (contiguous, data) = crate::facts::contiguous_data(x)?;
    let cols = *x.size().last()? as usize;
    let len = x.numel();
    if !contiguous || cols == 0 || len == 0 {
        return None;
    }
    let weight = match weight {
        None => None,
        Some(w) => {
            let wd = dense::Dense::of(w).filter(|wd| wd.rank == 1 && wd.cols == cols)?;
            Some(wd.ptr as *const f32)
        }
    };
    Some(DirectPlan { x, x_values: data, rows: len / cols, cols, weight })
}

impl DirectPlan<'_> {
    fn run(&self, eps: f32) -> Result<Tensor> {
        let (rows, cols) = (self.rows, self.cols);
        let (tensor, out) = dense::empty(&[rows as i64, cols as i64])?;
        // SAFETY: `x` (and the weight) are alive for this call and only read; `out` is fresh.
        let (input, output) = unsafe { (std::slice::from_raw_parts(self.x_values, rows * cols), out.values_mut()) };
        let weight = self.weight.map(|w| unsafe { std::slice::from_raw_parts(w, cols) });
        let rows_per_part = (PARALLEL_GRAIN / cols).max(1);
        // Pass 1: the squares, in the output (it is overwritten by pass 2), summed per row.
        let squares = crate::parallel::DisjointParts::new(output);
        crate::parallel::for_each_part(rows, rows_per_part, &|first, last| {
            // SAFETY: each part writes only its own rows.
            let part = unsafe { squares.part(first * cols, (last - first) * cols) };
            for (square, v) in part.iter_mut().zip(&input[first * cols..last * cols]) {
                *square = *v * *v;
            }
        });
        let mut sums = vec![0.0f32; rows];
        calibrate::sum_over(output, rows, cols, Axis::Cols, &mut sums);
        // Pass 2: the normalised rows, times the weight.
        let n = cols as f32;
        let normalised = crate::parallel::DisjointParts::new(output);
        crate::parallel::for_each_part(rows, rows_per_part, &|first, last| {
            for row in first..last {
                let scale = 1.0 / (sums[row] / n + eps).sqrt();
                // SAFETY: each part writes only its own rows.
                let out_row = unsafe { normalised.part(row * cols, cols) };
                let in_row = &input[row * cols..(row + 1) * cols];
                math::scale_row(out_row, in_row, scale, weight);
            }
        });
        Ok(tensor.f_view(self.x.size().as_slice())?)
    }
}
