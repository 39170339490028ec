//! Small GEMMs computed in the BLAS's own summation order, so the bits equal eager's.
//!
//! Why: below a few hundred thousand multiply-adds, a call of libtorch's `sgemm_` costs more
//! in call, packing and dispatch than in arithmetic (a 4×32·32×32 product is ~0.5 µs through
//! the BLAS and ~0.05 µs of FMAs), and the seed's layer loops make sixteen such calls.
//!
//! How parity is kept: measured on libtorch's MKL (x86-64 wheels), each output element of
//! - `x @ w` / `F.linear(x, w)` with `m ≥ 4` rows, `n ≥ 16` columns and `k ≤ 192` is one chain
//!   of fused multiply-adds over `k`, starting from `+0.0`: `acc = fma(x[i,p], w[p,j], acc)`;
//!   a bias (`addmm`'s `beta = 1`) is added to the finished chain once;
//! - with a longer `k`, MKL cuts it into panels ([`panel_len`]: two halves below 384, else 192
//!   each, the remainder last): each panel is such a chain from `+0.0`, and the panels'
//!   results are added to the output in turn (the first one stored when there is no bias) —
//!   measured for `m` 4…64, `n` 16…1024, `k` 193…3072, `x @ w` and `F.linear`. For an odd `k`
//!   below 384 no split into two chains matches MKL: the probe finds that, and such shapes
//!   stay on the BLAS;
//! - `x @ w` with one row (`m = 1`, MKL's gemv) is a chain of separately rounded products and
//!   sums: `acc = acc + x[p]·w[p,j]`;
//! - `F.linear(x, w)` with one row (MKL's transposed gemv) is a dot product in four lanes:
//!   the head's products (the first `k mod 4`, or the first four when `k` is a multiple of 4)
//!   summed in order (from the first product, not from `+0.0`) into lane 0, then each group
//!   of four after it added lane by lane, `lane[i] += x[p+i]·w[j,p+i]` (separate roundings),
//!   then `(l0 + l2) + (l1 + l3)`, added to the output (the bias, or `+0.0`) — measured for
//!   `k` 5…683 (LLaMA's `8·d/3` hidden sizes are not multiples of 4).
//!
//! A kernel following the same chain (vectorised across `j`, never across `p`) returns the
//! same bits for every input, NaN, ±Inf and signed zeros included. Because another BLAS build,
//! CPU or thread count may choose other kernels, every shape is checked against the BLAS once
//! per thread before this kernel is used for it: random operands (thousands of outputs, so a
//! tiny shape cannot pass by chance) and signed-zero operands, compared bit for bit; a shape
//! that differs stays on the BLAS for the life of the process; so does one that matches but is
//! slower than the BLAS on this CPU (timed once, [`not_slower`]). The one-row chains above were
//! measured on an AMD EPYC; on an Intel Xeon MKL's one-row products follow other orders, which
//! the check finds (those shapes then stay on the BLAS).
//!
//! A several-row `F.linear` whose weight is too large to transpose per call (the packed
//! kernel's way) runs a kernel vectorised across the rows of `x` instead (`linear_rows`): the
//! same chains, `w` read as it lies.
//!
//! The BLAS routine checked against is handed in by the caller ([`Reference`]: `blas` passes
//! its `sgemm_` call), so this module does not depend on `blas`, which depends on it to choose
//! a product's kernel. The x86-64 kernel itself is in `kernel.rs`.

// The kernels take BLAS-shaped argument lists (shape, operands, output), kept flat on purpose.
#![allow(clippy::too_many_arguments)]

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

/// How the right-hand operand is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// `w` is `k × n` row-major (`x @ w`, BLAS `mm`).
    Matmul,
    /// `w` is `n × k` row-major (`F.linear(x, w)`, BLAS `addmm(b, x, w.t())`).
    Linear,
}

