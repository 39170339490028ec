//! Reductions along one dimension: one block of [`REDUCE_THREADS`] threads per output line
//! (`ctaid.x` = line), each thread combining elements `t, t+T, ...` in order, then a
//! shared-memory tree — the order [`ReducePlan::tree_reduce`](super::plan::ReducePlan)
//! models. Sum/mean, softmax (max, sum of exponentials, normalise), argmax, and layer/RMS
//! norm (the line statistics, then the affine per element).

use super::super::launch::{KernelSignature, ParamKind, ParamKind::*};
use super::math::{self, PtxScalar};
use super::plan::{Fold, Norm, REDUCE_THREADS};
use super::ptx::PtxBuilder;

/// Line `o` (`ctaid.x`) is `(o / lo_size, o % lo_size)` over the kept dimensions, grouped
/// in two ([`ReducePlan`](super::plan::ReducePlan)); its element `i` is at
/// `hi * hi_stride + lo * lo_stride + i * reduce_stride`.
/// `(out, in, len, lo_size, hi_stride, lo_stride, reduce_stride, factor)`; also the
/// parameters of amax/amin/logsumexp, which do not read `factor`.
pub const SUM_PARAMS: &[ParamKind] = &[Ptr, Ptr, I64, I64, I64, I64, I64, F32];
/// `(out, in, len, lo_size, hi_stride, lo_stride, reduce_stride, out_hi_stride,
/// out_lo_stride, out_reduce_stride)`.
pub const SOFTMAX_PARAMS: &[ParamKind] = &[Ptr, Ptr, I64, I64, I64, I64, I64, I64, I64, I64];
/// `(out_i64, in, len, lo_size, hi_stride, lo_stride, reduce_stride)`.
pub const ARGMAX_PARAMS: &[ParamKind] = &[Ptr, Ptr, I64, I64, I64, I64, I64];

/// Registers every reduction kernel starts with.
struct Line {
    tid: String,
    tid64: String,
    line: String,
    /// The line's two coordinates over the kept dimensions.
    hi: String,
    lo: String,
    len: String,
    /// Input offset of the line's first element.
    base: String,
    reduce_stride: String,
    input: String,
}

fn line_prologue(b: &mut PtxBuilder) -> Line {
    let input = b.param_global_ptr(1);
    let len = b.param_s64(2);
    let lo_size = b.param_s64(3);
    let hi_stride = b.param_s64(4);
    let lo_stride = b.param_s64(5);
    let reduce_stride = b.param_s64(6);
    let (tid, ctaid) = (b.b32(), b.b32());
    b.op(format!("mov.u32 {tid}, %tid.x"));
    b.op(format!("mov.u32 {ctaid}, %ctaid.x"));
    let (tid64, line) = (b.b64(), b.b64());
    b.op(format!("cvt.u64.u32 {tid64}, {tid}"));
    b.op(format!("cvt.u64.u32 {line}, {ctaid}"));
    let (hi, lo) = (b.b64(), b.b64());
    b.op(format!("div.u64 {hi}, {line}, {lo_size}"));
    b.op(format!("mul.lo.s64 {lo}, {hi}, {lo_size}"));
    b.op(format!("sub.s64 {lo}, {line}, {lo}"));
    let base = b.b64();
    b.op(format!("mul.lo.s64 {base}, {hi}, {hi_stride}"));
    b.op(format!("mad.lo.s64 {base}, {lo}, {lo_stride}, {base}"));
    Line { tid, tid64, line, hi, lo, len, base, reduce_stride, input }
}

/// The start of a line kernel that writes f32 results: the builder with the tree's shared
/// array, the output address (parameter 0) and the line's registers.
fn line_kernel() -> (PtxBuilder, String, Line) {
    let mut b = PtxBuilder::new();
    b.shared_array("partial", 4, REDUCE_THREADS);
    let out = b.param_global_ptr(0);
    let l = line_prologue(&mut b);
    (b, out, l)
}

