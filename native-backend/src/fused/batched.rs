//! Batched products `a @ b` of rank 3 or 4 with the same batch dims — attention's `q @ kᵀ`
//! and `p @ v` — one GEMM per matrix straight into the result, without the dispatcher.
//!
//! Why: eager's `matmul` of two such tensors goes through `expand`, `reshape`, `bmm` and a
//! view (a dozen dispatcher calls) before its BLAS calls, which for attention at sequence 16
//! costs more than the arithmetic. How parity is kept: for float32 CPU operands `bmm` calls
//! the BLAS once per matrix as `mm` does (`x @ w` when `b` is row-major, `F.linear`'s call
//! when `b` is the transpose of a row-major tensor, as `k.transpose(-2, -1)` is). Every
//! product here is [`blas::Gemm`]'s for that layout, and because eager's `bmm` takes other
//! kernels for some shapes (a loop of its own for tiny ones, or another BLAS build), each
//! shape is compared with eager's `matmul` once per thread count on random and signed-zero
//! operands, bit for bit; a shape that differs stays on libtorch for the life of the process.

use std::cell::RefCell;
use std::collections::HashMap;

use tch::{Device, Kind, Tensor};

use super::blas;
use super::small_gemm::{self, Layout};
use crate::error::Result;

/// A batched product the direct path computes: `batches` products `m×k · k×n`, `b` laid out
/// as `layout` says, results row-major one after another (the result's own layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Shape {
    layout: Layout,
    batches: usize,
    m: usize,
    k: usize,
    n: usize,
}

/// `a @ b` when both are float32 CPU tensors of rank 3 or 4 with equal batch dims, `a`
/// contiguous and `b` contiguous or the transpose of its last two dims of a contiguous
/// tensor, and eager's `matmul` gives this path's bits for the shape; `None` otherwise (the
/// caller runs libtorch's op, which also raises eager's errors).
pub fn matmul(a: &Tensor, b: &Tensor) -> Option<Result<Tensor>> {
    let (shape, a_data, b_data, out_shape) = plan(a, b)?;
    if !agrees_with_eager(shape) {
        return None;
    }
    Some(run(shape, a_data, b_data, &out_shape))
}

/// The shape and data of a product the direct path takes (before the check against eager).
fn plan(a: &Tensor, b: &Tensor) -> Option<(Shape, *const f32, *const f32, Vec<i64>)> {
    let (fa, fb) = (crate::facts::Facts::of(a)?, crate::facts::Facts::of(b)?);
    let float_cpu = |f: &crate::facts::Facts| f.device == Device::Cpu && f.is_kind(Kind::Float);
    if !(float_cpu(&fa) && float_cpu(&fb) && fa.rank == fb.rank && matches!(fa.rank, 3 | 4) && blas::available()) {
        return None;
    }
    let (a_size, b_size) = (a.size(), b.size());
    let rank = a_size.len();
    let (batch, [m, k]) = (&a_size[..rank - 2], [a_size[rank - 2], a_size[rank - 1]]);
    let n = b_size[rank - 1];
    if batch != &b_size[..rank - 2] || b_size[rank - 2] != k {
        return None;
    }
    let batches: i64 = batch.iter().product();
    let dims = [batches as usize, m as usize, k as usize, n as usize];
    if batches < 1 || !blas::fits(&dims[1..]) {
        return None;
    }
    let (true, a_data) = crate::facts::contiguous_data(a)? else { return None };
    let (b_contiguous, b_data) = crate::facts::contiguous_data(b)?;
    let layout = if b_contiguous {
        Layout::Matmul
    } else if transposed_contiguous(&b_size, &b.stride()) {
        Layout::Linear
    } else {
        return None;
    };
    let mut out_shape = batch.to_vec();
    out_shape.extend([m, n]);
    let shape = Shape { layout, batches: dims[0], m: dims[1], k: dims[2], n: dims[3] };
    Some((shape, a_data, b_data, out_shape))
}

