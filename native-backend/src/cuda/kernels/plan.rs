//! The index math of every kernel, as plain Rust data and functions. The ops turn tensor
//! shapes and strides into these plans; the plans become kernel arguments; and the PTX
//! generators compute exactly the offsets described here. Each plan also has a host
//! executor (`run_cpu`) that walks memory the same way, which the tests compare with eager
//! PyTorch and the GPU check compares with the device.

use super::math::{Binary, BinaryMath, Pointwise, Unary, UnaryMath};

/// A rank-1 or rank-2 strided view as `rows x cols` (rank 1 is one row), strides in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View2 {
    pub rows: u64,
    pub cols: u64,
    pub row_stride: i64,
    pub col_stride: i64,
}

impl View2 {
    /// The view of a tensor with `shape` and `strides` (rank 1 or 2).
    pub fn of(shape: &[i64], strides: &[i64]) -> View2 {
        match shape.len() {
            1 => View2 { rows: 1, cols: shape[0] as u64, row_stride: 0, col_stride: strides[0] },
            _ => View2 { rows: shape[0] as u64, cols: shape[1] as u64, row_stride: strides[0], col_stride: strides[1] },
        }
    }

    /// A contiguous `rows x cols` view.
    pub fn contiguous(rows: u64, cols: u64) -> View2 {
        View2 { rows, cols, row_stride: cols as i64, col_stride: 1 }
    }

    /// The same memory read as its transpose.
    pub fn transposed(self) -> View2 {
        View2 { rows: self.cols, cols: self.rows, row_stride: self.col_stride, col_stride: self.row_stride }
    }

    /// Element offset of `(row, col)`.
    pub fn offset(&self, row: u64, col: u64) -> i64 {
        row as i64 * self.row_stride + col as i64 * self.col_stride
    }
}

/// The most dimensions a CUDA kernel indexes (the CUDA types go up to rank 4).
pub const MAX_DIMS: usize = 4;

/// Shape and strides left-padded to [`MAX_DIMS`] (size 1, stride 0), or an error past it.
fn padded(shape: &[i64], strides: &[i64]) -> Result<([u64; MAX_DIMS], [i64; MAX_DIMS]), String> {
    if shape.len() > MAX_DIMS {
        return Err(format!("torchlower: the CUDA kernels take tensors of rank at most {MAX_DIMS}, got rank {}", shape.len()));
    }
    let pad = MAX_DIMS - shape.len();
    let (mut sizes, mut steps) = ([1u64; MAX_DIMS], [0i64; MAX_DIMS]);
    for d in 0..shape.len() {
        sizes[pad + d] = shape[d] as u64;
        // a size-1 dimension is never stepped along
        steps[pad + d] = if shape[d] == 1 { 0 } else { strides[d] };
    }
    Ok((sizes, steps))
}

/// Coordinates of linear index `index` of a contiguous tensor of `sizes` (last fastest):
/// the divisions the kernels emit.
pub fn coordinates(sizes: &[u64; MAX_DIMS], index: u64) -> [u64; MAX_DIMS] {
    let mut coords = [0u64; MAX_DIMS];
    let mut rest = index;
    for d in (1..MAX_DIMS).rev() {
        coords[d] = rest % sizes[d];
        rest /= sizes[d];
    }
    coords[0] = rest;
    coords
}

/// Element offset of `coords` under `strides`.
pub fn offset(coords: &[u64; MAX_DIMS], strides: &[i64; MAX_DIMS]) -> i64 {
    coords.iter().zip(strides).map(|(&c, &s)| c as i64 * s).sum()
}

/// Elementwise over a contiguous output of up to [`MAX_DIMS`] dimensions; output element
/// `index` has [`coordinates`] `c` and reads each input at `Σ c[d] * strides[d]`, a stride of
/// 0 where the input is broadcast, so strided views and broadcasting between any ranks read
/// in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementwisePlan {
    pub out_shape: Vec<i64>,
    pub sizes: [u64; MAX_DIMS],
    pub inputs: Vec<[i64; MAX_DIMS]>,
}

impl ElementwisePlan {
    pub fn numel(&self) -> u64 {
        self.sizes.iter().product()
    }

