//! Launch arguments and grid shapes of every kernel, from its plan and device addresses.
//! Shared by `tl::cuda::ops` (addresses of tch tensors) and the GPU check (addresses of its
//! own buffers), so the check exercises exactly the marshalling the ops use.

use super::super::launch::{Arg, LaunchConfig};
use super::super::result::{CudaError, Result};
use super::matmul::TILE;
use super::plan::{ElementwisePlan, MatmulPlan, ReducePlan, REDUCE_THREADS};

/// Threads per block of the elementwise kernels.
pub const ELEMENTWISE_THREADS: u32 = 256;

fn i64_arg(value: u64) -> Arg {
    Arg::I64(value as i64)
}

fn too_large(what: &str) -> CudaError {
    CudaError::Unsupported(format!("torchlower: {what} is too large for one CUDA launch"))
}

/// One thread per output element.
pub fn elementwise_config(plan: &ElementwisePlan) -> Result<LaunchConfig> {
    LaunchConfig::for_elements(plan.numel(), ELEMENTWISE_THREADS)
}

/// Arguments of a unary kernel: `(out, in, numel, cols, in_rs, in_cs)`.
pub fn unary_args(plan: &ElementwisePlan, out: u64, input: u64) -> [Arg; 6] {
    let (rs, cs) = plan.inputs[0];
    [Arg::Ptr(out), Arg::Ptr(input), i64_arg(plan.numel()), i64_arg(plan.cols), Arg::I64(rs), Arg::I64(cs)]
}

/// Arguments of a binary kernel: `(out, a, b, numel, cols, a_rs, a_cs, b_rs, b_cs)`.
pub fn binary_args(plan: &ElementwisePlan, out: u64, a: u64, b: u64) -> [Arg; 9] {
    let ((ars, acs), (brs, bcs)) = (plan.inputs[0], plan.inputs[1]);
    [
        Arg::Ptr(out),
        Arg::Ptr(a),
        Arg::Ptr(b),
        i64_arg(plan.numel()),
        i64_arg(plan.cols),
        Arg::I64(ars),
        Arg::I64(acs),
        Arg::I64(brs),
        Arg::I64(bcs),
    ]
}

/// `TILE x TILE` blocks over the `m x n` output.
pub fn matmul_config(plan: &MatmulPlan) -> Result<LaunchConfig> {
    let grid_x = u32::try_from(plan.n.div_ceil(TILE as u64)).map_err(|_| too_large("matmul"))?;
    let grid_y = u32::try_from(plan.m.div_ceil(TILE as u64)).map_err(|_| too_large("matmul"))?;
    if grid_y > 65_535 {
        return Err(too_large("matmul"));
    }
    Ok(LaunchConfig { grid: (grid_x.max(1), grid_y.max(1), 1), block: (TILE, TILE, 1), shared_bytes: 0 })
}

/// Arguments of the matmul kernel (`bias` 0 when there is none).
pub fn matmul_args(plan: &MatmulPlan, out: u64, a: u64, b: u64, bias: u64) -> [Arg; 13] {
    [
        Arg::Ptr(out),
        Arg::Ptr(a),
        Arg::Ptr(b),
        Arg::Ptr(bias),
        i64_arg(plan.m),
        i64_arg(plan.n),
        i64_arg(plan.k),
        Arg::I64(plan.a.row_stride),
        Arg::I64(plan.a.col_stride),
        Arg::I64(plan.b.row_stride),
        Arg::I64(plan.b.col_stride),
        Arg::I64(plan.bias_stride.unwrap_or(0)),
        Arg::U32(u32::from(plan.bias_stride.is_some())),
    ]
}

/// One block per line.
pub fn line_config(plan: &ReducePlan) -> Result<LaunchConfig> {
    let lines = u32::try_from(plan.outer).map_err(|_| too_large("reduction"))?;
    Ok(LaunchConfig { grid: (lines, 1, 1), block: (REDUCE_THREADS, 1, 1), shared_bytes: 0 })
}

/// Arguments of the sum kernel; `factor` is 1 for sum, `1/len` for mean.
pub fn sum_args(plan: &ReducePlan, out: u64, input: u64, factor: f32) -> [Arg; 6] {
    [Arg::Ptr(out), Arg::Ptr(input), i64_arg(plan.len), Arg::I64(plan.outer_stride), Arg::I64(plan.reduce_stride), Arg::F32(factor)]
}

/// Arguments of the softmax kernel.
pub fn softmax_args(plan: &ReducePlan, out: u64, input: u64) -> [Arg; 7] {
    [
        Arg::Ptr(out),
        Arg::Ptr(input),
        i64_arg(plan.len),
        Arg::I64(plan.outer_stride),
        Arg::I64(plan.reduce_stride),
        Arg::I64(plan.out_outer_stride),
        Arg::I64(plan.out_reduce_stride),
    ]
}

/// Arguments of the argmax kernel (`out` holds int64).
pub fn argmax_args(plan: &ReducePlan, out: u64, input: u64) -> [Arg; 5] {
    [Arg::Ptr(out), Arg::Ptr(input), i64_arg(plan.len), Arg::I64(plan.outer_stride), Arg::I64(plan.reduce_stride)]
}