/// Emits `for i in (t..len).step_by(T) { body(i, x_i) }`.
fn strided_loop(b: &mut PtxBuilder, l: &Line, body: &mut dyn FnMut(&mut PtxBuilder, &str, &str)) {
    let i = b.b64();
    b.op(format!("mov.u64 {i}, {}", l.tid64));
    let (top, end) = (b.label("loop"), b.label("loop_end"));
    b.place(&top);
    let done = b.pred();
    b.op(format!("setp.ge.s64 {done}, {i}, {}", l.len));
    b.op(format!("@{done} bra {end}"));
    let off = b.b64();
    b.op(format!("mad.lo.s64 {off}, {i}, {}, {}", l.reduce_stride, l.base));
    let address = b.element_address(&l.input, &off, 4);
    let x = b.f32();
    b.op(format!("ld.global.f32 {x}, [{address}]"));
    body(b, &i, &x);
    b.op(format!("add.s64 {i}, {i}, {REDUCE_THREADS}"));
    b.op(format!("bra {top}"));
    b.place(&end);
}

/// Stores `acc` in `shared[tid]`, tree-combines with `combine(acc_reg, other_reg)` (which
/// must leave the result in a register it returns) and returns the total read back by
/// every thread from `shared[0]`.
fn tree_f32(b: &mut PtxBuilder, l: &Line, shared: &str, acc: &str, combine: &mut dyn FnMut(&mut PtxBuilder, &str, &str) -> String) -> String {
    let base = b.b32();
    b.op(format!("mov.u32 {base}, {shared}"));
    let mine = b.b32();
    b.op(format!("mad.lo.u32 {mine}, {}, 4, {base}", l.tid));
    b.op(format!("st.shared.f32 [{mine}], {acc}"));
    b.op("bar.sync 0");
    let mut step = REDUCE_THREADS / 2;
    while step > 0 {
        let skip = b.label("tree_skip");
        let active = b.pred();
        b.op(format!("setp.lt.u32 {active}, {}, {step}", l.tid));
        b.op(format!("@!{active} bra {skip}"));
        let (x, y) = (b.f32(), b.f32());
        b.op(format!("ld.shared.f32 {x}, [{mine}]"));
        b.op(format!("ld.shared.f32 {y}, [{mine}+{}]", step * 4));
        let z = combine(b, &x, &y);
        b.op(format!("st.shared.f32 [{mine}], {z}"));
        b.place(&skip);
        b.op("bar.sync 0");
        step /= 2;
    }
    let total = b.f32();
    b.op(format!("ld.shared.f32 {total}, [{base}]"));
    // Everyone has read the total before the array is reused.
    b.op("bar.sync 0");
    total
}

/// One line's fold and the value every thread reads back: the thread-strided loop (each
/// element through `term`), then the tree, both combining with `combine`.
fn fold_line(b: &mut PtxBuilder, l: &Line, fold: Fold, term: &mut dyn FnMut(&mut PtxBuilder, &str) -> String) -> String {
    let acc = b.f32();
    b.op(format!("mov.f32 {acc}, {}", fold.init_ptx()));
    let combine = fold.combine_ptx();
    strided_loop(b, l, &mut |b, _i, x| {
        let t = term(b, x);
        b.op(format!("{combine} {acc}, {acc}, {t}"));
    });
    tree_f32(b, l, "partial", &acc, &mut |b, x, y| {
        let z = b.f32();
        b.op(format!("{combine} {z}, {x}, {y}"));
        z
    })
}

/// `Σ exp(x - shift)` over the line (softmax's denominator, logsumexp's sum).
fn exp_sum(b: &mut PtxBuilder, l: &Line, shift: &str) -> String {
    fold_line(b, l, Fold::Sum, &mut |b, x| {
        let d = b.f32();
        b.op(format!("sub.rn.f32 {d}, {x}, {shift}"));
        math::exp(&mut PtxScalar { b: &mut *b }, &d)
    })
}

