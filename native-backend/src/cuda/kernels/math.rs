//! Per-element float32 math, written once and run two ways.
//!
//! Each function (`exp`, `log`, `tanh`, `erf`, `gelu`, ...) is generic over [`Scalar`], a
//! tiny instruction set of IEEE-exact operations (add/mul/div/fma/sqrt with round-to-nearest,
//! comparisons, selects, bit casts and integer shifts). [`PtxScalar`] emits each operation as
//! one PTX instruction; [`CpuScalar`] performs it on `f32` in Rust with the same rounding. No
//! approximate hardware instruction (`ex2.approx`, `lg2.approx`, ...) is used, so the CPU
//! model gives bit for bit what the GPU computes: the tests here compare the CPU model with
//! eager PyTorch, and the GPU check compares the device with the CPU model exactly.
//!
//! Algorithms (float32, round-to-nearest throughout):
//! - `exp`: Cody–Waite reduction `x = j ln2 + r`, degree-7 Taylor polynomial for `e^r`
//!   (`|r| <= ln2/2`, truncation < 6e-9), scaling by `2^j` in two exact power-of-two steps so
//!   subnormal results round once. Clamped to ±104 (beyond which the result is 0 or inf).
//! - `log`: `x = 2^e m` with `m` in `[sqrt(1/2), sqrt(2))`, `log(m) = f - hfsq + s(hfsq + R)`
//!   with `s = f/(2+f)` and the classic minimax coefficients of 4.4BSD/fdlibm `logf`.
//! - `tanh`: odd Taylor polynomial of degree 19 for `|x| < 0.55`, else `1 - 2/(e^{2|x|} + 1)`.
//! - `erf`: Taylor polynomial for `|x| < 1`; on `[1, 4)` `1 - e^{-x^2} Q(x)` with `Q`
//!   a Chebyshev fit (computed in f64 at generation time from `libm::erfc`) of
//!   `erfc(x) e^{x^2}`; `±1` beyond 4 (where `erfc < 2^-25`).
//! - `gelu`: PyTorch's CUDA formula `x * 0.5 * (1 + erf(x * M_SQRT1_2))`.
//! - `sigmoid`: PyTorch's CUDA formula `1 / (1 + exp(-x))`.


pub use super::scalar::{CpuScalar, PtxScalar, Scalar};

/// Horner evaluation `c[0] + x (c[1] + x (c[2] + ...))` with fused multiply-adds.
fn horner<S: Scalar>(s: &mut S, x: &S::F, coefficients: &[f32]) -> S::F {
    let mut acc = s.c(coefficients[coefficients.len() - 1]);
    for &c in coefficients[..coefficients.len() - 1].iter().rev() {
        let cc = s.c(c);
        acc = s.fma(&acc, x, &cc);
    }
    acc
}

/// `2^k` for an integer `k` in `[-126, 127]`, built from its bits.
fn pow2<S: Scalar>(s: &mut S, k: &S::I) -> S::F {
    let bias = s.ci(127);
    let biased = s.iadd(k, &bias);
    let bits = s.shl(&biased, 23);
    s.float_from_bits(&bits)
}

/// `e^x` (see the module docs).
pub fn exp<S: Scalar>(s: &mut S, x: &S::F) -> S::F {
    let (j, r) = reduce_ln2(s, x, 104.0);
    let taylor: Vec<f32> = (0..=7).map(|n| (1.0 / factorial(n)) as f32).collect();
    let p = horner(s, &r, &taylor);
    let ji = s.f2i(&j);
    let j1 = s.shr_s(&ji, 1);
    let j2 = s.isub(&ji, &j1);
    let s1 = pow2(s, &j1);
    let s2 = pow2(s, &j2);
    let scaled = s.mul(&p, &s1);
    s.mul(&scaled, &s2)
}

/// Cody–Waite reduction of `x` clamped to `±bound`: `x = j ln2 + r` with `j` an integral
/// float and `|r| <= ln2/2`, `ln2` in two parts (the high one with 9 trailing zero bits, so
/// `j·LN2_HI` is exact).
fn reduce_ln2<S: Scalar>(s: &mut S, x: &S::F, bound: f32) -> (S::F, S::F) {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = f32::from_bits(0x3f31_7200); // 0.693145751953125
    const LN2_LO: f32 = f32::from_bits(0x35bf_be8e); // ln 2 - LN2_HI
    let lo = s.c(-bound);
    let hi = s.c(bound);
    let clamped = s.min_nan(x, &hi);
    let clamped = s.max_nan(&clamped, &lo);
    let log2e = s.c(LOG2E);
    let t = s.mul(&clamped, &log2e);
    let j = s.rint(&t);
    let neg_hi = s.c(-LN2_HI);
    let neg_lo = s.c(-LN2_LO);
    let r = s.fma(&j, &neg_hi, &clamped);
    let r = s.fma(&j, &neg_lo, &r);
    (j, r)
}