    /// Offsets of output element `index` in each input: the formula the kernels emit.
    pub fn input_offsets(&self, index: u64) -> impl Iterator<Item = i64> + '_ {
        let coords = coordinates(&self.sizes, index);
        self.inputs.iter().map(move |strides| offset(&coords, strides))
    }

    /// A unary plan over a tensor.
    pub fn unary(shape: &[i64], strides: &[i64]) -> Result<ElementwisePlan, String> {
        let (sizes, steps) = padded(shape, strides)?;
        Ok(ElementwisePlan { out_shape: shape.to_vec(), sizes, inputs: vec![steps] })
    }

    /// PyTorch broadcasting of two tensors, or PyTorch's error message.
    pub fn broadcast(a_shape: &[i64], a_strides: &[i64], b_shape: &[i64], b_strides: &[i64]) -> Result<ElementwisePlan, String> {
        let (sa, ta) = padded(a_shape, a_strides)?;
        let (sb, tb) = padded(b_shape, b_strides)?;
        let rank = a_shape.len().max(b_shape.len());
        let mut sizes = [1u64; MAX_DIMS];
        for d in 0..MAX_DIMS {
            sizes[d] = if sa[d] == sb[d] || sb[d] == 1 {
                sa[d]
            } else if sa[d] == 1 {
                sb[d]
            } else {
                let dim = d - (MAX_DIMS - rank);
                return Err(format!(
                    "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {dim}",
                    sa[d], sb[d]
                ));
            };
        }
        let out_shape = sizes[MAX_DIMS - rank..].iter().map(|&s| s as i64).collect();
        Ok(ElementwisePlan { out_shape, sizes, inputs: vec![ta, tb] })
    }

    /// Host execution of a unary plan.
    pub fn run_unary_cpu(&self, op: Unary, input: &[f32]) -> Vec<f32> {
        (0..self.numel())
            .map(|i| {
                let offset = self.input_offsets(i).next().unwrap_or(0);
                op.eval(input[offset as usize])
            })
            .collect()
    }

    /// Host execution of a binary plan.
    pub fn run_binary_cpu(&self, op: Binary, a: &[f32], b: &[f32]) -> Vec<f32> {
        (0..self.numel())
            .map(|i| {
                let offsets: Vec<i64> = self.input_offsets(i).collect();
                op.eval(a[offsets[0] as usize], b[offsets[1] as usize])
            })
            .collect()
    }

    /// Host execution of a [`Pointwise`] plan (`b` is ignored unless the op reads two tensors).
    pub fn run_pointwise_cpu(&self, op: Pointwise, a: &[f32], b: &[f32], x: f32, y: f32) -> Vec<f32> {
        (0..self.numel())
            .map(|i| {
                let offsets: Vec<i64> = self.input_offsets(i).collect();
                let bv = if op.two_tensors() { b[offsets[1] as usize] } else { 0.0 };
                op.eval(a[offsets[0] as usize], bv, x, y)
            })
            .collect()
    }
}

/// A strided copy: element `c` of `sizes` from `Σ c[d] * input[d]` to `Σ c[d] * output[d]`.
/// `contiguous()` copies into a fresh contiguous tensor; `cat`/`stack` copy each input into
/// its slice of the output (the output pointer offset to the slice's start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyPlan {
    pub sizes: [u64; MAX_DIMS],
    pub input: [i64; MAX_DIMS],
    pub output: [i64; MAX_DIMS],
}

impl CopyPlan {
    pub fn new(shape: &[i64], in_strides: &[i64], out_strides: &[i64]) -> Result<CopyPlan, String> {
        let (sizes, input) = padded(shape, in_strides)?;
        let (_, output) = padded(shape, out_strides)?;
        Ok(CopyPlan { sizes, input, output })
    }

    pub fn numel(&self) -> u64 {
        self.sizes.iter().product()
    }

    /// Host execution into `out` (which holds the destination's whole storage).
    pub fn run_cpu(&self, input: &[f32], out: &mut [f32]) {
        for i in 0..self.numel() {
            let coords = coordinates(&self.sizes, i);
            out[offset(&coords, &self.output) as usize] = input[offset(&coords, &self.input) as usize];
        }
    }
}

/// `out[z][m x n] = A[z][m x k] B[z][k x n] (+ bias[n])` for each batch `z` of up to two
/// batch dimensions (`batch = [hi, lo]`, each operand with its own batch strides, 0 where
/// broadcast); contiguous output; A, B and bias strided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatmulPlan {
    pub out_shape: Vec<i64>,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub a: View2,
    pub b: View2,
    /// Stride of the bias vector, when there is one.
    pub bias_stride: Option<i64>,
    pub batch: [u64; 2],
    pub a_batch: [i64; 2],
    pub b_batch: [i64; 2],
}

/// The last two dimensions of a rank ≥ 2 tensor as a matrix.
fn matrix(shape: &[i64], strides: &[i64]) -> View2 {
    let r = shape.len();
    View2::of(&shape[r - 2..], &strides[r - 2..])
}

impl MatmulPlan {
    /// A plan of `a b` per batch; `m`, `n`, `k` from the matrices.
    fn new(out_shape: Vec<i64>, a: View2, b: View2, bias_stride: Option<i64>, batch: [u64; 2], a_batch: [i64; 2], b_batch: [i64; 2]) -> MatmulPlan {
        MatmulPlan { out_shape, m: a.rows, n: b.cols, k: a.cols, a, b, bias_stride, batch, a_batch, b_batch }
    }

