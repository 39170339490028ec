//! Pooling on cuda:0: `max_pool1d/2d`, `avg_pool1d/2d`, `adaptive_avg_pool1d/2d` and
//! `adaptive_max_pool2d`, one thread per output element of a contiguous `(N, C, OH, OW)`
//! output (1-D pooling is 2-D pooling of planes one row high), the input read in place
//! through its strides. Each kernel computes what eager's CUDA kernel computes, in its order:
//! - max: the window from `o·stride - padding` with `dilation`, the part inside the input
//!   (eager skips the padding), from `-inf`, `val > max || isnan(val)` in row-major order;
//! - avg: the float32 sum in row-major order over the part inside the input, divided by the
//!   window clipped to the padded input (`count_include_pad`) or to the input; an empty
//!   window is 0;
//! - adaptive: rows `floor(o·H/OH) .. ceil((o+1)·H/OH)`, the same for columns; the average is
//!   `sum / kh / kw`, two divisions as eager's.
//!
//! [`PoolPlan`] holds the geometry, eager's output shape and its refusals; its host model
//! ([`PoolPlan::run_cpu`]) follows the kernel step by step, and eager's CPU kernels compute
//! the same (the model tests compare them bit for bit).

use super::super::launch::{KernelSignature, ParamKind, ParamKind::*};
use super::ptx::{pack16, PtxBuilder};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolKind {
    Max,
    Avg,
    AdaptiveAvg,
    AdaptiveMax,
}

/// `(out, in, numel, C, OH, OW, n_stride, c_stride, h_stride, w_stride, H, W, window_h,
/// window_w, count_include_pad)`; a window packs size, stride, padding and dilation in 16
/// bits each (from the lowest).
pub const POOL_PARAMS: &[ParamKind] = &[Ptr, Ptr, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64, U32];

/// The window of one spatial dim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolWindow {
    pub size: i64,
    pub stride: i64,
    pub padding: i64,
    pub dilation: i64,
}

impl PoolWindow {
    /// One row of a 1-D pooling seen as 2-D.
    pub const ROW: PoolWindow = PoolWindow { size: 1, stride: 1, padding: 0, dilation: 1 };

    /// Eager's output length over an input of `len` (`pooling_output_shape`): the padded
    /// length over the stride, floored (or ceiled, without a last window that would start in
    /// the right padding), or `None` where eager refuses the arguments (a size, stride or
    /// dilation below 1, padding above half the kernel, no output).
    pub fn output_len(&self, len: i64, ceil_mode: bool) -> Option<i64> {
        let PoolWindow { size, stride, padding, dilation } = *self;
        if size <= 0 || stride <= 0 || dilation <= 0 || padding < 0 || padding > size / 2 {
            return None;
        }
        let room = len + 2 * padding - dilation * (size - 1) - 1 + if ceil_mode { stride - 1 } else { 0 };
        if room < 0 {
            return None;
        }
        let mut out = room / stride + 1;
        if ceil_mode && (out - 1) * stride >= len + padding {
            out -= 1;
        }
        (out >= 1).then_some(out)
    }

    /// The window packed for the kernel, when every part fits in 16 bits.
    fn packed(&self) -> Option<i64> {
        pack16([self.size, self.stride, self.padding, self.dilation])
    }
}

/// One pooling over a strided input of rank `dims + 1` or `dims + 2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolPlan {
    pub kind: PoolKind,
    /// `(N, C, OH, OW)` of the contiguous output.
    pub out: [i64; 4],
    /// The input's strides of N, C, H and W.
    pub strides: [i64; 4],
    /// `(H, W)` of the input.
    pub input: [i64; 2],
    /// Rows and columns (unused by the adaptive kinds).
    pub windows: [PoolWindow; 2],
    pub count_include_pad: bool,
    /// The output's shape as eager gives it (the input's rank).
    pub out_shape: Vec<i64>,
}

