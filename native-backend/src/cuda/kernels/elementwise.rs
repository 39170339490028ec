//! Elementwise kernels: one thread per output element of a contiguous `rows x cols` output;
//! inputs read through the [`ElementwisePlan`](super::plan::ElementwisePlan) offsets
//! `row * row_stride + col * col_stride` (stride 0 where broadcast), so strided views,
//! rank-1/rank-2 broadcasting in both orders and `(m,1) x (1,n)` all use one kernel.

use super::super::launch::{KernelSignature, ParamKind::*};
use super::math::{Binary, BinaryMath, PtxScalar, Unary, UnaryMath};
use super::ptx::PtxBuilder;

/// `(out, in, numel, cols, in_row_stride, in_col_stride)`.
pub const UNARY_PARAMS: &[super::super::launch::ParamKind] = &[Ptr, Ptr, I64, I64, I64, I64];
/// `(out, a, b, numel, cols, a_row_stride, a_col_stride, b_row_stride, b_col_stride)`.
pub const BINARY_PARAMS: &[super::super::launch::ParamKind] = &[Ptr, Ptr, Ptr, I64, I64, I64, I64, I64, I64];

/// Loads the input element for `(row, col)` given stride parameters at `rs_param`, `cs_param`.
fn load_strided(b: &mut PtxBuilder, base: &str, row: &str, col: &str, rs_param: usize, cs_param: usize) -> String {
    let rs = b.param_s64(rs_param);
    let cs = b.param_s64(cs_param);
    let off = b.b64();
    b.op(format!("mul.lo.s64 {off}, {row}, {rs}"));
    let off2 = b.b64();
    b.op(format!("mad.lo.s64 {off2}, {col}, {cs}, {off}"));
    let address = b.element_address(base, &off2, 4);
    let value = b.f32();
    b.op(format!("ld.global.f32 {value}, [{address}]"));
    value
}

/// Thread index, bounds check against `numel_param`, and `(row, col)` of the output element.
fn prologue(b: &mut PtxBuilder, numel_param: usize, cols_param: usize, done: &str) -> (String, String, String) {
    let index = b.global_thread_index();
    let numel = b.param_s64(numel_param);
    let outside = b.pred();
    b.op(format!("setp.ge.s64 {outside}, {index}, {numel}"));
    b.op(format!("@{outside} bra {done}"));
    let cols = b.param_s64(cols_param);
    let row = b.b64();
    b.op(format!("div.s64 {row}, {index}, {cols}"));
    let rowcols = b.b64();
    b.op(format!("mul.lo.s64 {rowcols}, {row}, {cols}"));
    let col = b.b64();
    b.op(format!("sub.s64 {col}, {index}, {rowcols}"));
    (index, row, col)
}

pub fn unary_ptx(op: Unary, signature: &KernelSignature) -> String {
    let mut b = PtxBuilder::new();
    let done = b.label("done");
    let out = b.param_global_ptr(0);
    let input = b.param_global_ptr(1);
    let (index, row, col) = prologue(&mut b, 2, 3, &done);
    let x = load_strided(&mut b, &input, &row, &col, 4, 5);
    let y = op.apply(&mut PtxScalar { b: &mut b }, &x);
    let address = b.element_address(&out, &index, 4);
    b.op(format!("st.global.f32 [{address}], {y}"));
    b.place(&done);
    b.finish(signature)
}

pub fn binary_ptx(op: Binary, signature: &KernelSignature) -> String {
    let mut b = PtxBuilder::new();
    let done = b.label("done");
    let out = b.param_global_ptr(0);
    let a_base = b.param_global_ptr(1);
    let b_base = b.param_global_ptr(2);
    let (index, row, col) = prologue(&mut b, 3, 4, &done);
    let a = load_strided(&mut b, &a_base, &row, &col, 5, 6);
    let bv = load_strided(&mut b, &b_base, &row, &col, 7, 8);
    let y = op.apply(&mut PtxScalar { b: &mut b }, &a, &bv);
    let address = b.element_address(&out, &index, 4);
    b.op(format!("st.global.f32 [{address}], {y}"));
    b.place(&done);
    b.finish(signature)
}