/// Thread 0 stores `value` at `out[line]`.
fn store_line_result(b: &mut PtxBuilder, l: &Line, out: &str, value: &str) {
    let skip = b.label("not_first");
    let first = b.pred();
    b.op(format!("setp.eq.u32 {first}, {}, 0", l.tid));
    b.op(format!("@!{first} bra {skip}"));
    let address = b.element_address(out, &l.line, 4);
    b.op(format!("st.global.f32 [{address}], {value}"));
    b.place(&skip);
}

/// Sum (times `factor`: 1 for sum, `1/len` for mean), the NaN-propagating maximum or
/// minimum (`amax`/`amin`, exact), or the product of each line (`factor` applies to the sum
/// only).
pub fn fold_ptx(signature: &KernelSignature, fold: Fold) -> String {
    let (mut b, out, l) = line_kernel();
    let factor = b.param_f32(7);
    let total = fold_line(&mut b, &l, fold, &mut |_, x| x.to_string());
    let result = if fold == Fold::Sum {
        let scaled = b.f32();
        b.op(format!("mul.rn.f32 {scaled}, {total}, {factor}"));
        scaled
    } else {
        total
    };
    store_line_result(&mut b, &l, &out, &result);
    b.finish(signature)
}

/// `(out, in, len, lo_size, hi_stride, lo_stride, reduce_stride, divisor, take_sqrt)`.
pub const VAR_PARAMS: &[ParamKind] = &[Ptr, Ptr, I64, I64, I64, I64, I64, F32, U32];

/// Variance (or, with `take_sqrt`, standard deviation) of each line: the tree mean, the
/// tree sum of squared deviations from it, divided by `divisor` (`max(0, len - correction)`).
pub fn var_ptx(signature: &KernelSignature) -> String {
    let (mut b, out, l) = line_kernel();
    let divisor = b.param_f32(7);
    let take_sqrt = b.b32();
    b.op(format!("ld.param.u32 {take_sqrt}, [p8]"));
    let len_f = b.f32();
    b.op(format!("cvt.rn.f32.s64 {len_f}, {}", l.len));
    let mean = line_mean(&mut b, &l, &len_f);
    let squares = squared_deviations(&mut b, &l, Some(&mean));
    let var = b.f32();
    b.op(format!("div.rn.f32 {var}, {squares}, {divisor}"));
    let sqrt_on = b.pred();
    b.op(format!("setp.ne.u32 {sqrt_on}, {take_sqrt}, 0"));
    b.op(format!("@{sqrt_on} sqrt.rn.f32 {var}, {var}"));
    store_line_result(&mut b, &l, &out, &var);
    b.finish(signature)
}

/// `logsumexp` of each line, eager's formula: `m` the NaN-propagating maximum (0 where it is
/// ±inf), then `log(Σ exp(x - m)) + m`.
pub fn logsumexp_ptx(signature: &KernelSignature) -> String {
    let (mut b, out, l) = line_kernel();
    let max = fold_line(&mut b, &l, Fold::Max, &mut |_, x| x.to_string());
    let (magnitude, infinite) = (b.f32(), b.pred());
    b.op(format!("abs.f32 {magnitude}, {max}"));
    b.op(format!("setp.eq.f32 {infinite}, {magnitude}, 0f7F800000"));
    b.op(format!("@{infinite} mov.f32 {max}, 0f00000000"));
    let sum = exp_sum(&mut b, &l, &max);
    let logged = math::log(&mut PtxScalar { b: &mut b }, &sum);
    let result = b.f32();
    b.op(format!("add.rn.f32 {result}, {logged}, {max}"));
    store_line_result(&mut b, &l, &out, &result);
    b.finish(signature)
}

