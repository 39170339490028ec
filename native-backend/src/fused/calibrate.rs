//! Which of our element functions and sum orders agree with this process's libtorch.
//!
//! Why: torch chooses its vectorised CPU kernels at run time by CPU capability (AVX2,
//! AVX-512, …), and they differ where it matters for parity: on AVX-512 `gelu(+inf)` is NaN
//! and `gelu(-10)` is `-0.0` (AVX2: `inf`, `+0.0`), and `sum` folds 16 lanes instead of 8, which
//! changes the rounding of every sum. So each unary op is compared once per process with
//! libtorch on special and random values, and the sum order is chosen by comparing both lane
//! widths with libtorch's own sums bit for bit. An op that disagrees, or a sum order that
//! matches neither width, is computed by libtorch itself — slower, never different.
//!
//! Ops without an element function of ours as fast as torch's SIMD kernel here
//! (`math::vectorised`: tanh, GELU and log call scalar libm per element; exp, sigmoid, SiLU and sqrt
//! on AVX-512 CPUs) are also run by libtorch: its own kernel, in place on the fused buffer,
//! which is as fast as eager and gives eager's bits.

use std::sync::OnceLock;

use tch::Tensor;

use super::epilogue::Axis;
use super::math::{self, Unary};

/// Which loop computes `op` over a whole tensor of some length, as eager does on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WholeLoop {
    /// Our element function ([`native`]) on every element.
    Ours,
    /// Eager's two loops reproduced ([`with_scalar_tail`]) at this tail width.
    WithScalarTail(usize),
    /// libtorch's own kernel (no model of ours reproduces eager here).
    Libtorch,
}

/// The loop [`unary_in_place`] runs for `op` over a whole tensor of `len` elements: ours where
/// it is [`native`]; for sigmoid and SiLU eager's vectorised body and scalar tail where
/// [`tail_width`] found them, up to [`one_loop_max`]; else libtorch's.
pub fn whole_loop(op: Unary, len: usize) -> WholeLoop {
    if native(op) && (len > 1 || !whole_tensors_only(op)) {
        WholeLoop::Ours
    } else if let Some(width) = tail_width(op).filter(|_| len <= one_loop_max()) {
        WholeLoop::WithScalarTail(width)
    } else {
        WholeLoop::Libtorch
    }
}

/// `op` over `values` in place, as eager on this machine when `values` is a whole tensor, with
/// the loop [`whole_loop`] chooses (libtorch's kernel runs over `values` at once, so each
/// element takes the loop it takes in eager).
pub fn unary_in_place(op: Unary, values: &mut [f32]) {
    match whole_loop(op, values.len()) {
        WholeLoop::Ours => math::unary_in_place(op, values),
        WholeLoop::WithScalarTail(width) => with_scalar_tail(op, values, width),
        WholeLoop::Libtorch => in_libtorch(op, values),
    }
}

/// Up to how many elements eager runs a sigmoid or SiLU as one loop whatever torch's thread
/// count (TensorIterator splits from its 32,768-element grain on, and every part has its own
/// tail): so far our loop with its tail reproduces it. On AVX-512 CPUs only up to where
/// libtorch's call costs more than its 16-lane SLEEF loop, which is faster than ours there.
fn one_loop_max() -> usize {
    if math::avx512_cpu() {
        1 << 11
    } else {
        (1 << 15) - 1
    }
}

/// Eager's loop over a whole tensor, element for element: our vectorised model for all but
/// the last `len mod width` elements, which eager's scalar loop computes.
fn with_scalar_tail(op: Unary, values: &mut [f32], width: usize) {
    let body = values.len() - values.len() % width;
    let (vectorised, tail) = values.split_at_mut(body);
    math::unary_in_place(op, vectorised);
    tail.iter_mut().for_each(|v| *v = math::unary_scalar_loop(op, *v));
}