/// Whether `stride` is that of `t.transpose(-2, -1)` for a contiguous tensor `t` of the
/// transposed size: each `n×k` matrix row-major, the matrices one after another.
fn transposed_contiguous(size: &[i64], stride: &[i64]) -> bool {
    let rank = size.len();
    let (k, n) = (size[rank - 2], size[rank - 1]);
    let mut matrices_stride = n * k;
    for dim in (0..rank - 2).rev() {
        if size[dim] != 1 && stride[dim] != matrices_stride {
            return false;
        }
        matrices_stride *= size[dim];
    }
    stride[rank - 2] == 1 && stride[rank - 1] == k
}

/// The products into a fresh tensor of `out_shape`.
fn run(shape: Shape, a: *const f32, b: *const f32, out_shape: &[i64]) -> Result<Tensor> {
    let Shape { layout, batches, m, k, n } = shape;
    let tensor = Tensor::f_empty(out_shape, (Kind::Float, Device::Cpu))?;
    let (_, out) = crate::facts::contiguous_data(&tensor).ok_or_else(|| crate::Error::Runtime("a fresh tensor has no data pointer".into()))?;
    let gemm = blas::Gemm::for_shape(layout, m, k, n, false);
    // addresses, so that the parts may share them across threads
    let (a, b, out) = (a as usize, b as usize, out as usize);
    let products = |begin: usize, end: usize| {
        for i in begin..end {
            // SAFETY: `a` holds `batches` row-major m×k matrices, `b` `batches` k×n operands
            // in `layout`, `out` `batches` m×n outputs (a fresh contiguous tensor only this
            // call writes, each part its own matrices); every dimension is in 1..=i32::MAX
            // and the BLAS is available (`plan`).
            unsafe { gemm.run((a as *const f32).add(i * m * k), (b as *const f32).add(i * k * n), (out as *mut f32).add(i * m * n)) };
        }
    };
    // Eager's `bmm` hands the batch to MKL's batched GEMM, which spreads the matrices over the
    // threads; one product of attention's size is too small for the BLAS to split, so the
    // batch is split here too (the probe compares the bits at this thread count).
    let grain = (BATCH_PART_PRODUCT / (m * k * n)).max(1);
    crate::parallel::for_each_part(batches, grain, &products);
    Ok(tensor)
}

/// Multiply-adds of one part of a batch split over torch's threads: below this a fork-join
/// costs more than it saves.
const BATCH_PART_PRODUCT: usize = 1 << 14;

thread_local! {
    /// Shapes compared with eager on this thread (at a thread count), and whether they matched.
    static AGREES: RefCell<HashMap<(Shape, i32), bool>> = RefCell::new(HashMap::new());
}

/// Whether this path gives eager's bits for `shape`, compared once per thread and thread count.
fn agrees_with_eager(shape: Shape) -> bool {
    let key = (shape, crate::facts::num_threads());
    if let Some(known) = AGREES.with(|cache| cache.borrow().get(&key).copied()) {
        return known;
    }
    let agrees = probe(shape).unwrap_or(false);
    AGREES.with(|cache| cache.borrow_mut().insert(key, agrees));
    agrees
}

