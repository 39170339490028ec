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

mod batched;
mod blas;
mod calibrate;
mod conv_chain;
mod convert;
mod dense;
mod epilogue;
mod gelu;
mod isin;
mod math;
#[cfg(test)]
mod paired_timing;
mod pool;
mod rms_norm;
mod select;
mod small_gemm;
mod stack_machine;

use tch::Tensor;

use crate::error::{Error, Result};
use crate::ops;
use epilogue::RowBias;
use small_gemm::Layout;
use stack_machine::{elementwise_plan, ElementwisePlan};

pub use conv_chain::ConvChain;
pub use dense::{empty as empty_dense, Dense};
pub use epilogue::Reduce;
pub use math::{Binary, Unary};
pub use convert::{logical_not as logical_not_direct, to_kind as to_kind_direct};
pub use pool::max_pool as max_pool_direct;
pub use rms_norm::{rms_norm, ScalarOperand, WeightSide};
pub use isin::isin_few;
pub use select::{masked_fill as masked_fill_direct, where_same_shape};

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
    if reduce.is_none() {
        if let Some((rows, shape)) = rows_of_batch(x, w, b) {
            return Ok(linear_epilogue(&rows, w, b, acts, None)?.f_view(shape.as_slice())?);
        }
    }
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
    if epilogue_in_parallel(m, n, acts, reduce) {
        return finish_in_parallel(ops::linear(x, w, b)?, acts, reduce);
    }
    gemm_then_epilogue(m, n, acts, reduce, |out| {
        // SAFETY (all arms): `out` holds m·n f32s; x and w are dense m×k and n×k tensors
        // alive for this call; every dimension is in 1..=i32::MAX (checked above).
        match bias {
            // addmm(bias, x, w.t()): rows pre-filled with the bias, beta = 1, as eager does.
            Some(bd) => {
                // SAFETY: the bias tensor is alive and holds n f32s.
                let bias_values = unsafe { bd.values() };
                fill_rows(out, bias_values);
                unsafe { blas::gemm_into(Layout::Linear, m, k, n, xd.ptr, wd.ptr, true, out.as_mut_ptr()) }
            }
            None => unsafe { blas::gemm_into(Layout::Linear, m, k, n, xd.ptr, wd.ptr, false, out.as_mut_ptr()) },
        }
        RowBias::None
    })
}

