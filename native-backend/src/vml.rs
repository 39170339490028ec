//! A guard against oneMKL's first-call race in its vector math library (VML).
//!
//! Why: libtorch sends contiguous float unary ops (`sqrt`, `exp`, `log`, `sin`, `erf`, …) to
//! MKL VML, asking for its high-accuracy kernels. The oneMKL that PyTorch wheels bundle picks a
//! VML function's kernel lazily on the function's first call, and when that first call runs on
//! several threads at once, one of them can run the low-accuracy kernel for its whole chunk
//! (pytorch/pytorch#188792: errors up to thousands of ulps, one call only, so reruns are
//! clean). Eager shares the race; native code calling libtorch's op from Python threads or
//! libtorch's workers would too. So before the first native call runs anything, each such op
//! runs once here, on one thread, on a small contiguous tensor of each float dtype: every
//! later call finds its kernel chosen. It costs one atomic load per call after that, and helps
//! eager code in the same process as well. The test binaries that compare with eager call it
//! before computing their references (their tests run on several threads).

use std::sync::Once;

use tch::{Device, Kind, Tensor};

/// Runs every VML-backed unary op of libtorch once (see the module doc); later calls return
/// at once.
pub fn warm_up() {
    static WARM: Once = Once::new();
    WARM.call_once(|| {
        let _guard = tch::no_grad_guard();
        for kind in [Kind::Float, Kind::Double] {
            // inside every function's domain (erfinv's and atanh's too); 64 elements go down
            // the vectorised path as a real call would
            let Ok(x) = Tensor::f_full([64], 0.25, (kind, Device::Cpu)) else { return };
            let ops: [fn(&Tensor) -> Result<Tensor, tch::TchError>; 26] = [
                Tensor::f_sqrt,
                Tensor::f_rsqrt,
                Tensor::f_exp,
                Tensor::f_exp2,
                Tensor::f_expm1,
                Tensor::f_log,
                Tensor::f_log2,
                Tensor::f_log10,
                Tensor::f_log1p,
                Tensor::f_sin,
                Tensor::f_cos,
                Tensor::f_tan,
                Tensor::f_asin,
                Tensor::f_acos,
                Tensor::f_atan,
                Tensor::f_sinh,
                Tensor::f_cosh,
                Tensor::f_tanh,
                Tensor::f_asinh,
                Tensor::f_acosh,
                Tensor::f_atanh,
                Tensor::f_erf,
                Tensor::f_erfc,
                Tensor::f_erfinv,
                Tensor::f_lgamma,
                Tensor::f_trunc,
            ];
            for op in ops {
                // acosh(0.25) is NaN, which is fine: the kernel is chosen all the same
                let _ = op(&x);
            }
        }
    });
}
