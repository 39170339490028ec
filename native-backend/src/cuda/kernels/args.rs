//! Launch arguments and grid shapes of every kernel, from its plan and device addresses.
//! Shared by `tl::cuda::ops` (addresses of tch tensors) and the GPU check (addresses of its
//! own buffers), so the check exercises exactly the marshalling the ops use.

use super::super::launch::{Arg, LaunchConfig};
use super::super::result::{CudaError, Result};
use super::matmul::TILE;
use super::plan::{CopyPlan, ElementwisePlan, MatmulPlan, ReducePlan, REDUCE_THREADS};

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

/// Arguments of every elementwise kernel: `(out, a, b, numel, sizes, a_strides, b_strides,
/// x, y)`; `b` is `a` again (and its strides `a`'s) for one-tensor kernels.
pub fn elementwise_args(plan: &ElementwisePlan, out: u64, a: u64, b: Option<u64>, x: f32, y: f32) -> Vec<Arg> {
    let a_strides = plan.inputs[0];
    let b_strides = plan.inputs.get(1).copied().unwrap_or(a_strides);
    let mut args = vec![Arg::Ptr(out), Arg::Ptr(a), Arg::Ptr(b.unwrap_or(a)), i64_arg(plan.numel())];
    args.extend(plan.sizes.iter().map(|&s| i64_arg(s)));
    args.extend(a_strides.iter().map(|&s| Arg::I64(s)));
    args.extend(b_strides.iter().map(|&s| Arg::I64(s)));
    args.extend([Arg::F32(x), Arg::F32(y)]);
    args
}

/// One thread per pooled output element.
pub fn pool_config(plan: &super::pool::PoolPlan) -> Result<LaunchConfig> {
    LaunchConfig::for_elements(plan.numel(), ELEMENTWISE_THREADS)
}

/// Arguments of the pooling kernels ([`super::pool::POOL_PARAMS`]).
pub fn pool_args(plan: &super::pool::PoolPlan, out: u64, input: u64) -> Result<Vec<Arg>> {
    let tail = plan.args_tail().ok_or_else(|| CudaError::Unsupported("torchlower: CUDA pooling takes windows, strides, paddings and dilations below 65536".to_string()))?;
    let mut args = vec![Arg::Ptr(out), Arg::Ptr(input)];
    args.extend(tail.into_iter().map(Arg::I64));
    args.push(Arg::U32(u32::from(plan.count_include_pad)));
    Ok(args)
}

/// One thread per convolution output element.
pub fn conv_config(plan: &super::conv::ConvPlan) -> Result<LaunchConfig> {
    LaunchConfig::for_elements(plan.numel(), ELEMENTWISE_THREADS)
}

/// Arguments of the convolution kernel ([`super::conv::CONV_PARAMS`]); `bias` 0 for none.
pub fn conv_args(plan: &super::conv::ConvPlan, out: u64, input: u64, weight: u64, bias: u64) -> Result<Vec<Arg>> {
    let tail = plan.args_tail().ok_or_else(|| CudaError::Unsupported("torchlower: CUDA convolution takes sizes, channels, strides, paddings and dilations below 65536".to_string()))?;
    let mut args = vec![Arg::Ptr(out), Arg::Ptr(input), Arg::Ptr(weight), Arg::Ptr(bias)];
    args.extend(tail.into_iter().map(Arg::I64));
    args.push(Arg::U32(u32::from(plan.has_bias)));
    Ok(args)
}

/// One thread per copied element.
pub fn copy_config(plan: &CopyPlan) -> Result<LaunchConfig> {
    LaunchConfig::for_elements(plan.numel(), ELEMENTWISE_THREADS)
}

/// Arguments of the copy kernel: `(out, in, numel, sizes, in_strides, out_strides)`.
pub fn copy_args(plan: &CopyPlan, out: u64, input: u64) -> Vec<Arg> {
    let mut args = vec![Arg::Ptr(out), Arg::Ptr(input), i64_arg(plan.numel())];
    args.extend(plan.sizes.iter().map(|&s| i64_arg(s)));
    args.extend(plan.input.iter().map(|&s| Arg::I64(s)));
    args.extend(plan.output.iter().map(|&s| Arg::I64(s)));
    args
}