fn factorial(n: u32) -> f64 {
    (1..=n).map(f64::from).product()
}

/// Natural logarithm (see the module docs).
pub fn log<S: Scalar>(s: &mut S, x: &S::F) -> S::F {
    const LN2_HI: f32 = f32::from_bits(0x3f31_7180); // 6.9313812256e-01
    const LN2_LO: f32 = f32::from_bits(0x3717_f7d1); // 9.0580006145e-06
    const LG: [f32; 4] = [
        f32::from_bits(0x3f2a_aaaa), // 0.66666662693
        f32::from_bits(0x3ecc_ce13), // 0.40000972152
        f32::from_bits(0x3e91_e9ee), // 0.28498786688
        f32::from_bits(0x3e78_9e26), // 0.24279078841
    ];
    // Subnormal inputs: scale by 2^25 first.
    let smallest_normal = s.c(f32::MIN_POSITIVE);
    let tiny = s.lt(x, &smallest_normal);
    let two25 = s.c(33_554_432.0);
    let scaled = s.mul(x, &two25);
    let xs = s.select(&tiny, &scaled, x);
    let minus25 = s.ci(-25);
    let zero_i = s.ci(0);
    let e_adjust = s.select_i(&tiny, &minus25, &zero_i);
    // x = 2^e * m, m in [1, 2); then m in [sqrt(1/2), sqrt(2)).
    let bits = s.bits_of(&xs);
    let exponent_bits = s.shr_u(&bits, 23);
    let exponent_bits = s.iand(&exponent_bits, 0xff);
    let bias = s.ci(127);
    let e = s.isub(&exponent_bits, &bias);
    let e = s.iadd(&e, &e_adjust);
    let mantissa = s.iand(&bits, 0x007f_ffff);
    let mantissa = s.ior(&mantissa, 0x3f80_0000);
    let m = s.float_from_bits(&mantissa);
    let sqrt2 = s.c(std::f32::consts::SQRT_2);
    let big = s.gt(&m, &sqrt2);
    let half = s.c(0.5);
    let m_half = s.mul(&m, &half);
    let m = s.select(&big, &m_half, &m);
    let one_i = s.ci(1);
    let e_plus = s.iadd(&e, &one_i);
    let e = s.select_i(&big, &e_plus, &e);
    let ef = s.i2f(&e);
    // log(m) = f - hfsq + s (hfsq + R), R a minimax polynomial in s^2.
    let one = s.c(1.0);
    let f = s.sub(&m, &one);
    let two = s.c(2.0);
    let denominator = s.add(&two, &f);
    let sv = s.div(&f, &denominator);
    let z = s.mul(&sv, &sv);
    let w = s.mul(&z, &z);
    let lg4 = s.c(LG[3]);
    let lg2 = s.c(LG[1]);
    let t1 = s.fma(&w, &lg4, &lg2);
    let t1 = s.mul(&w, &t1);
    let lg3 = s.c(LG[2]);
    let lg1 = s.c(LG[0]);
    let t2 = s.fma(&w, &lg3, &lg1);
    let t2 = s.mul(&z, &t2);
    let r = s.add(&t2, &t1);
    let ff = s.mul(&f, &f);
    let hfsq = s.mul(&half, &ff);
    let hr = s.add(&hfsq, &r);
    let ln2_lo = s.c(LN2_LO);
    let elo = s.mul(&ef, &ln2_lo);
    let shr = s.fma(&sv, &hr, &elo);
    let inner = s.sub(&hfsq, &shr);
    let inner = s.sub(&inner, &f);
    let ln2_hi = s.c(LN2_HI);
    let ehi = s.mul(&ef, &ln2_hi);
    let value = s.sub(&ehi, &inner);
    // Special values: log(+-0) = -inf, log(x<0) = NaN, log(inf) = inf, log(NaN) = NaN.
    let zero = s.c(0.0);
    let inf = s.c(f32::INFINITY);
    let neg_inf = s.c(f32::NEG_INFINITY);
    let nan = s.c(f32::NAN);
    let is_inf = s.eq(x, &inf);
    let value = s.select(&is_inf, &inf, &value);
    let is_zero = s.eq(x, &zero);
    let value = s.select(&is_zero, &neg_inf, &value);
    let negative = s.lt(x, &zero);
    let value = s.select(&negative, &nan, &value);
    let x_nan = s.is_nan(x);
    s.select(&x_nan, x, &value)
}

