//! `F.gelu(x)` (`approximate="none"`) with eager's own bits on AVX-512 CPUs, with no call.
//!
//! Why: for a contiguous float32 tensor of more than one element, eager runs GELU through
//! oneDNN. Its primitive costs about 8 µs a call (for 256 elements, six times the math), and
//! its values differ from ATen's erf kernel in the last bits (and at ±inf: NaN, where ATen
//! gives +inf and NaN). On AVX-512 CPUs oneDNN evaluates `0.5·x·(1 + erf(x/√2))` as:
//!
//! 1. `a = |x|`; an index `i` from the bits of `a` (`(bits + IDX_BIAS) >> 21`, arithmetic, so
//!    one polynomial per quarter binade), clamped to 1..=24, and 23 (the constant 1) for
//!    `a > SATURATES`;
//! 2. `p = P_i(a)`, a degree-5 polynomial by Horner's rule with fused multiply-adds;
//! 3. `x · (1 + copysign(p, x)) · 0.5`, rounded after each operation.
//!
//! Every step is exactly rounded, so evaluating it here gives the same bits: this was checked
//! over all 2^32 inputs when the module was written, and `calibrate::agrees` checks it again
//! against this process's libtorch before a fused kernel uses it. Where eager takes ATen's
//! kernel instead (a one-element or non-contiguous tensor, AVX2 CPUs, whose oneDNN uses
//! another formula, or oneDNN turned off) the fused kernels run libtorch's op.

/// `COEFFICIENTS[d][i]`: the degree-`d` coefficient of polynomial `i` (bits of an f32),
/// padded to 32 polynomials for the two-table permute of the vector kernel. Polynomial 0 is
/// never selected; 23 is the constant 1 (erf saturated), 24 the identity (NaN only).
const COEFFICIENTS: [[u32; 32]; 6] = [
    [
        0xa6f2cb94, 0x32827792, 0x3381cc0c, 0x34523d4a, 0x351ac44d, 0x35f36d88, 0x36ee8229, 0x37b8a3bb,
        0x3867a213, 0x3940033b, 0x3a2a5a1d, 0x3ae35863, 0x3b7828f2, 0x3c08b14b, 0x3c515ed3, 0xbb503236,
        0xbd8d8e5e, 0xbe8abcd9, 0xbf0c19a2, 0xbeccb328, 0x3e176ced, 0x3f470d99, 0x3f7abb28, 0x3f800000,
        0, 0, 0, 0, 0, 0, 0, 0,
    ],
    [
        0x3f4c422a, 0x3f4c421f, 0x3f4c4207, 0x3f4c41cb, 0x3f4c413b, 0x3f4c3fad, 0x3f4c3a2f, 0x3f4c2d40,
        0x3f4c146a, 0x3f4bc341, 0x3f4ad08c, 0x3f48f8cf, 0x3f45fac7, 0x3f404e07, 0x3f3b980f, 0x3f48dff3,
        0x3f78b21b, 0x3fbb0704, 0x40019c32, 0x3fe536d6, 0x3f81331e, 0x3e6c8684, 0x3c98f936, 0,
        0x3f800000, 0, 0, 0, 0, 0, 0, 0,
    ],
    [
        0xb62173f4, 0x3735e4cf, 0x37f2ff89, 0x388c23be, 0x3917535c, 0x39ab2ab0, 0x3a60fadb, 0x3af9b960,
        0x3b6e5491, 0x3c0a4ec5, 0x3ca5aa8c, 0x3d2138d9, 0x3d8737d4, 0x3ddfb660, 0x3e0f27ab, 0x3d94004b,
        0xbe0efdeb, 0xbf1d96c3, 0xbf89db58, 0xbf6d9897, 0xbef69fb8, 0xbdc4f8a8, 0xbbde6422, 0,
        0, 0, 0, 0, 0, 0, 0, 0,
    ],
    [
        0xbe081a19, 0xbe084570, 0xbe08639b, 0xbe089837, 0xbe08f409, 0xbe09ab95, 0xbe0b66d0, 0xbe0e400a,
        0xbe124df8, 0xbe1bde02, 0xbe2f19c9, 0xbe4931bf, 0xbe685fbc, 0xbe89c95f, 0xbe96cbca, 0xbe8044aa,
        0xbe0550f2, 0x3dcfd6a1, 0x3e94c826, 0x3e79345f, 0x3decec91, 0x3ca46568, 0x3aa1e00a, 0,
        0, 0, 0, 0, 0, 0, 0, 0,
    ],
    [
        0xba3d61db, 0x39f097a3, 0x3a5845dc, 0x3ab1fa35, 0x3b0cefb8, 0x3b653ab6, 0x3bcae527, 0x3c221712,
        0x3c6c5840, 0x3cc0a703, 0x3d1dcc19, 0x3d63656d, 0x3d955907, 0x3dbf9910, 0x3dd53f69, 0x3db7dcef,
        0x3d639ebe, 0xba6ede48, 0xbd22be69, 0xbd041cf1, 0xbc64f5ab, 0xbb097a32, 0xb8ebf380, 0,
        0, 0, 0, 0, 0, 0, 0, 0,
    ],
    [
        0x3cb7d80c, 0x3c9b6050, 0x3c978d11, 0x3c92e850, 0x3c8d058b, 0x3c848454, 0x3c6cd623, 0x3c4c824b,
        0x3c2a7935, 0x3be0b390, 0x3b0651ac, 0xbb232f53, 0xbbd42fa0, 0xbc2c5366, 0xbc492c9e, 0xbc2a7aa6,
        0xbbd55d04, 0xba823a76, 0x3b102aa8, 0x3ae25a7e, 0x3a31f792, 0x38b84375, 0x3689bb5a, 0,
        0, 0, 0, 0, 0, 0, 0, 0,
    ],
];