/// Softmax (`exp(x - max) / sum`) or, with `log`, log-softmax (`(x - max) - log(sum)`,
/// eager's CUDA epilogue) of each line, `sum = Σ exp(x - max)`, written at the output strides.
pub fn softmax_ptx(signature: &KernelSignature, log: bool) -> String {
    let (mut b, out, l) = line_kernel();
    let out_hi = b.param_s64(7);
    let out_lo = b.param_s64(8);
    let out_reduce = b.param_s64(9);
    let out_base = b.b64();
    b.op(format!("mul.lo.s64 {out_base}, {}, {out_hi}", l.hi));
    b.op(format!("mad.lo.s64 {out_base}, {}, {out_lo}, {out_base}", l.lo));
    // 1. max, NaN-propagating; 2. sum of exp(x - max).
    let max = fold_line(&mut b, &l, Fold::Max, &mut |_, x| x.to_string());
    let total = exp_sum(&mut b, &l, &max);
    let log_total = if log { Some(math::log(&mut PtxScalar { b: &mut b }, &total)) } else { None };
    // 3. write exp(x - max) / sum, or (x - max) - log(sum).
    strided_loop(&mut b, &l, &mut |b, i, x| {
        let d = b.f32();
        b.op(format!("sub.rn.f32 {d}, {x}, {max}"));
        let y = b.f32();
        match &log_total {
            Some(log_total) => b.op(format!("sub.rn.f32 {y}, {d}, {log_total}")),
            None => {
                let e = math::exp(&mut PtxScalar { b: &mut *b }, &d);
                b.op(format!("div.rn.f32 {y}, {e}, {total}"));
            }
        }
        let off = b.b64();
        b.op(format!("mad.lo.s64 {off}, {i}, {out_reduce}, {out_base}"));
        let address = b.element_address(&out, &off, 4);
        b.op(format!("st.global.f32 [{address}], {y}"));
    });
    b.finish(signature)
}

/// Emits the argmax combine rule of [`super::plan::argmax_combine`]: sets `take` when
/// `(bv, bi)` should replace `(av, ai)`.
fn argmax_take(b: &mut PtxBuilder, av: &str, ai: &str, bv: &str, bi: &str) -> String {
    let p = |b: &mut PtxBuilder| b.pred();
    let (b_valid, a_empty, a_nan, b_nan) = (p(b), p(b), p(b), p(b));
    b.op(format!("setp.ge.s64 {b_valid}, {bi}, 0"));
    b.op(format!("setp.lt.s64 {a_empty}, {ai}, 0"));
    b.op(format!("setp.nan.f32 {a_nan}, {av}, {av}"));
    b.op(format!("setp.nan.f32 {b_nan}, {bv}, {bv}"));
    let (lower, greater, equal) = (p(b), p(b), p(b));
    b.op(format!("setp.lt.s64 {lower}, {bi}, {ai}"));
    b.op(format!("setp.gt.f32 {greater}, {bv}, {av}"));
    b.op(format!("setp.eq.f32 {equal}, {bv}, {av}"));
    // numbers: greater || (equal && lower)
    let numbers = p(b);
    b.op(format!("and.pred {numbers}, {equal}, {lower}"));
    b.op(format!("or.pred {numbers}, {numbers}, {greater}"));
    // b NaN: !a_nan || lower
    let nan_case = p(b);
    b.op(format!("not.pred {nan_case}, {a_nan}"));
    b.op(format!("or.pred {nan_case}, {nan_case}, {lower}"));
    b.op(format!("and.pred {nan_case}, {nan_case}, {b_nan}"));
    // neither NaN and numbers
    let neither = p(b);
    b.op(format!("or.pred {neither}, {a_nan}, {b_nan}"));
    b.op(format!("not.pred {neither}, {neither}"));
    b.op(format!("and.pred {neither}, {neither}, {numbers}"));
    let take = p(b);
    b.op(format!("or.pred {take}, {nan_case}, {neither}"));
    b.op(format!("or.pred {take}, {take}, {a_empty}"));
    b.op(format!("and.pred {take}, {take}, {b_valid}"));
    take
}