    fn single(out_shape: Vec<i64>, a: View2, b: View2) -> MatmulPlan {
        MatmulPlan::new(out_shape, a, b, None, [1, 1], [0, 0], [0, 0])
    }

    pub fn batches(&self) -> u64 {
        self.batch[0] * self.batch[1]
    }

    /// `torch.matmul` for ranks 1–4 (not 1/1), or PyTorch's error message.
    pub fn matmul(a_shape: &[i64], a_strides: &[i64], b_shape: &[i64], b_strides: &[i64]) -> Result<MatmulPlan, String> {
        let (ra, rb) = (a_shape.len(), b_shape.len());
        if !(1..=MAX_DIMS).contains(&ra) || !(1..=MAX_DIMS).contains(&rb) || (ra, rb) == (1, 1) {
            return Err(format!("torchlower: CUDA matmul supports ranks 1–4 except 1/1, got {ra}/{rb}"));
        }
        match (ra, rb) {
            (2, 2) => {
                let (a, b) = (View2::of(a_shape, a_strides), View2::of(b_shape, b_strides));
                if a.cols != b.rows {
                    return Err(format!(
                        "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                        a.rows, a.cols, b.rows, b.cols
                    ));
                }
                return Ok(MatmulPlan::single(vec![a.rows as i64, b.cols as i64], a, b));
            }
            (2, 1) => {
                let a = View2::of(a_shape, a_strides);
                if a.cols != b_shape[0] as u64 {
                    return Err(format!(
                        "size mismatch, got input ({}), mat ({}x{}), vec ({})",
                        a.rows, a.rows, a.cols, b_shape[0]
                    ));
                }
                // The vector as a k x 1 column.
                let b = View2 { rows: b_shape[0] as u64, cols: 1, row_stride: b_strides[0], col_stride: 0 };
                return Ok(MatmulPlan::single(vec![a.rows as i64], a, b));
            }
            (1, 2) => {
                // The vector as a 1 x k row.
                let a = View2::of(a_shape, a_strides);
                let b = View2::of(b_shape, b_strides);
                if a.cols != b.rows {
                    return Err(format!(
                        "mat1 and mat2 shapes cannot be multiplied (1x{} and {}x{})",
                        a.cols, b.rows, b.cols
                    ));
                }
                return Ok(MatmulPlan::single(vec![b.cols as i64], a, b));
            }
            _ => {}
        }
        // Eager folds a batched left operand times a matrix or vector into one 2-d product:
        // its messages name the folded sizes.
        let k = a_shape[ra - 1];
        let folded_rows: i64 = a_shape[..ra - 1].iter().product();
        if rb == 2 && b_shape[0] != k {
            return Err(format!("mat1 and mat2 shapes cannot be multiplied ({folded_rows}x{k} and {}x{})", b_shape[0], b_shape[1]));
        }
        if rb == 1 && b_shape[0] != k {
            return Err(format!("size mismatch, got input ({folded_rows}), mat ({folded_rows}x{k}), vec ({})", b_shape[0]));
        }
        // A vector side is a 1-row / 1-column matrix whose dimension the result drops.
        let a = if ra == 1 { View2 { rows: 1, cols: a_shape[0] as u64, row_stride: 0, col_stride: a_strides[0] } } else { matrix(a_shape, a_strides) };
        let b = if rb == 1 { View2 { rows: b_shape[0] as u64, cols: 1, row_stride: b_strides[0], col_stride: 0 } } else { matrix(b_shape, b_strides) };
        let split = |r: usize| r.saturating_sub(2);
        let plan = ElementwisePlan::broadcast(&a_shape[..split(ra)], &a_strides[..split(ra)], &b_shape[..split(rb)], &b_strides[..split(rb)])?;
        let batch_rank = plan.out_shape.len();
        if batch_rank > 2 {
            return Err(format!("torchlower: CUDA matmul supports at most 2 batch dimensions, got {batch_rank}"));
        }
        let batches: u64 = plan.out_shape.iter().product::<i64>() as u64;
        if a.cols != b.rows {
            return Err(format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{batches}, {}] but got: [{batches}, {}].",
                a.cols, b.rows
            ));
        }
        let last2 = |v: &[i64; MAX_DIMS]| [v[MAX_DIMS - 2], v[MAX_DIMS - 1]];
        let mut out_shape = plan.out_shape.clone();
        if ra > 1 {
            out_shape.push(a.rows as i64);
        }
        if rb > 1 {
            out_shape.push(b.cols as i64);
        }
        let batch = [plan.sizes[MAX_DIMS - 2], plan.sizes[MAX_DIMS - 1]];
        Ok(MatmulPlan::new(out_shape, a, b, None, batch, last2(&plan.inputs[0]), last2(&plan.inputs[1])))
    }

    /// `torch.bmm(a, b)`: rank 3 both, equal batch sizes (no broadcasting), or eager's error.
    pub fn bmm(a_shape: &[i64], a_strides: &[i64], b_shape: &[i64], b_strides: &[i64]) -> Result<MatmulPlan, String> {
        if a_shape.len() != 3 {
            return Err("batch1 must be a 3D tensor".to_string());
        }
        if b_shape.len() != 3 {
            return Err("batch2 must be a 3D tensor".to_string());
        }
        if a_shape[0] != b_shape[0] || a_shape[2] != b_shape[1] {
            return Err(format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                a_shape[0], a_shape[2], b_shape[0], b_shape[1]
            ));
        }
        MatmulPlan::matmul(a_shape, a_strides, b_shape, b_strides)
    }

    /// `F.linear(x, w, bias)` for `x` of rank 2–4, rank-2 `w` and rank-1 `bias`, or
    /// PyTorch's error (which names `x` folded to 2-d, as eager computes it).
    pub fn linear(
        x_shape: &[i64],
        x_strides: &[i64],
        w_shape: &[i64],
        w_strides: &[i64],
        bias: Option<(&[i64], &[i64])>,
    ) -> Result<MatmulPlan, String> {
        let rx = x_shape.len();
        if !(2..=MAX_DIMS).contains(&rx) || w_shape.len() != 2 {
            return Err(format!("torchlower: CUDA linear supports input of rank 2–4 and a rank-2 weight, got {rx}/{}", w_shape.len()));
        }
        let a = matrix(x_shape, x_strides);
        let b = View2::of(w_shape, w_strides).transposed();
        let folded_rows: i64 = x_shape[..rx - 1].iter().product();
        if a.cols != b.rows {
            return Err(format!(
                "mat1 and mat2 shapes cannot be multiplied ({folded_rows}x{} and {}x{})",
                a.cols, b.rows, b.cols
            ));
        }
        let bias_stride = match bias {
            None => None,
            Some((shape, strides)) => {
                let len = if shape.is_empty() { 1 } else { shape[shape.len() - 1] };
                if shape.len() != 1 || (len != b.cols as i64 && len != 1) {
                    return Err(format!(
                        "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {}.  Target sizes: [{}, {}].  Tensor sizes: {:?}",
                        b.cols, len, 1, folded_rows, b.cols, shape
                    ));
                }
                Some(if len == 1 { 0 } else { strides[0] })
            }
        };
        let (sizes, steps) = padded(&x_shape[..rx - 2], &x_strides[..rx - 2])?;
        let mut out_shape = x_shape[..rx - 1].to_vec();
        out_shape.push(b.cols as i64);
        let batch = [sizes[MAX_DIMS - 2], sizes[MAX_DIMS - 1]];
        Ok(MatmulPlan::new(out_shape, a, b, bias_stride, batch, [steps[MAX_DIMS - 2], steps[MAX_DIMS - 1]], [0, 0]))
    }

    /// Host execution in the kernel's order: per batch, one fused multiply-add per k, in
    /// increasing k, starting from 0, then `+ bias`.
    pub fn run_cpu(&self, a: &[f32], b: &[f32], bias: Option<&[f32]>) -> Vec<f32> {
        let mut out = Vec::with_capacity((self.batches() * self.m * self.n) as usize);
        for hi in 0..self.batch[0] {
            for lo in 0..self.batch[1] {
                let a_base = hi as i64 * self.a_batch[0] + lo as i64 * self.a_batch[1];
                let b_base = hi as i64 * self.b_batch[0] + lo as i64 * self.b_batch[1];
                for i in 0..self.m {
                    for j in 0..self.n {
                        let mut acc = 0f32;
                        for p in 0..self.k {
                            acc = a[(a_base + self.a.offset(i, p)) as usize].mul_add(b[(b_base + self.b.offset(p, j)) as usize], acc);
                        }
                        if let (Some(stride), Some(bias)) = (self.bias_stride, bias) {
                            acc += bias[(j as i64 * stride) as usize];
                        }
                        out.push(acc);
                    }
                }
            }
        }
        out
    }
}