/// The largest product (`m·k·n`) this kernel takes for `x @ w`; above it the BLAS's blocked
/// kernels win (measured: faster than MKL up to 64×128×128, including MKL's call overhead).
pub const MAX_WORK: usize = 1 << 20;
/// The same for `F.linear` with several rows, where `w` is first transposed (as MKL packs it):
/// measured faster than MKL up to 64×128×64 with that copy included.
pub const MAX_LINEAR_WORK: usize = 1 << 19;
/// The largest weight (`n·k` elements) a several-row `F.linear` transposes per call: above it
/// the copy costs more than [`kernel::linear_rows`], which reads `w` as it lies (measured at
/// one thread: 8×64·64×256 ×0.56 of MKL transposed, ×1.07 by rows).
pub const MAX_LINEAR_PACK: usize = 1 << 13;
/// The largest one-row `x @ w` (`k·n`) this kernel takes: above it MKL's GEMV is faster.
/// Measured on an AMD EPYC (AVX-512) at one thread, `(x @ w + b).relu()` against eager:
/// ×1.22–1.41 up to 2^17, ×0.31–0.80 from 2^18 (1×256·256×1024: ×0.31) to 2^20.
const MAX_ONE_ROW_MATMUL_WORK: usize = 1 << 17;
/// The same for a one-row `F.linear` (the four-lane dot product): measured on the same CPU,
/// ×1.13–1.18 of eager at 2^18, ×0.94–1.00 from 2^19 (`bench --sweep --cells linear`).
const MAX_ONE_ROW_LINEAR_WORK: usize = 1 << 18;
/// The longest chain MKL leaves unblocked (`k` is split into panels above it).
const MAX_PANEL: usize = 192;
/// The largest several-row `F.linear` run by [`kernel::linear_rows`] (weights too large to
/// transpose per call): rows, and `m·k·n`. Measured on an AMD EPYC at one thread against MKL:
/// ×1.05–1.5 from 8×256·256×1024 to 64×768·768×768 and 8×3072·3072×768; above 64 rows (two
/// passes over `w`) MKL's blocked kernels come within ×1.05, so they keep those.
const MAX_ROWS_LINEAR_ROWS: usize = 64;
const MAX_ROWS_LINEAR_WORK: usize = 1 << 26;

/// The panels MKL cuts a chain of `k` products into (module docs): their length, the last
/// one taking the remainder.
pub fn panel_len(k: usize) -> usize {
    match k {
        0..=MAX_PANEL => k.max(1),
        _ if k < 2 * MAX_PANEL => k.div_ceil(2),
        _ => MAX_PANEL,
    }
}

/// Whether a several-row `F.linear` transposes its weight and runs the `x @ w` kernel (small
/// weights), rather than [`kernel::linear_rows`].
fn packs_weight(m: usize, k: usize, n: usize) -> bool {
    k.saturating_mul(n) <= MAX_LINEAR_PACK && m.saturating_mul(k).saturating_mul(n) <= MAX_LINEAR_WORK
}

/// Which chain the BLAS uses for a shape, when it is one this kernel can follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Chain {
    /// `acc = fma(a, b, acc)`.
    Fused,
    /// `acc = acc + a·b`, two roundings.
    Separate,
    /// The four-lane dot product of a one-row `F.linear` (see the module docs).
    Dot4,
}

fn chain_for(layout: Layout, m: usize, k: usize, n: usize, accumulate: bool) -> Option<Chain> {
    if m == 0 || k == 0 || n == 0 {
        return None;
    }
    let work = m.saturating_mul(k).saturating_mul(n);
    let fits = match layout {
        // One-row `F.linear` reads `w` as it lies (no transposed copy), like `@`.
        Layout::Linear if m > 1 => {
            packs_weight(m, k, n) || (m <= MAX_ROWS_LINEAR_ROWS && work <= MAX_ROWS_LINEAR_WORK)
        }
        _ => work <= MAX_WORK,
    };
    if !fits {
        return None;
    }
    if layout == Layout::Matmul && m == 1 && !accumulate {
        return (k * n <= MAX_ONE_ROW_MATMUL_WORK).then_some(Chain::Separate);
    }
    if layout == Layout::Linear && m == 1 {
        return (k * n <= MAX_ONE_ROW_LINEAR_WORK).then_some(Chain::Dot4);
    }
    (m >= 4 && n >= 16).then_some(Chain::Fused)
}

/// The routine whose bits the kernel must reproduce, with the arguments of
/// [`Planned::run`] (the BLAS's `sgemm_` as `addmm`/`mm` call it). Plans are checked and
/// cached per thread on the understanding that every caller passes the same routine.
pub type Reference = unsafe fn(Layout, usize, usize, usize, *const f32, *const f32, bool, *mut f32);