/// `e^x - 1`, accurate near 0 (the bound CUDA documents for `expm1f` is 1 ulp; ours is
/// within 2 of eager CPU's). Cody–Waite as [`exp`], `x = k ln2 + r`, `expm1(r) = r + r² q(r)`
/// with `q` the Taylor polynomial of degree 7, then `2^k expm1(r) + (2^k - 1)`: both terms
/// are exact for `|k| <= 24`, so only the sum rounds. Beyond `|x| >= 16` the result is
/// `exp(x) - 1`, whose rounding is then the subtraction's.
pub fn expm1<S: Scalar>(s: &mut S, x: &S::F) -> S::F {
    // the reduced path on a copy clamped to ±16 (the other path covers what the clamp changes)
    let (k, r) = reduce_ln2(s, x, 16.0);
    let taylor: Vec<f32> = (2..=9).map(|n| (1.0 / factorial(n)) as f32).collect();
    let q = horner(s, &r, &taylor);
    let r2 = s.mul(&r, &r);
    let em1 = s.fma(&r2, &q, &r);
    let ki = s.f2i(&k);
    let scale = pow2(s, &ki);
    let scaled = s.mul(&em1, &scale);
    let one = s.c(1.0);
    let offset = s.sub(&scale, &one);
    let reduced = s.add(&scaled, &offset);
    // |x| >= 16: exp(x) - 1
    let e = exp(s, x);
    let direct = s.sub(&e, &one);
    let ax = s.abs(x);
    let sixteen = s.c(16.0);
    let near = s.lt(&ax, &sixteen);
    let value = s.select(&near, &reduced, &direct);
    // ±0 and NaN are returned as they are
    let zero = s.c(0.0);
    let keep = s.eq(x, &zero);
    let value = s.select(&keep, x, &value);
    let nan = s.is_nan(x);
    s.select(&nan, x, &value)
}

/// `log(1 + x)`, accurate near 0: `u = 1 + x` rounded, then `log(u) - ((u - 1) - x) / u`
/// (the first-order correction of the rounding of `u`), `x` itself where `u` rounds to 1.
/// `-1` gives `-inf`, below it NaN, `+inf` stays.
pub fn log1p<S: Scalar>(s: &mut S, x: &S::F) -> S::F {
    let one = s.c(1.0);
    let u = s.add(&one, x);
    let logged = log(s, &u);
    let um1 = s.sub(&u, &one);
    let err = s.sub(&um1, x);
    let correction = s.div(&err, &u);
    let value = s.sub(&logged, &correction);
    let rounds_to_one = s.eq(&u, &one);
    let value = s.select(&rounds_to_one, x, &value);
    let minus_one = s.c(-1.0);
    let at_minus_one = s.eq(x, &minus_one);
    let neg_inf = s.c(f32::NEG_INFINITY);
    let value = s.select(&at_minus_one, &neg_inf, &value);
    let inf = s.c(f32::INFINITY);
    let at_inf = s.eq(x, &inf);
    let value = s.select(&at_inf, x, &value);
    // log(u < 0) is already NaN; NaN stays
    let nan = s.is_nan(x);
    s.select(&nan, x, &value)
}

/// C++'s `std::max(a, b)`, `a < b ? b : a`, which eager's CUDA activations use: a NaN `a`
/// is returned, a NaN `b` is not.
fn std_max<S: Scalar>(s: &mut S, a: &S::F, b: &S::F) -> S::F {
    let less = s.lt(a, b);
    s.select(&less, b, a)
}

/// C++'s `std::min(a, b)`, `b < a ? b : a`.
fn std_min<S: Scalar>(s: &mut S, a: &S::F, b: &S::F) -> S::F {
    let less = s.lt(b, a);
    s.select(&less, b, a)
}

/// `std::min(std::max(x + 3, 0), 6)`, the shared part of eager's CUDA hardsigmoid and
/// hardswish.
fn relu6_of_x_plus_3<S: Scalar>(s: &mut S, x: &S::F) -> S::F {
    let three = s.c(3.0);
    let zero = s.c(0.0);
    let six = s.c(6.0);
    let shifted = s.add(x, &three);
    let low = std_max(s, &shifted, &zero);
    std_min(s, &low, &six)
}

/// `log1p(exp(x))`, softplus with `beta = 1` below its threshold (eager's CUDA formula).
fn log1p_exp<S: Scalar>(s: &mut S, x: &S::F) -> S::F {
    let e = exp(s, x);
    log1p(s, &e)
}

