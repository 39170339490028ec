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
//! - `x @ w` with one row (`m = 1`, MKL's gemv) is a chain of separately rounded products and
//!   sums: `acc = acc + x[p]·w[p,j]`;
//! - `F.linear(x, w)` with one row (MKL's transposed gemv, `k` a multiple of 4) is a dot
//!   product in four lanes: the first four products summed in order (from the first product,
//!   not from `+0.0`) into lane 0, then `lane[p mod 4] += x[p]·w[j,p]` (separate roundings),
//!   then `(l0 + l2) + (l1 + l3)`, added to the output (the bias, or `+0.0`).
//!
//! A kernel following the same chain (vectorised across `j`, never across `p`) returns the
//! same bits for every input, NaN, ±Inf and signed zeros included. Because another BLAS build,
//! CPU or thread count may choose other kernels, every shape is checked against the BLAS once
//! per thread before this kernel is used for it: random operands and signed-zero operands,
//! compared bit for bit; a shape that differs stays on the BLAS for the life of the process.

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
/// The longest chain measured to be unblocked in MKL (`k` is split into panels above it).
const MAX_K: usize = 192;

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
    // One-row `F.linear` reads `w` as it lies (no transposed copy), like `@`.
    let limit = match layout {
        Layout::Linear if m > 1 => MAX_LINEAR_WORK,
        _ => MAX_WORK,
    };
    if m == 0 || k == 0 || n == 0 || m.saturating_mul(k).saturating_mul(n) > limit {
        return None;
    }
    if layout == Layout::Matmul && m == 1 && !accumulate {
        return Some(Chain::Separate);
    }
    if layout == Layout::Linear && m == 1 && k.is_multiple_of(4) {
        return Some(Chain::Dot4);
    }
    (m >= 4 && n >= 16 && k <= MAX_K).then_some(Chain::Fused)
}

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
    /// The plan, or `None` when the BLAS must compute this shape. The BLAS must be available
    /// (`blas::available()`): unknown shapes are checked against it.
    pub fn for_shape(layout: Layout, m: usize, k: usize, n: usize, accumulate: bool) -> Option<Planned> {
        let chain = chain_for(layout, m, k, n, accumulate)?;
        let plan = Planned { layout, chain, m, k, n, accumulate };
        (kernel::supported() && verified(plan)).then_some(plan)
    }

    /// `out (m×n) = x (m×k) · w [+ out when accumulate]` in the BLAS's order (packing `w` to
    /// `k × n` first for a several-row [`Layout::Linear`]).
    ///
    /// # Safety
    /// `x` holds `m·k` f32s, `w` holds `k·n`, `out` holds `m·n` and overlaps neither input;
    /// [`kernel::supported`] is true (it is for every plan [`Planned::for_shape`] returns).
    pub unsafe fn run(&self, x: *const f32, w: *const f32, out: *mut f32) {
        let Planned { layout, chain, m, k, n, accumulate } = *self;
        match layout {
            // SAFETY (both): as documented on the function; `Dot4` means one row of F.linear.
            _ if chain == Chain::Dot4 => unsafe { kernel::dot4(k, n, x, w, accumulate, out) },
            Layout::Matmul => unsafe { kernel::gemm(chain, m, k, n, x, w, accumulate, out) },
            Layout::Linear => PACKED.with(|cell| {
                let mut packed = cell.borrow_mut();
                if packed.len() < k * n {
                    packed.resize(k * n, 0.0);
                }
                // SAFETY: `w` holds n·k f32s; `packed` holds at least k·n.
                unsafe {
                    kernel::transpose(w, n, k, packed.as_mut_ptr());
                    kernel::gemm(chain, m, k, n, x, packed.as_ptr(), accumulate, out);
                }
            }),
        }
    }
}

/// A plan and the torch thread count it was checked under (the BLAS may choose other kernels
/// for other counts).
type Key = (Planned, i32);