/// Which normalization a norm kernel ([`super::reduce::norm_ptx`]) computes over each line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Norm {
    /// `(x - mean) / sqrt(var + eps) * w + b`, the biased variance (`F.layer_norm`).
    Layer,
    /// `x / sqrt(mean(x²) + eps) * w` (`F.rms_norm`).
    Rms,
}

/// A reduction's dims that eager refuses: `IndexError` (out of range) or `RuntimeError`
/// (given twice), with eager's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimsError {
    Index(String),
    Runtime(String),
}

/// A reduction over a list of dims (every dim when it is empty, as eager): which dims, the
/// result's shape, and for several dims the permutation that moves them last, after which a
/// contiguous copy holds `outer` lines of `len` consecutive elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReduceDims {
    /// The reduced dims, wrapped, in the list's order.
    pub reduced: Vec<usize>,
    /// The kept dims in order, then the reduced ones.
    pub order: Vec<i64>,
    pub outer: i64,
    pub len: i64,
    pub out_shape: Vec<i64>,
}

impl ReduceDims {
    pub fn new(shape: &[i64], dims: &[i64], keepdim: bool) -> Result<ReduceDims, DimsError> {
        let rank = shape.len() as i64;
        let mut reduced: Vec<usize> = if dims.is_empty() { (0..shape.len()).collect() } else { Vec::new() };
        for &dim in dims {
            let d = if dim < 0 { dim + rank } else { dim };
            if !(0..rank).contains(&d) {
                return Err(DimsError::Index(format!("Dimension out of range (expected to be in range of [{}, {}], but got {dim})", -rank, rank - 1)));
            }
            if reduced.contains(&(d as usize)) {
                return Err(DimsError::Runtime(format!("dim {d} appears multiple times in the list of dims")));
            }
            reduced.push(d as usize);
        }
        let kept: Vec<usize> = (0..shape.len()).filter(|d| !reduced.contains(d)).collect();
        let out_shape = if keepdim {
            (0..shape.len()).map(|d| if reduced.contains(&d) { 1 } else { shape[d] }).collect()
        } else {
            kept.iter().map(|&d| shape[d]).collect()
        };
        let order = kept.iter().chain(&reduced).map(|&d| d as i64).collect();
        let outer = kept.iter().map(|&d| shape[d]).product();
        let len = reduced.iter().map(|&d| shape[d]).product();
        Ok(ReduceDims { reduced, order, outer, len, out_shape })
    }

