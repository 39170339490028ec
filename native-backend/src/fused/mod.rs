//! Fused CPU kernels (`tl::fused`): what the analyzer's fusion pass emits in place of a chain
//! of `tl::ops` calls, so that a matmul/linear with its elementwise epilogue and a following
//! reduction, a weight-tied layer loop, or a chain of elementwise ops costs one pass over the
//! data instead of one dispatcher call, allocation and pass per op.
//!
//! Every function here has exactly the semantics of the `tl::ops` chain it replaces
//! (values, NaN/±Inf, signed zeros, shapes, errors): the GEMM is libtorch's own BLAS called
//! the way eager calls it (see [`blas`]), the element functions match torch's CPU kernels
//! ([`math`]), and every input the direct kernels do not take (non-contiguous, not float32,
//! not CPU, rank > 2, empty, mismatched shapes, invalid dims) goes through the `tl::ops`
//! chain instead, which also raises eager's errors. Inputs are never written; outputs are
//! fresh tensors.

mod blas;
mod calibrate;
mod dense;
mod epilogue;
mod math;
mod small_gemm;

use tch::Tensor;

use crate::error::{Error, Result};
use crate::ops;
use dense::Dense;
use epilogue::RowBias;
use small_gemm::Layout;

pub use epilogue::Reduce;
pub use math::{Binary, Unary};

/// One instruction of an elementwise program (see [`elementwise`]), evaluated on a stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Push operand `i`.
    Load(usize),
    /// Replace the top of the stack by `op(top)`.
    Unary(Unary),
    /// Pop `b`, then replace the top `a` by `op(a, b)`.
    Binary(Binary),
}

/// `reduce(acts(F.linear(x, w, b)))`: `F.linear`, then each op of `acts` in order, then the
/// optional sum/mean — in one pass after the GEMM.
pub fn linear_epilogue(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    acts: &[Unary],
    reduce: Option<Reduce>,
) -> Result<Tensor> {
    let (Some(xd), Some(wd)) = (Dense::of(x), Dense::of(w)) else {
        return finish(ops::linear(x, w, b)?, acts, reduce);
    };
    let bias = match b.map(Dense::of) {
        None => Some(None),
        Some(Some(bd)) if bd.rank == 1 && bd.cols == wd.rows => Some(Some(bd)),
        Some(_) => None,
    };
    let fast = xd.rank == 2
        && wd.rank == 2
        && xd.cols == wd.cols
        && blas::fits(&[xd.rows, xd.cols, wd.rows])
        && blas::available()
        && reduce.is_none_or(|r| r.axis(2).is_some());
    let (true, Some(bias)) = (fast, bias) else {
        return finish(ops::linear(x, w, b)?, acts, reduce);
    };
    let (m, k, n) = (xd.rows, xd.cols, wd.rows);
    gemm_then_epilogue(m, n, acts, reduce, |out| {
        // SAFETY (all arms): `out` holds m·n f32s; x and w are dense m×k and n×k tensors
        // alive for this call; every dimension is in 1..=i32::MAX (checked above).
        match bias {
            // addmm(bias, x, w.t()): rows pre-filled with the bias, beta = 1, as eager does.
            Some(bd) => {
                // SAFETY: the bias tensor is alive and holds n f32s.
                let bias_values = unsafe { bd.values() };
                out.chunks_exact_mut(n).for_each(|row| row.copy_from_slice(bias_values));
                unsafe { blas::gemm_into(Layout::Linear, m, k, n, xd.ptr, wd.ptr, true, out.as_mut_ptr()) }
            }
            None => unsafe { blas::gemm_into(Layout::Linear, m, k, n, xd.ptr, wd.ptr, false, out.as_mut_ptr()) },
        }
        RowBias::None
    })
}

