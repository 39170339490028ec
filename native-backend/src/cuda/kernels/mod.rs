//! The kernels of the CUDA path, generated as PTX text in Rust: one module per kernel, each
//! with a [`KernelSignature`] that both writes its `.entry` line and checks its launches.
//!
//! - [`scalar`]: the tiny instruction set the math is written in, emitted as PTX or performed
//!   on the host with the same rounding.
//! - [`math`]: per-element float32 math written once over the instruction set, emitted as
//!   PTX or evaluated on the host bit for bit ([`math::UnaryMath::eval`]).
//! - [`plan`]: the index math (broadcast strides, matmul views, reduction lines) with host
//!   executors that follow the kernels' exact evaluation order.
//! - [`elementwise`], [`matmul`], [`reduce`]: the PTX generators.
//! - [`pool`], [`conv`]: the pooling and direct-convolution plans, their host models and PTX.

pub mod args;
pub mod conv;
pub mod elementwise;
pub mod math;
pub mod matmul;
pub mod plan;
pub mod pool;
pub mod ptx;
pub mod reduce;
pub mod scalar;

use std::sync::LazyLock;

use super::launch::KernelSignature;
use elementwise::Element;
use math::{Binary, Pointwise, Unary};

/// Every kernel we generate: one per elementwise op of the op table (`torchlower-ops`), and
/// the ones shared by the other ops (their rows name them in `cuda_kernel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    Unary(Unary),
    Binary(Binary),
    /// A tensor with Python numbers, maximum/minimum ([`Pointwise`]).
    Pointwise(Pointwise),
    /// `A B (+ bias)`, also `linear` and the mixed-rank matmuls.
    Matmul,
    /// Sum along a line times a factor (1 for sum, 1/len for mean).
    Sum,
    Softmax,
    /// `log_softmax` along a line: `(x - max) - log(Σ exp(x - max))`.
    LogSoftmax,
    Argmax,
    /// NaN-propagating maximum / minimum along a line (`amax`, `amin`).
    Amax,
    Amin,
    /// Variance or standard deviation along a line (with a correction).
    Var,
    Logsumexp,
    /// The product along a line (`prod`).
    Prod,
    /// `F.layer_norm` over the trailing dims, optional weight and bias.
    LayerNorm,
    /// `F.rms_norm` over the trailing dims, optional weight.
    RmsNorm,
    /// A strided copy (`contiguous`, `cat`, `stack`).
    Copy,
    /// Max, avg and adaptive pooling over the last two dims ([`pool::PoolKind`]).
    Pool(pool::PoolKind),
    /// Direct convolution (`conv1d`/`conv2d`).
    Conv,
}

/// The kernels that are not one elementwise op, in [`Kernel::index`] order after those.
const SHARED: [Kernel; 18] = [
    Kernel::Matmul,
    Kernel::Sum,
    Kernel::Softmax,
    Kernel::Argmax,
    Kernel::Copy,
    Kernel::LayerNorm,
    Kernel::RmsNorm,
    Kernel::Amax,
    Kernel::Amin,
    Kernel::Var,
    Kernel::Logsumexp,
    Kernel::LogSoftmax,
    Kernel::Pool(pool::PoolKind::Max),
    Kernel::Pool(pool::PoolKind::Avg),
    Kernel::Pool(pool::PoolKind::AdaptiveAvg),
    Kernel::Pool(pool::PoolKind::AdaptiveMax),
    Kernel::Conv,
    Kernel::Prod,
];

/// Signatures of all kernels, in [`Kernel::index`] order.
static SIGNATURES: LazyLock<Vec<KernelSignature>> = LazyLock::new(|| {
    Kernel::all().into_iter().map(|kernel| KernelSignature { name: kernel.entry_name(), params: kernel.params() }).collect()
});

impl Kernel {
    /// Number of kernels; [`Kernel::index`] is below it.
    pub const COUNT: usize = Unary::ALL.len() + Binary::ALL.len() + Pointwise::ALL.len() + SHARED.len();

    /// All kernels, in [`Kernel::index`] order.
    pub fn all() -> Vec<Kernel> {
        let mut all: Vec<Kernel> = Unary::ALL.iter().map(|&op| Kernel::Unary(op)).collect();
        all.extend(Binary::ALL.iter().map(|&op| Kernel::Binary(op)));
        all.extend(Pointwise::ALL.iter().map(|&op| Kernel::Pointwise(op)));
        all.extend(SHARED);
        all
    }

    /// A dense index, for per-kernel caches.
    pub fn index(self) -> usize {
        let pointwise = Unary::ALL.len() + Binary::ALL.len();
        let shared = pointwise + Pointwise::ALL.len();
        match self {
            Kernel::Unary(op) => op as usize,
            Kernel::Binary(op) => Unary::ALL.len() + op as usize,
            Kernel::Pointwise(op) => pointwise + op as usize,
            Kernel::Matmul => shared,
            Kernel::Sum => shared + 1,
            Kernel::Softmax => shared + 2,
            Kernel::Argmax => shared + 3,
            Kernel::Copy => shared + 4,
            Kernel::LayerNorm => shared + 5,
            Kernel::RmsNorm => shared + 6,
            Kernel::Amax => shared + 7,
            Kernel::Amin => shared + 8,
            Kernel::Var => shared + 9,
            Kernel::Logsumexp => shared + 10,
            Kernel::LogSoftmax => shared + 11,
            Kernel::Pool(kind) => shared + 12 + kind as usize,
            Kernel::Conv => shared + 16,
            Kernel::Prod => shared + 17,
        }
    }

