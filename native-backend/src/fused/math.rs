//! Element functions of the fused kernels, written to match torch's CPU kernels exactly on
//! special values (NaN, ±Inf, signed zeros) and within a few ulp elsewhere.
//!
//! The loops over slices are plain branch-free Rust so that LLVM vectorises them; on x86-64
//! they are compiled a second time with AVX2 and FMA enabled and chosen at run time. Rust never
//! contracts `a * b + c`, and `mul_add` is exactly rounded everywhere (an instruction with FMA,
//! a library call without), so both versions give the same bits.
//!
//! Long on purpose: each element function sits next to its scalar reference, its slice loop
//! and its in-place form, so that the three cannot drift apart.

/// The element ops come from the op table (`torchlower-ops`): `Unary::ALL` indexes by
/// `op as usize`, `Div` is true division.
pub use torchlower_ops::{Binary, Unary};

/// `torch.relu`: `clamp_min(x, 0)`, which keeps `-0.0` and NaN as they are.
#[inline(always)]
pub fn relu(x: f32) -> f32 {
    if x < 0.0 {
        0.0
    } else {
        x
    }
}

/// `exp(x)` as torch's vectorised CPU kernels compute it inside sigmoid and SiLU (SLEEF's
/// `expf_u10`, which is what `Vectorized<float>::exp` calls): Cody–Waite reduction
/// `x = q·ln2 + s` with `q = rint(x·log2 e)`, a degree-6 polynomial in `s`, then `2^q` in two
/// normal steps so that subnormal results are not flushed. Every step is the same rounded
/// operation as SLEEF's (products and fused multiply-adds in the same order, with its
/// coefficients), so the bits are its bits; `calibrate` checks that against libtorch before
/// any kernel uses it. Branch-free so it vectorises.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    const ROUND: f32 = 12_582_912.0; // 1.5 * 2^23: adding it rounds to an integer (ties even)
    const OVERFLOW: f32 = 100.0; // above: +inf (from 88.73 on, the scaling overflows anyway)
    const UNDERFLOW: f32 = -104.0; // below: +0 (from -103.98 on, the scaling gives 0 anyway)
    // max/min (not clamp): a NaN becomes a finite number here; the result is chosen below.
    #[allow(clippy::manual_clamp)]
    let clamped = x.max(UNDERFLOW - 1.0).min(OVERFLOW + 1.0);
    let q = (clamped * LOG2E + ROUND) - ROUND;
    // Fused multiply-adds, exactly rounded in every build (an instruction with FMA, a library
    // call without), as SLEEF's FMA builds compute them.
    let s = q.mul_add(-LN2_LO, q.mul_add(-LN2_HI, clamped));
    let mut u = 1.985_276_2e-4_f32;
    u = u.mul_add(s, 1.393_043_6e-3);
    u = u.mul_add(s, 8.333_361e-3);
    u = u.mul_add(s, 4.166_648_5e-2);
    u = u.mul_add(s, 1.666_666_7e-1);
    u = u.mul_add(s, 0.5);
    let e_s = 1.0 + (s * s).mul_add(u, s);
    // 2^q as two normal powers of two (q ∈ [-151, 146]). `q` is integral and in range, so
    // the unchecked conversion is exact; it compiles to one vector instruction, where `as`
    // (saturating) is done lane by lane and made this loop several times slower.
    // SAFETY: `clamped` ∈ [-105, 101] (never NaN), so `q` is an integer of magnitude below 2^8.
    let q: i32 = unsafe { q.to_int_unchecked() };
    let half = q >> 1;
    let scale_a = f32::from_bits(((half + 127) as u32) << 23);
    let scale_b = f32::from_bits(((q - half + 127) as u32) << 23);
    let value = e_s * scale_a * scale_b;
    if x.is_nan() {
        x
    } else if x > OVERFLOW {
        f32::INFINITY
    } else if x < UNDERFLOW {
        0.0
    } else {
        value
    }
}