impl PoolPlan {
    /// `(N, C, H, W)` sizes and strides of an input of rank `dims + 1` or `dims + 2`.
    fn planes(dims: usize, shape: &[i64], strides: &[i64]) -> Option<([i64; 4], [i64; 4])> {
        let rank = shape.len();
        if !(dims == 1 || dims == 2) || !(dims + 1..=dims + 2).contains(&rank) || strides.len() != rank {
            return None;
        }
        // eager takes an empty batch, no other empty dim
        let batched = rank == dims + 2;
        if shape.iter().enumerate().any(|(d, &n)| n == 0 && !(batched && d == 0)) {
            return None;
        }
        // (N, C, H, W): an unbatched input has N = 1, a 1-D one H = 1 (stride 0 for both)
        let c = rank - dims - 1;
        let (mut size, mut stride) = ([1i64; 4], [0i64; 4]);
        if c == 1 {
            (size[0], stride[0]) = (shape[0], strides[0]);
        }
        (size[1], stride[1]) = (shape[c], strides[c]);
        if dims == 2 {
            (size[2], stride[2]) = (shape[rank - 2], strides[rank - 2]);
        }
        (size[3], stride[3]) = (shape[rank - 1], strides[rank - 1]);
        Some((size, stride))
    }

    fn with_out(kind: PoolKind, dims: usize, shape: &[i64], size: [i64; 4], stride: [i64; 4], out_hw: [i64; 2], windows: [PoolWindow; 2], count_include_pad: bool) -> PoolPlan {
        let mut out_shape = shape.to_vec();
        let rank = shape.len();
        out_shape[rank - 1] = out_hw[1];
        if dims == 2 {
            out_shape[rank - 2] = out_hw[0];
        }
        PoolPlan { kind, out: [size[0], size[1], out_hw[0], out_hw[1]], strides: stride, input: [size[2], size[3]], windows, count_include_pad, out_shape }
    }

    /// Max or avg pooling with eager's arguments (`kernel`, `stride`, `padding`, `dilation`:
    /// one value for every dim or one per dim; an empty stride is the kernel); `None` where
    /// eager refuses them (the op then lets libtorch raise eager's error).
    #[allow(clippy::too_many_arguments)]
    pub fn window(kind: PoolKind, dims: usize, shape: &[i64], strides: &[i64], kernel: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool, count_include_pad: bool) -> Option<PoolPlan> {
        let (size, in_strides) = Self::planes(dims, shape, strides)?;
        let per_dim = |values: &[i64], d: usize| -> Option<i64> {
            match values.len() {
                1 => Some(values[0]),
                n if n == dims => Some(values[d]),
                _ => None,
            }
        };
        let mut windows = [PoolWindow::ROW; 2];
        let mut out_hw = [1i64; 2];
        for d in 0..dims {
            let k = per_dim(kernel, d)?;
            let s = if stride.is_empty() { k } else { per_dim(stride, d)? };
            let w = PoolWindow { size: k, stride: s, padding: per_dim(padding, d)?, dilation: per_dim(dilation, d)? };
            let at = d + 2 - dims;
            out_hw[at] = w.output_len(size[2 + at], ceil_mode)?;
            windows[at] = w;
        }
        Some(Self::with_out(kind, dims, shape, size, in_strides, out_hw, windows, count_include_pad))
    }

    /// Adaptive pooling to `output_size` (one size per pooled dim).
    pub fn adaptive(kind: PoolKind, dims: usize, shape: &[i64], strides: &[i64], output_size: &[i64]) -> Option<PoolPlan> {
        let (size, in_strides) = Self::planes(dims, shape, strides)?;
        let mut out_hw = [1i64; 2];
        // one size per pooled dim, as eager's kernels take it (an empty output is empty)
        if output_size.len() != dims || output_size.iter().any(|&o| o < 0) {
            return None;
        }
        for (d, &o) in output_size.iter().enumerate() {
            out_hw[d + 2 - dims] = o;
        }
        Some(Self::with_out(kind, dims, shape, size, in_strides, out_hw, [PoolWindow::ROW; 2], false))
    }