/// `reduce(acts(x @ w + b))` (`b` optional, added after the product as eager's separate `+`
/// does): one GEMM, then bias, `acts` and the optional sum/mean in one pass.
pub fn matmul_epilogue(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    acts: &[Unary],
    reduce: Option<Reduce>,
) -> Result<Tensor> {
    match matmul_plan(x, w, b) {
        Some((xd, wd, bias)) if reduce.is_none_or(|r| r.axis(2).is_some()) => {
            let (m, k, n) = (xd.rows, xd.cols, wd.cols);
            gemm_then_epilogue(m, n, acts, reduce, |out| {
                // SAFETY: see `matmul_plan`: dense m×k and k×n inputs, dims in range.
                unsafe { blas::gemm_into(Layout::Matmul, m, k, n, xd.ptr, wd.ptr, false, out.as_mut_ptr()) };
                bias
            })
        }
        _ => {
            let product = ops::matmul(x, w)?;
            let biased = match b {
                Some(b) => ops::add(&product, b)?,
                None => product,
            };
            finish(biased, acts, reduce)
        }
    }
}

/// The seed's weight-tied layer loop as one call:
/// `for layer in layers: hidden = acts_for(layer)(hidden @ w + b)`, starting from `init`.
/// `acts_for` is the loop body's scalar control flow choosing this layer's activation chain
/// (it runs before the layer's product, as in the source, and its errors stop the loop).
/// Intermediate layers live in two reused scratch buffers; only the last becomes a tensor.
/// With no iteration the result is `init` itself (shared storage), as in eager.
pub fn iterate_matmul_epilogue<'a, I, F>(init: &Tensor, w: &Tensor, b: Option<&Tensor>, layers: I, acts_for: F) -> Result<Tensor>
where
    I: IntoIterator<Item = i64>,
    F: FnMut(i64) -> Result<&'a [Unary]>,
{
    iterate(init, w, b, layers, acts_for, None)
}

/// [`iterate_matmul_epilogue`] followed by `reduce(hidden)` (a sum/mean of the loop's result
/// that is its only use): the last layer is reduced straight from scratch, so the layer output
/// never becomes a tensor. Errors come in the source's order: the loop's, then the reduction's.
pub fn iterate_matmul_reduce<'a, I, F>(init: &Tensor, w: &Tensor, b: Option<&Tensor>, layers: I, acts_for: F, reduce: Reduce) -> Result<Tensor>
where
    I: IntoIterator<Item = i64>,
    F: FnMut(i64) -> Result<&'a [Unary]>,
{
    iterate(init, w, b, layers, acts_for, Some(reduce))
}