/// Taylor coefficients of tanh(x)/x in powers of x^2 (tangent numbers).
const TANH_SERIES: [(f64, f64); 10] = [
    (1.0, 1.0),
    (-1.0, 3.0),
    (2.0, 15.0),
    (-17.0, 315.0),
    (62.0, 2835.0),
    (-1382.0, 155_925.0),
    (21_844.0, 6_081_075.0),
    (-929_569.0, 638_512_875.0),
    (6_404_582.0, 10_854_718_875.0),
    (-443_861_162.0, 1_856_156_927_625.0),
];

/// Hyperbolic tangent (see the module docs).
pub fn tanh<S: Scalar>(s: &mut S, x: &S::F) -> S::F {
    let ax = s.abs(x);
    // Small |x|: x * P(x^2).
    let x2 = s.mul(x, x);
    let coefficients: Vec<f32> = TANH_SERIES.iter().map(|(n, d)| (n / d) as f32).collect();
    let p = horner(s, &x2, &coefficients);
    let small = s.mul(x, &p);
    // Large |x|: 1 - 2 / (e^{2|x|} + 1), with the sign of x.
    let twice = s.add(&ax, &ax);
    let e = exp(s, &twice);
    let one = s.c(1.0);
    let two = s.c(2.0);
    let denominator = s.add(&e, &one);
    let q = s.div(&two, &denominator);
    let large = s.sub(&one, &q);
    let neg_large = s.neg(&large);
    let zero = s.c(0.0);
    let negative = s.lt(x, &zero);
    let large = s.select(&negative, &neg_large, &large);
    let threshold = s.c(0.55);
    let is_small = s.lt(&ax, &threshold);
    s.select(&is_small, &small, &large)
}

/// `erf` (see the module docs).
pub fn erf<S: Scalar>(s: &mut S, x: &S::F) -> S::F {
    let ax = s.abs(x);
    // |x| < 1: x * P(x^2), the Maclaurin series of erf.
    let x2 = s.mul(x, x);
    let p = horner(s, &x2, &erf_taylor());
    let small = s.mul(x, &p);
    // 1 <= |x| < 4: 1 - exp(-x^2) Q(|x|), with -x^2 split exactly into hi + lo.
    let (q_coefficients, center, half_width) = erfc_scaled_fit();
    let c = s.c(center);
    let inv_half_width = s.c(1.0 / half_width);
    let shifted = s.sub(&ax, &c);
    let t = s.mul(&shifted, &inv_half_width);
    let q = horner(s, &t, &q_coefficients);
    let sq_hi = s.mul(&ax, &ax);
    let neg_sq_hi = s.neg(&sq_hi);
    let sq_lo = s.fma(&ax, &ax, &neg_sq_hi); // ax^2 - sq_hi, exactly
    let e_hi = exp(s, &neg_sq_hi);
    let one = s.c(1.0);
    let neg_lo = s.neg(&sq_lo);
    let correction = s.add(&one, &neg_lo); // e^{-lo} ~ 1 - lo, |lo| <= 2^-20
    let e = s.mul(&e_hi, &correction);
    let tail = s.mul(&e, &q);
    let mid = s.sub(&one, &tail);
    let four = s.c(4.0);
    let beyond = s.gt(&ax, &four);
    let beyond_eq = s.eq(&ax, &four);
    let mid = s.select(&beyond, &one, &mid);
    let mid = s.select(&beyond_eq, &one, &mid);
    let neg_mid = s.neg(&mid);
    let zero = s.c(0.0);
    let negative = s.lt(x, &zero);
    let mid = s.select(&negative, &neg_mid, &mid);
    let is_small = s.lt(&ax, &one);
    s.select(&is_small, &small, &mid)
}

/// Maclaurin coefficients of erf(x)/x in powers of x^2: 2/sqrt(pi) (-1)^n / (n! (2n+1)).
fn erf_taylor() -> Vec<f32> {
    let two_over_sqrt_pi = 2.0 / std::f64::consts::PI.sqrt();
    (0..13u32)
        .map(|n| {
            let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
            (two_over_sqrt_pi * sign / (factorial(n) * f64::from(2 * n + 1))) as f32
        })
        .collect()
}

/// Degree of the Chebyshev fit of `erfc(x) e^{x^2}` on `[1, 4]`.
pub const ERFC_FIT_DEGREE: usize = 16;

