//! The kernels of the CUDA path, generated as PTX text in Rust: one module per kernel, each
//! with a [`KernelSignature`] that both writes its `.entry` line and checks its launches.
//!
//! - [`math`]: per-element float32 math written once over a tiny instruction set, emitted as
//!   PTX or evaluated on the host bit for bit ([`math::UnaryOp::eval`]).
//! - [`plan`]: the index math (broadcast strides, matmul views, reduction lines) with host
//!   executors that follow the kernels' exact evaluation order.
//! - [`elementwise`], [`matmul`], [`reduce`]: the PTX generators.

pub mod args;
pub mod elementwise;
pub mod math;
pub mod matmul;
pub mod plan;
pub mod ptx;
pub mod reduce;

use super::launch::KernelSignature;
use math::{BinaryOp, UnaryOp};

/// Every kernel we generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    Unary(UnaryOp),
    Binary(BinaryOp),
    /// `A B (+ bias)`, also `linear` and the mixed-rank matmuls.
    Matmul,
    /// Sum along a line times a factor (1 for sum, 1/len for mean).
    Sum,
    Softmax,
    Argmax,
}

macro_rules! signatures {
    ($params:expr; $($name:literal),*) => { [$(KernelSignature { name: $name, params: $params }),*] };
}

static UNARY_SIGNATURES: [KernelSignature; 10] = signatures!(elementwise::UNARY_PARAMS;
    "tl_abs", "tl_neg", "tl_square", "tl_exp", "tl_log", "tl_sqrt", "tl_relu", "tl_sigmoid", "tl_tanh", "tl_gelu");
static BINARY_SIGNATURES: [KernelSignature; 4] =
    signatures!(elementwise::BINARY_PARAMS; "tl_add", "tl_sub", "tl_mul", "tl_div");
static MATMUL_SIGNATURE: KernelSignature = KernelSignature { name: "tl_matmul", params: matmul::MATMUL_PARAMS };
static SUM_SIGNATURE: KernelSignature = KernelSignature { name: "tl_sum", params: reduce::SUM_PARAMS };
static SOFTMAX_SIGNATURE: KernelSignature = KernelSignature { name: "tl_softmax", params: reduce::SOFTMAX_PARAMS };
static ARGMAX_SIGNATURE: KernelSignature = KernelSignature { name: "tl_argmax", params: reduce::ARGMAX_PARAMS };

impl Kernel {
    /// Number of kernels; [`Kernel::index`] is below it.
    pub const COUNT: usize = 18;

    /// All kernels, in [`Kernel::index`] order.
    pub fn all() -> Vec<Kernel> {
        let mut all: Vec<Kernel> = UnaryOp::ALL.iter().map(|&op| Kernel::Unary(op)).collect();
        all.extend(BinaryOp::ALL.iter().map(|&op| Kernel::Binary(op)));
        all.extend([Kernel::Matmul, Kernel::Sum, Kernel::Softmax, Kernel::Argmax]);
        all
    }

    /// A dense index, for per-kernel caches.
    pub fn index(self) -> usize {
        match self {
            Kernel::Unary(op) => UnaryOp::ALL.iter().position(|&o| o == op).unwrap_or(0),
            Kernel::Binary(op) => 10 + BinaryOp::ALL.iter().position(|&o| o == op).unwrap_or(0),
            Kernel::Matmul => 14,
            Kernel::Sum => 15,
            Kernel::Softmax => 16,
            Kernel::Argmax => 17,
        }
    }

    pub fn signature(self) -> &'static KernelSignature {
        match self {
            Kernel::Unary(op) => &UNARY_SIGNATURES[Kernel::Unary(op).index()],
            Kernel::Binary(op) => &BINARY_SIGNATURES[Kernel::Binary(op).index() - 10],
            Kernel::Matmul => &MATMUL_SIGNATURE,
            Kernel::Sum => &SUM_SIGNATURE,
            Kernel::Softmax => &SOFTMAX_SIGNATURE,
            Kernel::Argmax => &ARGMAX_SIGNATURE,
        }
    }

    /// The kernel's name (its `.entry`).
    pub fn name(self) -> &'static str {
        self.signature().name
    }

    /// The PTX module text of this kernel.
    pub fn ptx(self) -> String {
        let signature = self.signature();
        match self {
            Kernel::Unary(op) => elementwise::unary_ptx(op, signature),
            Kernel::Binary(op) => elementwise::binary_ptx(op, signature),
            Kernel::Matmul => matmul::matmul_ptx(signature),
            Kernel::Sum => reduce::sum_ptx(signature),
            Kernel::Softmax => reduce::softmax_ptx(signature),
            Kernel::Argmax => reduce::argmax_ptx(signature),
        }
    }
}