/// A shape this kernel reproduces here: the chain the BLAS uses for it, checked against the
/// BLAS (see [`verified`]). Decided once per shape, so a layer loop asks once per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Planned {
    layout: Layout,
    chain: Chain,
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
}

impl Planned {
    /// The plan, or `None` when the BLAS must compute this shape. Shapes not checked yet on
    /// this thread are checked against `reference`, which must be callable (for `blas`'s
    /// `sgemm_`: `blas::available()`).
    pub fn for_shape(layout: Layout, m: usize, k: usize, n: usize, accumulate: bool, reference: Reference) -> Option<Planned> {
        let chain = chain_for(layout, m, k, n, accumulate)?;
        let plan = Planned { layout, chain, m, k, n, accumulate };
        (kernel::supported() && verified(plan, reference)).then_some(plan)
    }

    /// `out (m×n) = x (m×k) · w [+ out when accumulate]` in the BLAS's order (for a
    /// several-row [`Layout::Linear`], packing a small `w` to `k × n` first, or reading a large
    /// one by rows: [`linear_by_rows`]).
    ///
    /// # Safety
    /// `x` holds `m·k` f32s, `w` holds `k·n`, `out` holds `m·n` and overlaps neither input;
    /// [`kernel::supported`] is true (it is for every plan [`Planned::for_shape`] returns).
    pub unsafe fn run(&self, x: *const f32, w: *const f32, out: *mut f32) {
        let Planned { layout, chain, m, k, n, accumulate } = *self;
        // Only the fused chain is cut into panels; the one-row chains are measured whole.
        let panel = if chain == Chain::Fused { panel_len(k) } else { k };
        match layout {
            // SAFETY (all arms): as documented on the function; `Dot4` means one row of
            // F.linear.
            _ if chain == Chain::Dot4 => unsafe { kernel::dot4(k, n, x, w, accumulate, out) },
            Layout::Matmul => unsafe { gemm_in_panels(chain, m, k, n, panel, x, w, accumulate, out) },
            Layout::Linear if packs_weight(m, k, n) => PACKED.with(|cell| {
                let mut packed = cell.borrow_mut();
                if packed.len() < k * n {
                    packed.resize(k * n, 0.0);
                }
                // SAFETY: `w` holds n·k f32s; `packed` holds at least k·n.
                unsafe {
                    kernel::transpose(w, n, k, packed.as_mut_ptr());
                    gemm_in_panels(chain, m, k, n, panel, x, packed.as_ptr(), accumulate, out);
                }
            }),
            // SAFETY: as documented on the function.
            Layout::Linear => unsafe { linear_by_rows(m, k, n, panel, x, w, accumulate, out) },
        }
    }
}

/// Whether a plan for this product runs its columns on torch's threads (so that the BLAS,
/// which would split it too, need not be preferred when torch has several).
pub fn splits_over_threads(layout: Layout, m: usize, k: usize, n: usize) -> bool {
    layout == Layout::Linear && m > 1 && !packs_weight(m, k, n)
}

/// How many 8-row vectors [`kernel::linear_rows`] takes at most: rows are handed to it in
/// groups of `8·LINEAR_ROW_VECTORS`.
const LINEAR_ROW_VECTORS: usize = 4;

/// Output columns per part when [`linear_by_rows`] splits them over threads.
const COLUMNS_PER_PART: usize = 8;

/// Multiply-adds from which [`linear_by_rows`] splits its columns over torch's threads.
const PARALLEL_WORK: usize = 1 << 16;

