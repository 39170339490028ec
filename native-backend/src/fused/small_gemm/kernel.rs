//! The x86-64 kernel (AVX2 + FMA; for the FMA chain, column blocks of 32 on AVX-512F where
//! the CPU has it): 4 rows × 16 columns of accumulators per tile, one chain per output
//! element, in `p` order.
//! Elsewhere `small_gemm` compiles a stub whose `supported()` is false.

use std::arch::x86_64::*;

use super::{Chain, LINEAR_ROW_VECTORS};

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

/// `out[j] = dot4(x, w[j]) [+ out[j]]` for `w` row-major `n × k`: the four-lane dot product
/// of MKL's transposed gemv (module docs), 128-bit lanes per row, eight rows at a time so that
/// their add chains overlap.
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

/// How many products the four-lane dot sums into lane 0 before the lanes run: `k mod 4`, or
/// four when `k` is a multiple of 4 (so the lanes then take whole groups of four).
fn head_len(k: usize) -> usize {
    match k % 4 {
        0 => 4.min(k),
        rest => rest,
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
            // The head's products, in order, into lane 0 (the other lanes start at +0);
            // the chain starts from the first product itself (a `-0.0` product stays `-0.0`).
            let mut head = *x * *row;
            for p in 1..head_len(k) {
                head += *x.add(p) * *row.add(p);
            }
            *lanes = _mm_set_ss(head);
        }
        let mut p = head_len(k);
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
    // SAFETY: the caller's guarantees, with the strides of dense matrices.
    unsafe { transpose_strided(src, rows, cols, cols, dst, rows) }
}

/// `dst[c·dst_stride + r] = src[r·src_stride + c]` for `r < rows`, `c < cols`.
///
/// # Safety
/// Both matrices hold what their strides say (`src_stride ≥ cols`, `dst_stride ≥ rows`), not
/// overlapping; the CPU has AVX2.
#[target_feature(enable = "avx2,fma")]
unsafe fn transpose_strided(src: *const f32, rows: usize, cols: usize, src_stride: usize, dst: *mut f32, dst_stride: usize) {
    let (full_rows, full_cols) = (rows / 8 * 8, cols / 8 * 8);
    for r in (0..full_rows).step_by(8) {
        for c in (0..full_cols).step_by(8) {
            // SAFETY: an 8×8 block inside both matrices.
            unsafe { block8(src.add(r * src_stride + c), src_stride, dst.add(c * dst_stride + r), dst_stride) };
        }
    }
    // The edges (at most 7 rows or columns) one element at a time.
    for r in 0..rows {
        let start = if r < full_rows { full_cols } else { 0 };
        for c in start..cols {
            // SAFETY: in bounds of both matrices.
            unsafe { *dst.add(c * dst_stride + r) = *src.add(r * src_stride + c) };
        }
    }
}

/// How far ahead (in elements) [`linear_rows`] prefetches each row of `w`.
const PREFETCH_AHEAD: usize = 64;

/// `out (m×n) = x (m×k) · wᵀ [+ out]` for row-major `w (n×k)` (`F.linear`'s product), `k` cut
/// into panels of `panel`: each element is one FMA chain per panel from `+0.0`, each panel's
/// result added to the output in turn (the first one stored when not `accumulate`).
///
/// Why this shape of kernel: `w` is read as it lies, one broadcast per element and each element
/// once — a weight too large to transpose per call (the other kernel's way) costs nothing extra
/// — while the rows of `x` fill the vector lanes (`x` is small: few rows). `xt` and `ot` are
/// scratch: `x` transposed and the output transposed, rows padded to whole vectors.
///
/// `out` is the top-left corner of the `m × n` block written, its rows `ldo` apart (a part of
/// the output's columns, when the columns are split over threads).
///
/// # Safety
/// `x` holds `m·k` f32s, `w` holds `n·k`, `out` holds `m` rows of `n` f32s `ldo ≥ n` apart and
/// overlaps neither; `1 ≤ m ≤ 8·LINEAR_ROW_VECTORS`, `panel ≥ 1`; the CPU has AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub unsafe fn linear_rows(m: usize, k: usize, n: usize, panel: usize, x: *const f32, w: *const f32, accumulate: bool, out: *mut f32, ldo: usize, xt: &mut Vec<f32>, ot: &mut Vec<f32>) {
    debug_assert!((1..=8 * LINEAR_ROW_VECTORS).contains(&m), "linear_rows takes 1..=32 rows, got {m}");
    let vectors = m.div_ceil(8);
    let mp = vectors * 8;
    xt.clear();
    xt.resize(k * mp, 0.0);
    ot.clear();
    ot.resize(n * mp, 0.0);
    // SAFETY (all): the scratch buffers were just sized for the padded shapes; the rest is the
    // caller's guarantees.
    unsafe {
        transpose_strided(x, m, k, k, xt.as_mut_ptr(), mp);
        if accumulate {
            transpose_strided(out, m, n, ldo, ot.as_mut_ptr(), mp);
        }
        let (xt, ot) = (xt.as_ptr(), ot.as_mut_ptr());
        if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vl") {
            rows_tiles_32_registers(vectors, k, n, mp, panel, xt, w, accumulate, ot);
        } else {
            match vectors {
                1 => rows_tiles::<1, 8>(k, n, mp, panel, xt, w, accumulate, ot),
                2 => rows_tiles::<2, 6>(k, n, mp, panel, xt, w, accumulate, ot),
                3 => rows_tiles::<3, 3>(k, n, mp, panel, xt, w, accumulate, ot),
                _ => rows_tiles::<4, 2>(k, n, mp, panel, xt, w, accumulate, ot),
            }
        }
        transpose_strided(ot, n, m, mp, out, ldo);
    }
}