fn iterate<'a, I, F>(init: &Tensor, w: &Tensor, b: Option<&Tensor>, layers: I, mut acts_for: F, then: Option<Reduce>) -> Result<Tensor>
where
    I: IntoIterator<Item = i64>,
    F: FnMut(i64) -> Result<&'a [Unary]>,
{
    let finish_with = |hidden: Tensor| -> Result<Tensor> {
        match then {
            Some(r) => self::reduce(&hidden, r),
            None => Ok(hidden),
        }
    };
    let mut layers = layers.into_iter().peekable();
    let plan = matmul_plan(init, w, b).filter(|(xd, wd, _)| wd.rows == wd.cols && xd.cols == wd.cols);
    let Some((xd, wd, bias)) = plan else {
        let mut hidden = init.shallow_clone();
        for layer in layers {
            let acts = acts_for(layer)?;
            hidden = matmul_epilogue(&hidden, w, b, acts, None)?;
        }
        return finish_with(hidden);
    };
    if layers.peek().is_none() {
        return finish_with(init.shallow_clone());
    }
    // The reduction straight from the last layer's scratch, when its dim is valid for a matrix
    // (otherwise the layer becomes a tensor and `reduce` raises eager's error).
    let reduce_last = then.and_then(|r| Some((r, r.axis(2)?)));
    let (m, n) = (xd.rows, wd.cols);
    // Every layer multiplies the same shape: choose the kernel once.
    let gemm = blas::Gemm::for_shape(Layout::Matmul, m, n, n, false);
    dense::with_scratch(m * n, |ping, pong| {
        let mut source: *const f32 = xd.ptr;
        let mut use_ping = true;
        loop {
            let Some(layer) = layers.next() else { unreachable!("peeked before each step") };
            let acts = acts_for(layer)?;
            let last = layers.peek().is_none();
            let (output, destination) = if last && reduce_last.is_none() {
                let (tensor, view) = dense::empty(&[m as i64, n as i64])?;
                // SAFETY: a fresh tensor only this call holds.
                (Some(tensor), unsafe { view.values_mut() })
            } else if use_ping {
                (None, &mut *ping)
            } else {
                (None, &mut *pong)
            };
            // SAFETY: `source` is `init` (dense m×n) or the other scratch buffer, never
            // `destination`; w is dense n×n; dims in range (see `matmul_plan`).
            unsafe { gemm.run(source, wd.ptr, destination.as_mut_ptr()) };
            if let (true, Some((r, axis))) = (last, reduce_last) {
                let (tensor, view) = dense::empty(&r.out_shape(&[m as i64, n as i64], axis))?;
                // SAFETY: a fresh tensor only this call holds.
                epilogue::apply(destination, m, n, bias, acts, Some((r, axis)), unsafe { view.values_mut() });
                return Ok(tensor);
            }
            epilogue::apply(destination, m, n, bias, acts, None, &mut []);
            if let Some(tensor) = output {
                return finish_with(tensor);
            }
            source = destination.as_ptr();
            use_ping = !use_ping;
        }
    })
}

/// `t.sum(dim=…, keepdim=…)` / `t.mean(…)` in one pass (no dispatcher call but the output).
pub fn reduce(t: &Tensor, reduce: Reduce) -> Result<Tensor> {
    finish_reduce(t, &[], reduce)
}

/// A chain of elementwise ops over `operands` as one pass: `program` is evaluated on a stack
/// (see [`Step`]) with torch's broadcasting for rank ≤ 2 (e.g. a 1-D bias over a matrix).
/// Each op rounds to float32 as eager does, so the result equals the op-by-op chain.
pub fn elementwise(operands: &[&Tensor], program: &[Step]) -> Result<Tensor> {
    // The direct kernel works in chunks, so every op must be position-independent here.
    let direct_ops = program.iter().all(|step| !matches!(step, Step::Unary(op) if !calibrate::native(*op)));
    // It runs on one thread: above libtorch's grain size, with more than one torch thread,
    // libtorch's parallel kernels op by op are faster (measured: ×0.78 at 2^18 elements on 2).
    let parallel = crate::facts::num_threads() > 1;
    let one_thread = |plan: &ElementwisePlan| !parallel || plan.rows * plan.cols <= PARALLEL_GRAIN;
    match elementwise_plan(operands, program).filter(|plan| direct_ops && one_thread(plan)) {
        Some(plan) => plan.run(program),
        None => elementwise_with_ops(operands, program),
    }
}

/// libtorch's `GRAIN_SIZE`: below it its kernels run on one thread too.
const PARALLEL_GRAIN: usize = 32768;

/// Up to how many elements a lone unary op runs our loop: there the dispatcher and
/// TensorIterator set-up dominate eager's cost and ours wins; above it (measured on an Intel
/// Xeon: 0.8× at 2^18 elements) libtorch's kernel is as fast or faster.
const LONE_UNARY_MAX: usize = 1 << 14;

/// A lone `op(t)`: one pass of our loop where it is as fast as libtorch's kernel here (it
/// skips the dispatcher and TensorIterator set-up that dominate small tensors), else
/// libtorch's op itself.
pub fn unary(op: Unary, t: &Tensor) -> Result<Tensor> {
    let small = Dense::of(t).is_some_and(|v| v.len() <= LONE_UNARY_MAX);
    if small && calibrate::native(op) {
        elementwise(&[t], &[Step::Load(0), Step::Unary(op)])
    } else {
        unary_with_ops(op, t)
    }
}