thread_local! {
    /// `wᵀ` for [`Layout::Linear`]: the kernel reads `w` one `k`-row at a time.
    static PACKED: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// Plans checked against the BLAS on this thread, and whether they matched.
    static VERIFIED: RefCell<HashMap<Key, bool>> = RefCell::new(HashMap::new());
    /// The last plan asked about and its answer.
    static LAST: Cell<Option<(Key, bool)>> = const { Cell::new(None) };
}

/// Whether `plan` gives the BLAS's bits on this thread, probing once per plan and thread count.
fn verified(plan: Planned) -> bool {
    let key = (plan, crate::facts::num_threads());
    // A layer loop asks about one shape many times in a row: answer that without hashing.
    if let Some((last, known)) = LAST.with(|cell| cell.get()) {
        if last == key {
            return known;
        }
    }
    let known = VERIFIED.with(|cache| cache.borrow().get(&key).copied());
    let matches = known.unwrap_or_else(|| {
        let matches = probe(plan);
        VERIFIED.with(|cache| cache.borrow_mut().insert(key, matches));
        matches
    });
    LAST.with(|cell| cell.set(Some((key, matches))));
    matches
}

/// Whether the kernel and the BLAS give the same bits for `plan`'s shape on random operands
/// and on operands made of signed zeros (which tell where the chain starts).
fn probe(plan: Planned) -> bool {
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
    let x_random = random(m * k, false);
    let w_random = random(k * n, false);
    let out_random = random(m * n, false);
    let x_zeros = random(m * k, true);
    let out_zeros = random(m * n, true);
    let negative: Vec<f32> = w_random.iter().map(|v| -v.abs()).collect();
    let positive: Vec<f32> = w_random.iter().map(|v| v.abs()).collect();
    let x_negative_zeros = vec![-0.0f32; m * k];
    let out_negative_zeros = vec![-0.0f32; m * n];
    // Random operands tell the summation order; zeros tell where each chain starts and how
    // the output is combined (every product `-0.0`, into a `-0.0` or a random output).
    let cases: [(&[f32], &[f32], &[f32]); 5] = [
        (&x_random, &w_random, &out_random),
        (&x_zeros, &negative, &out_zeros),
        (&x_zeros, &w_random, &out_random),
        (&x_negative_zeros, &positive, &out_negative_zeros),
        (&x_negative_zeros, &positive, &out_random),
    ];
    cases.iter().all(|(x, w, start)| {
        let mut ours = start.to_vec();
        let mut blas = start.to_vec();
        // SAFETY: every buffer has the size its shape needs; the CPU check was done by the
        // caller of `verified`; the BLAS is available (precondition of `for_shape`).
        unsafe {
            plan.run(x.as_ptr(), w.as_ptr(), ours.as_mut_ptr());
            super::blas::sgemm_into(layout, m, k, n, x.as_ptr(), w.as_ptr(), accumulate, blas.as_mut_ptr());
        }
        ours.iter().zip(&blas).all(|(a, b)| a.to_bits() == b.to_bits())
    })
}

#[cfg(target_arch = "x86_64")]
mod kernel {
    //! The AVX2 + FMA kernel: 4 rows × 16 columns of accumulators per tile, one chain per
    //! output element, in `p` order.
    use std::arch::x86_64::*;

    use super::Chain;

    pub fn supported() -> bool {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }

    /// `out = x · b [+ out]` for row-major `x (m×k)`, `b (k×n)`, `out (m×n)`.
    ///
    /// # Safety
    /// The buffers hold what the shapes say, `out` overlaps neither input, and the CPU has
    /// AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn gemm(chain: Chain, m: usize, k: usize, n: usize, x: *const f32, b: *const f32, accumulate: bool, out: *mut f32) {
        // Columns in blocks of 32 on AVX-512 where the CPU has it (16 accumulators hide the
        // FMA latency better than AVX2's 8), the rest with AVX2; the chain per element is the
        // same either way.
        let wide = if chain == Chain::Fused && is_x86_feature_detected!("avx512f") { n / 32 * 32 } else { 0 };
        if wide > 0 {
            // SAFETY: the CPU has AVX-512F; the caller's guarantees cover columns 0..wide.
            unsafe { gemm512(m, k, n, wide, x, b, accumulate, out) };
        }
        let mut i = 0;
        while i < m {
            let rows = (m - i).min(4);
            let mut j = wide;
            // SAFETY (all calls): row `i`, column `j` and the tile sizes stay inside the shapes.
            unsafe {
                while j + 16 <= n {
                    tile_rows::<2>(chain, rows, k, n, x.add(i * k), b.add(j), accumulate, out.add(i * n + j));
                    j += 16;
                }
                if j + 8 <= n {
                    tile_rows::<1>(chain, rows, k, n, x.add(i * k), b.add(j), accumulate, out.add(i * n + j));
                    j += 8;
                }
                for row in i..i + rows {
                    for col in j..n {
                        scalar(chain, k, n, x.add(row * k), b.add(col), accumulate, out.add(row * n + col));
                    }
                }
            }
            i += rows;
        }
    }

    /// `out[j] = dot4(x, w[j]) [+ out[j]]` for `w` row-major `n × k`, `k` a multiple of 4: the
    /// four-lane dot product of MKL's transposed gemv (module docs), 128-bit lanes per row,
    /// eight rows at a time so that their add chains overlap.
    ///
    /// # Safety
    /// `x` holds `k` f32s, `w` holds `n·k`, `out` holds `n`; the CPU has AVX2.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn dot4(k: usize, n: usize, x: *const f32, w: *const f32, accumulate: bool, out: *mut f32) {
        let mut j = 0;
        // SAFETY (all): rows j..j+R of w and entries j..j+R of out exist.
        unsafe {
            while j + 8 <= n {
                dot4_rows::<8>(k, x, w.add(j * k), accumulate, out.add(j));
                j += 8;
            }
            while j < n {
                dot4_rows::<1>(k, x, w.add(j * k), accumulate, out.add(j));
                j += 1;
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn dot4_rows<const R: usize>(k: usize, x: *const f32, w: *const f32, accumulate: bool, out: *mut f32) {
        // SAFETY: k elements of x and of each of the R rows of w; R entries of out.
        unsafe {
            let mut acc = [_mm_setzero_ps(); R];
            for (r, lanes) in acc.iter_mut().enumerate() {
                let row = w.add(r * k);
                // The first four products, in order, into lane 0 (the other lanes start at +0);
                // the chain starts from the first product itself (a `-0.0` product stays `-0.0`).
                let mut head = *x * *row;
                for p in 1..4.min(k) {
                    head += *x.add(p) * *row.add(p);
                }
                *lanes = _mm_set_ss(head);
            }
            let mut p = 4;
            while p + 4 <= k {
                let xv = _mm_loadu_ps(x.add(p));
                for (r, lanes) in acc.iter_mut().enumerate() {
                    *lanes = _mm_add_ps(*lanes, _mm_mul_ps(xv, _mm_loadu_ps(w.add(r * k + p))));
                }
                p += 4;
            }
            for (r, lanes) in acc.iter().enumerate() {
                // (l0 + l2, l1 + l3), then their sum.
                let pairs = _mm_add_ps(*lanes, _mm_movehl_ps(*lanes, *lanes));
                let total = _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps::<0b01>(pairs, pairs)));
                let target = out.add(r);
                // Written into the output as `out + dot`, the output being the bias or `+0.0`.
                *target = if accumulate { total + *target } else { 0.0 + total };
            }
        }
    }

    /// Columns `0..cols` (a multiple of 32) of `out = x · b [+ out]`, 8 rows × 32 columns per tile.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm512(m: usize, k: usize, n: usize, cols: usize, x: *const f32, b: *const f32, accumulate: bool, out: *mut f32) {
        let mut i = 0;
        while i < m {
            let rows = (m - i).min(8);
            for j in (0..cols).step_by(32) {
                let (x, b, out) = (x.wrapping_add(i * k), b.wrapping_add(j), out.wrapping_add(i * n + j));
                // SAFETY: rows i..i+rows and columns j..j+32 are inside the shapes.
                unsafe {
                    match rows {
                        8 => tile512::<8>(k, n, x, b, accumulate, out),
                        7 => tile512::<7>(k, n, x, b, accumulate, out),
                        6 => tile512::<6>(k, n, x, b, accumulate, out),
                        5 => tile512::<5>(k, n, x, b, accumulate, out),
                        4 => tile512::<4>(k, n, x, b, accumulate, out),
                        3 => tile512::<3>(k, n, x, b, accumulate, out),
                        2 => tile512::<2>(k, n, x, b, accumulate, out),
                        _ => tile512::<1>(k, n, x, b, accumulate, out),
                    }
                }
            }
            i += rows;
        }
    }

    /// `MR` rows × 32 columns, one FMA chain over `p` per element (as [`tile`]).
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn tile512<const MR: usize>(k: usize, n: usize, x: *const f32, b: *const f32, accumulate: bool, out: *mut f32) {
        let mut acc = [[_mm512_setzero_ps(); 2]; MR];
        for p in 0..k {
            // SAFETY: row p of b has 32 columns from here; row r of x has k elements.
            unsafe {
                let b0 = _mm512_loadu_ps(b.add(p * n));
                let b1 = _mm512_loadu_ps(b.add(p * n + 16));
                for (r, row) in acc.iter_mut().enumerate() {
                    let a = _mm512_set1_ps(*x.add(r * k + p));
                    row[0] = _mm512_fmadd_ps(a, b0, row[0]);
                    row[1] = _mm512_fmadd_ps(a, b1, row[1]);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            for (v, lane) in row.iter().enumerate() {
                // SAFETY: row r of out has 32 columns from here.
                unsafe {
                    let target = out.add(r * n + v * 16);
                    let value = if accumulate { _mm512_add_ps(*lane, _mm512_loadu_ps(target)) } else { *lane };
                    _mm512_storeu_ps(target, value);
                }
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile_rows<const NV: usize>(chain: Chain, rows: usize, k: usize, n: usize, x: *const f32, b: *const f32, accumulate: bool, out: *mut f32) {
        // SAFETY: forwarded; `rows` ≤ 4 rows of x and out exist from these pointers.
        unsafe {
            match (chain, rows) {
                (Chain::Fused, 4) => tile::<4, NV, true>(k, n, x, b, accumulate, out),
                (Chain::Fused, 3) => tile::<3, NV, true>(k, n, x, b, accumulate, out),
                (Chain::Fused, 2) => tile::<2, NV, true>(k, n, x, b, accumulate, out),
                (Chain::Fused, _) => tile::<1, NV, true>(k, n, x, b, accumulate, out),
                (Chain::Separate, 4) => tile::<4, NV, false>(k, n, x, b, accumulate, out),
                (Chain::Separate, 3) => tile::<3, NV, false>(k, n, x, b, accumulate, out),
                (Chain::Separate, 2) => tile::<2, NV, false>(k, n, x, b, accumulate, out),
                (Chain::Separate | Chain::Dot4, _) => tile::<1, NV, false>(k, n, x, b, accumulate, out),
            }
        }
    }

    /// `MR` rows × `NV`·8 columns: every accumulator runs its own chain over `p`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn tile<const MR: usize, const NV: usize, const FUSED: bool>(k: usize, n: usize, x: *const f32, b: *const f32, accumulate: bool, out: *mut f32) {
        let mut acc = [[_mm256_setzero_ps(); NV]; MR];
        for p in 0..k {
            let mut bv = [_mm256_setzero_ps(); NV];
            for (v, lane) in bv.iter_mut().enumerate() {
                // SAFETY: row p of b has 8·NV columns from here.
                *lane = unsafe { _mm256_loadu_ps(b.add(p * n + v * 8)) };
            }
            for (r, row) in acc.iter_mut().enumerate() {
                // SAFETY: row r of x has k elements.
                let a = _mm256_set1_ps(unsafe { *x.add(r * k + p) });
                for (v, lane) in row.iter_mut().enumerate() {
                    *lane = if FUSED { _mm256_fmadd_ps(a, bv[v], *lane) } else { _mm256_add_ps(*lane, _mm256_mul_ps(a, bv[v])) };
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            for (v, lane) in row.iter().enumerate() {
                // SAFETY: row r of out has 8·NV columns from here.
                unsafe {
                    let target = out.add(r * n + v * 8);
                    let value = if accumulate { _mm256_add_ps(*lane, _mm256_loadu_ps(target)) } else { *lane };
                    _mm256_storeu_ps(target, value);
                }
            }
        }
    }

    /// One output element (the column tail narrower than 8).
    #[target_feature(enable = "avx2,fma")]
    unsafe fn scalar(chain: Chain, k: usize, n: usize, x: *const f32, b: *const f32, accumulate: bool, out: *mut f32) {
        let mut acc = 0.0f32;
        for p in 0..k {
            // SAFETY: x has k elements; column b[.., j] has k rows of stride n.
            let (a, w) = unsafe { (*x.add(p), *b.add(p * n)) };
            acc = match chain {
                Chain::Fused => a.mul_add(w, acc),
                Chain::Separate | Chain::Dot4 => acc + a * w,
            };
        }
        // SAFETY: `out` is one element.
        unsafe { *out = if accumulate { acc + *out } else { acc } };
    }

    /// `dst (cols×rows) = srcᵀ` for row-major `src (rows×cols)`, in 8×8 register blocks.
    ///
    /// # Safety
    /// `src` holds `rows·cols` f32s, `dst` as many, not overlapping; the CPU has AVX2.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn transpose(src: *const f32, rows: usize, cols: usize, dst: *mut f32) {
        let (full_rows, full_cols) = (rows / 8 * 8, cols / 8 * 8);
        for r in (0..full_rows).step_by(8) {
            for c in (0..full_cols).step_by(8) {
                // SAFETY: an 8×8 block inside both matrices.
                unsafe { block8(src.add(r * cols + c), cols, dst.add(c * rows + r), rows) };
            }
        }
        // The edges (at most 7 rows or columns) one element at a time.
        for r in 0..rows {
            let start = if r < full_rows { full_cols } else { 0 };
            for c in start..cols {
                // SAFETY: in bounds of both matrices.
                unsafe { *dst.add(c * rows + r) = *src.add(r * cols + c) };
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn block8(src: *const f32, src_stride: usize, dst: *mut f32, dst_stride: usize) {
        // SAFETY: 8 rows of 8 f32s from each pointer (caller).
        unsafe {
            let r: [__m256; 8] = std::array::from_fn(|i| _mm256_loadu_ps(src.add(i * src_stride)));
            let t0 = _mm256_unpacklo_ps(r[0], r[1]);
            let t1 = _mm256_unpackhi_ps(r[0], r[1]);
            let t2 = _mm256_unpacklo_ps(r[2], r[3]);
            let t3 = _mm256_unpackhi_ps(r[2], r[3]);
            let t4 = _mm256_unpacklo_ps(r[4], r[5]);
            let t5 = _mm256_unpackhi_ps(r[4], r[5]);
            let t6 = _mm256_unpacklo_ps(r[6], r[7]);
            let t7 = _mm256_unpackhi_ps(r[6], r[7]);
            let s0 = _mm256_shuffle_ps::<0x44>(t0, t2);
            let s1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
            let s2 = _mm256_shuffle_ps::<0x44>(t1, t3);
            let s3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
            let s4 = _mm256_shuffle_ps::<0x44>(t4, t6);
            let s5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
            let s6 = _mm256_shuffle_ps::<0x44>(t5, t7);
            let s7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
            let out = [
                _mm256_permute2f128_ps::<0x20>(s0, s4),
                _mm256_permute2f128_ps::<0x20>(s1, s5),
                _mm256_permute2f128_ps::<0x20>(s2, s6),
                _mm256_permute2f128_ps::<0x20>(s3, s7),
                _mm256_permute2f128_ps::<0x31>(s0, s4),
                _mm256_permute2f128_ps::<0x31>(s1, s5),
                _mm256_permute2f128_ps::<0x31>(s2, s6),
                _mm256_permute2f128_ps::<0x31>(s3, s7),
            ];
            for (i, row) in out.iter().enumerate() {
                _mm256_storeu_ps(dst.add(i * dst_stride), *row);
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod kernel {
    use super::Chain;

    pub fn supported() -> bool {
        false
    }
    pub unsafe fn gemm(_: Chain, _: usize, _: usize, _: usize, _: *const f32, _: *const f32, _: bool, _: *mut f32) {
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

    /// The kernel is exactly the chain it claims, at every tile edge (independent of any BLAS).
    #[test]
    fn kernel_follows_the_chain_bit_for_bit() {
        if !kernel::supported() {
            return;
        }
        let values = |len: usize, seed: u32| -> Vec<f32> {
            (0..len).map(|i| ((i as u32).wrapping_mul(2_654_435_761) ^ seed) as f32 / u32::MAX as f32 - 0.5).collect()
        };
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

    /// The one-row linear kernel is exactly the four-lane dot it claims.
    #[test]
    fn dot4_follows_its_lanes_bit_for_bit() {
        if !kernel::supported() {
            return;
        }
        for (k, n) in [(4usize, 3usize), (8, 9), (32, 32), (128, 64), (36, 17)] {
            let x: Vec<f32> = (0..k).map(|i| ((i * 7919) % 97) as f32 / 13.0 - 3.7).collect();
            let w: Vec<f32> = (0..n * k).map(|i| ((i * 104_729) % 89) as f32 / 11.0 - 4.1).collect();
            let mut out = vec![0.5f32; n];
            // SAFETY: sizes as the shapes say; the CPU supports the kernel.
            unsafe { kernel::dot4(k, n, x.as_ptr(), w.as_ptr(), true, out.as_mut_ptr()) };
            for j in 0..n {
                let row = &w[j * k..(j + 1) * k];
                let mut lanes = [x[0] * row[0], 0.0, 0.0, 0.0];
                for p in 1..4 {
                    lanes[0] = lanes[0] + x[p] * row[p];
                }
                for p in 4..k {
                    lanes[p % 4] = lanes[p % 4] + x[p] * row[p];
                }
                let want = ((lanes[0] + lanes[2]) + (lanes[1] + lanes[3])) + 0.5;
                assert_eq!(out[j].to_bits(), want.to_bits(), "k={k} n={n} j={j}");
            }
        }
    }

    #[test]
    fn shapes_outside_the_measured_domain_are_not_taken() {
        assert_eq!(chain_for(Layout::Linear, 1, 30, 32, true), None);
        assert_eq!(chain_for(Layout::Linear, 1, 32, 32, true), Some(Chain::Dot4));
        assert_eq!(chain_for(Layout::Matmul, 2, 32, 32, false), None);
        assert_eq!(chain_for(Layout::Matmul, 8, 256, 64, false), None);
        assert_eq!(chain_for(Layout::Matmul, 8, 64, 8, false), None);
        assert_eq!(chain_for(Layout::Matmul, 256, 256, 128, false), None);
        assert_eq!(chain_for(Layout::Matmul, 64, 128, 128, false), Some(Chain::Fused));
        assert_eq!(chain_for(Layout::Matmul, 64, 128, 129, false), None);
        assert_eq!(chain_for(Layout::Linear, 64, 128, 64, false), Some(Chain::Fused));
        assert_eq!(chain_for(Layout::Linear, 64, 128, 65, false), None);
        assert_eq!(chain_for(Layout::Matmul, 1, 32, 32, false), Some(Chain::Separate));
        assert_eq!(chain_for(Layout::Linear, 8, 64, 64, true), Some(Chain::Fused));
    }
}