    pub fn signature(self) -> &'static KernelSignature {
        &SIGNATURES[self.index()]
    }

    /// The kernel's name (its `.entry`).
    pub fn name(self) -> &'static str {
        self.signature().name
    }

    /// The `.entry` name: the op table's for elementwise ops.
    fn entry_name(self) -> &'static str {
        match self {
            Kernel::Unary(op) => op.info().cuda_kernel,
            Kernel::Binary(op) => op.info().cuda_kernel,
            Kernel::Pointwise(op) => op.entry_name(),
            Kernel::Matmul => "tl_matmul",
            Kernel::Sum => "tl_sum",
            Kernel::Softmax => "tl_softmax",
            Kernel::Argmax => "tl_argmax",
            Kernel::Copy => "tl_copy",
            Kernel::LayerNorm => "tl_layer_norm",
            Kernel::RmsNorm => "tl_rms_norm",
            Kernel::Amax => "tl_amax",
            Kernel::Amin => "tl_amin",
            Kernel::Var => "tl_var",
            Kernel::Logsumexp => "tl_logsumexp",
            Kernel::LogSoftmax => "tl_log_softmax",
            Kernel::Pool(pool::PoolKind::Max) => "tl_max_pool",
            Kernel::Pool(pool::PoolKind::Avg) => "tl_avg_pool",
            Kernel::Pool(pool::PoolKind::AdaptiveAvg) => "tl_adaptive_avg_pool",
            Kernel::Pool(pool::PoolKind::AdaptiveMax) => "tl_adaptive_max_pool",
            Kernel::Conv => "tl_conv",
            Kernel::Prod => "tl_prod",
        }
    }

    fn params(self) -> &'static [super::launch::ParamKind] {
        match self {
            Kernel::Unary(_) | Kernel::Binary(_) | Kernel::Pointwise(_) => elementwise::ELEMENTWISE_PARAMS,
            Kernel::Matmul => matmul::MATMUL_PARAMS,
            Kernel::Sum | Kernel::Amax | Kernel::Amin | Kernel::Logsumexp | Kernel::Prod => reduce::SUM_PARAMS,
            Kernel::Var => reduce::VAR_PARAMS,
            Kernel::Softmax | Kernel::LogSoftmax => reduce::SOFTMAX_PARAMS,
            Kernel::Argmax => reduce::ARGMAX_PARAMS,
            Kernel::Copy => elementwise::COPY_PARAMS,
            Kernel::LayerNorm | Kernel::RmsNorm => reduce::NORM_PARAMS,
            Kernel::Pool(_) => pool::POOL_PARAMS,
            Kernel::Conv => conv::CONV_PARAMS,
        }
    }

    /// The PTX module text of this kernel.
    pub fn ptx(self) -> String {
        let signature = self.signature();
        match self {
            Kernel::Unary(op) => elementwise::elementwise_ptx(Element::Unary(op), signature),
            Kernel::Binary(op) => elementwise::elementwise_ptx(Element::Binary(op), signature),
            Kernel::Pointwise(op) => elementwise::elementwise_ptx(Element::Pointwise(op), signature),
            Kernel::Matmul => matmul::matmul_ptx(signature),
            Kernel::Sum => reduce::fold_ptx(signature, plan::Fold::Sum),
            Kernel::Amax => reduce::fold_ptx(signature, plan::Fold::Max),
            Kernel::Amin => reduce::fold_ptx(signature, plan::Fold::Min),
            Kernel::Prod => reduce::fold_ptx(signature, plan::Fold::Prod),
            Kernel::Var => reduce::var_ptx(signature),
            Kernel::Logsumexp => reduce::logsumexp_ptx(signature),
            Kernel::Softmax => reduce::softmax_ptx(signature, false),
            Kernel::LogSoftmax => reduce::softmax_ptx(signature, true),
            Kernel::Argmax => reduce::argmax_ptx(signature),
            Kernel::Copy => elementwise::copy_ptx(signature),
            Kernel::LayerNorm => reduce::norm_ptx(signature, plan::Norm::Layer),
            Kernel::RmsNorm => reduce::norm_ptx(signature, plan::Norm::Rms),
            Kernel::Pool(kind) => pool::pool_ptx(signature, kind),
            Kernel::Conv => conv::conv_ptx(signature),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every op of the table names the kernels it runs, which exist (or none: CPU-only,
    /// rejected on cuda:0 by the analyzer; or a view), and the elementwise ops each own one.
    #[test]
    fn every_table_row_has_its_kernel() {
        let names: Vec<&str> = Kernel::all().into_iter().map(Kernel::name).collect();
        for row in torchlower_ops::TABLE {
            let elementwise = row.op.unary().is_some() || row.op.binary().is_some();
            // an op that runs one of several kernels lists them all (`pow`, `clamp`); a view
            // runs none
            let none = row.cuda_kernel.is_empty() || row.cuda_kernel == torchlower_ops::CUDA_VIEW;
            let listed = row.cuda_kernel.split('/').all(|k| names.contains(&k));
            assert!(listed || (none && !elementwise), "{:?}: no kernel {}", row.op, row.cuda_kernel);
        }
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), Kernel::COUNT);
        for (i, kernel) in Kernel::all().into_iter().enumerate() {
            assert_eq!(kernel.index(), i);
        }
    }
}