// ---------------------------------------------------------------------------------------------

/// Dense views of `x (m×k)`, `w (k×n)` and the bias when the direct kernel takes them.
fn matmul_plan<'b>(x: &Tensor, w: &Tensor, b: Option<&'b Tensor>) -> Option<(Dense, Dense, RowBias<'b>)> {
    let (xd, wd) = (Dense::of(x)?, Dense::of(w)?);
    let shapes_ok = xd.rank == 2 && wd.rank == 2 && xd.cols == wd.rows;
    if !(shapes_ok && blas::fits(&[xd.rows, xd.cols, wd.cols]) && blas::available()) {
        return None;
    }
    let bias = match b {
        None => RowBias::None,
        Some(b) => {
            let bd = Dense::of(b)?;
            // SAFETY (both): the bias tensor outlives the returned borrow `'b`.
            if bd.rank == 1 && bd.cols == wd.cols {
                RowBias::Vector(unsafe { bd.values() })
            } else if bd.rank == 2 && bd.rows == xd.rows && bd.cols == wd.cols {
                RowBias::Matrix(unsafe { bd.values() })
            } else {
                return None;
            }
        }
    };
    Some((xd, wd, bias))
}

/// Runs `gemm` into an `m×n` buffer — the output tensor itself, or scratch when a reduction
/// follows — then the epilogue with the bias `gemm` returns.
fn gemm_then_epilogue<'b>(
    m: usize,
    n: usize,
    acts: &[Unary],
    reduce: Option<Reduce>,
    gemm: impl FnOnce(&mut [f32]) -> RowBias<'b>,
) -> Result<Tensor> {
    let shape = [m as i64, n as i64];
    match reduce {
        None => {
            let (tensor, view) = dense::empty(&shape)?;
            // SAFETY: a fresh tensor only this call holds.
            let values = unsafe { view.values_mut() };
            let bias = gemm(values);
            epilogue::apply(values, m, n, bias, acts, None, &mut []);
            Ok(tensor)
        }
        Some(r) => {
            let axis = r.axis(2).ok_or_else(|| Error::Value("torchlower: reduce dim checked".into()))?;
            let (tensor, view) = dense::empty(&r.out_shape(&shape, axis))?;
            // SAFETY: a fresh tensor only this call holds.
            let reduced = unsafe { view.values_mut() };
            dense::with_scratch(m * n, |values, _| {
                let bias = gemm(values);
                epilogue::apply(values, m, n, bias, acts, Some((r, axis)), reduced);
            });
            Ok(tensor)
        }
    }
}

/// `acts` then `reduce` on `t`, a fresh intermediate nothing else holds: in place when dense,
/// through `tl::ops` otherwise.
fn finish(t: Tensor, acts: &[Unary], reduce: Option<Reduce>) -> Result<Tensor> {
    match reduce {
        Some(r) => finish_reduce(&t, acts, r),
        None => match Dense::of(&t) {
            Some(view) if view.len() > 0 && !acts.is_empty() => {
                // SAFETY: `t` is fresh (created by the caller's op) and only we hold it.
                let values = unsafe { view.values_mut() };
                epilogue::apply(values, view.rows, view.cols, RowBias::None, acts, None, &mut []);
                Ok(t)
            }
            _ => acts_with_ops(t, acts),
        },
    }
}