/// `TILE x TILE` blocks over the `m x n` output, one grid layer per batch.
pub fn matmul_config(plan: &MatmulPlan) -> Result<LaunchConfig> {
    let grid_x = u32::try_from(plan.n.div_ceil(TILE as u64)).map_err(|_| too_large("matmul"))?;
    let grid_y = u32::try_from(plan.m.div_ceil(TILE as u64)).map_err(|_| too_large("matmul"))?;
    let grid_z = u32::try_from(plan.batches()).map_err(|_| too_large("matmul"))?;
    if grid_y > 65_535 || grid_z > 65_535 {
        return Err(too_large("matmul"));
    }
    Ok(LaunchConfig { grid: (grid_x.max(1), grid_y.max(1), grid_z.max(1)), block: (TILE, TILE, 1), shared_bytes: 0 })
}

/// Arguments of the matmul kernel (`bias` 0 when there is none).
pub fn matmul_args(plan: &MatmulPlan, out: u64, a: u64, b: u64, bias: u64) -> [Arg; 18] {
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
        i64_arg(plan.batch[1].max(1)),
        Arg::I64(plan.a_batch[0]),
        Arg::I64(plan.a_batch[1]),
        Arg::I64(plan.b_batch[0]),
        Arg::I64(plan.b_batch[1]),
    ]
}

/// One block per line.
pub fn line_config(plan: &ReducePlan) -> Result<LaunchConfig> {
    let lines = u32::try_from(plan.outer).map_err(|_| too_large("reduction"))?;
    Ok(LaunchConfig { grid: (lines, 1, 1), block: (REDUCE_THREADS, 1, 1), shared_bytes: 0 })
}

/// `(in, len, lo_size, hi_stride, lo_stride, reduce_stride)`, shared by the reductions.
fn line_args(plan: &ReducePlan, input: u64) -> [Arg; 6] {
    [Arg::Ptr(input), i64_arg(plan.len), i64_arg(plan.lo_size.max(1)), Arg::I64(plan.hi_stride), Arg::I64(plan.lo_stride), Arg::I64(plan.reduce_stride)]
}

/// Arguments of the sum kernel; `factor` is 1 for sum, `1/len` for mean.
pub fn sum_args(plan: &ReducePlan, out: u64, input: u64, factor: f32) -> Vec<Arg> {
    let mut args = vec![Arg::Ptr(out)];
    args.extend(line_args(plan, input));
    args.push(Arg::F32(factor));
    args
}

/// Arguments of the softmax kernel.
pub fn softmax_args(plan: &ReducePlan, out: u64, input: u64) -> Vec<Arg> {
    let mut args = vec![Arg::Ptr(out)];
    args.extend(line_args(plan, input));
    args.extend([Arg::I64(plan.out_hi_stride), Arg::I64(plan.out_lo_stride), Arg::I64(plan.out_reduce_stride)]);
    args
}

/// Arguments of the argmax kernel (`out` holds int64).
pub fn argmax_args(plan: &ReducePlan, out: u64, input: u64) -> Vec<Arg> {
    let mut args = vec![Arg::Ptr(out)];
    args.extend(line_args(plan, input));
    args
}

/// Arguments of the layer/RMS norm kernels: softmax's line layout, then the affine vectors
/// (address 0 and flag 0 when absent) and `eps`.
pub fn norm_args(plan: &ReducePlan, out: u64, input: u64, weight: Option<u64>, bias: Option<u64>, eps: f32) -> Vec<Arg> {
    let mut args = softmax_args(plan, out, input);
    args.extend([
        Arg::Ptr(weight.unwrap_or(0)),
        Arg::Ptr(bias.unwrap_or(0)),
        Arg::U32(u32::from(weight.is_some())),
        Arg::U32(u32::from(bias.is_some())),
        Arg::F32(eps),
    ]);
    args
}

/// Arguments of the variance kernel: `divisor` is `max(0, len - correction)`.
pub fn var_args(plan: &ReducePlan, out: u64, input: u64, divisor: f32, take_sqrt: bool) -> Vec<Arg> {
    let mut args = vec![Arg::Ptr(out)];
    args.extend(line_args(plan, input));
    args.extend([Arg::F32(divisor), Arg::U32(u32::from(take_sqrt))]);
    args
}