/// Added to the bits of `|x|` (wrapping) before the shift that gives the polynomial index.
const IDX_BIAS: u32 = 0xc21f_ffff;
/// Above this `|x|` (about 5.5426) erf is exactly 1 in float32.
const SATURATES: u32 = 0x40b1_5cee;
const SIGN: u32 = 0x8000_0000;
const INF: u32 = 0x7f80_0000;
/// x86's default NaN, which `0 · inf` in the polynomial gives for `+inf` (and, with the sign
/// flipped by step 3, `0x7fc0_0000` for `-inf`).
const DEFAULT_NAN: u32 = 0xffc0_0000;
const QUIET: u32 = 0x0040_0000;

fn coefficient(degree: usize, index: usize) -> f32 {
    f32::from_bits(COEFFICIENTS[degree][index])
}

/// One element, as oneDNN's AVX-512 kernel computes it.
pub fn gelu(x: f32) -> f32 {
    let bits = x.to_bits();
    let abs = bits & !SIGN;
    if abs >= INF {
        // a NaN comes back quieted (sign and payload kept); ±inf become default NaNs
        return f32::from_bits(if abs > INF { bits | QUIET } else { DEFAULT_NAN ^ (bits & SIGN) });
    }
    let a = f32::from_bits(abs);
    let index = if f32::from_bits(SATURATES) < a { 23 } else { ((abs.wrapping_add(IDX_BIAS) as i32) >> 21).clamp(1, 24) as usize };
    let mut p = coefficient(5, index);
    for degree in (0..5).rev() {
        p = p.mul_add(a, coefficient(degree, index));
    }
    let p = f32::from_bits(p.to_bits() ^ (bits & SIGN));
    x * (p + 1.0) * 0.5
}

/// [`gelu`] of every element of `values`, in place.
pub fn in_place(values: &mut [f32]) {
    let ptr = values.as_mut_ptr();
    // SAFETY: source and destination are the same initialised slice of `values.len()` floats;
    // the kernel reads each vector before it writes it.
    unsafe { apply(ptr, ptr, values.len()) }
}

/// `dst[i] = gelu(src[i])`; the slices have the same length.
pub fn into(src: &[f32], dst: &mut [f32]) {
    let len = src.len().min(dst.len());
    // SAFETY: `src` and `dst` are distinct borrows of at least `len` floats each.
    unsafe { apply(src.as_ptr(), dst.as_mut_ptr(), len) }
}