/// For sigmoid and SiLU, whose vectorised loop (SLEEF's `expf`) and scalar loop (libm's)
/// differ in the last bit on some inputs: the width (`2·lanes`: 16 on AVX2, 32 on AVX-512)
/// at which [`with_scalar_tail`] gives libtorch's bits on whole tensors of every length
/// probed, or `None` (then libtorch runs them).
fn tail_width(op: Unary) -> Option<usize> {
    static WIDTH: [OnceLock<Option<usize>>; Unary::ALL.len()] = [const { OnceLock::new() }; Unary::ALL.len()];
    if !matches!(op, Unary::Sigmoid | Unary::Silu) {
        return None;
    }
    *WIDTH[op as usize].get_or_init(|| {
        let inputs = probe_inputs();
        [16usize, 32].into_iter().find(|&width| {
            // every probe value at every position of tensors of lengths around the widths
            [1usize, 5, 15, 16, 17, 31, 33, 47, 100, inputs.len() - 1, inputs.len()].iter().all(|&len| {
                inputs.chunks_exact(len).all(|window| {
                    let (mut ours, mut eager) = (window.to_vec(), window.to_vec());
                    with_scalar_tail(op, &mut ours, width);
                    through_libtorch(&mut eager, |t| super::unary_with_ops(op, t));
                    ours.iter().zip(&eager).all(|(&a, &b)| same_value(a, b))
                })
            })
        })
    })
}

/// Whether our element function for `op` is used inside fused loops: it is vectorised and
/// [`agrees`] with eager here. Such an op may also run on any part of a buffer (row by row,
/// chunk by chunk); the others must see the whole buffer ([`unary_in_place`]).
pub fn native(op: Unary) -> bool {
    math::vectorised(op) && agrees(op)
}

/// libtorch's in-place kernel for `op` run on `values` itself (a tensor viewing the buffer, no
/// copy); a copy through a fresh tensor if the view cannot be made.
fn in_libtorch(op: Unary, values: &mut [f32]) {
    let len = values.len() as i64;
    // SAFETY: the tensor views `len` initialised f32s of `values`, contiguous, on the CPU; it
    // lives only inside this function, is never resized, and `values` is not touched meanwhile.
    let view = unsafe { Tensor::f_from_blob(values.as_mut_ptr() as *const u8, &[len], &[1], tch::Kind::Float, tch::Device::Cpu) };
    match view {
        Ok(mut t) => {
            // A float unary op of libtorch on a 1-D float tensor cannot fail; if it ever did,
            // the panic becomes a RuntimeError at the function boundary (`tl::run`).
            drop(super::unary_in_place_with_ops(op, &mut t).expect("libtorch in-place unary op on a float tensor"));
        }
        Err(_) => through_libtorch(values, |t| super::unary_with_ops(op, t)),
    }
}

/// Up to how many elements [`sum_over`] runs our own summation loops: below this a call into
/// libtorch costs more than the sum, above it libtorch's kernel (vectorised for this CPU, and
/// parallel over torch's threads) is the faster one.
const OURS_UP_TO: usize = 4096;
/// At most this many rows summed one by one (over the last dim): more short rows are faster in
/// libtorch's one reduction (measured: 256 rows of 16 at 0.35× eager).
const OURS_ROWS: usize = 8;

/// Whether [`sum_over`] of a `rows × cols` matrix over `axis` runs our loops (no libtorch
/// call): small matrices, a few rows along the last dim, or several rows down the columns.
pub fn sums_here(rows: usize, cols: usize, axis: Axis) -> bool {
    let shape_fits = match axis {
        Axis::Cols => rows <= OURS_ROWS,
        Axis::Rows => rows >= 2,
    };
    rows * cols <= OURS_UP_TO && shape_fits && lanes().is_some()
}