/// A contiguous float32 `x` of rank ≥ 3 as the matrix of its rows, and `F.linear`'s output
/// shape — when eager computes `F.linear(x, w, b)` exactly so: for such an `x` it multiplies
/// the flattened rows (`addmm` with a 1-D bias, `matmul`'s fold into `mm` without one) and
/// views the result back. `None` for everything else (empty, mismatched or other layouts),
/// which keeps libtorch's path and its errors.
fn rows_of_batch(x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Option<(Tensor, Vec<i64>)> {
    let facts = crate::facts::Facts::of(x)?;
    if facts.rank < 3 || facts.device != tch::Device::Cpu || !facts.is_kind(tch::Kind::Float) || !crate::facts::contiguous_data(x)?.0 {
        return None;
    }
    let wd = Dense::of(w).filter(|wd| wd.rank == 2)?;
    let mut shape = x.size();
    let k = *shape.last()?;
    if shape.contains(&0) || k as usize != wd.cols || b.is_some_and(|b| Dense::of(b).is_none_or(|bd| bd.rank != 1 || bd.cols != wd.rows)) {
        return None;
    }
    *shape.last_mut()? = wd.rows as i64;
    Some((x.f_view([-1, k]).ok()?, shape))
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
        Some((xd, wd, _)) if epilogue_in_parallel(xd.rows, wd.cols, acts, reduce) => {
            let product = ops::matmul(x, w)?;
            let biased = match b {
                Some(b) => ops::add(&product, b)?,
                None => product,
            };
            finish_in_parallel(biased, acts, reduce)
        }
        Some((xd, wd, bias)) if reduce.is_none_or(|r| r.axis(2).is_some()) => {
            let (m, k, n) = (xd.rows, xd.cols, wd.cols);
            gemm_then_epilogue(m, n, acts, reduce, |out| {
                // SAFETY: see `matmul_plan`: dense m×k and k×n inputs, dims in range.
                unsafe { blas::gemm_into(Layout::Matmul, m, k, n, xd.ptr, wd.ptr, false, out.as_mut_ptr()) };
                bias
            })
        }
        _ => {
            // rank 3/4 with equal batch dims (attention's products): one GEMM per matrix
            let (product, batched) = match batched::matmul(x, w) {
                Some(product) => (product?, true),
                None => (ops::matmul(x, w)?, false),
            };
            let biased = match b {
                Some(b) => ops::add(&product, b)?,
                None => product,
            };
            match reduce {
                // a fresh tensor of rank 3/4: the acts in place on it
                None if batched => acts_in_place(biased, acts),
                _ => finish(biased, acts, reduce),
            }
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
            epilogue::apply_over_threads(destination, m, n, bias, acts);
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
/// (see [`Step`]) with torch's broadcasting: any at rank ≤ 2 (e.g. a 1-D bias over a matrix),
/// and at ranks 3–4 where it merges into a 2-D one (a residual `x + h`, a bias over the last
/// dim, a `[B, C, 1, 1]` scale over `[B, C, H, W]`).
/// Each op rounds to float32 as eager does, so the result equals the op-by-op chain.
pub fn elementwise(operands: &[&Tensor], program: &[Step]) -> Result<Tensor> {
    let direct = direct_ops(operands, program);
    if !direct && program.iter().any(|step| matches!(step, Step::Binary(_))) {
        if let Some((hoisted, hoisted_program)) = hoist_operand_unaries(operands, program)? {
            let hoisted: Vec<&Tensor> = hoisted.iter().map(Hoisted::tensor).collect();
            if direct_ops(&hoisted, &hoisted_program) {
                return elementwise_over(&hoisted, &hoisted_program, true);
            }
        }
    }
    elementwise_over(operands, program, direct)
}

/// Whether the direct kernel may run every op of `program`: it works in chunks, so every op
/// must be position-independent here.
fn direct_ops(operands: &[&Tensor], program: &[Step]) -> bool {
    program.iter().all(|step| !matches!(step, Step::Unary(op) if !calibrate::native(*op)))
        && !(program.contains(&Step::Unary(Unary::Gelu)) && loads_a_single_element(operands, program))
}

/// [`elementwise`] once its operands are settled: the direct kernel where `direct_ops` and the
/// plan allow, else libtorch's ops.
fn elementwise_over(operands: &[&Tensor], program: &[Step], direct_ops: bool) -> Result<Tensor> {
    // Above libtorch's grain size the pass is split over torch's threads as libtorch's own
    // kernels are (`ElementwisePlan::run`), so one pass stays faster than op by op there too.
    // A lone `a op b` has no pass to save: ours wins only where eager's set-up dominates.
    let lone_binary = matches!(program, [Step::Load(_), Step::Load(_), Step::Binary(_)]);
    if let [Step::Load(a), Step::Load(b), Step::Binary(op)] = *program {
        let (a, b) = (operands.get(a).ok_or_else(invalid_program)?, operands.get(b).ok_or_else(invalid_program)?);
        // decided before the plan, which costs as much as the call it would save
        let small = |t: &Tensor| {
            crate::facts::Facts::of(t).is_some_and(|f| if f.rank <= 2 { f.sizes[0] * f.sizes[1] } else { t.numel() as i64 } <= LONE_BINARY_MAX as i64)
        };
        if !(small(a) && small(b)) {
            return match column_broadcast_plan(a, b, operands, program).filter(|_| direct_ops) {
                Some(plan) => plan.run(program),
                None => binary_with_ops(op, a, b),
            };
        }
    }
    let small = |plan: &ElementwisePlan| !lone_binary || plan.rows * plan.cols <= LONE_BINARY_MAX;
    match elementwise_plan(operands, program).filter(|plan| direct_ops && small(plan)) {
        Some(plan) => plan.run(program),
        None => match *program {
            // libtorch's op on the operands themselves (no stack of handles)
            [Step::Load(a), Step::Load(b), Step::Binary(op)] => {
                binary_with_ops(op, operands.get(a).ok_or_else(invalid_program)?, operands.get(b).ok_or_else(invalid_program)?)
            }
            _ => elementwise_with_ops(operands, program),
        },
    }
}

/// The plan of a lone `a op b` where one operand holds one value per row of the other, broadcast
/// along it (SqueezeExcitation's `[B, C, 1, 1]` gate times its `[B, C, H, W]` input): libtorch's
/// kernel takes twice its same-shape time there (35 µs against 17 µs at 8×96×14×14 on the
/// 2-core Xeon), the plan's one pass 22.6 µs. `None` for every other pair (two shim queries
/// decide it), which libtorch runs faster above [`LONE_BINARY_MAX`].
fn column_broadcast_plan(a: &Tensor, b: &Tensor, operands: &[&Tensor], program: &[Step]) -> Option<ElementwisePlan> {
    let last = |t: &Tensor| crate::facts::Layout::of(t).filter(|l| l.dense_f32_cpu && l.rank > 0).map(|l| l.sizes[l.rank - 1]);
    let (a_last, b_last) = (last(a)?, last(b)?);
    if (a_last == 1) == (b_last == 1) {
        return None;
    }
    elementwise_plan(operands, program).filter(ElementwisePlan::has_column_broadcast)
}

/// `program` with each operand's own chain of unary ops (`sigmoid(scale)` in `x *
/// sigmoid(scale)`) computed first by libtorch on the whole operand, as eager computes it, when
/// that leaves only ops the direct kernel runs: our loops cannot reproduce libtorch's values
/// of such an op chunk by chunk on this CPU (SLEEF's `exp` on AVX-512), but they need not, as
/// the op then sees the same tensor as eager's. The rest stays one pass: SqueezeExcitation's
/// gate is one libtorch call on its `[B, C, 1, 1]` scale and one loop, not two dispatches.
/// Returns the operands in the new program's order; `None` when a non-native op acts on an
/// intermediate value (that needs the op-by-op path) or on an operand that is not float32.
fn hoist_operand_unaries<'a>(operands: &[&'a Tensor], program: &[Step]) -> Result<Option<(Vec<Hoisted<'a>>, Vec<Step>)>> {
    // a non-native op on an intermediate value: nothing to hoist (checked before any op runs)
    let mut after_load = false;
    for step in program {
        match *step {
            Step::Load(_) => after_load = true,
            Step::Unary(op) if !after_load && !calibrate::native(op) => return Ok(None),
            Step::Unary(_) => {}
            Step::Binary(_) => after_load = false,
        }
    }
    let (mut hoisted, mut steps) = (Vec::new(), Vec::with_capacity(program.len()));
    let mut at = 0;
    while let Some(&step) = program.get(at) {
        at += 1;
        let Step::Load(i) = step else {
            steps.push(step);
            continue;
        };
        let given: &Tensor = operands.get(i).ok_or_else(invalid_program)?;
        let chain_end = program[at..].iter().position(|s| !matches!(s, Step::Unary(_))).map_or(program.len(), |n| at + n);
        let chain = &program[at..chain_end];
        let libtorch_first = chain.iter().any(|s| match *s {
            Step::Unary(op) => !calibrate::native(op) || (op == Unary::Gelu && given.numel() <= 1),
            _ => false,
        });
        steps.push(Step::Load(hoisted.len()));
        if !libtorch_first {
            hoisted.push(Hoisted::Given(given));
            continue;
        }
        // a float op cannot fail, so running it early cannot change which error eager raises
        if !matches!(given.f_kind(), Ok(tch::Kind::Float)) {
            return Ok(None);
        }
        let mut value = given.shallow_clone();
        for step in chain {
            let Step::Unary(op) = *step else { unreachable!("a chain of unary steps") };
            value = unary_with_ops(op, &value)?;
        }
        hoisted.push(Hoisted::Computed(value));
        at = chain_end;
    }
    Ok(Some((hoisted, steps)))
}

/// An operand of a hoisted program: one of the call's, or the value of its unary chain.
enum Hoisted<'a> {
    Given(&'a Tensor),
    Computed(Tensor),
}

impl Hoisted<'_> {
    fn tensor(&self) -> &Tensor {
        match self {
            Hoisted::Given(t) => t,
            Hoisted::Computed(t) => t,
        }
    }
}