pub fn argmax_ptx(signature: &KernelSignature) -> String {
    let mut b = PtxBuilder::new();
    b.shared_array("best_value", 4, REDUCE_THREADS);
    b.shared_array("best_index", 8, REDUCE_THREADS);
    let out = b.param_global_ptr(0);
    let l = line_prologue(&mut b);
    let (bv, bi) = (b.f32(), b.b64());
    b.op(format!("mov.f32 {bv}, 0fFF800000"));
    b.op(format!("mov.s64 {bi}, -1"));
    strided_loop(&mut b, &l, &mut |b, i, x| {
        let take = argmax_take(b, &bv, &bi, x, i);
        b.op(format!("@{take} mov.f32 {bv}, {x}"));
        b.op(format!("@{take} mov.s64 {bi}, {i}"));
    });
    let (vbase, ibase) = (b.b32(), b.b32());
    b.op(format!("mov.u32 {vbase}, best_value"));
    b.op(format!("mov.u32 {ibase}, best_index"));
    let (vmine, imine) = (b.b32(), b.b32());
    b.op(format!("mad.lo.u32 {vmine}, {}, 4, {vbase}", l.tid));
    b.op(format!("mad.lo.u32 {imine}, {}, 8, {ibase}", l.tid));
    b.op(format!("st.shared.f32 [{vmine}], {bv}"));
    b.op(format!("st.shared.s64 [{imine}], {bi}"));
    b.op("bar.sync 0");
    let mut step = REDUCE_THREADS / 2;
    while step > 0 {
        let skip = b.label("tree_skip");
        let active = b.pred();
        b.op(format!("setp.lt.u32 {active}, {}, {step}", l.tid));
        b.op(format!("@!{active} bra {skip}"));
        let (av, ai, ov, oi) = (b.f32(), b.b64(), b.f32(), b.b64());
        b.op(format!("ld.shared.f32 {av}, [{vmine}]"));
        b.op(format!("ld.shared.s64 {ai}, [{imine}]"));
        b.op(format!("ld.shared.f32 {ov}, [{vmine}+{}]", step * 4));
        b.op(format!("ld.shared.s64 {oi}, [{imine}+{}]", step * 8));
        let take = argmax_take(&mut b, &av, &ai, &ov, &oi);
        b.op(format!("@{take} st.shared.f32 [{vmine}], {ov}"));
        b.op(format!("@{take} st.shared.s64 [{imine}], {oi}"));
        b.place(&skip);
        b.op("bar.sync 0");
        step /= 2;
    }
    let skip = b.label("not_first");
    let first = b.pred();
    b.op(format!("setp.eq.u32 {first}, {}, 0", l.tid));
    b.op(format!("@!{first} bra {skip}"));
    let winner = b.b64();
    b.op(format!("ld.shared.s64 {winner}, [{ibase}]"));
    let address = b.element_address(&out, &l.line, 8);
    b.op(format!("st.global.s64 [{address}], {winner}"));
    b.place(&skip);
    b.finish(signature)
}

/// `(out, in, len, lo_size, hi_stride, lo_stride, reduce_stride, out_hi_stride,
/// out_lo_stride, out_reduce_stride, weight, bias, has_weight, has_bias, eps)`: softmax's
/// line layout, then the optional affine vectors (contiguous, `len` elements; read only when
/// their flag is set) and `eps`.
pub const NORM_PARAMS: &[ParamKind] = &[Ptr, Ptr, I64, I64, I64, I64, I64, I64, I64, I64, Ptr, Ptr, U32, U32, F32];

/// `Σ (x - centre)²` over the line (`Σ x²` without a centre): the variance's and the
/// norms' second pass.
fn squared_deviations(b: &mut PtxBuilder, l: &Line, centre: Option<&str>) -> String {
    fold_line(b, l, Fold::Sum, &mut |b, x| {
        let d = match centre {
            Some(mean) => {
                let d = b.f32();
                b.op(format!("sub.rn.f32 {d}, {x}, {mean}"));
                d
            }
            None => x.to_string(),
        };
        let s = b.f32();
        b.op(format!("mul.rn.f32 {s}, {d}, {d}"));
        s
    })
}