/// `torch.sigmoid`: `1 / (1 + exp(-x))`, as torch's vectorised CPU kernel computes it.
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

/// `F.silu`: `x / (1 + exp(-x))`, as torch's vectorised CPU kernel computes it.
#[inline(always)]
pub fn silu(x: f32) -> f32 {
    x / (1.0 + exp(-x))
}

/// `op` of one element as eager's scalar loop computes it — the loop that takes a tensor's
/// last `len mod 2·lanes` elements: libm's `expf` where the vectorised loop uses [`exp`].
pub fn unary_scalar_loop(op: Unary, x: f32) -> f32 {
    match op {
        Unary::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        Unary::Silu => x / (1.0 + (-x).exp()),
        other => unary(other, x),
    }
}

/// One unary op on one value.
#[inline(always)]
pub fn unary(op: Unary, x: f32) -> f32 {
    match op {
        Unary::Relu => relu(x),
        Unary::Sigmoid => sigmoid(x),
        Unary::Tanh => x.tanh(),
        Unary::Gelu => super::gelu::gelu(x),
        Unary::Abs => x.abs(),
        Unary::Neg => -x,
        Unary::Square => x * x,
        Unary::Exp => exp(x),
        Unary::Log => x.ln(),
        Unary::Sqrt => x.sqrt(),
        Unary::Silu => silu(x),
    }
}

/// `relu` over a slice. On x86-64 as `maxps(0, x)`, which has exactly relu's semantics (the
/// second operand wins for NaN and for a pair of zeros, so NaN and `-0.0` are kept): written
/// plainly, LLVM turns `relu` into a masked store, which is microcoded and several times
/// slower on AMD cores.
#[inline(always)]
fn relu_in_place(values: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_max_ps, _mm_setzero_ps, _mm_storeu_ps};
        let mut chunks = values.chunks_exact_mut(4);
        for chunk in &mut chunks {
            // SAFETY: SSE is part of x86-64; the chunk holds 4 f32s.
            unsafe { _mm_storeu_ps(chunk.as_mut_ptr(), _mm_max_ps(_mm_setzero_ps(), _mm_loadu_ps(chunk.as_ptr()))) };
        }
        chunks.into_remainder().iter_mut().for_each(|v| *v = relu(*v));
    }
    #[cfg(not(target_arch = "x86_64"))]
    values.iter_mut().for_each(|v| *v = relu(*v));
}

/// `dst[i] = relu(src[i])`: every element is stored, so the plain select vectorises to a
/// compare and blend at the build's full vector width (unlike the in-place form).
#[inline(always)]
fn relu_into(src: &[f32], dst: &mut [f32]) {
    dst.iter_mut().zip(src).for_each(|(d, s)| *d = relu(*s));
}

/// Whether this CPU runs the AVX-512 builds (AVX-512F and VL, with AVX2 and FMA): the width
/// libtorch's own kernels use there, so ours keep pace on compute-bound ops.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(super) fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
}