/// Whether `program` loads an operand of at most one element: eager's GELU of such a tensor
/// (or of a value broadcast from it) is ATen's kernel, not the oneDNN one ours reproduces
/// (`calibrate::whole_tensors_only`).
fn loads_a_single_element(operands: &[&Tensor], program: &[Step]) -> bool {
    program.iter().any(|step| matches!(step, Step::Load(i) if operands.get(*i).is_some_and(|t| t.numel() <= 1)))
}

/// libtorch's `GRAIN_SIZE`: below it its kernels run on one thread, and so do ours.
const PARALLEL_GRAIN: usize = 32768;

/// Elements per segment of the one-pass loops over a whole buffer (the elementwise pass's
/// chunk, the selections, the conversions, activations in place).
const SEGMENT: usize = 4096;

/// Runs `body(start, stop)` over disjoint element ranges covering `0..len`, segments of
/// [`SEGMENT`] elements shared among torch's threads above libtorch's grain size.
fn for_each_segment(len: usize, body: &(dyn Fn(usize, usize) + Sync)) {
    crate::parallel::for_each_part(len.div_ceil(SEGMENT), (PARALLEL_GRAIN / SEGMENT).max(1), &|first, last| {
        body(first * SEGMENT, (last * SEGMENT).min(len))
    });
}