/// [`kernel::linear_rows`] over groups of at most `8·`[`LINEAR_ROW_VECTORS`] rows (each a pass over
/// `w`), its columns split over torch's threads for a large product: every element is still
/// the one chain of its row and column, so the split changes no bit.
///
/// # Safety
/// As [`Planned::run`] for `F.linear` (any `m ≥ 1`).
#[allow(clippy::too_many_arguments)]
unsafe fn linear_by_rows(m: usize, k: usize, n: usize, panel: usize, x: *const f32, w: *const f32, accumulate: bool, out: *mut f32) {
    // Addresses as integers, so that the parts (on other threads) may share them.
    let (x, w, out) = (x as usize, w as usize, out as usize);
    let columns = |begin: usize, end: usize| {
        let (first_column, last_column) = (begin * COLUMNS_PER_PART, (end * COLUMNS_PER_PART).min(n));
        ROWS_SCRATCH.with(|cell| {
            let (xt, ot) = &mut *cell.borrow_mut();
            let group = 8 * LINEAR_ROW_VECTORS;
            for first in (0..m).step_by(group) {
                let rows = group.min(m - first);
                // SAFETY: rows first..first+rows and columns first_column..last_column of x, w
                // and out exist (the caller's guarantees); parts write disjoint columns.
                unsafe {
                    let (x, w, out) = (x as *const f32, w as *const f32, out as *mut f32);
                    kernel::linear_rows(rows, k, last_column - first_column, panel, x.add(first * k), w.add(first_column * k), accumulate, out.add(first * n + first_column), n, xt, ot)
                }
            }
        })
    };
    let parts = n.div_ceil(COLUMNS_PER_PART);
    let grain = PARALLEL_WORK.div_ceil(m * k * COLUMNS_PER_PART).max(1);
    crate::parallel::for_each_part(parts, grain, &columns);
}

/// `out = x · b [+ out]` for row-major `b (k×n)`, one kernel call per panel of `k`: the first
/// stores (or adds to the bias), the others add to what is there. A panel's columns of `x` are
/// copied out first (`x` is small), so that the kernel sees dense rows.
///
/// # Safety
/// As [`Planned::run`], with `b` the `k × n` operand.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_in_panels(chain: Chain, m: usize, k: usize, n: usize, panel: usize, x: *const f32, b: *const f32, accumulate: bool, out: *mut f32) {
    if panel >= k {
        // SAFETY: the caller's guarantees.
        return unsafe { kernel::gemm(chain, m, k, n, x, b, accumulate, out) };
    }
    PANEL_COLUMNS.with(|cell| {
        let mut columns = cell.borrow_mut();
        let mut lo = 0;
        while lo < k {
            let hi = k.min(lo + panel);
            columns.clear();
            for i in 0..m {
                // SAFETY: row i of x has k elements.
                columns.extend_from_slice(unsafe { std::slice::from_raw_parts(x.add(i * k + lo), hi - lo) });
            }
            // SAFETY: `columns` is m × (hi - lo); rows lo..hi of b exist.
            unsafe { kernel::gemm(chain, m, hi - lo, n, columns.as_ptr(), b.add(lo * n), accumulate || lo > 0, out) };
            lo = hi;
        }
    });
}

/// A plan and the torch thread count it was checked under (the BLAS may choose other kernels
/// for other counts).
type Key = (Planned, i32);

