//! Bool negation and dtype conversions of contiguous CPU tensors as direct loops (split over
//! torch's threads like the elementwise pass). On small tensors eager's cost is the
//! dispatcher and TensorIterator's set-up, which these skip; every element converts as
//! eager's kernel converts it (checked once per process where the CPU decides, below).

use std::sync::OnceLock;

use tch::{Device, Kind, Tensor};

use crate::error::Result;
use crate::facts::{self, Facts};
use crate::parallel::DisjointParts;

/// `~t` / `torch.logical_not(t)` of a contiguous bool tensor, or `None` for other inputs.
pub fn logical_not(t: &Tensor) -> Option<Result<Tensor>> {
    map::<u8, u8>(t, &Facts::of(t)?, Kind::Bool, Kind::Bool, false, |b| u8::from(b == 0))
}

/// `t.to(kind)` (`.long()`, `.float()`, `.bool()`) of a contiguous tensor to another dtype,
/// or `None` for other inputs and for the conversions left to libtorch.
pub fn to_kind(t: &Tensor, kind: Kind) -> Option<Result<Tensor>> {
    let from = Facts::of(t)?;
    match kind {
        _ if from.is_kind(kind) => None,
        Kind::Int64 if from.is_kind(Kind::Float) && float_to_int64_is_x86() && (vector_float_to_int64() || t.numel() <= SCALAR_FLOAT_TO_INT64_MAX) => map_slices(t, &from, Kind::Float, Kind::Int64, true, floats_to_int64),
        Kind::Int64 if from.is_kind(Kind::Bool) => map::<u8, i64>(t, &from, Kind::Bool, Kind::Int64, true, |b| i64::from(b != 0)),
        Kind::Float if from.is_kind(Kind::Bool) => map::<u8, f32>(t, &from, Kind::Bool, Kind::Float, true, |b| f32::from(b != 0)),
        Kind::Float if from.is_kind(Kind::Int64) => map::<i64, f32>(t, &from, Kind::Int64, Kind::Float, true, |i| i as f32),
        Kind::Bool if from.is_kind(Kind::Float) => map::<f32, u8>(t, &from, Kind::Float, Kind::Bool, true, |x| u8::from(x != 0.0)),
        Kind::Bool if from.is_kind(Kind::Int64) => map::<i64, u8>(t, &from, Kind::Int64, Kind::Bool, true, |i| u8::from(i != 0)),
        _ => None,
    }
}

/// C++'s `static_cast<int64_t>(float)` as x86-64 computes it (`cvttss2si`): truncation, and
/// the "integer indefinite" `i64::MIN` for NaN and out-of-range values (Rust's `as` saturates).
#[inline(always)]
fn float_to_int64(x: f32) -> i64 {
    const LIMIT: f32 = 9_223_372_036_854_775_808.0; // 2^63
    if x.is_nan() || !(-LIMIT..LIMIT).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// Up to how many elements the scalar float → int64 loop (no AVX-512DQ) runs: about 1 ns an
/// element, it wins only where eager's set-up dominates.
const SCALAR_FLOAT_TO_INT64_MAX: usize = 128;

fn vector_float_to_int64() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512dq") && std::arch::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`float_to_int64`] over a slice: with AVX-512DQ one `vcvttps2qq` per 8 values (whose
/// out-of-range result is the same `i64::MIN`), else the scalar loop.
fn floats_to_int64(src: &[f32], dst: &mut [i64]) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512dq,avx512vl")]
        unsafe fn avx512dq(src: &[f32], dst: &mut [i64]) {
            use std::arch::x86_64::{_mm256_loadu_ps, _mm512_cvttps_epi64, _mm512_storeu_si512};
            let whole = src.len().min(dst.len()) / 8 * 8;
            for i in (0..whole).step_by(8) {
                // SAFETY: 8 floats read from and 8 int64s written to in-bounds offsets
                unsafe { _mm512_storeu_si512(dst.as_mut_ptr().add(i).cast(), _mm512_cvttps_epi64(_mm256_loadu_ps(src.as_ptr().add(i)))) };
            }
            dst[whole..].iter_mut().zip(&src[whole..]).for_each(|(d, &s)| *d = float_to_int64(s));
        }
        if vector_float_to_int64() {
            // SAFETY: the CPU supports AVX-512F/DQ/VL (checked just above).
            return unsafe { avx512dq(src, dst) };
        }
    }
    dst.iter_mut().zip(src).for_each(|(d, &s)| *d = float_to_int64(s));
}