/// `reduce(acts(t))` without writing `t` (which may be a caller's input).
fn finish_reduce(t: &Tensor, acts: &[Unary], r: Reduce) -> Result<Tensor> {
    let plan = Dense::of(t).filter(|v| v.rank >= 1 && v.len() > 0).and_then(|v| Some((v, r.axis(v.rank)?)));
    let Some((view, axis)) = plan else {
        let activated = acts_with_ops(t.shallow_clone(), acts)?;
        return reduce_with_ops(&activated, r);
    };
    let (rows, cols) = (view.rows, view.cols);
    if acts.is_empty() && !calibrate::sums_here(rows, cols, axis) {
        // Nothing to fuse and libtorch's kernel is the faster sum: eager's own op, no copy.
        return reduce_with_ops(t, r);
    }
    let (tensor, out) = dense::empty(&r.out_shape(&view.shape(), axis))?;
    // SAFETY: `out` is fresh; `t` is alive for this call and only read (copied to scratch).
    let (reduced, input) = unsafe { (out.values_mut(), view.values()) };
    dense::with_scratch(rows * cols, |values, _| {
        values.copy_from_slice(input);
        epilogue::apply(values, rows, cols, RowBias::None, acts, Some((r, axis)), reduced);
    });
    Ok(tensor)
}

fn acts_with_ops(mut t: Tensor, acts: &[Unary]) -> Result<Tensor> {
    for &op in acts {
        t = unary_with_ops(op, &t)?;
    }
    Ok(t)
}

/// `op` in place on `t`, by libtorch's own kernel (as eager's out-of-place op computes it).
fn unary_in_place_with_ops(op: Unary, t: &mut Tensor) -> Result<Tensor> {
    Ok(match op {
        Unary::Relu => t.f_relu_()?,
        Unary::Sigmoid => t.f_sigmoid_()?,
        Unary::Tanh => t.f_tanh_()?,
        Unary::Gelu => t.f_gelu_("none")?,
        Unary::Abs => t.f_abs_()?,
        Unary::Neg => t.f_neg_()?,
        Unary::Square => t.f_square_()?,
        Unary::Exp => t.f_exp_()?,
        Unary::Log => t.f_log_()?,
        Unary::Sqrt => t.f_sqrt_()?,
    })
}

fn unary_with_ops(op: Unary, t: &Tensor) -> Result<Tensor> {
    match op {
        Unary::Relu => ops::relu(t),
        Unary::Sigmoid => ops::sigmoid(t),
        Unary::Tanh => ops::tanh(t),
        Unary::Gelu => ops::gelu(t),
        Unary::Abs => ops::abs(t),
        Unary::Neg => ops::neg(t),
        Unary::Square => ops::square(t),
        Unary::Exp => ops::exp(t),
        Unary::Log => ops::log(t),
        Unary::Sqrt => ops::sqrt(t),
    }
}

fn binary_with_ops(op: Binary, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    match op {
        Binary::Add => ops::add(a, b),
        Binary::Sub => ops::sub(a, b),
        Binary::Mul => ops::mul(a, b),
        Binary::Div => ops::div(a, b),
    }
}

fn reduce_with_ops(t: &Tensor, r: Reduce) -> Result<Tensor> {
    match r {
        Reduce::Sum { dim, keepdim } => ops::sum_dim(t, dim, keepdim),
        Reduce::Mean { dim, keepdim } => ops::mean_dim(t, dim, keepdim),
    }
}

fn invalid_program() -> Error {
    Error::Value("torchlower: internal error: malformed fused elementwise program".into())
}

/// The op-by-op evaluation of an elementwise program (eager's order, so eager's errors).
fn elementwise_with_ops(operands: &[&Tensor], program: &[Step]) -> Result<Tensor> {
    let mut stack: Vec<Tensor> = Vec::new();
    for step in program {
        match *step {
            Step::Load(i) => stack.push(operands.get(i).ok_or_else(invalid_program)?.shallow_clone()),
            Step::Unary(op) => {
                let top = stack.pop().ok_or_else(invalid_program)?;
                stack.push(unary_with_ops(op, &top)?);
            }
            Step::Binary(op) => {
                let (b, a) = (stack.pop().ok_or_else(invalid_program)?, stack.pop().ok_or_else(invalid_program)?);
                stack.push(binary_with_ops(op, &a, &b)?);
            }
        }
    }
    match (stack.pop(), stack.is_empty()) {
        (Some(result), true) => Ok(result),
        _ => Err(invalid_program()),
    }
}