/// The line's tree sum divided by its length (`len_f`): the mean every thread reads back.
fn line_mean(b: &mut PtxBuilder, l: &Line, len_f: &str) -> String {
    let total = fold_line(b, l, Fold::Sum, &mut |_, x| x.to_string());
    let mean = b.f32();
    b.op(format!("div.rn.f32 {mean}, {total}, {len_f}"));
    mean
}

/// Layer or RMS normalization of each line, one block per line, every step correctly
/// rounded (`add/mul/div/sqrt/rcp.rn`, no contraction into FMAs) so that
/// [`ReducePlan::run_norm_cpu`](super::plan::ReducePlan::run_norm_cpu) reproduces it bit
/// for bit. Two passes for layer norm (the mean, then the mean of squared deviations), as
/// a numerically safe variance needs; one for RMS norm.
pub fn norm_ptx(signature: &KernelSignature, norm: Norm) -> String {
    let (mut b, out, l) = line_kernel();
    let out_hi = b.param_s64(7);
    let out_lo = b.param_s64(8);
    let out_reduce = b.param_s64(9);
    let weight = b.param_global_ptr(10);
    let bias = b.param_global_ptr(11);
    let (has_weight, has_bias) = (b.b32(), b.b32());
    b.op(format!("ld.param.u32 {has_weight}, [p12]"));
    b.op(format!("ld.param.u32 {has_bias}, [p13]"));
    let eps = b.param_f32(14);
    let (weight_on, bias_on) = (b.pred(), b.pred());
    b.op(format!("setp.ne.u32 {weight_on}, {has_weight}, 0"));
    b.op(format!("setp.ne.u32 {bias_on}, {has_bias}, 0"));
    let out_base = b.b64();
    b.op(format!("mul.lo.s64 {out_base}, {}, {out_hi}", l.hi));
    b.op(format!("mad.lo.s64 {out_base}, {}, {out_lo}, {out_base}", l.lo));
    let len_f = b.f32();
    b.op(format!("cvt.rn.f32.s64 {len_f}, {}", l.len));
    // The centre the deviations are taken from (layer norm's mean; none for RMS norm) and
    // the mean of the squared deviations.
    let centre = match norm {
        Norm::Layer => Some(line_mean(&mut b, &l, &len_f)),
        Norm::Rms => None,
    };
    let squares = squared_deviations(&mut b, &l, centre.as_deref());
    let square_mean = b.f32();
    b.op(format!("div.rn.f32 {square_mean}, {squares}, {len_f}"));
    let (shifted, root, rstd) = (b.f32(), b.f32(), b.f32());
    b.op(format!("add.rn.f32 {shifted}, {square_mean}, {eps}"));
    b.op(format!("sqrt.rn.f32 {root}, {shifted}"));
    b.op(format!("rcp.rn.f32 {rstd}, {root}"));
    strided_loop(&mut b, &l, &mut |b, i, x| {
        let y = b.f32();
        match &centre {
            Some(mean) => {
                b.op(format!("sub.rn.f32 {y}, {x}, {mean}"));
                b.op(format!("mul.rn.f32 {y}, {y}, {rstd}"));
            }
            None => b.op(format!("mul.rn.f32 {y}, {x}, {rstd}")),
        }
        let (wa, ba) = (b.element_address(&weight, i, 4), b.element_address(&bias, i, 4));
        let (wv, bv) = (b.f32(), b.f32());
        b.op(format!("@{weight_on} ld.global.f32 {wv}, [{wa}]"));
        b.op(format!("@{weight_on} mul.rn.f32 {y}, {y}, {wv}"));
        b.op(format!("@{bias_on} ld.global.f32 {bv}, [{ba}]"));
        b.op(format!("@{bias_on} add.rn.f32 {y}, {y}, {bv}"));
        let off = b.b64();
        b.op(format!("mad.lo.s64 {off}, {i}, {out_reduce}, {out_base}"));
        let address = b.element_address(&out, &off, 4);
        b.op(format!("st.global.f32 [{address}], {y}"));
    });
    b.finish(signature)
}