/// Up to how many elements a lone unary op runs our loop: there the dispatcher and
/// TensorIterator set-up dominate eager's cost and ours wins; above it libtorch's kernel is
/// as fast or faster. Measured on an Intel Xeon at one thread (`bench --sweep --cells
/// relu,neg,abs_,square`), our loop against libtorch's kernel behind our boundary at 2^13 and
/// 2^14 elements: `abs` ×1.18/1.07 against ×0.95/0.96, `square` ×1.08/1.01 against
/// ×1.00/0.98, but `relu` (NaN-propagating compare) ×0.87–0.91 against ×0.97–0.99 and `neg`
/// ×0.93–0.98 against ×0.97–1.00; all lose at 2^18.
fn lone_unary_max(op: Unary) -> usize {
    match op {
        Unary::Relu | Unary::Neg => 1 << 12,
        _ => 1 << 14,
    }
}

/// Up to how many result elements a lone `a + - * / b` runs our loop. Measured on an Intel
/// Xeon at one thread (`torchlower bench --sweep --cells add,sub,mul,div,add_row`): ×1.01–1.24
/// of eager up to 2^11 elements, same shape or a broadcast row; above, libtorch's vectorised
/// kernel is faster (×0.84–0.95 same shape, ×0.45–0.88 with a broadcast row).
const LONE_BINARY_MAX: usize = 1 << 11;