/// Sums of the row-major `rows × cols` matrix `values` over `axis` into `out` (`rows` values
/// for [`Axis::Cols`], `cols` for [`Axis::Rows`]), in this libtorch's order: our loops for
/// small matrices when they reproduce its order, else libtorch's own sum kernel run on
/// `values` itself (the order eager uses for a contiguous tensor of this shape).
pub fn sum_over(values: &[f32], rows: usize, cols: usize, axis: Axis, out: &mut [f32]) {
    match lanes() {
        Some(lanes) if sums_here(rows, cols, axis) => match axis {
            Axis::Cols => {
                for (total, row) in out.iter_mut().zip(values.chunks_exact(cols.max(1))) {
                    *total = math::sum(row, lanes);
                }
            }
            Axis::Rows => math::sum_columns(values, rows, cols, out, lanes),
        },
        _ => sum_in_libtorch(values, rows, cols, axis, out),
    }
}

/// libtorch's `sum` over `axis` of a tensor viewing `values`, written straight into `out`
/// (a 1-D view for a single row, as eager sums a 1-D tensor); through copies if the views
/// cannot be made.
fn sum_in_libtorch(values: &[f32], rows: usize, cols: usize, axis: Axis, out: &mut [f32]) {
    let (shape, dim): (Vec<i64>, i64) = match (rows, axis) {
        (1, Axis::Cols) => (vec![cols as i64], 0),
        (_, Axis::Cols) => (vec![rows as i64, cols as i64], 1),
        (_, Axis::Rows) => (vec![rows as i64, cols as i64], 0),
    };
    let strides: Vec<i64> = if shape.len() == 1 { vec![1] } else { vec![cols as i64, 1] };
    // the sum's own result shape (a 1-D input sums to a 0-dim tensor), so it is never resized
    let (out_shape, out_strides): (Vec<i64>, Vec<i64>) = if shape.len() == 1 { (vec![], vec![]) } else { (vec![out.len() as i64], vec![1]) };
    // SAFETY: `input` views the `rows·cols` initialised f32s of `values` and is only read;
    // `output` views `out`'s f32s, which only the sum writes (same shape, so never resized).
    // Both live only inside this function, and the slices are not touched meanwhile.
    let views = unsafe {
        (
            Tensor::f_from_blob(values.as_ptr() as *const u8, &shape, &strides, tch::Kind::Float, tch::Device::Cpu),
            Tensor::f_from_blob(out.as_mut_ptr() as *const u8, &out_shape, &out_strides, tch::Kind::Float, tch::Device::Cpu),
        )
    };
    let written = match views {
        (Ok(input), Ok(output)) => input.f_sum_intlist_out(&output, [dim].as_slice(), false, None::<tch::Kind>).is_ok(),
        _ => false,
    };
    if !written {
        let input = Tensor::from_slice(values).view(shape.as_slice());
        // A float sum of a fresh float tensor over a valid dim cannot fail; if it ever did,
        // the panic becomes a RuntimeError at the function boundary (`tl::run`).
        let total = input.f_sum_dim_intlist([dim].as_slice(), false, None::<tch::Kind>).expect("libtorch sum of a float tensor");
        copy_out(&total, out);
    }
}

fn through_libtorch(values: &mut [f32], op: impl FnOnce(&Tensor) -> crate::Result<Tensor>) {
    let input = Tensor::from_slice(values);
    // A float unary op of libtorch on a fresh 1-D tensor cannot fail; if it ever did, the
    // panic becomes a RuntimeError at the function boundary (`tl::run`).
    let output = op(&input).expect("libtorch unary op on a float tensor");
    copy_out(&output, values);
}

fn copy_out(t: &Tensor, out: &mut [f32]) {
    let len = out.len();
    t.contiguous().copy_data(out, len);
}

/// Whether our model of `op` reproduces eager only on tensors of more than one element (the
/// fused kernels then run libtorch on a one-element tensor): GELU, whose model is oneDNN's
/// kernel, which eager runs for contiguous tensors of two elements or more (`fused::gelu`).
/// Every fused operand is contiguous, and so are eager's intermediates computed from them.
pub fn whole_tensors_only(op: Unary) -> bool {
    op == Unary::Gelu
}