/// Monomial coefficients in `t = (x - center) / half_width` of a Chebyshev interpolant of
/// `erfc(x) e^{x^2}` on `[1, 4]`, computed in f64, plus `center` and `half_width`.
pub fn erfc_scaled_fit() -> (Vec<f32>, f32, f32) {
    let (a, b) = (1.0f64, 4.0f64);
    let center = (a + b) / 2.0;
    let half_width = (b - a) / 2.0;
    let n = ERFC_FIT_DEGREE + 1;
    let target = |x: f64| libm::erfc(x) * (x * x).exp();
    // Chebyshev coefficients from values at the Chebyshev nodes.
    let nodes: Vec<f64> =
        (0..n).map(|k| (std::f64::consts::PI * (k as f64 + 0.5) / n as f64).cos()).collect();
    let values: Vec<f64> = nodes.iter().map(|t| target(center + half_width * t)).collect();
    let mut cheb = vec![0.0f64; n];
    for (j, cj) in cheb.iter_mut().enumerate() {
        let sum: f64 = (0..n)
            .map(|k| values[k] * (std::f64::consts::PI * j as f64 * (k as f64 + 0.5) / n as f64).cos())
            .sum();
        *cj = 2.0 * sum / n as f64;
    }
    cheb[0] /= 2.0;
    // Chebyshev basis to monomials: T_0 = 1, T_1 = t, T_{k+1} = 2t T_k - T_{k-1}.
    let mut monomial = vec![0.0f64; n];
    let mut previous = vec![0.0f64; n];
    let mut current = vec![0.0f64; n];
    previous[0] = 1.0;
    current[1] = 1.0;
    for (j, cj) in cheb.iter().enumerate() {
        let basis = match j {
            0 => previous.clone(),
            1 => current.clone(),
            _ => {
                let mut next = vec![0.0f64; n];
                for i in 0..n - 1 {
                    next[i + 1] += 2.0 * current[i];
                }
                for i in 0..n {
                    next[i] -= previous[i];
                }
                previous = std::mem::replace(&mut current, next);
                current.clone()
            }
        };
        for i in 0..n {
            monomial[i] += cj * basis[i];
        }
    }
    (monomial.iter().map(|&c| c as f32).collect(), center as f32, half_width as f32)
}

pub use torchlower_ops::{Binary, Unary};

/// The per-element function of a unary kernel, for the op table's [`Unary`] ops.
pub trait UnaryMath: Copy {
    /// Applies the operation (emitting PTX or computing on the host, depending on `S`).
    fn apply<S: Scalar>(self, s: &mut S, x: &S::F) -> S::F;

    /// The host model of the device kernel: bit-identical to it.
    fn eval(self, x: f32) -> f32 {
        self.apply(&mut CpuScalar, &x)
    }
}

impl UnaryMath for Unary {
    fn apply<S: Scalar>(self, s: &mut S, x: &S::F) -> S::F {
        match self {
            Unary::Abs => s.abs(x),
            Unary::Neg => s.neg(x),
            Unary::Square => s.mul(x, x),
            Unary::Exp => exp(s, x),
            Unary::Log => log(s, x),
            Unary::Sqrt => s.sqrt(x),
            // Eager's CUDA relu is `clamp_min(x, 0)`: `isnan(x) ? x : fmaxf(x, 0)`, so NaN is
            // kept and -0.0 becomes +0.0 (seen on an H200; eager CPU keeps -0.0).
            Unary::Relu => {
                let zero = s.c(0.0);
                clamp_min(s, x, &zero)
            }
            Unary::Sigmoid => {
                let d = one_plus_exp_neg(s, x);
                let one = s.c(1.0);
                s.div(&one, &d)
            }
            // eager's CUDA silu: `x / (1 + exp(-x))` in float
            Unary::Silu => {
                let d = one_plus_exp_neg(s, x);
                s.div(x, &d)
            }
            Unary::Tanh => tanh(s, x),
            Unary::Gelu => {
                let alpha = s.c(std::f32::consts::FRAC_1_SQRT_2);
                let scaled = s.mul(x, &alpha);
                let e = erf(s, &scaled);
                let half = s.c(0.5);
                let one = s.c(1.0);
                let xh = s.mul(x, &half);
                let one_plus = s.add(&one, &e);
                s.mul(&xh, &one_plus)
            }
        }
    }
}

/// The tensor-tensor arithmetic of a binary kernel, for the op table's [`Binary`] ops.
pub trait BinaryMath: Copy {
    fn apply<S: Scalar>(self, s: &mut S, a: &S::F, b: &S::F) -> S::F;

    /// The host model of the device kernel: bit-identical to it.
    fn eval(self, a: f32, b: f32) -> f32 {
        self.apply(&mut CpuScalar, &a, &b)
    }
}