    pub fn numel(&self) -> u64 {
        self.out.iter().product::<i64>() as u64
    }

    /// Rows `lo..hi` step `step` that output row `o` reads, and, for avg, the window's size
    /// clipped to the padded input; the same for columns with `dim = 1`.
    fn bounds(&self, dim: usize, o: i64) -> (i64, i64, i64, i64) {
        let len = self.input[dim];
        let w = self.windows[dim];
        match self.kind {
            PoolKind::Max => {
                let mut lo = o * w.stride - w.padding;
                let hi = (lo + (w.size - 1) * w.dilation + 1).min(len);
                if lo < 0 {
                    lo += (-lo + w.dilation - 1) / w.dilation * w.dilation;
                }
                (lo, hi, w.dilation, 0)
            }
            PoolKind::Avg => {
                let lo = o * w.stride - w.padding;
                let hi = (lo + w.size).min(len + w.padding);
                (lo.max(0), hi.min(len), 1, hi - lo)
            }
            PoolKind::AdaptiveAvg | PoolKind::AdaptiveMax => {
                let out = self.out[2 + dim];
                (o * len / out, ((o + 1) * len + out - 1) / out, 1, 0)
            }
        }
    }

    /// The kernel's result, element by element (`input` is the storage the strides index).
    pub fn run_cpu(&self, input: &[f32]) -> Vec<f32> {
        let [n_len, c_len, oh_len, ow_len] = self.out;
        let mut out = Vec::with_capacity(self.numel() as usize);
        for n in 0..n_len {
            for c in 0..c_len {
                let base = n * self.strides[0] + c * self.strides[1];
                for oh in 0..oh_len {
                    let (h0, h1, hstep, hsize) = self.bounds(0, oh);
                    for ow in 0..ow_len {
                        let (w0, w1, wstep, wsize) = self.bounds(1, ow);
                        let max = matches!(self.kind, PoolKind::Max | PoolKind::AdaptiveMax);
                        let mut acc = if max { f32::NEG_INFINITY } else { 0.0 };
                        let mut h = h0;
                        while h < h1 {
                            let mut w = w0;
                            while w < w1 {
                                let v = input[(base + h * self.strides[2] + w * self.strides[3]) as usize];
                                acc = if max { if v > acc || v.is_nan() { v } else { acc } } else { acc + v };
                                w += wstep;
                            }
                            h += hstep;
                        }
                        out.push(match self.kind {
                            PoolKind::Max | PoolKind::AdaptiveMax => acc,
                            PoolKind::Avg if h0 >= h1 || w0 >= w1 => 0.0,
                            PoolKind::Avg => {
                                let divisor = if self.count_include_pad { hsize * wsize } else { (h1 - h0) * (w1 - w0) };
                                acc / divisor as f32
                            }
                            PoolKind::AdaptiveAvg => acc / (h1 - h0) as f32 / (w1 - w0) as f32,
                        });
                    }
                }
            }
        }
        out
    }

    /// The kernel's arguments after `(out, in)`, or `None` when a window does not fit the
    /// packing.
    pub fn args_tail(&self) -> Option<Vec<i64>> {
        let [_, c, oh, ow] = self.out;
        let mut args = vec![self.numel() as i64, c, oh, ow];
        args.extend(self.strides);
        args.extend(self.input);
        args.push(self.windows[0].packed()?);
        args.push(self.windows[1].packed()?);
        Some(args)
    }
}