    /// The plan over the moved copy's lines.
    pub fn plan(&self) -> Option<ReducePlan> {
        ReducePlan::along(&[self.outer, self.len], &[self.len, 1], 1, false).ok().flatten()
    }
}

/// How a fold kernel ([`super::reduce::fold_ptx`]) combines a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fold {
    Sum,
    /// NaN-propagating maximum (`amax`); `-0.0` orders below `+0.0`, as PTX `max.f32`.
    Max,
    /// NaN-propagating minimum (`amin`).
    Min,
    /// The product (`prod`).
    Prod,
}

impl Fold {
    /// The identity the accumulator starts from.
    pub fn init(self) -> f32 {
        match self {
            Fold::Sum => 0.0,
            Fold::Max => f32::NEG_INFINITY,
            Fold::Min => f32::INFINITY,
            Fold::Prod => 1.0,
        }
    }

    pub fn init_ptx(self) -> String {
        super::ptx::f32_imm(self.init())
    }

    /// The PTX instruction that combines two values.
    pub fn combine_ptx(self) -> &'static str {
        match self {
            Fold::Sum => "add.rn.f32",
            Fold::Max => "max.NaN.f32",
            Fold::Min => "min.NaN.f32",
            Fold::Prod => "mul.rn.f32",
        }
    }

    /// What [`Fold::combine_ptx`] computes.
    pub fn combine(self, a: f32, b: f32) -> f32 {
        match self {
            Fold::Sum => a + b,
            Fold::Prod => a * b,
            _ if a.is_nan() || b.is_nan() => f32::NAN,
            // equal values: only the sign of a zero can differ
            Fold::Max if a == b => if a.is_sign_positive() { a } else { b },
            Fold::Min if a == b => if a.is_sign_negative() { a } else { b },
            Fold::Max => if a > b { a } else { b },
            Fold::Min => if a < b { a } else { b },
        }
    }
}

/// A norm's shapes that eager refuses, with its exception type and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NormShapeError {
    /// `ValueError` (RMS norm of an input with fewer dims than `normalized_shape`).
    Value(String),
    /// `RuntimeError`.
    Runtime(String),
}