impl BinaryMath for Binary {
    fn apply<S: Scalar>(self, s: &mut S, a: &S::F, b: &S::F) -> S::F {
        match self {
            Binary::Add => s.add(a, b),
            Binary::Sub => s.sub(a, b),
            Binary::Mul => s.mul(a, b),
            Binary::Div => s.div(a, b),
        }
    }
}

/// `1 + exp(-x)`, the denominator of sigmoid and SiLU.
fn one_plus_exp_neg<S: Scalar>(s: &mut S, x: &S::F) -> S::F {
    let nx = s.neg(x);
    let e = exp(s, &nx);
    let one = s.c(1.0);
    s.add(&one, &e)
}

/// Eager's CUDA `clamp_min`: NaN stays, else `fmaxf(x, lo)`.
fn clamp_min<S: Scalar>(s: &mut S, x: &S::F, lo: &S::F) -> S::F {
    let nan = s.is_nan(x);
    let clamped = s.max(x, lo);
    s.select(&nan, x, &clamped)
}

/// Eager's CUDA `clamp_max`: NaN stays, else `fminf(x, hi)`.
fn clamp_max<S: Scalar>(s: &mut S, x: &S::F, hi: &S::F) -> S::F {
    let nan = s.is_nan(x);
    let clamped = s.min(x, hi);
    s.select(&nan, x, &clamped)
}

/// The elementwise forms outside the op table's fused [`Unary`]/[`Binary`] sets, each with a
/// kernel of its own on cuda:0: a tensor `a` with Python numbers `x`, `y` (kernel
/// parameters, already rounded to float32 as eager rounds them), and maximum/minimum of two
/// tensors. Each computes what eager's CUDA kernel computes, in the same order (the GPU
/// check compares them with eager on the device):
/// - `t + s`, `s + t`, `t - s` (`x = -s`): eager adds `a + alpha * s` with `alpha = ±1`.
/// - `t * s`, `s * t`, `t / s` (`x = 1/s`: eager multiplies by the reciprocal of a scalar
///   divisor on CUDA).
/// - `s - t`: `rsub`, `s + (-1) * a`. `s / t`: `reciprocal(t) * s`, two roundings as eager.
/// - `t ** 3`, `t ** -1`, `t ** -2`: eager's special cases `a*a*a`, `1/a`, `1/(a*a)`
///   (`** 2` and `** 0.5` are the `square`/`sqrt` kernels).
/// - clamps: `isnan(a) ? a : fminf(fmaxf(a, lo), hi)`.
/// - maximum/minimum: NaN if either is NaN, else `fmaxf`/`fminf`.
/// - the activations and math of libtorch's CUDA kernels, in their formulas and order:
///   `rsqrt` (1/sqrt), `erf`, `log1p`, `expm1`, GELU's tanh form, hardsigmoid/hardswish
///   (`std::min(std::max(x + 3, 0), 6) * (1/6)`, NaN kept), mish (`x tanh(log1p(exp(x)))`),
///   leaky ReLU (`x > 0 ? x : x·slope`), ELU/SELU (`x > 0 ? x·poscoef : expm1(x)·negcoef`)
///   and softplus (`x·β > threshold ? x : log1p(exp(x·β))/β`). `relu6` and `hardtanh` are
///   eager's clamp on CUDA and run the clamp kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pointwise {
    AddScalar,
    MulScalar,
    ScalarSub,
    ScalarDiv,
    Cube,
    Reciprocal,
    ReciprocalSquare,
    ClampMin,
    ClampMax,
    Clamp,
    Maximum,
    Minimum,
    Rsqrt,
    Erf,
    Log1p,
    Expm1,
    /// `F.gelu(x, approximate="tanh")`.
    GeluTanh,
    Hardsigmoid,
    Hardswish,
    Mish,
    /// `x > 0 ? x : x * slope` (`x` = slope).
    LeakyRelu,
    /// ELU and SELU: `x > 0 ? x * poscoef : expm1(x) * negcoef` (`x` = negcoef, `y` = poscoef).
    Elu,
    /// `x * beta > threshold ? x : log1p(exp(x * beta)) / beta` (`x` = beta, `y` = threshold).
    Softplus,
}