/// Random operands (the summation order: at least [`small_gemm::PROBE_ELEMENTS`] outputs, in
/// as many fresh cases as a tiny shape needs, since two orders of a short chain often round
/// alike) and signed-zero operands (where each chain starts), through this path and through
/// eager's `matmul`, compared bit for bit. The operands come from a generator of our own, so
/// torch's random state is left as the user set it.
fn probe(shape: Shape) -> Result<bool> {
    let Shape { layout, batches, m, k, n } = shape;
    let _no_grad = tch::no_grad_guard();
    let mut state = 0x2545_F491_4F6C_DD1Du64 ^ ((((batches * 31 + m) * 31 + k) * 31 + n) as u64);
    let mut random = |len: usize, sign: f32| -> Vec<f32> {
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let magnitude = (1.0 + (state >> 41) as f32 / (1u64 << 23) as f32) * f32::powi(2.0, ((state >> 8) % 8) as i32 - 4);
                match sign {
                    0.0 if state & 1 == 0 => magnitude,
                    0.0 => -magnitude,
                    s => s * magnitude,
                }
            })
            .collect()
    };
    let (a_len, b_len) = (batches * m * k, batches * k * n);
    let b_stored = match layout {
        Layout::Matmul => [batches as i64, k as i64, n as i64],
        Layout::Linear => [batches as i64, n as i64, k as i64],
    };
    let agree = |a_values: &[f32], b_values: &[f32]| -> Result<bool> {
        let a = Tensor::from_slice(a_values).f_view([batches as i64, m as i64, k as i64])?;
        let stored = Tensor::from_slice(b_values).f_view(b_stored)?;
        let b = match layout {
            Layout::Matmul => stored,
            Layout::Linear => stored.f_transpose(-2, -1)?,
        };
        let eager = a.f_matmul(&b)?;
        let Some((probe_shape, a_data, b_data, out_shape)) = plan(&a, &b) else { return Ok(false) };
        if probe_shape != shape {
            return Ok(false);
        }
        let ours = run(shape, a_data, b_data, &out_shape)?;
        Ok(bits(&ours)? == bits(&eager)?)
    };
    for _ in 0..small_gemm::PROBE_ELEMENTS.div_ceil(batches * m * n) {
        let (a_values, b_values) = (random(a_len, 0.0), random(b_len, 0.0));
        if !agree(&a_values, &b_values)? {
            return Ok(false);
        }
    }
    let signed_zeros = [(-0.0, 1.0), (0.0, -1.0), (-0.0, -1.0)];
    for (zero, sign) in signed_zeros {
        let b_values = random(b_len, sign);
        if !agree(&vec![zero; a_len], &b_values)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn bits(t: &Tensor) -> Result<Vec<u32>> {
    let values = Vec::<f32>::try_from(t.f_contiguous()?.f_view([-1])?)?;
    Ok(values.into_iter().map(f32::to_bits).collect())
}

#[cfg(test)]
mod timing {
    /// Paired timing of this path against eager's `matmul` for `q @ kᵀ` of `[b, t, d]`
    /// (`TL_BATCHED="b,t,d;…"`, `TL_THREADS`); prints whether the path was taken, medians and
    /// the median ratio. Run by hand: `cargo test --release --lib batched::timing -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn time_batched() {
        let threads: i32 = std::env::var("TL_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(1);
        tch::set_num_threads(threads);
        let shapes = std::env::var("TL_BATCHED").unwrap_or_else(|_| "1,16,64;8,16,64;12,16,64;8,128,64;96,16,64".into());
        for shape in shapes.split(';') {
            let d: Vec<i64> = shape.split(',').map(|v| v.trim().parse().unwrap()).collect();
            let q = tch::Tensor::randn([d[0], d[1], d[2]], (tch::Kind::Float, tch::Device::Cpu));
            let kt = tch::Tensor::randn([d[0], d[1], d[2]], (tch::Kind::Float, tch::Device::Cpu)).transpose(-2, -1);
            let taken = super::matmul(&q, &kt).is_some();
            let reps = (20_000_000 / (d[0] * d[1] * d[1] * d[2])).clamp(3, 20_000);
            let time = |ours: bool| {
                let t = std::time::Instant::now();
                for _ in 0..reps {
                    let out = if ours { super::matmul(&q, &kt).unwrap().unwrap() } else { q.matmul(&kt) };
                    let _ = std::hint::black_box(out);
                }
                t.elapsed().as_secs_f64() / reps as f64 * 1e6
            };
            if !taken {
                println!("{shape} at {threads} threads: libtorch's path");
                continue;
            }
            let (ours, reference, ratio) = crate::fused::paired_timing::paired_medians(time);
            println!("{shape} at {threads} threads: ours {:.2} us eager {:.2} us  eager/ours x{:.2}", ours, reference, ratio);
        }
    }
}
