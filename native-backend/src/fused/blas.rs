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
//! Why not a hand-written kernel for tiny products (where the BLAS call's fixed cost, about
//! 1 µs here, exceeds the arithmetic): tried and measured — a register-blocked kernel sums in
//! a different order, and on outputs with cancellation (a dot of 128 unit-size terms ending
//! near 0.07) it differs from eager by more than rtol 1e-5. Eager parity needs MKL's order,
//! so every size goes through the BLAS and there is no size threshold.

use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;

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

/// Whether [`linear_into`] and [`matmul_into`] can run (the BLAS symbol was found).
pub fn available() -> bool {
    sgemm().is_some()
}

/// The largest dimension the LP64 interface takes.
pub fn fits(dims: &[usize]) -> bool {
    dims.iter().all(|&d| d >= 1 && d <= c_int::MAX as usize)
}

/// `out (m×n) = x (m×k) · wᵀ + beta·out` for row-major `w (n×k)`: exactly the call `addmm`
/// makes for `F.linear` (column-major view: `outᵀ = w · xᵀ`, i.e. `gemm('T','N', n, m, k)`).
/// With `beta = 1` and `out` pre-filled with the bias rows this is `addmm(bias, x, w.t())`;
/// with `beta = 0` it is `x @ w.t()` and `out` may hold anything.
///
/// # Safety
/// `x`, `w`, `out` point to `m·k`, `n·k`, `m·n` valid f32s, `out` not overlapping the inputs,
/// all dimensions ≥ 1 and ≤ `i32::MAX`, and [`available`] returned true.
pub unsafe fn linear_into(m: usize, k: usize, n: usize, x: *const f32, w: *const f32, beta: f32, out: *mut f32) {
    let Some(sgemm) = sgemm() else { unreachable!("callers check blas::available()") };
    let (mi, ni, ki) = (n as c_int, m as c_int, k as c_int);
    let alpha = 1.0f32;
    // SAFETY: the caller guarantees the buffers and sizes (see above).
    unsafe {
        sgemm(
            c"T".as_ptr(), c"N".as_ptr(), &mi, &ni, &ki, &alpha, w, &ki, x, &ki, &beta, out, &mi,
        )
    };
}

/// `out (m×n) = x (m×k) @ w (k×n)`, both row-major: the call `mm` makes (`gemm('N','N', n, m, k)`
/// on the column-major view, beta 0).
///
/// # Safety
/// As [`linear_into`], with `w` holding `k·n` f32s.
pub unsafe fn matmul_into(m: usize, k: usize, n: usize, x: *const f32, w: *const f32, out: *mut f32) {
    let Some(sgemm) = sgemm() else { unreachable!("callers check blas::available()") };
    let (mi, ni, ki) = (n as c_int, m as c_int, k as c_int);
    let (alpha, beta) = (1.0f32, 0.0f32);
    // SAFETY: the caller guarantees the buffers and sizes (see above).
    unsafe {
        sgemm(
            c"N".as_ptr(), c"N".as_ptr(), &mi, &ni, &ki, &alpha, w, &mi, x, &ki, &beta, out, &mi,
        )
    };
}