impl Pointwise {
    pub const ALL: &'static [Pointwise] = &[
        Pointwise::AddScalar,
        Pointwise::MulScalar,
        Pointwise::ScalarSub,
        Pointwise::ScalarDiv,
        Pointwise::Cube,
        Pointwise::Reciprocal,
        Pointwise::ReciprocalSquare,
        Pointwise::ClampMin,
        Pointwise::ClampMax,
        Pointwise::Clamp,
        Pointwise::Maximum,
        Pointwise::Minimum,
        Pointwise::Rsqrt,
        Pointwise::Erf,
        Pointwise::Log1p,
        Pointwise::Expm1,
        Pointwise::GeluTanh,
        Pointwise::Hardsigmoid,
        Pointwise::Hardswish,
        Pointwise::Mish,
        Pointwise::LeakyRelu,
        Pointwise::Elu,
        Pointwise::Softplus,
    ];

    /// The kernel's `.entry` name.
    pub const fn entry_name(self) -> &'static str {
        match self {
            Pointwise::AddScalar => "tl_add_scalar",
            Pointwise::MulScalar => "tl_mul_scalar",
            Pointwise::ScalarSub => "tl_scalar_sub",
            Pointwise::ScalarDiv => "tl_scalar_div",
            Pointwise::Cube => "tl_cube",
            Pointwise::Reciprocal => "tl_reciprocal",
            Pointwise::ReciprocalSquare => "tl_reciprocal_square",
            Pointwise::ClampMin => "tl_clamp_min",
            Pointwise::ClampMax => "tl_clamp_max",
            Pointwise::Clamp => "tl_clamp",
            Pointwise::Maximum => "tl_maximum",
            Pointwise::Minimum => "tl_minimum",
            Pointwise::Rsqrt => "tl_rsqrt",
            Pointwise::Erf => "tl_erf",
            Pointwise::Log1p => "tl_log1p",
            Pointwise::Expm1 => "tl_expm1",
            Pointwise::GeluTanh => "tl_gelu_tanh",
            Pointwise::Hardsigmoid => "tl_hardsigmoid",
            Pointwise::Hardswish => "tl_hardswish",
            Pointwise::Mish => "tl_mish",
            Pointwise::LeakyRelu => "tl_leaky_relu",
            Pointwise::Elu => "tl_elu",
            Pointwise::Softplus => "tl_softplus",
        }
    }

    /// Whether the kernel reads a second tensor (`b`); the others read only `a`.
    pub const fn two_tensors(self) -> bool {
        matches!(self, Pointwise::Maximum | Pointwise::Minimum)
    }

    /// The per-element function of tensors `a`, `b` (unused unless [`Self::two_tensors`]) and
    /// numbers `x`, `y`.
    pub fn apply<S: Scalar>(self, s: &mut S, a: &S::F, b: &S::F, x: &S::F, y: &S::F) -> S::F {
        match self {
            Pointwise::AddScalar => s.add(a, x),
            Pointwise::MulScalar => s.mul(a, x),
            Pointwise::ScalarSub => s.sub(x, a),
            Pointwise::ScalarDiv => {
                let one = s.c(1.0);
                let reciprocal = s.div(&one, a);
                s.mul(&reciprocal, x)
            }
            Pointwise::Cube => {
                let square = s.mul(a, a);
                s.mul(&square, a)
            }
            Pointwise::Reciprocal => {
                let one = s.c(1.0);
                s.div(&one, a)
            }
            Pointwise::ReciprocalSquare => {
                let one = s.c(1.0);
                let square = s.mul(a, a);
                s.div(&one, &square)
            }
            Pointwise::ClampMin => clamp_min(s, a, x),
            Pointwise::ClampMax => clamp_max(s, a, x),
            Pointwise::Clamp => {
                let nan = s.is_nan(a);
                let low = s.max(a, x);
                let both = s.min(&low, y);
                s.select(&nan, a, &both)
            }
            Pointwise::Maximum | Pointwise::Minimum => {
                let (a_nan, b_nan) = (s.is_nan(a), s.is_nan(b));
                let picked = if self == Pointwise::Maximum { s.max(a, b) } else { s.min(a, b) };
                // a NaN operand gives NaN: `a + b` is NaN then
                let nan = s.add(a, b);
                let with_b = s.select(&b_nan, &nan, &picked);
                s.select(&a_nan, &nan, &with_b)
            }
            // eager's CUDA `rsqrtf` is approximate (2 ulp); ours is 1/sqrt, two IEEE roundings
            Pointwise::Rsqrt => {
                let root = s.sqrt(a);
                let one = s.c(1.0);
                s.div(&one, &root)
            }
            Pointwise::Erf => erf(s, a),
            Pointwise::Log1p => log1p(s, a),
            Pointwise::Expm1 => expm1(s, a),
            // `0.5 x (1 + tanh(β (x + κ x³)))`, β = √2·(2/√π)·0.5 and κ = 0.044715 as float32
            Pointwise::GeluTanh => {
                const BETA: f32 = (std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5) as f32;
                let square = s.mul(a, a);
                let cube = s.mul(&square, a);
                let kappa = s.c(0.044715);
                let kx3 = s.mul(&kappa, &cube);
                let sum = s.add(a, &kx3);
                let beta = s.c(BETA);
                let inner = s.mul(&beta, &sum);
                let t = tanh(s, &inner);
                let half = s.c(0.5);
                let one = s.c(1.0);
                let hx = s.mul(&half, a);
                let one_plus = s.add(&one, &t);
                s.mul(&hx, &one_plus)
            }
            // `std::min(std::max(x + 3, 0), 6) * (1/6)`
            Pointwise::Hardsigmoid => {
                let r = relu6_of_x_plus_3(s, a);
                let sixth = s.c(1.0 / 6.0);
                s.mul(&r, &sixth)
            }
            // `x * std::min(std::max(x + 3, 0), 6) * (1/6)`, left to right
            Pointwise::Hardswish => {
                let r = relu6_of_x_plus_3(s, a);
                let xr = s.mul(a, &r);
                let sixth = s.c(1.0 / 6.0);
                s.mul(&xr, &sixth)
            }
            // `x * tanh(log1p(exp(x)))`
            Pointwise::Mish => {
                let sp = log1p_exp(s, a);
                let t = tanh(s, &sp);
                s.mul(a, &t)
            }
            Pointwise::LeakyRelu => {
                let zero = s.c(0.0);
                let positive = s.gt(a, &zero);
                let scaled = s.mul(a, x);
                s.select(&positive, a, &scaled)
            }
            Pointwise::Elu => {
                let zero = s.c(0.0);
                let positive = s.gt(a, &zero);
                let pos = s.mul(a, y);
                let em1 = expm1(s, a);
                let neg = s.mul(&em1, x);
                s.select(&positive, &pos, &neg)
            }
            Pointwise::Softplus => {
                let scaled = s.mul(a, x);
                let above = s.gt(&scaled, y);
                let sp = log1p_exp(s, &scaled);
                let soft = s.div(&sp, x);
                s.select(&above, a, &soft)
            }
        }
    }

    /// The host model of the device kernel: bit-identical to it.
    pub fn eval(self, a: f32, b: f32, x: f32, y: f32) -> f32 {
        self.apply(&mut CpuScalar, &a, &b, &x, &y)
    }
}

