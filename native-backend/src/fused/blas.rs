//! libtorch's own single-precision GEMM (`sgemm_`, the BLAS that eager `mm`/`addmm` call on
//! CPU — MKL in the x86-64 wheels), called directly instead of through the dispatcher.
//!
//! Why: eager's small matmuls spend most of their time in dispatch and allocation, not in the
//! BLAS. Calling the same routine with the same arguments as `addmm` does keeps results
//! bit-identical to eager (rounding and even the signed-zero behaviour of MKL's small-size
//! kernels), and it follows `torch.set_num_threads` because it shares libtorch's BLAS state.
//! The symbol is looked up once at run time in the already-loaded `libtorch_cpu`; when it is
//! missing (another BLAS build), callers fall back to tch's matmul.
//!
//! Small products, where the call's fixed cost (about 1 µs) exceeds the arithmetic, go to
//! [`small_gemm`] instead — but only for shapes where that kernel follows the BLAS's own
//! summation order bit for bit (checked against this BLAS per shape: [`Gemm::for_shape`]
//! hands [`small_gemm`] the BLAS call to compare with, so `small_gemm` does not depend on this
//! module). A kernel in any other order differs from eager on outputs with cancellation (a dot
//! of 128 unit-size terms ending near 0.07) by more than rtol 1e-5, so it is never used.

use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;

use super::small_gemm::{self, Layout};

/// Fortran BLAS `sgemm_` (LP64: 32-bit integers), column-major.
type SgemmFn = unsafe extern "C" fn(
    transa: *const c_char,
    transb: *const c_char,
    m: *const c_int,
    n: *const c_int,
    k: *const c_int,
    alpha: *const f32,
    a: *const f32,
    lda: *const c_int,
    b: *const f32,
    ldb: *const c_int,
    beta: *const f32,
    c: *mut f32,
    ldc: *const c_int,
);

/// The resolved routine, or `None` when this libtorch exports none.
fn sgemm() -> Option<SgemmFn> {
    static SGEMM: OnceLock<Option<SgemmFn>> = OnceLock::new();
    *SGEMM.get_or_init(resolve)
}

#[cfg(unix)]
fn resolve() -> Option<SgemmFn> {
    use libloading::os::unix::{Library, RTLD_LAZY};
    // The extension links libtorch_cpu, so it is already loaded: dlopen by its soname only
    // returns the loaded object's handle (kept for the life of the process).
    for name in ["libtorch_cpu.so", "libtorch_cpu.dylib"] {
        // SAFETY: opening an already-loaded library runs no initialisers.
        if let Ok(library) = unsafe { Library::open(Some(name), RTLD_LAZY) } {
            // SAFETY: `sgemm_` has the Fortran BLAS signature declared by `SgemmFn`.
            if let Ok(symbol) = unsafe { library.get::<SgemmFn>(b"sgemm_\0") } {
                let function = *symbol;
                std::mem::forget(library);
                return Some(function);
            }
        }
    }
    None
}

#[cfg(not(unix))]
fn resolve() -> Option<SgemmFn> {
    None
}

/// Whether [`gemm_into`] and [`Gemm::run`] can run (the BLAS symbol was found).
pub fn available() -> bool {
    sgemm().is_some()
}

/// The largest dimension the LP64 interface takes.
pub fn fits(dims: &[usize]) -> bool {
    dims.iter().all(|&d| d >= 1 && d <= c_int::MAX as usize)
}

/// `out (m×n) = x (m×k) · w` (+ `out` when `accumulate`): [`Gemm::for_shape`] then
/// [`Gemm::run`], for a product computed once.
///
/// # Safety
/// As [`Gemm::run`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_into(layout: Layout, m: usize, k: usize, n: usize, x: *const f32, w: *const f32, accumulate: bool, out: *mut f32) {
    // SAFETY: the caller's guarantees.
    unsafe { Gemm::for_shape(layout, m, k, n, accumulate).run(x, w, out) }
}

/// Multiply-adds from which the BLAS is preferred to our kernel when torch has more than one
/// thread.
const PARALLEL_PRODUCT: usize = 1 << 16;

/// A product's kernel, chosen once for its shape: [`small_gemm`] where it reproduces the BLAS
/// here, else the BLAS itself.
///
/// `Layout::Linear` (`w` row-major `n×k`) is exactly the call `addmm` makes for `F.linear`
/// (column-major view: `outᵀ = w · xᵀ`, `gemm('T','N', n, m, k)`); with `accumulate` and `out`
/// pre-filled with the bias rows it is `addmm(bias, x, w.t())` (beta = 1). `Layout::Matmul`
/// (`w` row-major `k×n`) is the call `mm` makes (`gemm('N','N', n, m, k)`, beta 0).
#[derive(Debug, Clone, Copy)]
pub struct Gemm {
    layout: Layout,
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
    small: Option<small_gemm::Planned>,
}