thread_local! {
    /// `wᵀ` for a [`Layout::Linear`] with a small weight ([`packs_weight`]): the `x @ w` kernel
    /// reads it one `k`-row at a time.
    static PACKED: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// One panel's columns of `x` for [`gemm_in_panels`].
    static PANEL_COLUMNS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// `xᵀ` and the transposed output of [`kernel::linear_rows`].
    static ROWS_SCRATCH: RefCell<(Vec<f32>, Vec<f32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
    /// Plans checked against the BLAS on this thread, and whether they matched (and were
    /// not slower).
    static VERIFIED: RefCell<HashMap<Key, bool>> = RefCell::new(HashMap::new());
    /// The last plan asked about and its answer.
    static LAST: Cell<Option<(Key, bool)>> = const { Cell::new(None) };
}

/// Whether `plan` gives the BLAS's bits on this thread, and is not slower than it here,
/// probing once per plan and thread count.
fn verified(plan: Planned, reference: Reference) -> bool {
    let key = (plan, crate::facts::num_threads());
    // A layer loop asks about one shape many times in a row: answer that without hashing.
    if let Some((last, known)) = LAST.with(|cell| cell.get()) {
        if last == key {
            return known;
        }
    }
    let known = VERIFIED.with(|cache| cache.borrow().get(&key).copied());
    let matches = known.unwrap_or_else(|| {
        let matches = probe(plan, reference) && not_slower(plan, reference);
        VERIFIED.with(|cache| cache.borrow_mut().insert(key, matches));
        matches
    });
    LAST.with(|cell| cell.set(Some((key, matches))));
    matches
}

/// Whether the kernel computes `plan`'s shape at least as fast as the BLAS on this machine:
/// both timed once, interleaved, the best of five bursts each. The two give the same bits (the
/// probe checked that first), so this only decides speed, and it differs by CPU: on an AMD
/// EPYC our kernels beat MKL at every shape they take, while on an Intel Xeon MKL's AVX-512
/// kernels win from about 8 rows of a wide product (×0.53–0.93 for ours at 8–64 rows ×
/// 64–128 × 170–512, measured with `blas::timing`).
fn not_slower(plan: Planned, reference: Reference) -> bool {
    let Planned { layout, m, k, n, accumulate, .. } = plan;
    let x: Vec<f32> = (0..m * k).map(|i| ((i % 17) as f32 - 8.0) * 0.125).collect();
    let w: Vec<f32> = (0..k * n).map(|i| ((i % 13) as f32 - 6.0) * 0.125).collect();
    let mut out = vec![0.0f32; m * n];
    // bursts of about 2^16 multiply-adds, so that a tiny product is not timed by one call
    let reps = ((1usize << 16) / (m * k * n)).clamp(1, 64);
    let mut burst = |ours: bool| {
        let start = std::time::Instant::now();
        for _ in 0..reps {
            // SAFETY: the buffers have the plan's sizes; the CPU check was done by the caller
            // of `verified`; `reference` is callable (precondition of `for_shape`).
            unsafe {
                if ours {
                    plan.run(x.as_ptr(), w.as_ptr(), out.as_mut_ptr());
                } else {
                    reference(layout, m, k, n, x.as_ptr(), w.as_ptr(), accumulate, out.as_mut_ptr());
                }
            }
        }
        start.elapsed()
    };
    let (mut ours, mut blas) = (std::time::Duration::MAX, std::time::Duration::MAX);
    for _ in 0..5 {
        ours = ours.min(burst(true));
        blas = blas.min(burst(false));
    }
    ours <= blas
}

/// How many output elements the random part of a probe compares at least. One random case of
/// a tiny shape (a `1×4·4×3` product has 3 outputs) can agree with the BLAS by chance even in
/// another summation order — two orders of a short chain round alike for most inputs — so
/// tiny shapes are probed with as many fresh random cases as it takes to reach this count.
pub(super) const PROBE_ELEMENTS: usize = 4096;

/// Whether the kernel and the BLAS (`reference`) give the same bits for `plan`'s shape on
/// random operands (at least [`PROBE_ELEMENTS`] outputs) and on operands made of signed zeros
/// (which tell where the chain starts).
fn probe(plan: Planned, reference: Reference) -> bool {
    let Planned { layout, m, k, n, accumulate, .. } = plan;
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ ((m * 31 + k) * 31 + n) as u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // Mantissa and sign random, exponent spread over 2^-4 .. 2^3; or a zero of random sign.
    let mut random = |len: usize, zeros: bool| -> Vec<f32> {
        (0..len)
            .map(|_| {
                let bits = next();
                let magnitude = if zeros {
                    0.0
                } else {
                    (1.0 + (bits >> 41) as f32 / (1u64 << 23) as f32) * f32::powi(2.0, ((bits >> 8) % 8) as i32 - 4)
                };
                if bits & 1 == 0 { magnitude } else { -magnitude }
            })
            .collect()
    };
    let agree = |x: &[f32], w: &[f32], start: &[f32]| {
        let mut ours = start.to_vec();
        let mut blas = start.to_vec();
        // SAFETY: every buffer has the size its shape needs; the CPU check was done by the
        // caller of `verified`; `reference` is callable (precondition of `for_shape`).
        unsafe {
            plan.run(x.as_ptr(), w.as_ptr(), ours.as_mut_ptr());
            reference(layout, m, k, n, x.as_ptr(), w.as_ptr(), accumulate, blas.as_mut_ptr());
        }
        ours.iter().zip(&blas).all(|(a, b)| a.to_bits() == b.to_bits())
    };
    // Random operands tell the summation order.
    let random_cases = PROBE_ELEMENTS.div_ceil(m * n);
    for _ in 0..random_cases {
        let (x, w, start) = (random(m * k, false), random(k * n, false), random(m * n, false));
        if !agree(&x, &w, &start) {
            return false;
        }
    }
    // Zeros tell where each chain starts and how the output is combined (every product
    // `-0.0`, into a `-0.0` or a random output).
    let w_random = random(k * n, false);
    let out_random = random(m * n, false);
    let x_zeros = random(m * k, true);
    let out_zeros = random(m * n, true);
    let negative: Vec<f32> = w_random.iter().map(|v| -v.abs()).collect();
    let positive: Vec<f32> = w_random.iter().map(|v| v.abs()).collect();
    let x_negative_zeros = vec![-0.0f32; m * k];
    let out_negative_zeros = vec![-0.0f32; m * n];
    let cases: [(&[f32], &[f32], &[f32]); 4] = [
        (&x_zeros, &negative, &out_zeros),
        (&x_zeros, &w_random, &out_random),
        (&x_negative_zeros, &positive, &out_negative_zeros),
        (&x_negative_zeros, &positive, &out_random),
    ];
    cases.iter().all(|(x, w, start)| agree(x, w, start))
}

#[cfg(target_arch = "x86_64")]
mod kernel;

#[cfg(not(target_arch = "x86_64"))]
mod kernel {
    use super::Chain;

    pub fn supported() -> bool {
        false
    }
    pub unsafe fn gemm(_: Chain, _: usize, _: usize, _: usize, _: *const f32, _: *const f32, _: bool, _: *mut f32) {
        unreachable!("supported() is false")
    }
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn linear_rows(_: usize, _: usize, _: usize, _: usize, _: *const f32, _: *const f32, _: bool, _: *mut f32, _: usize, _: &mut Vec<f32>, _: &mut Vec<f32>) {
        unreachable!("supported() is false")
    }
    pub unsafe fn transpose(_: *const f32, _: usize, _: usize, _: *mut f32) {
        unreachable!("supported() is false")
    }
    pub unsafe fn dot4(_: usize, _: usize, _: *const f32, _: *const f32, _: bool, _: *mut f32) {
        unreachable!("supported() is false")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(chain: Chain, m: usize, k: usize, n: usize, x: &[f32], b: &[f32]) -> Vec<f32> {
        let mut out = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0f32;
                for p in 0..k {
                    acc = match chain {
                        Chain::Fused => x[i * k + p].mul_add(b[p * n + j], acc),
                        Chain::Separate | Chain::Dot4 => acc + x[i * k + p] * b[p * n + j],
                    };
                }
                out[i * n + j] = acc;
            }
        }
        out
    }

    /// `len` deterministic values in [-0.5, 0.5).
    fn values(len: usize, seed: u32) -> Vec<f32> {
        (0..len).map(|i| ((i as u32).wrapping_mul(2_654_435_761) ^ seed) as f32 / u32::MAX as f32 - 0.5).collect()
    }

    /// The kernel is exactly the chain it claims, at every tile edge (independent of any BLAS).
    #[test]
    fn kernel_follows_the_chain_bit_for_bit() {
        if !kernel::supported() {
            return;
        }
        for (m, k, n) in [(1, 5, 3), (4, 16, 16), (5, 7, 23), (9, 33, 40), (3, 1, 8), (8, 64, 64), (13, 9, 75), (17, 20, 32)] {
            let (x, b) = (values(m * k, 7), values(k * n, 11));
            for chain in [Chain::Fused, Chain::Separate] {
                let mut out = vec![f32::NAN; m * n];
                // SAFETY: sizes as the shapes say; the CPU supports the kernel.
                unsafe { kernel::gemm(chain, m, k, n, x.as_ptr(), b.as_ptr(), false, out.as_mut_ptr()) };
                let want = reference(chain, m, k, n, &x, &b);
                assert!(out.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{chain:?} {m}x{k}x{n}");
            }
            let mut packed = vec![0.0; k * n];
            let w: Vec<f32> = values(n * k, 3);
            // SAFETY: sizes as the shapes say.
            unsafe { kernel::transpose(w.as_ptr(), n, k, packed.as_mut_ptr()) };
            for j in 0..n {
                for p in 0..k {
                    assert_eq!(packed[p * n + j].to_bits(), w[j * k + p].to_bits());
                }
            }
        }
    }

    /// MKL's panels, element by element: each panel one FMA chain from `+0.0`, added to the
    /// output in turn (`start`: the output before, when accumulating).
    fn panels_reference(m: usize, k: usize, n: usize, panel: usize, x: &[f32], b: &[f32], start: Option<&[f32]>) -> Vec<f32> {
        let mut out: Vec<Option<f32>> = (0..m * n).map(|e| start.map(|s| s[e])).collect();
        for lo in (0..k).step_by(panel) {
            let len = (lo + panel).min(k) - lo;
            let part = reference(Chain::Fused, m, len, n, &columns(x, m, k, lo, panel), &b[lo * n..]);
            for (o, r) in out.iter_mut().zip(part) {
                *o = Some(o.map_or(r, |c| r + c));
            }
        }
        out.into_iter().map(|v| v.expect("k ≥ 1")).collect()
    }

    /// Columns `lo..lo+len` (clipped) of a row-major `m × k` matrix.
    fn columns(x: &[f32], m: usize, k: usize, lo: usize, len: usize) -> Vec<f32> {
        let hi = (lo + len).min(k);
        (0..m).flat_map(|i| x[i * k + lo..i * k + hi].to_vec()).collect()
    }

    /// Both several-row kernels follow the panels exactly, with and without accumulation, at
    /// every tile and vector edge (`x @ w` and `F.linear`'s row-vectorised kernel).
    #[test]
    fn panel_kernels_follow_the_panels_bit_for_bit() {
        if !kernel::supported() {
            return;
        }
        for (m, k, n) in [(4, 200, 16), (5, 256, 23), (8, 385, 40), (13, 1000, 17), (17, 256, 64), (32, 300, 33), (9, 64, 12), (24, 7, 5)] {
            let panel = panel_len(k);
            let (x, w) = (values(m * k, 7), values(n * k, 3));
            let mut b = vec![0.0; k * n];
            // SAFETY: sizes as the shapes say.
            unsafe { kernel::transpose(w.as_ptr(), n, k, b.as_mut_ptr()) };
            let start = values(m * n, 5);
            for accumulate in [false, true] {
                let want = panels_reference(m, k, n, panel, &x, &b, accumulate.then_some(&start[..]));
                let mut by_columns = start.clone();
                let mut by_rows = start.clone();
                let (mut xt, mut ot) = (Vec::new(), Vec::new());
                // SAFETY: sizes as the shapes say; m ≤ 32; the CPU supports the kernels.
                unsafe {
                    gemm_in_panels(Chain::Fused, m, k, n, panel, x.as_ptr(), b.as_ptr(), accumulate, by_columns.as_mut_ptr());
                    kernel::linear_rows(m, k, n, panel, x.as_ptr(), w.as_ptr(), accumulate, by_rows.as_mut_ptr(), n, &mut xt, &mut ot);
                }
                let same = |got: &[f32]| got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same(&by_columns), "x @ w {m}x{k}x{n} accumulate={accumulate}");
                assert!(same(&by_rows), "linear rows {m}x{k}x{n} accumulate={accumulate}");
            }
        }
        assert_eq!((panel_len(192), panel_len(256), panel_len(383), panel_len(384), panel_len(1000)), (192, 128, 192, 192, 192));
        // Two row groups, and the columns computed as the thread parts do (each part its own
        // block of columns, rows `n` apart).
        for (m, k, n) in [(40, 256, 37), (64, 200, 20), (33, 9, 8)] {
            let panel = panel_len(k);
            let (x, w) = (values(m * k, 1), values(n * k, 2));
            let mut b = vec![0.0; k * n];
            // SAFETY: sizes as the shapes say.
            unsafe { kernel::transpose(w.as_ptr(), n, k, b.as_mut_ptr()) };
            let want = panels_reference(m, k, n, panel, &x, &b, None);
            let mut whole = vec![f32::NAN; m * n];
            let mut parts = vec![f32::NAN; m * n];
            let (mut xt, mut ot) = (Vec::new(), Vec::new());
            // SAFETY: sizes as the shapes say; parts of 8 columns and groups of ≤ 32 rows.
            unsafe {
                linear_by_rows(m, k, n, panel, x.as_ptr(), w.as_ptr(), false, whole.as_mut_ptr());
                let group = 8 * LINEAR_ROW_VECTORS;
                for first in (0..m).step_by(group) {
                    for column in (0..n).step_by(COLUMNS_PER_PART) {
                        let (rows, columns) = (group.min(m - first), COLUMNS_PER_PART.min(n - column));
                        let out = parts.as_mut_ptr().add(first * n + column);
                        kernel::linear_rows(rows, k, columns, panel, x.as_ptr().add(first * k), w.as_ptr().add(column * k), false, out, n, &mut xt, &mut ot);
                    }
                }
            }
            for (got, what) in [(&whole, "linear_by_rows"), (&parts, "column parts")] {
                assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{what} {m}x{k}x{n}");
            }
        }
    }

    /// The one-row linear kernel is exactly the four-lane dot it claims.
    #[test]
    fn dot4_follows_its_lanes_bit_for_bit() {
        if !kernel::supported() {
            return;
        }
        for (k, n) in [(4usize, 3usize), (8, 9), (32, 32), (128, 64), (36, 17), (1, 9), (3, 8), (5, 9), (170, 17), (683, 8)] {
            let x: Vec<f32> = (0..k).map(|i| ((i * 7919) % 97) as f32 / 13.0 - 3.7).collect();
            let w: Vec<f32> = (0..n * k).map(|i| ((i * 104_729) % 89) as f32 / 11.0 - 4.1).collect();
            let mut out = vec![0.5f32; n];
            // SAFETY: sizes as the shapes say; the CPU supports the kernel.
            unsafe { kernel::dot4(k, n, x.as_ptr(), w.as_ptr(), true, out.as_mut_ptr()) };
            let head = if k % 4 == 0 { 4.min(k) } else { k % 4 };
            for j in 0..n {
                let row = &w[j * k..(j + 1) * k];
                let mut lanes = [x[0] * row[0], 0.0, 0.0, 0.0];
                for p in 1..head {
                    lanes[0] = lanes[0] + x[p] * row[p];
                }
                for p in head..k {
                    lanes[(p - head) % 4] = lanes[(p - head) % 4] + x[p] * row[p];
                }
                let want = ((lanes[0] + lanes[2]) + (lanes[1] + lanes[3])) + 0.5;
                assert_eq!(out[j].to_bits(), want.to_bits(), "k={k} n={n} j={j}");
            }
        }
    }

    #[test]
    fn shapes_outside_the_measured_domain_are_not_taken() {
        assert_eq!(chain_for(Layout::Linear, 1, 30, 32, true), Some(Chain::Dot4));
        assert_eq!(chain_for(Layout::Linear, 1, 32, 32, true), Some(Chain::Dot4));
        assert_eq!(chain_for(Layout::Linear, 1, 1024, 512, true), None);
        assert_eq!(chain_for(Layout::Matmul, 2, 32, 32, false), None);
        assert_eq!(chain_for(Layout::Matmul, 8, 256, 64, false), Some(Chain::Fused));
        assert_eq!(chain_for(Layout::Matmul, 8, 256, 1024, false), None);
        assert_eq!(chain_for(Layout::Linear, 8, 256, 1024, true), Some(Chain::Fused));
        assert_eq!(chain_for(Layout::Linear, 64, 256, 1024, true), Some(Chain::Fused));
        assert_eq!(chain_for(Layout::Linear, 65, 256, 1024, true), None);
        assert_eq!(chain_for(Layout::Linear, 3, 256, 1024, true), None);
        assert_eq!(chain_for(Layout::Matmul, 8, 64, 8, false), None);
        assert_eq!(chain_for(Layout::Matmul, 256, 256, 128, false), None);
        assert_eq!(chain_for(Layout::Matmul, 64, 128, 128, false), Some(Chain::Fused));
        assert_eq!(chain_for(Layout::Matmul, 64, 128, 129, false), None);
        assert_eq!(chain_for(Layout::Linear, 64, 128, 64, false), Some(Chain::Fused));
        assert_eq!(chain_for(Layout::Linear, 64, 128, 65, false), Some(Chain::Fused));
        assert_eq!(chain_for(Layout::Linear, 65, 128, 65, false), None);
        assert_eq!(chain_for(Layout::Linear, 64, 4096, 4096, false), None);
        assert_eq!(chain_for(Layout::Matmul, 1, 32, 32, false), Some(Chain::Separate));
        assert_eq!(chain_for(Layout::Linear, 8, 64, 64, true), Some(Chain::Fused));
    }
}