/// The eager forms of a tensor `t` with one Python number `s`, each as the [`Pointwise`]
/// kernel and float32 number it runs as — one mapping for the ops (`tl::cuda::ops`) and the
/// GPU check, which compares the device with eager on the same forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberForm {
    /// `t + s`, `s + t`
    Add,
    /// `t - s`: `t + (-s)`
    Sub,
    /// `t * s`, `s * t`
    Mul,
    /// `t / s`: `t * (1/s)`, the reciprocal rounded to float32 first, as eager's CUDA kernel
    Div,
    /// `s - t`
    ReverseSub,
    /// `s / t`: `reciprocal(t) * s`
    ReverseDiv,
    ClampMin,
    ClampMax,
}

impl NumberForm {
    pub const ALL: [NumberForm; 8] = [
        NumberForm::Add,
        NumberForm::Sub,
        NumberForm::Mul,
        NumberForm::Div,
        NumberForm::ReverseSub,
        NumberForm::ReverseDiv,
        NumberForm::ClampMin,
        NumberForm::ClampMax,
    ];

    /// The kernel and its `x`; eager rounds the number to float32 before using it.
    pub fn kernel(self, s: f64) -> (Pointwise, f32) {
        let x = s as f32;
        match self {
            NumberForm::Add => (Pointwise::AddScalar, x),
            NumberForm::Sub => (Pointwise::AddScalar, -x),
            NumberForm::Mul => (Pointwise::MulScalar, x),
            NumberForm::Div => (Pointwise::MulScalar, 1.0 / x),
            NumberForm::ReverseSub => (Pointwise::ScalarSub, x),
            NumberForm::ReverseDiv => (Pointwise::ScalarDiv, x),
            NumberForm::ClampMin => (Pointwise::ClampMin, x),
            NumberForm::ClampMax => (Pointwise::ClampMax, x),
        }
    }

    /// The op name of the form in the GPU check's dump (`scripts/gpu_eager_compare.py`).
    pub fn eager_name(self) -> &'static str {
        match self {
            NumberForm::Add => "add_scalar",
            NumberForm::Sub => "sub_scalar",
            NumberForm::Mul => "mul_scalar",
            NumberForm::Div => "div_scalar",
            NumberForm::ReverseSub => "scalar_sub",
            NumberForm::ReverseDiv => "scalar_div",
            NumberForm::ClampMin => "clamp_min",
            NumberForm::ClampMax => "clamp_max",
        }
    }
}