/// Whether this libtorch converts float32 to int64 as [`float_to_int64`] does, special values
/// included (asked once per process; a CPU that converts otherwise keeps libtorch's kernel).
fn float_to_int64_is_x86() -> bool {
    static AGREES: OnceLock<bool> = OnceLock::new();
    *AGREES.get_or_init(|| {
        let mut probe = vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e19, -1e19, -9.223372e18, 2.5, -2.5, -0.0, 0.999, 16_777_217.0];
        // past one vector width and with a tail: both of eager's loops
        probe.extend((0..45).map(|i| (i as f32 - 22.0) * 1.37e17));
        let input = Tensor::from_slice(&probe);
        let Ok(eager) = input.f_to_kind(Kind::Int64) else { return false };
        let mut converted = vec![0i64; probe.len()];
        eager.copy_data(&mut converted, probe.len());
        let mut ours = vec![0i64; probe.len()];
        floats_to_int64(&probe, &mut ours);
        ours == converted
    })
}

/// `f` of every element of `t` (whose `facts` the caller has read; `from` dtype, contiguous,
/// CPU) into a fresh tensor of dtype `to`, or `None` when `t` is not such a tensor. The output has `t`'s strides when
/// `same_strides` (eager's `.to()` preserves them, odd strides of size-1 dims included), else
/// the default ones (a TensorIterator op of contiguous operands); either way its elements are
/// in the input's memory order.
fn map<I: Copy + Sync, O: Send>(t: &Tensor, facts: &Facts, from: Kind, to: Kind, same_strides: bool, f: impl Fn(I) -> O + Sync) -> Option<Result<Tensor>> {
    map_slices(t, facts, from, to, same_strides, |input: &[I], output: &mut [O]| output.iter_mut().zip(input).for_each(|(o, &x)| *o = f(x)))
}

/// [`map`] with a function of whole parts (`output[i] = f(input[i])` over a part).
fn map_slices<I: Copy + Sync, O: Send>(t: &Tensor, facts: &Facts, from: Kind, to: Kind, same_strides: bool, f: impl Fn(&[I], &mut [O]) + Sync) -> Option<Result<Tensor>> {
    if facts.device != Device::Cpu || !facts.is_kind(from) {
        return None;
    }
    let (contiguous, data) = facts::contiguous_data(t)?;
    if !contiguous {
        return None;
    }
    let out = if same_strides { Tensor::f_empty_strided(t.size(), t.stride(), (to, Device::Cpu)) } else { Tensor::f_empty(t.size(), (to, Device::Cpu)) };
    let out = match out {
        Ok(out) => out,
        Err(e) => return Some(Err(e.into())),
    };
    let len = out.numel();
    if len == 0 {
        return Some(Ok(out));
    }
    let (_, out_data) = facts::contiguous_data(&out)?;
    // SAFETY: `t` is a live contiguous tensor of `len` elements of `I`'s layout (its dtype was
    // checked), read only while this runs.
    let input = unsafe { std::slice::from_raw_parts(data as *const I, len) };
    // SAFETY: the fresh output holds `len` elements of `O`'s layout, written only here.
    let output = DisjointParts::new(unsafe { std::slice::from_raw_parts_mut(out_data as *mut O, len) });
    super::for_each_segment(len, &|start, stop| {
        // SAFETY: the segments of one call are disjoint.
        let part = unsafe { output.part(start, stop - start) };
        f(&input[start..stop], part);
    });
    Some(Ok(out))
}