/// The number of elements each line of a layer/RMS norm normalizes: `normalized_shape` must
/// be non-empty and equal the input's trailing dims, and each affine vector (`(name,
/// shape)`, absent ones `None`) must have exactly that shape. Eager's messages, which spell
/// the expected input shape differently for the two norms (`[*, 3, 4]` / `[*3, 4]`).
pub fn norm_line_len(norm: Norm, shape: &[i64], normalized_shape: &[i64], affine: &[(&str, Option<Vec<i64>>)]) -> Result<i64, NormShapeError> {
    use NormShapeError::*;
    if normalized_shape.is_empty() {
        return Err(Runtime(format!(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = {normalized_shape:?}"
        )));
    }
    let rms = norm == Norm::Rms;
    if rms && shape.len() < normalized_shape.len() {
        return Err(Value(format!("Input tensor must have at least {} dimensions, but got {}", normalized_shape.len(), shape.len())));
    }
    if !shape.ends_with(normalized_shape) {
        let dims: Vec<String> = normalized_shape.iter().map(i64::to_string).collect();
        let expected = if rms { dims.join(", ") } else { format!(", {}", dims.join(", ")) };
        return Err(Runtime(format!(
            "Given normalized_shape={normalized_shape:?}, expected input with shape [*{expected}], but got input of size{shape:?}"
        )));
    }
    for (name, vector) in affine {
        if let Some(vector) = vector {
            if vector != normalized_shape {
                return Err(Runtime(format!(
                    "Expected {name} to be of same shape as normalized_shape, but got {name} of shape {vector:?} and normalized_shape = {normalized_shape:?}"
                )));
            }
        }
    }
    Ok(normalized_shape.iter().product())
}

/// Threads per block of the reduction kernels (sum/mean, softmax, argmax).
pub const REDUCE_THREADS: u32 = 256;

/// A reduction along one dimension of a tensor of rank ≤ [`MAX_DIMS`]: `outer` independent
/// lines of `len` elements. The kept dimensions, in order, are merged where their strides
/// allow into two groups `hi` and `lo` (`outer = hi_size * lo_size`); line `o` is
/// `(o / lo_size, o % lo_size)` and its element `i` is at
/// `hi * hi_stride + lo * lo_stride + i * reduce_stride`. Results go to a contiguous output
/// (line `o` at `o`; softmax writes the full tensor, element `(o, i)` at
/// `hi * out_hi_stride + lo * out_lo_stride + i * out_reduce_stride`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReducePlan {
    pub outer: u64,
    pub len: u64,
    pub lo_size: u64,
    pub hi_stride: i64,
    pub lo_stride: i64,
    pub reduce_stride: i64,
    pub out_hi_stride: i64,
    pub out_lo_stride: i64,
    pub out_reduce_stride: i64,
    /// Output shape of a reduction with `keepdim` as asked.
    pub out_shape: Vec<i64>,
}

/// `(size, stride, innermost dim)` groups of the kept dimensions in order: neighbours (not
/// separated by the reduced one) merge when the outer steps exactly over the inner; size-1
/// dimensions drop out. A merged group is adjacent in the shape, so the contiguous output
/// merges it too, at the contiguous stride of its innermost dimension.
fn merge_kept(shape: &[i64], strides: &[i64], reduced: usize) -> Vec<(u64, i64, usize)> {
    let mut groups: Vec<(u64, i64, usize)> = Vec::new();
    let mut previous_kept = false;
    for d in 0..shape.len() {
        if d == reduced {
            previous_kept = false;
            continue;
        }
        if shape[d] == 1 {
            continue;
        }
        let (size, stride) = (shape[d] as u64, strides[d]);
        match groups.last_mut() {
            Some(last) if previous_kept && last.1 == stride * size as i64 => *last = (last.0 * size, stride, d),
            _ => groups.push((size, stride, d)),
        }
        previous_kept = true;
    }
    groups
}