/// `(lo, hi, step, clipped size)` registers of one dim, as [`PoolPlan::bounds`].
fn bounds_ptx(b: &mut PtxBuilder, kind: PoolKind, o: &str, len: &str, out_len: &str, packed: &str) -> (String, String, String, String) {
    let (lo, hi, step, size) = (b.b64(), b.b64(), b.b64(), b.b64());
    b.op(format!("mov.s64 {size}, 0"));
    match kind {
        PoolKind::Max | PoolKind::Avg => {
            let (k, s, p, d) = (b.packed_field(packed, 0), b.packed_field(packed, 1), b.packed_field(packed, 2), b.packed_field(packed, 3));
            b.op(format!("mul.lo.s64 {lo}, {o}, {s}"));
            b.op(format!("sub.s64 {lo}, {lo}, {p}"));
            if kind == PoolKind::Max {
                // hi = min(lo + (k - 1)·d + 1, len); lo += ceil(-lo / d)·d when lo < 0
                b.op(format!("sub.s64 {hi}, {k}, 1"));
                b.op(format!("mad.lo.s64 {hi}, {hi}, {d}, {lo}"));
                b.op(format!("add.s64 {hi}, {hi}, 1"));
                b.op(format!("min.s64 {hi}, {hi}, {len}"));
                let (negative, skip) = (b.pred(), b.b64());
                b.op(format!("setp.lt.s64 {negative}, {lo}, 0"));
                b.op(format!("neg.s64 {skip}, {lo}"));
                b.op(format!("add.s64 {skip}, {skip}, {d}"));
                b.op(format!("sub.s64 {skip}, {skip}, 1"));
                b.op(format!("div.s64 {skip}, {skip}, {d}"));
                b.op(format!("mul.lo.s64 {skip}, {skip}, {d}"));
                b.op(format!("@{negative} add.s64 {lo}, {lo}, {skip}"));
                b.op(format!("mov.s64 {step}, {d}"));
            } else {
                // hi = min(lo + k, len + p); size = hi - lo; then both clipped to the input
                let padded = b.b64();
                b.op(format!("add.s64 {hi}, {lo}, {k}"));
                b.op(format!("add.s64 {padded}, {len}, {p}"));
                b.op(format!("min.s64 {hi}, {hi}, {padded}"));
                b.op(format!("sub.s64 {size}, {hi}, {lo}"));
                b.op(format!("max.s64 {lo}, {lo}, 0"));
                b.op(format!("min.s64 {hi}, {hi}, {len}"));
                b.op(format!("mov.s64 {step}, 1"));
            }
        }
        PoolKind::AdaptiveAvg | PoolKind::AdaptiveMax => {
            b.op(format!("mul.lo.s64 {lo}, {o}, {len}"));
            b.op(format!("div.s64 {lo}, {lo}, {out_len}"));
            b.op(format!("add.s64 {hi}, {o}, 1"));
            b.op(format!("mul.lo.s64 {hi}, {hi}, {len}"));
            b.op(format!("add.s64 {hi}, {hi}, {out_len}"));
            b.op(format!("sub.s64 {hi}, {hi}, 1"));
            b.op(format!("div.s64 {hi}, {hi}, {out_len}"));
            b.op(format!("mov.s64 {step}, 1"));
        }
    }
    (lo, hi, step, size)
}