impl Gemm {
    /// The kernel for this shape. [`available`] must have returned true.
    pub fn for_shape(layout: Layout, m: usize, k: usize, n: usize, accumulate: bool) -> Gemm {
        // with more torch threads, a product this large is split across them by the BLAS,
        // which then beats our one-threaded kernels (measured with 2: ×0.88 at 256×16·16×16)
        // — except the row-vectorised F.linear, which splits its columns too
        let threaded = m * k * n >= PARALLEL_PRODUCT && crate::facts::num_threads() > 1 && !small_gemm::splits_over_threads(layout, m, k, n);
        let small = if threaded { None } else { small_gemm::Planned::for_shape(layout, m, k, n, accumulate, sgemm_into) };
        Gemm { layout, m, k, n, accumulate, small }
    }

    /// `out = x · w [+ out]`.
    ///
    /// # Safety
    /// `x`, `w`, `out` point to `m·k`, `k·n`, `m·n` valid f32s, `out` not overlapping the
    /// inputs, all dimensions ≥ 1 and ≤ `i32::MAX` ([`fits`]), and [`available`] returned true.
    pub unsafe fn run(&self, x: *const f32, w: *const f32, out: *mut f32) {
        let Gemm { layout, m, k, n, accumulate, small } = *self;
        // SAFETY (both): the caller's guarantees.
        match small {
            Some(plan) => unsafe { plan.run(x, w, out) },
            None => unsafe { sgemm_into(layout, m, k, n, x, w, accumulate, out) },
        }
    }
}

/// The BLAS call itself (see [`Gemm`]); also the [`small_gemm::Reference`] small plans are
/// checked against.
///
/// # Safety
/// As [`Gemm::run`].
#[allow(clippy::too_many_arguments)]
unsafe fn sgemm_into(layout: Layout, m: usize, k: usize, n: usize, x: *const f32, w: *const f32, accumulate: bool, out: *mut f32) {
    let Some(sgemm) = sgemm() else { unreachable!("callers check blas::available()") };
    let (mi, ni, ki) = (n as c_int, m as c_int, k as c_int);
    let alpha = 1.0f32;
    let beta = if accumulate { 1.0f32 } else { 0.0 };
    let (transa, lda) = match layout {
        Layout::Linear => (c"T", ki),
        Layout::Matmul => (c"N", mi),
    };
    // SAFETY: the caller guarantees the buffers and sizes (see above).
    unsafe { sgemm(transa.as_ptr(), c"N".as_ptr(), &mi, &ni, &ki, &alpha, w, &lda, x, &ki, &beta, out, &mi) };
}

#[cfg(test)]
mod timing {
    use super::*;

    /// Paired timing of our kernels against the BLAS (`TL_SHAPES="m,k,n;m,k,n"`; `F.linear`'s
    /// layout, or `x @ w` when `TL_MATMUL` is set); prints medians and the median ratio. Run by hand: `cargo test --release --lib timing -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn time_kernels() {
        let _ = tch::Tensor::zeros([1], (tch::Kind::Float, tch::Device::Cpu));
        tch::set_num_threads(1);
        let shapes = std::env::var("TL_SHAPES").unwrap_or_else(|_| "8,256,1024;8,1024,256".into());
        for shape in shapes.split(';') {
            let d: Vec<usize> = shape.split(',').map(|v| v.trim().parse().unwrap()).collect();
            let (m, k, n) = (d[0], d[1], d[2]);
            let x: Vec<f32> = (0..m * k).map(|i| (i % 13) as f32 * 0.1).collect();
            let w: Vec<f32> = (0..n * k).map(|i| (i % 7) as f32 * 0.1).collect();
            let mut out = vec![0.0f32; m * n];
            let layout = if std::env::var_os("TL_MATMUL").is_some() { Layout::Matmul } else { Layout::Linear };
            let plan = Gemm::for_shape(layout, m, k, n, false);
            let reps = (2_000_000 / (m * k * n)).clamp(3, 2000);
            let time = |ours: bool| {
                let t = std::time::Instant::now();
                for _ in 0..reps {
                    unsafe {
                        if ours { plan.run(x.as_ptr(), w.as_ptr(), out.as_mut_ptr()) } else { sgemm_into(layout, m, k, n, x.as_ptr(), w.as_ptr(), false, out.as_mut_ptr()) }
                    }
                }
                t.elapsed().as_secs_f64() / reps as f64 * 1e6
            };
            let (ours, reference, ratio) = crate::fused::paired_timing::paired_medians(time);
            println!("{m}x{k}x{n} small={} ours {:.1} us blas {:.1} us  blas/ours x{:.2}", plan.small.is_some(), ours, reference, ratio);
        }
    }
}