impl ReducePlan {
    /// Reduction of dimension `dim`, or PyTorch-style error text; `Ok(None)` when the kept
    /// dimensions do not merge into two groups (the caller copies the input contiguous first,
    /// after which they always do).
    pub fn along(shape: &[i64], strides: &[i64], dim: i64, keepdim: bool) -> Result<Option<ReducePlan>, String> {
        let rank = shape.len() as i64;
        if rank > MAX_DIMS as i64 {
            return Err(format!("torchlower: the CUDA kernels take tensors of rank at most {MAX_DIMS}, got rank {rank}"));
        }
        let d = if dim < 0 { dim + rank } else { dim };
        if !(0..rank).contains(&d) {
            return Err(format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                -rank,
                rank - 1
            ));
        }
        let d = d as usize;
        let groups = merge_kept(shape, strides, d);
        let contiguous = contiguous_strides(shape);
        let (hi, lo) = match groups.as_slice() {
            [] => ((1, 0, 0), (1, 0, 0)),
            [lo] => ((1, 0, 0), *lo),
            [hi, lo] => (*hi, *lo),
            _ => return Ok(None),
        };
        // Output strides of each group; a missing group has size 1, so any stride does.
        let out_stride = |g: (u64, i64, usize)| if g.0 == 1 { 0 } else { contiguous[g.2] };
        let mut out_shape = shape.to_vec();
        if keepdim {
            out_shape[d] = 1;
        } else {
            out_shape.remove(d);
        }
        Ok(Some(ReducePlan {
            outer: hi.0 * lo.0,
            len: shape[d] as u64,
            lo_size: lo.0,
            hi_stride: hi.1,
            lo_stride: lo.1,
            reduce_stride: strides[d],
            out_hi_stride: out_stride(hi),
            out_lo_stride: out_stride(lo),
            out_reduce_stride: contiguous[d],
            out_shape,
        }))
    }

    /// Element `i` of line `o` in the input.
    pub fn input_offset(&self, o: u64, i: u64) -> i64 {
        let (hi, lo) = (o / self.lo_size, o % self.lo_size);
        hi as i64 * self.hi_stride + lo as i64 * self.lo_stride + i as i64 * self.reduce_stride
    }

    /// Where softmax writes element `i` of line `o`.
    pub fn output_offset(&self, o: u64, i: u64) -> i64 {
        let (hi, lo) = (o / self.lo_size, o % self.lo_size);
        hi as i64 * self.out_hi_stride + lo as i64 * self.out_lo_stride + i as i64 * self.out_reduce_stride
    }

    /// The reduction order of the kernels: thread `t` of [`REDUCE_THREADS`] combines elements
    /// `t, t + T, t + 2T, ...` in order, then the partials are combined by a tree, halving
    /// the active threads each step (`partial[t] = combine(partial[t], partial[t + s])`).
    pub fn tree_reduce<V: Copy>(&self, o: u64, init: V, load: impl Fn(i64) -> V, combine: impl Fn(V, V) -> V) -> V {
        let threads = REDUCE_THREADS as u64;
        let mut partial: Vec<V> = (0..threads)
            .map(|t| {
                let mut acc = init;
                let mut i = t;
                while i < self.len {
                    acc = combine(acc, load(self.input_offset(o, i)));
                    i += threads;
                }
                acc
            })
            .collect();
        let mut active = threads / 2;
        while active > 0 {
            for t in 0..active as usize {
                partial[t] = combine(partial[t], partial[t + active as usize]);
            }
            active /= 2;
        }
        partial[0]
    }

    /// `factor` is 1 for sum and `1/len` (as f32) for mean, applied as in PyTorch's CUDA
    /// mean (`sum * factor`).
    pub fn run_sum_cpu(&self, input: &[f32], factor: f32) -> Vec<f32> {
        (0..self.outer)
            .map(|o| self.tree_reduce(o, 0f32, |off| input[off as usize], |a, b| a + b) * factor)
            .collect()
    }

    /// Softmax along the line: max (NaN-propagating), sum of `exp(x - max)`, then
    /// `exp(x - max) / sum`, each element written at its contiguous position.
    pub fn run_softmax_cpu(&self, input: &[f32]) -> Vec<f32> {
        self.run_softmax_like_cpu(input, false)
    }

    /// Log-softmax along the line: max and sum as [`Self::run_softmax_cpu`], then
    /// `(x - max) - log(sum)`.
    pub fn run_log_softmax_cpu(&self, input: &[f32]) -> Vec<f32> {
        self.run_softmax_like_cpu(input, true)
    }

    fn run_softmax_like_cpu(&self, input: &[f32], log: bool) -> Vec<f32> {
        let mut out = vec![0f32; (self.outer * self.len) as usize];
        for o in 0..self.outer {
            let max = self.tree_reduce(o, f32::NEG_INFINITY, |off| input[off as usize], |a, b| Fold::Max.combine(a, b));
            let sum = self.tree_reduce(o, 0f32, |off| Unary::Exp.eval(input[off as usize] - max), |a, b| a + b);
            let log_sum = Unary::Log.eval(sum);
            for i in 0..self.len {
                let shifted = input[self.input_offset(o, i) as usize] - max;
                let value = if log { shifted - log_sum } else { Unary::Exp.eval(shifted) / sum };
                out[self.output_offset(o, i) as usize] = value;
            }
        }
        out
    }

    /// A fold kernel's result per line: `fold` over the line (times `factor` for a sum).
    pub fn run_fold_cpu(&self, input: &[f32], fold: Fold, factor: f32) -> Vec<f32> {
        (0..self.outer)
            .map(|o| {
                let total = self.tree_reduce(o, fold.init(), |off| input[off as usize], |a, b| fold.combine(a, b));
                if fold == Fold::Sum { total * factor } else { total }
            })
            .collect()
    }

    /// The variance kernel's result per line: the tree mean, the tree sum of squared
    /// deviations divided by `divisor`, its square root with `take_sqrt`.
    pub fn run_var_cpu(&self, input: &[f32], divisor: f32, take_sqrt: bool) -> Vec<f32> {
        (0..self.outer)
            .map(|o| {
                let at = |off: i64| input[off as usize];
                let mean = self.tree_reduce(o, 0f32, at, |a, b| a + b) / self.len as f32;
                let squares = self.tree_reduce(o, 0f32, |off| (at(off) - mean) * (at(off) - mean), |a, b| a + b);
                let var = squares / divisor;
                if take_sqrt { var.sqrt() } else { var }
            })
            .collect()
    }

    /// The logsumexp kernel's result per line: `m` the NaN-propagating maximum (0 where it
    /// is ±inf), then `log(Σ exp(x - m)) + m`.
    pub fn run_logsumexp_cpu(&self, input: &[f32]) -> Vec<f32> {
        (0..self.outer)
            .map(|o| {
                let at = |off: i64| input[off as usize];
                let max = self.tree_reduce(o, f32::NEG_INFINITY, at, |a, b| Fold::Max.combine(a, b));
                let m = if max.is_infinite() { 0.0 } else { max };
                let sum = self.tree_reduce(o, 0f32, |off| Unary::Exp.eval(at(off) - m), |a, b| a + b);
                Unary::Log.eval(sum) + m
            })
            .collect()
    }

    /// Layer norm (`norm` [`Norm::Layer`]) or RMS norm of each line, in the kernel's order:
    /// the tree mean of `x` (layer norm), the tree mean of the squared deviations from it
    /// (of `x²` for RMS norm), `rstd = 1 / sqrt(that + eps)`, then per element
    /// `(x - mean) * rstd` (`x * rstd`), times `weight[i]`, plus `bias[i]`, each written at
    /// its contiguous position.
    pub fn run_norm_cpu(&self, input: &[f32], weight: Option<&[f32]>, bias: Option<&[f32]>, eps: f32, norm: Norm) -> Vec<f32> {
        let mut out = vec![0f32; (self.outer * self.len) as usize];
        let len = self.len as f32;
        for o in 0..self.outer {
            let at = |off: i64| input[off as usize];
            let centre = match norm {
                Norm::Layer => Some(self.tree_reduce(o, 0f32, at, |a, b| a + b) / len),
                Norm::Rms => None,
            };
            let deviation = |x: f32| centre.map_or(x, |mean| x - mean);
            let square_mean = self.tree_reduce(o, 0f32, |off| deviation(at(off)) * deviation(at(off)), |a, b| a + b) / len;
            let rstd = 1.0 / (square_mean + eps).sqrt();
            for i in 0..self.len {
                let mut y = deviation(at(self.input_offset(o, i))) * rstd;
                if let Some(w) = weight {
                    y *= w[i as usize];
                }
                if let Some(b) = bias {
                    y += b[i as usize];
                }
                out[self.output_offset(o, i) as usize] = y;
            }
        }
        out
    }

    /// Argmax along the line: the first index of the maximum, NaN counting as the maximum.
    pub fn run_argmax_cpu(&self, input: &[f32]) -> Vec<i64> {
        (0..self.outer)
            .map(|o| {
                // Carry (value, index) pairs; index -1 means "no element yet".
                let threads = REDUCE_THREADS as u64;
                let mut partial: Vec<(f32, i64)> = (0..threads)
                    .map(|t| {
                        let mut best = (f32::NEG_INFINITY, -1i64);
                        let mut i = t;
                        while i < self.len {
                            best = argmax_combine(best, (input[self.input_offset(o, i) as usize], i as i64));
                            i += threads;
                        }
                        best
                    })
                    .collect();
                let mut active = threads as usize / 2;
                while active > 0 {
                    for t in 0..active {
                        partial[t] = argmax_combine(partial[t], partial[t + active]);
                    }
                    active /= 2;
                }
                partial[0].1
            })
            .collect()
    }
}

/// The argmax combine rule shared by the kernel and its host model: an empty side loses;
/// NaN beats numbers; between two NaNs or two equal numbers the lower index wins; otherwise
/// the larger value wins.
pub fn argmax_combine(a: (f32, i64), b: (f32, i64)) -> (f32, i64) {
    if b.1 < 0 {
        return a;
    }
    if a.1 < 0 {
        return b;
    }
    let take_b = match (a.0.is_nan(), b.0.is_nan()) {
        (true, true) => b.1 < a.1,
        (true, false) => false,
        (false, true) => true,
        (false, false) => b.0 > a.0 || (b.0 == a.0 && b.1 < a.1),
    };
    if take_b {
        b
    } else {
        a
    }
}

/// Contiguous strides of `shape`.
pub fn contiguous_strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1].max(1);
    }
    strides
}
