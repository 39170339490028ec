//! Elementwise kernels: one thread per output element of a contiguous output of up to
//! [`MAX_DIMS`] dimensions. The thread's linear index is split into coordinates (last
//! dimension fastest) and each input is read at `Σ coord[d] * stride[d]`, a stride of 0 where
//! it is broadcast ([`ElementwisePlan`](super::plan::ElementwisePlan)), so strided views and
//! broadcasting between any ranks read in place. Every elementwise kernel (unary, binary,
//! [`Pointwise`]) takes the same parameters, so one argument builder serves them all.
//! The copy kernel reads the same way and writes through strides of its own: `contiguous()`,
//! and each input's slice of `cat`/`stack`.

use super::super::launch::{KernelSignature, ParamKind, ParamKind::*};
use super::math::{Binary, BinaryMath, Pointwise, PtxScalar, Unary, UnaryMath};
use super::plan::MAX_DIMS;
use super::ptx::PtxBuilder;

/// `(out, a, b, numel, sizes[4], a_strides[4], b_strides[4], x, y)`: `b` is read only by the
/// two-tensor kernels, `x`/`y` (Python numbers as float32) only by the [`Pointwise`] ones.
pub const ELEMENTWISE_PARAMS: &[ParamKind] = &[Ptr, Ptr, Ptr, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64, F32, F32];
/// `(out, in, numel, sizes[4], in_strides[4], out_strides[4])`.
pub const COPY_PARAMS: &[ParamKind] = &[Ptr, Ptr, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64];

/// Thread index, bounds check against `numel`, and the output coordinates of the element.
fn prologue(b: &mut PtxBuilder, numel_param: usize, sizes_param: usize, done: &str) -> (String, [String; MAX_DIMS]) {
    let index = b.output_element(numel_param, done);
    let mut coords: [String; MAX_DIMS] = Default::default();
    let mut rest = index.clone();
    for d in (1..MAX_DIMS).rev() {
        let size = b.param_s64(sizes_param + d);
        let (quotient, coord) = (b.b64(), b.b64());
        b.op(format!("div.u64 {quotient}, {rest}, {size}"));
        b.op(format!("mul.lo.s64 {coord}, {quotient}, {size}"));
        b.op(format!("sub.s64 {coord}, {rest}, {coord}"));
        coords[d] = coord;
        rest = quotient;
    }
    coords[0] = rest;
    (index, coords)
}

/// `Σ coords[d] * stride[d]` with the strides at parameters `strides_param..+MAX_DIMS`.
fn strided_offset(b: &mut PtxBuilder, coords: &[String; MAX_DIMS], strides_param: usize) -> String {
    let offset = b.b64();
    b.op(format!("mov.u64 {offset}, 0"));
    for (d, coord) in coords.iter().enumerate() {
        let stride = b.param_s64(strides_param + d);
        b.op(format!("mad.lo.s64 {offset}, {coord}, {stride}, {offset}"));
    }
    offset
}

fn load(b: &mut PtxBuilder, base: &str, offset: &str) -> String {
    let address = b.element_address(base, offset, 4);
    let value = b.f32();
    b.op(format!("ld.global.f32 {value}, [{address}]"));
    value
}

/// The per-element function of one elementwise kernel.
pub enum Element {
    Unary(Unary),
    Binary(Binary),
    Pointwise(Pointwise),
}

impl Element {
    fn two_tensors(&self) -> bool {
        match self {
            Element::Unary(_) => false,
            Element::Binary(_) => true,
            Element::Pointwise(op) => op.two_tensors(),
        }
    }
}

pub fn elementwise_ptx(element: Element, signature: &KernelSignature) -> String {
    let mut b = PtxBuilder::new();
    let done = b.label("done");
    let out = b.param_global_ptr(0);
    let a_base = b.param_global_ptr(1);
    let (index, coords) = prologue(&mut b, 3, 4, &done);
    let a_offset = strided_offset(&mut b, &coords, 4 + MAX_DIMS);
    let a = load(&mut b, &a_base, &a_offset);
    let bv = if element.two_tensors() {
        let b_base = b.param_global_ptr(2);
        let b_offset = strided_offset(&mut b, &coords, 4 + 2 * MAX_DIMS);
        load(&mut b, &b_base, &b_offset)
    } else {
        a.clone()
    };
    let y = match element {
        Element::Unary(op) => op.apply(&mut PtxScalar { b: &mut b }, &a),
        Element::Binary(op) => op.apply(&mut PtxScalar { b: &mut b }, &a, &bv),
        Element::Pointwise(op) => {
            let x = b.param_f32(4 + 3 * MAX_DIMS);
            let y = b.param_f32(5 + 3 * MAX_DIMS);
            op.apply(&mut PtxScalar { b: &mut b }, &a, &bv, &x, &y)
        }
    };
    let address = b.element_address(&out, &index, 4);
    b.op(format!("st.global.f32 [{address}], {y}"));
    b.place(&done);
    b.finish(signature)
}

pub fn copy_ptx(signature: &KernelSignature) -> String {
    let mut b = PtxBuilder::new();
    let done = b.label("done");
    let out = b.param_global_ptr(0);
    let input = b.param_global_ptr(1);
    let (_, coords) = prologue(&mut b, 2, 3, &done);
    let in_offset = strided_offset(&mut b, &coords, 3 + MAX_DIMS);
    let value = load(&mut b, &input, &in_offset);
    let out_offset = strided_offset(&mut b, &coords, 3 + 2 * MAX_DIMS);
    let address = b.element_address(&out, &out_offset, 4);
    b.op(format!("st.global.f32 [{address}], {value}"));
    b.place(&done);
    b.finish(signature)
}