/// Whether our model of `op` gives eager's results here, whatever an element's position: the
/// same NaN positions and otherwise the same bits as both of eager's loops — the vectorised
/// one (long tensors) and the scalar one it uses for a tensor's last `n mod 2·lanes` elements
/// (one-element tensors), which differ on some CPUs (AVX-512 GELU: NaN at +inf in vectors,
/// +inf in the tail; sigmoid and SiLU: SLEEF's and libm's `expf`, see [`tail_width`]).
pub fn agrees(op: Unary) -> bool {
    static AGREES: [OnceLock<bool>; Unary::ALL.len()] = [const { OnceLock::new() }; Unary::ALL.len()];
    *AGREES[op as usize].get_or_init(|| {
        let inputs = probe_inputs();
        let mut ours = inputs.clone();
        math::unary_in_place(op, &mut ours);
        let mut vectorised = inputs.clone();
        through_libtorch(&mut vectorised, |t| super::unary_with_ops(op, t));
        let scalar_agrees = whole_tensors_only(op) || inputs.iter().zip(&ours).all(|(&input, &model)| {
            let mut one = [input];
            through_libtorch(&mut one, |t| super::unary_with_ops(op, t));
            same_value(model, one[0])
        });
        scalar_agrees && ours.iter().zip(&vectorised).all(|(&a, &b)| same_value(a, b))
    })
}

/// Our model stands in for libtorch's kernel only where it gives the same bits (any NaN for a
/// NaN): a value within tolerance is not eager's value, and the exported crate's parity tests
/// (and users) compare bit for bit.
fn same_value(ours: f32, eager: f32) -> bool {
    if ours.is_nan() || eager.is_nan() {
        return ours.is_nan() && eager.is_nan();
    }
    ours.to_bits() == eager.to_bits()
}

/// Special values, then a sweep over the range where the ops change fastest; long enough
/// (and padded) that libtorch takes its vectorised path, as for real tensors.
fn probe_inputs() -> Vec<f32> {
    let mut inputs: Vec<f32> = vec![
        0.0, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN, f32::MIN_POSITIVE, -f32::MIN_POSITIVE,
        1e-45, -1e-45, 1e-30, -1e-30, 88.7, 88.8, -87.3, -103.9, -104.5, 100.0, -100.0, 1e10, -1e10,
    ];
    inputs.extend((0..=800).map(|i| -20.0 + i as f32 * 0.05));
    while !inputs.len().is_multiple_of(64) {
        inputs.push(0.25);
    }
    inputs
}

/// The lane width of libtorch's float sum here (8 or 16), or `None` when neither of our
/// orders reproduces it.
fn lanes() -> Option<usize> {
    static LANES: OnceLock<Option<usize>> = OnceLock::new();
    *LANES.get_or_init(|| {
        // Lengths that exercise the tail, the 4-accumulator split and the cascade levels;
        // values with cancellation so that any other order rounds differently.
        let values: Vec<f32> = (0..3001u32).map(|i| ((i.wrapping_mul(2_654_435_761) >> 8) as f32 / (1 << 24) as f32 - 0.5) * 1e3).collect();
        let (rows, cols) = (129, 23);
        let matrix = &values[..rows * cols];
        let eager_columns = {
            let mut out = vec![0.0f32; cols];
            let t = Tensor::from_slice(matrix).view([rows as i64, cols as i64]);
            copy_out(&t.sum_dim_intlist(0, false, tch::Kind::Float), &mut out);
            out
        };
        [8usize, 16].into_iter().find(|&lanes| {
            let runs_agree = [1usize, 7, 8, 17, 64, 100, 129, 1000, 3001].iter().all(|&len| {
                let eager = {
                    let mut total = [0.0f32];
                    copy_out(&Tensor::from_slice(&values[..len]).sum(tch::Kind::Float), &mut total);
                    total[0]
                };
                math::sum(&values[..len], lanes).to_bits() == eager.to_bits()
            });
            let mut columns = vec![0.0f32; cols];
            math::sum_columns(matrix, rows, cols, &mut columns, lanes);
            runs_agree && columns.iter().zip(&eager_columns).all(|(a, b)| a.to_bits() == b.to_bits())
        })
    })
}