/// `acts(t)` of a tensor the function just made and nothing else holds (a convolution's or a
/// norm's result; the analyzer passes it by value): the ops run in place on it, so the chain
/// allocates no tensor per op. On a contiguous float32 CPU tensor whose every op is ours
/// ([`calibrate::native`]): one pass over [`for_each_segment`]'s segments. On any other
/// contiguous float32 CPU tensor: op by op over the whole buffer ([`calibrate::unary_in_place`]:
/// eager's sigmoid/SiLU loops reproduced where they can be, else libtorch's kernel on it).
/// Otherwise libtorch's in-place kernels (eager's own, parallel as eager's). Either way each
/// element is what eager's out-of-place op gives, and the strides stay eager's (a
/// channels-last result stays channels-last).
pub fn acts_in_place(mut t: Tensor, acts: &[Unary]) -> Result<Tensor> {
    let float_cpu = crate::facts::Facts::of(&t).filter(|f| f.device == tch::Device::Cpu && f.is_kind(tch::Kind::Float));
    if let Some((true, data)) = float_cpu.and_then(|_| crate::facts::contiguous_data(&t)) {
        let len = t.numel();
        if len == 0 {
            return Ok(t);
        }
        // SAFETY: `t` is a contiguous float32 tensor of `len` elements that only this call
        // holds (a fresh result passed by value), so nothing reads it meanwhile.
        acts_on_values(unsafe { std::slice::from_raw_parts_mut(data, len) }, acts);
        return Ok(t);
    }
    for &op in acts {
        t = unary_in_place_with_ops(op, &mut t)?;
    }
    Ok(t)
}

/// `acts` over the elements of a whole contiguous float32 tensor, in place, each element as
/// eager's op computes it over that tensor.
pub(crate) fn acts_on_values(values: &mut [f32], acts: &[Unary]) {
    let len = values.len();
    // eager's GELU of a one-element tensor is not the kernel our model reproduces
    let one_element = len == 1 && acts.iter().any(|&op| calibrate::whole_tensors_only(op));
    if !acts.iter().all(|&op| calibrate::native(op)) || one_element {
        acts.iter().for_each(|&op| calibrate::unary_in_place(op, values));
        return;
    }
    let parts = crate::parallel::DisjointParts::new(values);
    for_each_segment(len, &|start, stop| {
        // SAFETY: the segments of one call are disjoint.
        let segment = unsafe { parts.part(start, stop - start) };
        for &op in acts {
            math::unary_in_place(op, segment);
        }
    });
}

/// `t * s` or `t / s` (`op` is `Mul` or `Div`) of a tensor the function just made and nothing
/// else holds (a fused product's result, passed by value; attention's `(q @ kᵀ) * scale`): in
/// place on a contiguous float32 CPU tensor — the number rounded to float32 as eager converts
/// it, then one IEEE product or quotient per element, which is eager's `mul`/`div` kernel
/// element for element — else libtorch's op (another dtype promotes, as eager's does).
/// The product is computed before the number is evaluated, as in Python.
pub fn scale<S: ScalarOperand>(t: Tensor, op: Binary, s: S) -> Result<Tensor> {
    let float_cpu = crate::facts::Facts::of(&t).filter(|f| f.device == tch::Device::Cpu && f.is_kind(tch::Kind::Float));
    match (op, float_cpu.and_then(|_| crate::facts::contiguous_data(&t))) {
        (Binary::Mul | Binary::Div, Some((true, data))) => {
            let len = t.numel();
            // SAFETY: `t` is a contiguous float32 tensor of `len` elements that only this
            // call holds (a fresh result passed by value), so nothing reads it meanwhile.
            let parts = crate::parallel::DisjointParts::new(unsafe { std::slice::from_raw_parts_mut(data, len) });
            let s = s.as_f32();
            for_each_segment(len, &|start, stop| {
                // SAFETY: the segments of one call are disjoint.
                let segment = unsafe { parts.part(start, stop - start) };
                match op {
                    Binary::Div => segment.iter_mut().for_each(|v| *v /= s),
                    _ => segment.iter_mut().for_each(|v| *v *= s),
                }
            });
            Ok(t)
        }
        (Binary::Div, _) => ops::div_scalar(&t, s),
        (Binary::Mul, _) => ops::mul_scalar(&t, s),
        _ => Err(Error::Value(format!("torchlower: internal error: fused::scale of {op:?}"))),
    }
}