/// # Safety
/// `src` holds `len` initialised floats and `dst` has room for `len`; they are the same
/// pointer or do not overlap.
unsafe fn apply(src: *const f32, dst: *mut f32, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if super::math::has_avx512() {
        // SAFETY: the CPU has AVX-512F (checked just above); the pointers as the caller says.
        return unsafe { avx512::apply(src, dst, len) };
    }
    for i in 0..len {
        // SAFETY: `i < len`, within both buffers; each element is read before it is written.
        unsafe { *dst.add(i) = gelu(*src.add(i)) };
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{COEFFICIENTS, DEFAULT_NAN, IDX_BIAS, INF, QUIET, SATURATES, SIGN};

    /// Sixteen lanes at a time, the tail through a lane mask (as oneDNN's kernel: each
    /// element's value does not depend on its position).
    ///
    /// # Safety
    /// The CPU supports AVX-512F; the pointers as for `super::apply`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn apply(src: *const f32, dst: *mut f32, len: usize) {
        // the two halves (polynomials 0–15, 16–31) of each degree's coefficients
        let halves: [[__m512; 2]; 6] = std::array::from_fn(|d| {
            // SAFETY: each row of the table holds 32 floats (as u32 bits).
            unsafe { [_mm512_loadu_ps(COEFFICIENTS[d].as_ptr().cast()), _mm512_loadu_ps(COEFFICIENTS[d][16..].as_ptr().cast())] }
        });
        let mut i = 0;
        while i + 16 <= len {
            // SAFETY: lanes i..i+16 are within both buffers.
            unsafe { _mm512_storeu_ps(dst.add(i), gelu16(_mm512_loadu_ps(src.add(i)), &halves)) };
            i += 16;
        }
        if i < len {
            let mask: __mmask16 = (1u16 << (len - i)) - 1;
            // SAFETY: the mask covers only lanes i..len, within both buffers.
            unsafe { _mm512_mask_storeu_ps(dst.add(i), mask, gelu16(_mm512_maskz_loadu_ps(mask, src.add(i)), &halves)) };
        }
    }

    #[target_feature(enable = "avx512f")]
    fn gelu16(x: __m512, halves: &[[__m512; 2]; 6]) -> __m512 {
        let bits = _mm512_castps_si512(x);
        let abs = _mm512_and_si512(bits, _mm512_set1_epi32(!SIGN as i32));
        let a = _mm512_castsi512_ps(abs);
        let index = _mm512_srai_epi32::<21>(_mm512_add_epi32(abs, _mm512_set1_epi32(IDX_BIAS as i32)));
        let index = _mm512_min_epi32(_mm512_max_epi32(index, _mm512_set1_epi32(1)), _mm512_set1_epi32(24));
        let saturated = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(_mm512_set1_ps(f32::from_bits(SATURATES)), a);
        let index = _mm512_mask_mov_epi32(index, saturated, _mm512_set1_epi32(23));
        let coefficient = |d: usize| _mm512_permutex2var_ps(halves[d][0], index, halves[d][1]);
        let mut p = coefficient(5);
        for d in (0..5).rev() {
            p = _mm512_fmadd_ps(p, a, coefficient(d));
        }
        let sign = _mm512_and_si512(bits, _mm512_set1_epi32(SIGN as i32));
        let p = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(p), sign));
        let out = _mm512_mul_ps(_mm512_mul_ps(x, _mm512_add_ps(p, _mm512_set1_ps(1.0))), _mm512_set1_ps(0.5));
        // ±inf and NaN lanes: the NaNs of the scalar model (`super::gelu`)
        let nan = _mm512_cmpgt_epu32_mask(abs, _mm512_set1_epi32(INF as i32));
        let inf = _mm512_cmpeq_epi32_mask(abs, _mm512_set1_epi32(INF as i32));
        let quieted = _mm512_or_si512(bits, _mm512_set1_epi32(QUIET as i32));
        let default = _mm512_xor_si512(_mm512_set1_epi32(DEFAULT_NAN as i32), sign);
        let out = _mm512_mask_mov_ps(out, inf, _mm512_castsi512_ps(default));
        _mm512_mask_mov_ps(out, nan, _mm512_castsi512_ps(quieted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs over the whole float range: every 4099th bit pattern, and the edges.
    fn sweep() -> Vec<f32> {
        let mut values: Vec<f32> = (0..=u32::MAX / 4099).map(|k| f32::from_bits(k.wrapping_mul(4099))).collect();
        values.extend([0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, f32::MAX, f32::MIN, 5.5426, -5.5426, 1e-45, -1e-45]);
        values.extend([f32::from_bits(SATURATES), -f32::from_bits(SATURATES), f32::from_bits(SATURATES + 1)]);
        values
    }

    #[test]
    fn the_vector_kernel_gives_the_scalar_model_bit_for_bit_at_every_length() {
        let inputs = sweep();
        let mut out = vec![0.0f32; inputs.len()];
        into(&inputs, &mut out);
        for (x, y) in inputs.iter().zip(&out) {
            assert_eq!(y.to_bits(), gelu(*x).to_bits(), "gelu({x:e}) [{:#x}]", x.to_bits());
        }
        for len in 0..40 {
            let mut values = inputs[1000..1000 + len].to_vec();
            in_place(&mut values);
            assert!(values.iter().zip(&inputs[1000..]).all(|(y, x)| y.to_bits() == gelu(*x).to_bits()), "length {len}");
        }
    }

    #[test]
    fn the_model_keeps_gelus_shape() {
        assert_eq!(gelu(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(gelu(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(gelu(100.0), 100.0);
        assert_eq!(gelu(-100.0).to_bits(), (-0.0f32).to_bits());
        assert!(gelu(f32::INFINITY).is_nan() && gelu(f32::NEG_INFINITY).is_nan());
        for x in [-3.0f32, -1.0, -0.5, 0.25, 1.0, 2.0] {
            let exact = 0.5 * f64::from(x) * (1.0 + libm::erf(f64::from(x) / std::f64::consts::SQRT_2));
            assert!((f64::from(gelu(x)) - exact).abs() < 1e-6, "gelu({x})");
        }
    }
}