/// An elementwise program the direct kernel runs: broadcast output shape and, per operand,
/// its view with row/column strides (0 along broadcast dims).
struct ElementwisePlan {
    shape: Vec<i64>,
    rows: usize,
    cols: usize,
    operands: Vec<(Dense, usize, usize)>,
}

/// How many output elements one pass of the stack machine handles: 16 KB per stack slot, so
/// the slots stay in cache while the per-pass cost (one call per step) is spread thin.
const CHUNK: usize = 4096;

fn elementwise_plan(operands: &[&Tensor], program: &[Step]) -> Option<ElementwisePlan> {
    let views: Vec<Dense> = operands.iter().map(|t| Dense::of(t)).collect::<Option<_>>()?;
    // Every op of the program must apply (torch broadcasts each pair; for rank ≤ 2 the
    // pairwise results agree with broadcasting all operands at once when all are used).
    let mut depth = 0usize;
    for step in program {
        match *step {
            Step::Load(i) if i < views.len() => depth += 1,
            Step::Unary(_) if depth >= 1 => {}
            Step::Binary(_) if depth >= 2 => depth -= 1,
            _ => return None,
        }
    }
    if depth != 1 || !program.iter().all(|s| !matches!(s, Step::Load(i) if *i >= views.len())) {
        return None;
    }
    let used: Vec<bool> = (0..views.len()).map(|i| program.contains(&Step::Load(i))).collect();
    let rank = views.iter().zip(&used).filter(|(_, u)| **u).map(|(v, _)| v.rank).max()?;
    let dims = |v: &Dense| -> [usize; 2] {
        match v.rank {
            0 => [1, 1],
            1 => [1, v.cols],
            _ => [v.rows, v.cols],
        }
    };
    let mut out = [1usize, 1usize];
    for (v, _) in views.iter().zip(&used).filter(|(_, u)| **u) {
        for (o, d) in out.iter_mut().zip(dims(v)) {
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return None;
            }
        }
    }
    if out[0] == 0 || out[1] == 0 {
        return None;
    }
    let operands = views
        .iter()
        .map(|v| {
            let [r, c] = dims(v);
            let row_stride = if r == 1 { 0 } else { c };
            let col_stride = usize::from(c != 1);
            (*v, row_stride, col_stride)
        })
        .collect();
    let shape = match rank {
        0 => vec![],
        1 => vec![out[1] as i64],
        _ => vec![out[0] as i64, out[1] as i64],
    };
    Some(ElementwisePlan { shape, rows: out[0], cols: out[1], operands })
}