pub fn pool_ptx(signature: &KernelSignature, kind: PoolKind) -> String {
    let mut b = PtxBuilder::new();
    let done = b.label("done");
    let out = b.param_global_ptr(0);
    let input = b.param_global_ptr(1);
    let index = b.output_element(2, &done);
    let (c_len, oh_len, ow_len) = (b.param_s64(3), b.param_s64(4), b.param_s64(5));
    let (n_stride, c_stride, h_stride, w_stride) = (b.param_s64(6), b.param_s64(7), b.param_s64(8), b.param_s64(9));
    let (height, width) = (b.param_s64(10), b.param_s64(11));
    let (rows, cols) = (b.param_s64(12), b.param_s64(13));
    let [n, c, oh, ow] = b.split_nchw(&index, &c_len, &oh_len, &ow_len);
    let base = b.b64();
    b.op(format!("mul.lo.s64 {base}, {n}, {n_stride}"));
    b.op(format!("mad.lo.s64 {base}, {c}, {c_stride}, {base}"));
    let (h0, h1, hstep, hsize) = bounds_ptx(&mut b, kind, &oh, &height, &oh_len, &rows);
    let (w0, w1, wstep, wsize) = bounds_ptx(&mut b, kind, &ow, &width, &ow_len, &cols);
    let max = matches!(kind, PoolKind::Max | PoolKind::AdaptiveMax);
    let acc = b.f32();
    b.op(format!("mov.f32 {acc}, {}", if max { "0fFF800000" } else { "0f00000000" }));
    // for h in h0..h1 step hstep: for w in w0..w1 step wstep
    let (h, w) = (b.b64(), b.b64());
    let (row_loop, row_end, col_loop, col_end) = (b.label("row"), b.label("row_end"), b.label("col"), b.label("col_end"));
    let (row_done, col_done) = (b.pred(), b.pred());
    b.op(format!("mov.s64 {h}, {h0}"));
    b.place(&row_loop);
    b.op(format!("setp.ge.s64 {row_done}, {h}, {h1}"));
    b.op(format!("@{row_done} bra {row_end}"));
    let row_base = b.b64();
    b.op(format!("mad.lo.s64 {row_base}, {h}, {h_stride}, {base}"));
    b.op(format!("mov.s64 {w}, {w0}"));
    b.place(&col_loop);
    b.op(format!("setp.ge.s64 {col_done}, {w}, {w1}"));
    b.op(format!("@{col_done} bra {col_end}"));
    let offset = b.b64();
    b.op(format!("mad.lo.s64 {offset}, {w}, {w_stride}, {row_base}"));
    let address = b.element_address(&input, &offset, 4);
    let v = b.f32();
    b.op(format!("ld.global.f32 {v}, [{address}]"));
    if max {
        let (greater, nan) = (b.pred(), b.pred());
        b.op(format!("setp.gt.f32 {greater}, {v}, {acc}"));
        b.op(format!("setp.nan.f32 {nan}, {v}, {v}"));
        b.op(format!("or.pred {greater}, {greater}, {nan}"));
        b.op(format!("@{greater} mov.f32 {acc}, {v}"));
    } else {
        b.op(format!("add.rn.f32 {acc}, {acc}, {v}"));
    }
    b.op(format!("add.s64 {w}, {w}, {wstep}"));
    b.op(format!("bra {col_loop}"));
    b.place(&col_end);
    b.op(format!("add.s64 {h}, {h}, {hstep}"));
    b.op(format!("bra {row_loop}"));
    b.place(&row_end);
    let result = match kind {
        PoolKind::Max | PoolKind::AdaptiveMax => acc,
        PoolKind::Avg => {
            // divisor: the padded window (count_include_pad) or the part inside; empty gives 0
            let include = b.b32();
            b.op(format!("ld.param.u32 {include}, [p14]"));
            let (inside_h, inside_w, divisor, padded) = (b.b64(), b.b64(), b.b64(), b.b64());
            b.op(format!("sub.s64 {inside_h}, {h1}, {h0}"));
            b.op(format!("sub.s64 {inside_w}, {w1}, {w0}"));
            b.op(format!("mul.lo.s64 {divisor}, {inside_h}, {inside_w}"));
            b.op(format!("mul.lo.s64 {padded}, {hsize}, {wsize}"));
            let use_padded = b.pred();
            b.op(format!("setp.ne.u32 {use_padded}, {include}, 0"));
            b.op(format!("@{use_padded} mov.s64 {divisor}, {padded}"));
            let (divisor_f, y) = (b.f32(), b.f32());
            b.op(format!("cvt.rn.f32.s64 {divisor_f}, {divisor}"));
            b.op(format!("div.rn.f32 {y}, {acc}, {divisor_f}"));
            let (empty_h, empty_w) = (b.pred(), b.pred());
            b.op(format!("setp.ge.s64 {empty_h}, {h0}, {h1}"));
            b.op(format!("setp.ge.s64 {empty_w}, {w0}, {w1}"));
            b.op(format!("or.pred {empty_h}, {empty_h}, {empty_w}"));
            b.op(format!("@{empty_h} mov.f32 {y}, 0f00000000"));
            y
        }
        PoolKind::AdaptiveAvg => {
            let (kh, kw) = (b.b64(), b.b64());
            b.op(format!("sub.s64 {kh}, {h1}, {h0}"));
            b.op(format!("sub.s64 {kw}, {w1}, {w0}"));
            let (khf, kwf, y) = (b.f32(), b.f32(), b.f32());
            b.op(format!("cvt.rn.f32.s64 {khf}, {kh}"));
            b.op(format!("cvt.rn.f32.s64 {kwf}, {kw}"));
            b.op(format!("div.rn.f32 {y}, {acc}, {khf}"));
            b.op(format!("div.rn.f32 {y}, {y}, {kwf}"));
            y
        }
    };
    let address = b.element_address(&out, &index, 4);
    b.op(format!("st.global.f32 [{address}], {result}"));
    b.place(&done);
    b.finish(signature)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_lengths_and_refusals_are_eagers() {
        let w = |size, stride, padding, dilation| PoolWindow { size, stride, padding, dilation };
        assert_eq!(w(2, 2, 0, 1).output_len(24, false), Some(12));
        assert_eq!(w(3, 2, 1, 1).output_len(112, false), Some(56));
        assert_eq!(w(2, 2, 0, 1).output_len(7, true), Some(4));
        assert_eq!(w(2, 2, 1, 1).output_len(5, true), Some(3));
        assert_eq!(w(3, 1, 0, 2).output_len(9, false), Some(5));
        // padding is checked against half the kernel, not the dilated span
        assert_eq!(w(3, 1, 2, 2).output_len(9, false), None);
        assert_eq!(w(2, 2, 2, 1).output_len(8, false), None);
        assert_eq!(w(3, 1, 0, 1).output_len(2, false), None);
        assert_eq!(w(0, 1, 0, 1).output_len(8, false), None);
    }

    #[test]
    fn inputs_are_seen_as_planes() {
        let plan = PoolPlan::window(PoolKind::Max, 2, &[2, 3, 8, 9], &[216, 72, 9, 1], &[2], &[], &[0], &[1], false, false).unwrap();
        assert_eq!((plan.out, plan.strides, plan.input, plan.out_shape.clone()), ([2, 3, 4, 4], [216, 72, 9, 1], [8, 9], vec![2, 3, 4, 4]));
        let plan = PoolPlan::window(PoolKind::Max, 2, &[3, 8, 9], &[1, 27, 3], &[2], &[], &[0], &[1], false, false).unwrap();
        assert_eq!((plan.out, plan.strides, plan.out_shape.clone()), ([1, 3, 4, 4], [0, 1, 27, 3], vec![3, 4, 4]));
        let plan = PoolPlan::window(PoolKind::Avg, 1, &[2, 3, 10], &[30, 10, 1], &[4], &[3], &[0], &[1], false, true).unwrap();
        assert_eq!((plan.out, plan.strides, plan.input, plan.out_shape.clone()), ([2, 3, 1, 3], [30, 10, 0, 1], [1, 10], vec![2, 3, 3]));
        let plan = PoolPlan::adaptive(PoolKind::AdaptiveAvg, 1, &[3, 10], &[10, 1], &[4]).unwrap();
        assert!(PoolPlan::adaptive(PoolKind::AdaptiveAvg, 2, &[3, 10, 10], &[100, 10, 1], &[4]).is_none());
        // an empty batch is eager's empty result; an empty plane its error
        assert_eq!(PoolPlan::window(PoolKind::Max, 2, &[0, 3, 8, 8], &[192, 64, 8, 1], &[2], &[], &[0], &[1], false, false).unwrap().numel(), 0);
        assert!(PoolPlan::window(PoolKind::Max, 2, &[3, 0, 8], &[0, 8, 1], &[2], &[], &[0], &[1], false, false).is_none());
        assert_eq!((plan.out, plan.strides, plan.out_shape.clone()), ([1, 3, 1, 4], [0, 10, 0, 1], vec![3, 4]));
        assert!(PoolPlan::window(PoolKind::Max, 2, &[8, 9], &[9, 1], &[2], &[], &[0], &[1], false, false).is_none());
    }
}