/// [`rows_tiles`] compiled where AVX-512VL gives 32 vector registers (the same 8-lane
/// instructions, so the same bits): taller tiles, fewer passes over `xt`. At most 8 rows of `w`
/// per tile: 12 rows `4 KiB` apart (`k = 1024`) share one set of an 8-way L1 and evict each other.
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn rows_tiles_32_registers(vectors: usize, k: usize, n: usize, mp: usize, panel: usize, xt: *const f32, w: *const f32, accumulate: bool, ot: *mut f32) {
    // SAFETY: forwarded from `linear_rows`.
    unsafe {
        match vectors {
            1 => rows_tiles::<1, 8>(k, n, mp, panel, xt, w, accumulate, ot),
            2 => rows_tiles::<2, 8>(k, n, mp, panel, xt, w, accumulate, ot),
            3 => rows_tiles::<3, 8>(k, n, mp, panel, xt, w, accumulate, ot),
            _ => rows_tiles::<4, 6>(k, n, mp, panel, xt, w, accumulate, ot),
        }
    }
}

/// `J` rows of `w` × `MV` vectors of rows of `x` per tile, writing `ot (n×mp)`, the output
/// transposed. Rows of `w` past `n` repeat the last one (computed, never stored).
#[target_feature(enable = "avx2,fma")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn rows_tiles<const MV: usize, const J: usize>(k: usize, n: usize, mp: usize, panel: usize, xt: *const f32, w: *const f32, accumulate: bool, ot: *mut f32) {
    for j0 in (0..n).step_by(J) {
        let mut rows = [w; J];
        for (jj, row) in rows.iter_mut().enumerate() {
            // SAFETY: row min(j0 + jj, n - 1) of w exists.
            *row = unsafe { w.add((j0 + jj).min(n - 1) * k) };
        }
        let live = J.min(n - j0);
        let mut lo = 0;
        let mut started = accumulate;
        while lo < k {
            let hi = k.min(lo + panel);
            let mut acc = [[_mm256_setzero_ps(); MV]; J];
            for p in lo..hi {
                if p % 16 == 0 {
                    for row in rows {
                        // The rows of `w` are J streams read 4 bytes a step: fetch each one's
                        // cache line a few lines ahead (the hardware prefetchers lose them).
                        _mm_prefetch::<_MM_HINT_T0>(row.wrapping_add(p + PREFETCH_AHEAD) as *const i8);
                    }
                }
                let mut xv = [_mm256_setzero_ps(); MV];
                for (v, lane) in xv.iter_mut().enumerate() {
                    // SAFETY: row p of xt has mp = 8·MV columns.
                    *lane = unsafe { _mm256_loadu_ps(xt.add(p * mp + v * 8)) };
                }
                for (jj, row) in acc.iter_mut().enumerate() {
                    // SAFETY: each row of w has k elements.
                    let a = _mm256_set1_ps(unsafe { *rows[jj].add(p) });
                    for (v, lane) in row.iter_mut().enumerate() {
                        *lane = _mm256_fmadd_ps(a, xv[v], *lane);
                    }
                }
            }
            for (jj, row) in acc.iter().enumerate().take(live) {
                for (v, lane) in row.iter().enumerate() {
                    // SAFETY: row j0 + jj < n of ot has mp columns.
                    unsafe {
                        let target = ot.add((j0 + jj) * mp + v * 8);
                        let value = if started { _mm256_add_ps(*lane, _mm256_loadu_ps(target)) } else { *lane };
                        _mm256_storeu_ps(target, value);
                    }
                }
            }
            started = true;
            lo = hi;
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