/// Expands to a safe dispatcher `$name` that runs `$body` compiled with AVX-512 or AVX2 where
/// the CPU has them, and the baseline build otherwise. Every build computes the same bits
/// (no contraction, `mul_add` exactly rounded everywhere); only the vector width differs.
macro_rules! multiversion {
    ($(#[$meta:meta])* fn $name:ident($($arg:ident: $ty:ty),*) $body:block) => {
        $(#[$meta])*
        pub fn $name($($arg: $ty),*) {
            #[inline(always)]
            fn generic($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
                unsafe fn avx512($($arg: $ty),*) { generic($($arg),*) }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2($($arg: $ty),*) { generic($($arg),*) }
                if has_avx512() {
                    // SAFETY: the CPU supports AVX-512F/VL, AVX2 and FMA (checked just above).
                    return unsafe { avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    return unsafe { avx2($($arg),*) };
                }
            }
            generic($($arg),*)
        }
    };
}
/// For the other kernels of `fused` (a caller imports [`has_avx512`] beside it).
pub(super) use multiversion;

/// Whether [`unary_in_place`] runs `op` as a vectorised loop at least as fast as libtorch's
/// kernel on this CPU. Tanh and log call a scalar function per element. Exp, sigmoid, SiLU
/// and sqrt are compute-bound: on AVX-512 CPUs libtorch's 16-lane kernels (SLEEF) run them
/// about twice as fast as our polynomial (measured: `tests/kernel_timing.rs`), so there they
/// are libtorch's; on AVX2 CPUs ours keep pace and fuse where `calibrate::agrees` finds them
/// bit-identical to libtorch's.
pub fn vectorised(op: Unary) -> bool {
    match op {
        Unary::Relu | Unary::Square | Unary::Neg | Unary::Abs => true,
        Unary::Sigmoid | Unary::Silu | Unary::Exp | Unary::Sqrt => !avx512_cpu(),
        // oneDNN's AVX-512 polynomial, vectorised (`fused::gelu`); other CPUs run libtorch
        Unary::Gelu => avx512_cpu(),
        Unary::Tanh | Unary::Log => false,
    }
}

/// Whether this CPU runs the AVX-512 builds (see [`has_avx512`]); false off x86-64.
pub fn avx512_cpu() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        has_avx512()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

multiversion! {
    /// Applies `op` to every element of `values`, in place.
    fn unary_in_place(op: Unary, values: &mut [f32]) {
        match op {
            Unary::Relu => relu_in_place(values),
            Unary::Gelu => super::gelu::in_place(values),
            Unary::Sigmoid => values.iter_mut().for_each(|v| *v = sigmoid(*v)),
            Unary::Silu => values.iter_mut().for_each(|v| *v = silu(*v)),
            Unary::Exp => values.iter_mut().for_each(|v| *v = exp(*v)),
            Unary::Square => values.iter_mut().for_each(|v| *v = *v * *v),
            Unary::Neg => values.iter_mut().for_each(|v| *v = -*v),
            Unary::Abs => values.iter_mut().for_each(|v| *v = v.abs()),
            Unary::Sqrt => values.iter_mut().for_each(|v| *v = v.sqrt()),
            other => values.iter_mut().for_each(|v| *v = unary(other, *v)),
        }
    }
}

multiversion! {
    /// `dst[i] = op(src[i])`: [`unary_in_place`] without the copy first; same length.
    fn unary_into(op: Unary, src: &[f32], dst: &mut [f32]) {
        match op {
            Unary::Relu => relu_into(src, dst),
            Unary::Gelu => super::gelu::into(src, dst),
            Unary::Sigmoid => dst.iter_mut().zip(src).for_each(|(d, s)| *d = sigmoid(*s)),
            Unary::Silu => dst.iter_mut().zip(src).for_each(|(d, s)| *d = silu(*s)),
            Unary::Exp => dst.iter_mut().zip(src).for_each(|(d, s)| *d = exp(*s)),
            Unary::Square => dst.iter_mut().zip(src).for_each(|(d, s)| *d = *s * *s),
            Unary::Neg => dst.iter_mut().zip(src).for_each(|(d, s)| *d = -*s),
            Unary::Abs => dst.iter_mut().zip(src).for_each(|(d, s)| *d = s.abs()),
            Unary::Sqrt => dst.iter_mut().zip(src).for_each(|(d, s)| *d = s.sqrt()),
            other => dst.iter_mut().zip(src).for_each(|(d, s)| *d = unary(other, *s)),
        }
    }
}

multiversion! {
    /// `dst[i] = op(a[i], b[i])`; the slices have the same length.
    fn binary_into(op: Binary, a: &[f32], b: &[f32], dst: &mut [f32]) {
        let pairs = dst.iter_mut().zip(a.iter().zip(b));
        match op {
            Binary::Add => pairs.for_each(|(d, (x, y))| *d = *x + *y),
            Binary::Sub => pairs.for_each(|(d, (x, y))| *d = *x - *y),
            Binary::Mul => pairs.for_each(|(d, (x, y))| *d = *x * *y),
            Binary::Div => pairs.for_each(|(d, (x, y))| *d = *x / *y),
        }
    }
}

multiversion! {
    /// `values[i] = op(values[i], other[i])`; the slices have the same length.
    fn binary_in_place(op: Binary, values: &mut [f32], other: &[f32]) {
        match op {
            Binary::Add => values.iter_mut().zip(other).for_each(|(v, o)| *v = *v + *o),
            Binary::Sub => values.iter_mut().zip(other).for_each(|(v, o)| *v = *v - *o),
            Binary::Mul => values.iter_mut().zip(other).for_each(|(v, o)| *v = *v * *o),
            Binary::Div => values.iter_mut().zip(other).for_each(|(v, o)| *v = *v / *o),
        }
    }
}

multiversion! {
    /// `dst = op(a, row)`, or `op(row, a)` when `row_first`, for every row of `a` and `dst`
    /// (row length `row.len()`): a broadcast row vector in one call, as the operands' order
    /// says (a NaN's payload comes from the left operand).
    fn binary_rows_into(op: Binary, a: &[f32], row: &[f32], row_first: bool, dst: &mut [f32]) {
        let width = row.len().max(1);
        for (d, x) in dst.chunks_exact_mut(width).zip(a.chunks_exact(width)) {
            let pairs = d.iter_mut().zip(x.iter().zip(row));
            match (op, row_first) {
                (Binary::Add, false) => pairs.for_each(|(d, (x, r))| *d = *x + *r),
                (Binary::Sub, false) => pairs.for_each(|(d, (x, r))| *d = *x - *r),
                (Binary::Mul, false) => pairs.for_each(|(d, (x, r))| *d = *x * *r),
                (Binary::Div, false) => pairs.for_each(|(d, (x, r))| *d = *x / *r),
                (Binary::Add, true) => pairs.for_each(|(d, (x, r))| *d = *r + *x),
                (Binary::Sub, true) => pairs.for_each(|(d, (x, r))| *d = *r - *x),
                (Binary::Mul, true) => pairs.for_each(|(d, (x, r))| *d = *r * *x),
                (Binary::Div, true) => pairs.for_each(|(d, (x, r))| *d = *r / *x),
            }
        }
    }
}

multiversion! {
    /// `dst[r][c] = op(a[r][c], scalars[r])` (row length `dst.len() / scalars.len()`), or in
    /// place when `a` is `None`: one value per row, broadcast along it (a `[B, C, 1, 1]` gate).
    /// With `scalar_left`, `op(scalars[r], a[r][c])`: the operand order is kept even for `+` and
    /// `*`, as the hardware returns the first operand's payload when both are NaN.
    fn binary_row_scalars(op: Binary, a: Option<&[f32]>, scalars: &[f32], scalar_left: bool, dst: &mut [f32]) {
        let width = (dst.len() / scalars.len().max(1)).max(1);
        for (r, (d, &s)) in dst.chunks_exact_mut(width).zip(scalars).enumerate() {
            let apply = |x: f32| {
                let (l, r) = if scalar_left { (s, x) } else { (x, s) };
                match op {
                    Binary::Add => l + r,
                    Binary::Sub => l - r,
                    Binary::Mul => l * r,
                    Binary::Div => l / r,
                }
            };
            match a {
                Some(a) => d.iter_mut().zip(&a[r * width..][..width]).for_each(|(d, x)| *d = apply(*x)),
                None => d.iter_mut().for_each(|d| *d = apply(*d)),
            }
        }
    }
}

multiversion! {
    /// `values = op(values, row)` for every row of `values` (row length `row.len()`).
    fn binary_rows_in_place(op: Binary, values: &mut [f32], row: &[f32]) {
        for v in values.chunks_exact_mut(row.len().max(1)) {
            let pairs = v.iter_mut().zip(row);
            match op {
                Binary::Add => pairs.for_each(|(v, r)| *v = *v + *r),
                Binary::Sub => pairs.for_each(|(v, r)| *v = *v - *r),
                Binary::Mul => pairs.for_each(|(v, r)| *v = *v * *r),
                Binary::Div => pairs.for_each(|(v, r)| *v = *v / *r),
            }
        }
    }
}

multiversion! {
    /// `row += bias` for every row of `values` (row length `bias.len()`), in one call.
    fn add_rows(values: &mut [f32], bias: &[f32]) {
        for row in values.chunks_exact_mut(bias.len().max(1)) {
            row.iter_mut().zip(bias).for_each(|(v, b)| *v = *v + *b);
        }
    }
}

multiversion! {
    /// `out[j] = input[j] * scale`, then `* weight[j]` when given, each product rounded to
    /// float32 (a normalised row: `fused::rms_norm`).
    fn scale_row(out: &mut [f32], input: &[f32], scale: f32, weight: Option<&[f32]>) {
        match weight {
            None => out.iter_mut().zip(input).for_each(|(o, v)| *o = *v * scale),
            Some(w) => out.iter_mut().zip(input).zip(w).for_each(|((o, v), g)| *o = (*v * scale) * *g),
        }
    }
}

// --- Sums in torch's order ------------------------------------------------------------------
//
// A sum of floats depends on the order of its additions, and sums with cancellation differ
// by more than any tolerance between orders. So these follow the order of torch's CPU sum
// kernel (`cascade_sum` in ATen's SumKernel.cpp, the algorithm re-derived here): vectors of
// torch's `Vectorized<float>` width (8 lanes on AVX2, 16 on AVX-512; `calibrate` tells which
// one this libtorch uses) along contiguous memory, four interleaved accumulators ("ilp"), a four-level
// cascade that folds every 16 (more for huge sizes) additions into the next level, the scalar
// tail added before the vector lanes, and the output starting at `+0.0` (so a sum of `-0.0`s
// is `+0.0`, as in eager).

/// One accumulator: a scalar or an 8-lane vector.
trait Lanes: Copy {
    const ZERO: Self;
    fn add(self, other: Self) -> Self;
}

impl Lanes for f32 {
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self + other
    }
}

impl<const VEC: usize> Lanes for [f32; VEC] {
    const ZERO: Self = [0.0; VEC];
    #[inline(always)]
    fn add(mut self, other: Self) -> Self {
        for (a, b) in self.iter_mut().zip(other) {
            *a += b;
        }
        self
    }
}

/// `ceil(log2(x))`, with 1 for `x ≤ 2` as in c10.
fn ceil_log2(x: usize) -> usize {
    if x <= 2 {
        1
    } else {
        (usize::BITS - (x - 1).leading_zeros()) as usize
    }
}

/// Sums `size` rows of `R` columns each (`load(i, k)`), cascading partial sums in levels.
#[inline(always)]
fn multi_row_sum<L: Lanes, const R: usize>(size: usize, load: impl Fn(usize, usize) -> L) -> [L; R] {
    const LEVELS: usize = 4;
    let level_power = 4.max(ceil_log2(size) / LEVELS);
    let level_step = 1usize << level_power;
    let level_mask = level_step - 1;
    let mut acc = [[L::ZERO; R]; LEVELS];
    let mut i = 0;
    while i + level_step <= size {
        for _ in 0..level_step {
            for k in 0..R {
                acc[0][k] = acc[0][k].add(load(i, k));
            }
            i += 1;
        }
        for j in 1..LEVELS {
            for k in 0..R {
                acc[j][k] = acc[j][k].add(acc[j - 1][k]);
                acc[j - 1][k] = L::ZERO;
            }
            if i & (level_mask << (j * level_power)) != 0 {
                break;
            }
        }
    }
    while i < size {
        for k in 0..R {
            acc[0][k] = acc[0][k].add(load(i, k));
        }
        i += 1;
    }
    for j in 1..LEVELS {
        for k in 0..R {
            acc[0][k] = acc[0][k].add(acc[j][k]);
        }
    }
    acc[0]
}

/// Sums `size` elements (`load(i)`) with four interleaved accumulators.
#[inline(always)]
fn row_sum<L: Lanes>(size: usize, load: impl Fn(usize) -> L) -> L {
    const ILP: usize = 4;
    let size_ilp = size / ILP;
    let mut partial = multi_row_sum::<L, ILP>(size_ilp, |i, k| load(i * ILP + k));
    for i in size_ilp * ILP..size {
        partial[0] = partial[0].add(load(i));
    }
    for k in 1..ILP {
        partial[0] = partial[0].add(partial[k]);
    }
    partial[0]
}

#[inline(always)]
fn vector_at<const VEC: usize>(values: &[f32], start: usize) -> [f32; VEC] {
    let mut lanes = [0.0; VEC];
    lanes.copy_from_slice(&values[start..start + VEC]);
    lanes
}

/// Sum of a contiguous run (a row, or a reduction over the last dim), in torch's order for
/// vectors of `lanes` (8 or 16) floats.
pub fn sum(values: &[f32], lanes: usize) -> f32 {
    #[inline(always)]
    fn generic<const VEC: usize>(values: &[f32]) -> f32 {
        let size = values.len();
        let total = if size >= VEC {
            let vectors = size / VEC;
            let lanes = row_sum::<[f32; VEC]>(vectors, |v| vector_at::<VEC>(values, v * VEC));
            let mut total = 0.0f32;
            for v in &values[vectors * VEC..] {
                total += *v;
            }
            for lane in lanes {
                total += lane;
            }
            total
        } else {
            row_sum::<f32>(size, |i| values[i])
        };
        0.0 + total
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn avx512<const VEC: usize>(values: &[f32]) -> f32 {
            generic::<VEC>(values)
        }
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<const VEC: usize>(values: &[f32]) -> f32 {
            generic::<VEC>(values)
        }
        if has_avx512() {
            // SAFETY: the CPU supports AVX-512F/VL (checked just above).
            return unsafe { if lanes == 16 { avx512::<16>(values) } else { avx512::<8>(values) } };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { if lanes == 16 { avx2::<16>(values) } else { avx2::<8>(values) } };
        }
    }
    if lanes == 16 { generic::<16>(values) } else { generic::<8>(values) }
}

/// Column sums of a row-major `rows × cols` matrix (a reduction over dim 0), in torch's
/// order for vectors of `lanes` (8 or 16) floats; `out` has `cols` elements.
pub fn sum_columns(values: &[f32], rows: usize, cols: usize, out: &mut [f32], lanes: usize) {
    if lanes == 16 {
        sum_columns_of::<16>(values, rows, cols, out)
    } else {
        sum_columns_of::<8>(values, rows, cols, out)
    }
}

fn sum_columns_of<const VEC: usize>(values: &[f32], rows: usize, cols: usize, out: &mut [f32]) {
    #[inline(always)]
    fn generic<const VEC: usize>(values: &[f32], rows: usize, cols: usize, out: &mut [f32]) {
        if cols == 1 {
            out[0] = sum(&values[..rows], VEC);
            return;
        }
        let at = |i: usize, j: usize| values[i * cols + j];
        let mut j = 0;
        if cols >= VEC {
            const ROWS: usize = 4;
            while j + ROWS * VEC <= cols {
                let sums = multi_row_sum::<[f32; VEC], ROWS>(rows, |i, k| vector_at::<VEC>(values, i * cols + j + k * VEC));
                for (k, lanes) in sums.iter().enumerate() {
                    for (lane, v) in lanes.iter().enumerate() {
                        out[j + k * VEC + lane] = 0.0 + v;
                    }
                }
                j += ROWS * VEC;
            }
            while j + VEC <= cols {
                let lanes = row_sum::<[f32; VEC]>(rows, |i| vector_at::<VEC>(values, i * cols + j));
                for (lane, v) in lanes.iter().enumerate() {
                    out[j + lane] = 0.0 + v;
                }
                j += VEC;
            }
        } else {
            const ROWS: usize = 4;
            while j + ROWS <= cols {
                let sums = multi_row_sum::<f32, ROWS>(rows, |i, k| at(i, j + k));
                for (k, v) in sums.iter().enumerate() {
                    out[j + k] = 0.0 + v;
                }
                j += ROWS;
            }
        }
        while j < cols {
            out[j] = 0.0 + row_sum::<f32>(rows, |i| at(i, j));
            j += 1;
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn avx512<const VEC: usize>(values: &[f32], rows: usize, cols: usize, out: &mut [f32]) {
            generic::<VEC>(values, rows, cols, out)
        }
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<const VEC: usize>(values: &[f32], rows: usize, cols: usize, out: &mut [f32]) {
            generic::<VEC>(values, rows, cols, out)
        }
        if has_avx512() {
            // SAFETY: the CPU supports AVX-512F/VL (checked just above).
            return unsafe { avx512::<VEC>(values, rows, cols, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { avx2::<VEC>(values, rows, cols, out) };
        }
    }
    generic::<VEC>(values, rows, cols, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_close_to_libm_over_the_whole_range() {
        let mut x = -110.0f32;
        while x < 90.0 {
            let (got, want) = (exp(x), (x as f64).exp() as f32);
            let tolerance = want.abs() * 4.0 * f32::EPSILON + 1e-44;
            let close = if want.is_infinite() { got == want } else { (got - want).abs() <= tolerance };
            assert!(close, "exp({x}) = {got}, want {want}");
            x += 0.0137;
        }
    }

    #[test]
    fn special_values_follow_torch() {
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert!(exp(f32::NAN).is_nan());
        assert_eq!(exp(-0.0), 1.0);
        assert!(relu(-0.0).is_sign_negative());
        assert!(relu(-3.0).is_sign_positive() && relu(-3.0) == 0.0);
        assert!(relu(f32::NAN).is_nan());
        assert_eq!(sigmoid(f32::NEG_INFINITY), 0.0);
        assert_eq!(sigmoid(f32::INFINITY), 1.0);
        assert_eq!(sigmoid(-0.0), 0.5);
        assert!(sigmoid(f32::NAN).is_nan());
        assert!(sum(&[-0.0; 19], 8).is_sign_positive() && sum(&[-0.0; 37], 16).is_sign_positive());
        let mut out = [1.0; 3];
        sum_columns(&[-0.0; 60], 20, 3, &mut out, 8);
        assert!(out.iter().all(|v| *v == 0.0 && v.is_sign_positive()));
    }

    #[test]
    fn all_lists_the_ops_in_declaration_order() {
        assert!(Unary::ALL.iter().enumerate().all(|(i, op)| *op as usize == i));
    }

    #[test]
    fn vector_relu_keeps_nan_and_negative_zero() {
        let input = [-0.0, f32::NAN, -3.0, 3.0, 0.0, f32::NEG_INFINITY, f32::INFINITY, -1e-45, 1e-45];
        let mut values = input;
        unary_in_place(Unary::Relu, &mut values);
        for (x, got) in input.iter().zip(values) {
            assert_eq!(got.to_bits(), relu(*x).to_bits(), "relu({x})");
        }
        assert!(values[0].is_sign_negative() && values[0] == 0.0 && values[1].is_nan());
        assert!(values[2].is_sign_positive() && values[2] == 0.0);
    }

    #[test]
    fn vector_loops_agree_with_the_scalar_functions() {
        let values: Vec<f32> = (0..103).map(|i| (i as f32 - 51.0) * 0.37).collect();
        for op in [Unary::Relu, Unary::Sigmoid, Unary::Silu, Unary::Exp, Unary::Tanh, Unary::Gelu] {
            let mut out = values.clone();
            unary_in_place(op, &mut out);
            for (v, o) in values.iter().zip(&out) {
                assert_eq!(o.to_bits(), unary(op, *v).to_bits(), "{op:?}({v})");
            }
        }
    }
}