/// A lone `op(t)`: one pass of our loop where it is as fast as libtorch's kernel here (it
/// skips the dispatcher and TensorIterator set-up that dominate small tensors), else
/// libtorch's op itself. Sigmoid and SiLU, whose loops ours reproduces only over a whole
/// tensor ([`calibrate::whole_loop`]), run so on a copy of `t`.
pub fn unary(op: Unary, t: &Tensor) -> Result<Tensor> {
    let input = Dense::of(t);
    // GELU at any size: ours skips oneDNN's per-call set-up and runs 16 lanes at a time
    let small = input.is_some_and(|v| v.len() <= lone_unary_max(op) || op == Unary::Gelu);
    if small && calibrate::native(op) {
        return elementwise(&[t], &[Step::Load(0), Step::Unary(op)]);
    }
    match input.filter(|v| small && matches!(calibrate::whole_loop(op, v.len()), calibrate::WholeLoop::WithScalarTail(_))) {
        Some(input) => {
            let (tensor, view) = dense::empty(&input.shape())?;
            // SAFETY: `t` is alive and only read; `tensor` is fresh and only this call holds it.
            let out = unsafe { view.values_mut() };
            out.copy_from_slice(unsafe { input.values() });
            calibrate::unary_in_place(op, out);
            Ok(tensor)
        }
        None => unary_with_ops(op, t),
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
            epilogue::apply_over_threads(values, m, n, bias, acts);
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

/// Every row of `out` (rows as long as `row`) set to `row`, the rows shared among torch's
/// threads above libtorch's grain size, as eager's copy of the bias into `addmm`'s output is
/// (one-threaded, this fill cost a 256×256 `F.linear` ×0.95 of eager with 2 threads).
fn fill_rows(out: &mut [f32], row: &[f32]) {
    let n = row.len().max(1);
    let rows = out.len() / n;
    let parts = crate::parallel::DisjointParts::new(out);
    crate::parallel::for_each_part(rows, (PARALLEL_GRAIN / n).max(1), &|first, last| {
        // SAFETY: rows `first..last` belong to this part only.
        let block = unsafe { parts.part(first * n, (last - first) * n) };
        block.chunks_exact_mut(n).for_each(|r| r.copy_from_slice(row));
    });
}

/// Whether the epilogue of an `m×n` product goes to libtorch's kernels rather than our pass:
/// with more than one torch thread, above libtorch's grain size, when the pass could not be
/// split over the threads (a reduction, or an op that must see the whole buffer). Bias and
/// acts alone are split by rows (`epilogue::apply_over_threads`); one-threaded, that pass ran
/// at ×0.86–0.96 of eager's parallel ops (measured with 2 threads).
fn epilogue_in_parallel(m: usize, n: usize, acts: &[Unary], reduce: Option<Reduce>) -> bool {
    let splits = reduce.is_none() && acts.iter().all(|&op| calibrate::native(op));
    (!acts.is_empty() || reduce.is_some()) && !splits && m * n > PARALLEL_GRAIN && crate::facts::num_threads() > 1
}

/// `reduce(acts(t))` by libtorch's (parallel) kernels, `acts` in place on `t`, a fresh
/// intermediate nothing else holds (the same kernels as eager's out-of-place ops, without
/// their allocations).
fn finish_in_parallel(mut t: Tensor, acts: &[Unary], reduce: Option<Reduce>) -> Result<Tensor> {
    for &op in acts {
        t = unary_in_place_with_ops(op, &mut t)?;
    }
    match reduce {
        Some(r) => reduce_with_ops(&t, r),
        None => Ok(t),
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
        Unary::Silu => t.f_silu_()?,
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
        Unary::Silu => ops::silu(t),
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