impl ElementwisePlan {
    /// Evaluates `program` pass by pass over segments of at most [`CHUNK`] output elements
    /// (whole rows when rows are shorter, else part of one row). The bottom stack slot is the
    /// output segment itself, so the result is written where it ends up; the other slots are
    /// scratch.
    fn run(&self, program: &[Step]) -> Result<Tensor> {
        let (tensor, out) = dense::empty(&self.shape)?;
        // SAFETY: `out` is fresh; operands are alive for this call and only read.
        let out = unsafe { out.values_mut() };
        let (rows, cols) = (self.rows, self.cols);
        let rows_per_pass = (CHUNK / cols).clamp(1, rows);
        let part = cols.min(CHUNK);
        let segment = rows_per_pass * part;
        let mut scratch = vec![0.0f32; segment * max_depth(program).saturating_sub(1)];
        for first_row in (0..rows).step_by(rows_per_pass) {
            let nrows = rows_per_pass.min(rows - first_row);
            for start in (0..cols).step_by(part) {
                let width = part.min(cols - start);
                let len = nrows * width;
                let offset = first_row * cols + start;
                let output = &mut out[offset..offset + len];
                let mut top = 0usize;
                let mut steps = program.iter().enumerate();
                while let Some((at, step)) = steps.next() {
                    // A load that the next op consumes at once, from operands contiguous
                    // here: that op reads them in place (one pass instead of a copy and one).
                    let fused_load = match (step, program.get(at + 1), program.get(at + 2)) {
                        (&Step::Load(i), Some(&Step::Unary(op)), _) => {
                            self.source(i, first_row, nrows, start, width).map(|src| (src, None, Ok(op)))
                        }
                        (&Step::Load(i), Some(&Step::Load(j)), Some(&Step::Binary(op))) => self
                            .source(i, first_row, nrows, start, width)
                            .zip(self.source(j, first_row, nrows, start, width))
                            .map(|(a, b)| (a, Some(b), Err(op))),
                        _ => None,
                    };
                    if let Some((a, b, op)) = fused_load {
                        let slot = match top {
                            0 => &mut *output,
                            k => &mut scratch[(k - 1) * segment..][..len],
                        };
                        match (op, b) {
                            (Ok(unary), _) => math::unary_into(unary, a, slot),
                            (Err(binary), Some(b)) => math::binary_into(binary, a, b, slot),
                            (Err(_), None) => unreachable!("a binary load pairs two sources"),
                        }
                        let consumed = if b.is_some() { 2 } else { 1 };
                        steps.nth(consumed - 1);
                        top += 1;
                        continue;
                    }
                    match *step {
                        Step::Load(i) => {
                            let slot = match top {
                                0 => &mut *output,
                                k => &mut scratch[(k - 1) * segment..][..len],
                            };
                            self.load(i, slot, first_row, nrows, start, width);
                            top += 1;
                        }
                        // Every op agrees with eager (checked by `elementwise`).
                        Step::Unary(op) => {
                            let slot = match top - 1 {
                                0 => &mut *output,
                                k => &mut scratch[(k - 1) * segment..][..len],
                            };
                            math::unary_in_place(op, slot);
                        }
                        Step::Binary(op) => {
                            let (lower, upper) = scratch.split_at_mut((top - 2) * segment);
                            let a = match top - 2 {
                                0 => &mut *output,
                                k => &mut lower[(k - 1) * segment..][..len],
                            };
                            math::binary_in_place(op, a, &upper[..len]);
                            top -= 1;
                        }
                    }
                }
            }
        }
        Ok(tensor)
    }

    /// Operand `i`'s values for the segment when they lie contiguously in its storage.
    fn source(&self, i: usize, first_row: usize, nrows: usize, start: usize, width: usize) -> Option<&[f32]> {
        let (view, row_stride, col_stride) = self.operands[i];
        if !(col_stride == 1 && (nrows == 1 || row_stride == width)) {
            return None;
        }
        // SAFETY: the operand is alive for this call and only read.
        let values = unsafe { view.values() };
        let base = first_row * row_stride + start;
        Some(&values[base..base + nrows * width])
    }

    /// Copies operand `i`'s values for rows `first_row..first_row + nrows`, columns
    /// `start..start + width` of the output into `slot` (broadcast dims repeat its values).
    fn load(&self, i: usize, slot: &mut [f32], first_row: usize, nrows: usize, start: usize, width: usize) {
        if let Some(values) = self.source(i, first_row, nrows, start, width) {
            slot.copy_from_slice(values);
            return;
        }
        let (view, row_stride, col_stride) = self.operands[i];
        // SAFETY: the operand is alive; indices stay inside its view (strides are 0 along its
        // broadcast dims).
        let values = unsafe { view.values() };
        for (r, segment) in slot.chunks_exact_mut(width).enumerate() {
            let base = (first_row + r) * row_stride;
            if col_stride == 1 {
                segment.copy_from_slice(&values[base + start..base + start + width]);
            } else {
                segment.fill(values[base]);
            }
        }
    }
}

/// The deepest the stack of `program` gets.
fn max_depth(program: &[Step]) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    for step in program {
        match step {
            Step::Load(_) => depth += 1,
            Step::Unary(_) => {}
            Step::Binary(_) => depth = depth.saturating_sub(1),
        }
        deepest = deepest.max(depth);
    }
    deepest
}
