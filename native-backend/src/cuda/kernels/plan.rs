//! The index math of every kernel, as plain Rust data and functions. The ops turn tensor
//! shapes and strides into these plans; the plans become kernel arguments; and the PTX
//! generators compute exactly the offsets described here. Each plan also has a host
//! executor (`run_cpu`) that walks memory the same way, which the tests compare with eager
//! PyTorch and the GPU check compares with the device.

use super::math::{Binary, BinaryMath, Unary, UnaryMath};

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

/// Elementwise over a contiguous `rows x cols` output; each input is read at
/// `row * row_stride + col * col_stride`, a stride of 0 where it is broadcast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementwisePlan {
    pub out_shape: Vec<i64>,
    pub rows: u64,
    pub cols: u64,
    pub inputs: Vec<(i64, i64)>,
}

impl ElementwisePlan {
    pub fn numel(&self) -> u64 {
        self.rows * self.cols
    }

    /// Offsets of output element `index` in each input: the formula the kernels emit.
    pub fn input_offsets(&self, index: u64) -> impl Iterator<Item = i64> + '_ {
        let row = index / self.cols.max(1);
        let col = index - row * self.cols;
        self.inputs.iter().map(move |(rs, cs)| row as i64 * rs + col as i64 * cs)
    }

    /// A unary plan over a tensor.
    pub fn unary(shape: &[i64], strides: &[i64]) -> ElementwisePlan {
        let view = View2::of(shape, strides);
        ElementwisePlan {
            out_shape: shape.to_vec(),
            rows: view.rows,
            cols: view.cols,
            inputs: vec![(view.row_stride, view.col_stride)],
        }
    }

    /// PyTorch broadcasting of two rank-1/2 tensors, or PyTorch's error message.
    pub fn broadcast(a_shape: &[i64], a_strides: &[i64], b_shape: &[i64], b_strides: &[i64]) -> Result<ElementwisePlan, String> {
        let rank = a_shape.len().max(b_shape.len());
        // Left-pad to `rank` with size-1 dimensions.
        let pad = |shape: &[i64], strides: &[i64]| {
            let mut s = vec![1i64; rank - shape.len()];
            s.extend_from_slice(shape);
            let mut t = vec![0i64; rank - strides.len()];
            t.extend_from_slice(strides);
            (s, t)
        };
        let (sa, ta) = pad(a_shape, a_strides);
        let (sb, tb) = pad(b_shape, b_strides);
        let mut out = Vec::with_capacity(rank);
        let mut stride_a = Vec::with_capacity(rank);
        let mut stride_b = Vec::with_capacity(rank);
        for d in 0..rank {
            let size = if sa[d] == sb[d] || sb[d] == 1 {
                sa[d]
            } else if sa[d] == 1 {
                sb[d]
            } else {
                return Err(format!(
                    "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {d}",
                    sa[d], sb[d]
                ));
            };
            out.push(size);
            stride_a.push(if sa[d] == 1 { 0 } else { ta[d] });
            stride_b.push(if sb[d] == 1 { 0 } else { tb[d] });
        }
        let (rows, cols, a, b) = if rank == 1 {
            (1, out[0] as u64, (0, stride_a[0]), (0, stride_b[0]))
        } else {
            (out[0] as u64, out[1] as u64, (stride_a[0], stride_a[1]), (stride_b[0], stride_b[1]))
        };
        Ok(ElementwisePlan { out_shape: out, rows, cols, inputs: vec![a, b] })
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
}

/// `out[m x n] = A[m x k] B[k x n] (+ bias[n])`, contiguous output; A, B and bias strided.
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
}

impl MatmulPlan {
    /// `torch.matmul` for ranks 2/2, 2/1 and 1/2, or PyTorch's error message.
    pub fn matmul(a_shape: &[i64], a_strides: &[i64], b_shape: &[i64], b_strides: &[i64]) -> Result<MatmulPlan, String> {
        match (a_shape.len(), b_shape.len()) {
            (2, 2) => {
                let (a, b) = (View2::of(a_shape, a_strides), View2::of(b_shape, b_strides));
                if a.cols != b.rows {
                    return Err(format!(
                        "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                        a.rows, a.cols, b.rows, b.cols
                    ));
                }
                Ok(MatmulPlan { out_shape: vec![a.rows as i64, b.cols as i64], m: a.rows, n: b.cols, k: a.cols, a, b, bias_stride: None })
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
                Ok(MatmulPlan { out_shape: vec![a.rows as i64], m: a.rows, n: 1, k: a.cols, a, b, bias_stride: None })
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
                Ok(MatmulPlan { out_shape: vec![b.cols as i64], m: 1, n: b.cols, k: a.cols, a, b, bias_stride: None })
            }
            (ra, rb) => Err(format!("torchlower: CUDA matmul supports ranks 2/2, 2/1 and 1/2, got {ra}/{rb}")),
        }
    }

    /// `F.linear(x, w, bias)` for rank-2 `x`, `w` and rank-1 `bias`, or PyTorch's error.
    pub fn linear(
        x_shape: &[i64],
        x_strides: &[i64],
        w_shape: &[i64],
        w_strides: &[i64],
        bias: Option<(&[i64], &[i64])>,
    ) -> Result<MatmulPlan, String> {
        if x_shape.len() != 2 || w_shape.len() != 2 {
            return Err(format!(
                "torchlower: CUDA linear supports rank-2 input and weight, got {}/{}",
                x_shape.len(),
                w_shape.len()
            ));
        }
        let a = View2::of(x_shape, x_strides);
        let b = View2::of(w_shape, w_strides).transposed();
        if a.cols != b.rows {
            return Err(format!(
                "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                a.rows, a.cols, b.rows, b.cols
            ));
        }
        let bias_stride = match bias {
            None => None,
            Some((shape, strides)) => {
                let len = if shape.is_empty() { 1 } else { shape[shape.len() - 1] };
                if shape.len() != 1 || (len != b.cols as i64 && len != 1) {
                    return Err(format!(
                        "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {}.  Target sizes: [{}, {}].  Tensor sizes: {:?}",
                        b.cols, len, 1, a.rows, b.cols, shape
                    ));
                }
                Some(if len == 1 { 0 } else { strides[0] })
            }
        };
        Ok(MatmulPlan { out_shape: vec![a.rows as i64, b.cols as i64], m: a.rows, n: b.cols, k: a.cols, a, b, bias_stride })
    }

    /// Host execution in the kernel's order: one fused multiply-add per k, in increasing k,
    /// starting from 0, then `+ bias`.
    pub fn run_cpu(&self, a: &[f32], b: &[f32], bias: Option<&[f32]>) -> Vec<f32> {
        let mut out = Vec::with_capacity((self.m * self.n) as usize);
        for i in 0..self.m {
            for j in 0..self.n {
                let mut acc = 0f32;
                for p in 0..self.k {
                    acc = a[self.a.offset(i, p) as usize].mul_add(b[self.b.offset(p, j) as usize], acc);
                }
                if let (Some(stride), Some(bias)) = (self.bias_stride, bias) {
                    acc += bias[(j as i64 * stride) as usize];
                }
                out.push(acc);
            }
        }
        out
    }
}

/// Threads per block of the reduction kernels (sum/mean, softmax, argmax).
pub const REDUCE_THREADS: u32 = 256;

/// A reduction along one dimension of a rank-1/2 tensor: `outer` independent lines of `len`
/// elements, line `o` element `i` at `o * outer_stride + i * reduce_stride`; results written
/// to a contiguous output (softmax writes a full contiguous tensor with its own strides).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReducePlan {
    pub outer: u64,
    pub len: u64,
    pub outer_stride: i64,
    pub reduce_stride: i64,
    /// For softmax: where line `o` element `i` goes in the contiguous output.
    pub out_outer_stride: i64,
    pub out_reduce_stride: i64,
    /// Output shape of a reduction with `keepdim` as asked.
    pub out_shape: Vec<i64>,
}

impl ReducePlan {
    /// Reduction of dimension `dim` of a rank-1/2 tensor, or PyTorch-style error text.
    pub fn along(shape: &[i64], strides: &[i64], dim: i64, keepdim: bool) -> Result<ReducePlan, String> {
        let rank = shape.len() as i64;
        let d = if dim < 0 { dim + rank } else { dim };
        if !(0..rank).contains(&d) {
            return Err(format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                -rank,
                rank - 1
            ));
        }
        let view = View2::of(shape, strides);
        let contiguous = View2::contiguous(view.rows, view.cols);
        // For rank 1, the reduced dimension is the (only) column dimension.
        let reduce_cols = rank == 1 || d == 1;
        let (outer, len, outer_stride, reduce_stride, out_outer, out_reduce) = if reduce_cols {
            (view.rows, view.cols, view.row_stride, view.col_stride, contiguous.row_stride, contiguous.col_stride)
        } else {
            (view.cols, view.rows, view.col_stride, view.row_stride, contiguous.col_stride, contiguous.row_stride)
        };
        let mut out_shape = shape.to_vec();
        if keepdim {
            out_shape[d as usize] = 1;
        } else {
            out_shape.remove(d as usize);
        }
        Ok(ReducePlan {
            outer,
            len,
            outer_stride,
            reduce_stride,
            out_outer_stride: out_outer,
            out_reduce_stride: out_reduce,
            out_shape,
        })
    }

    /// Element `i` of line `o` in the input.
    pub fn input_offset(&self, o: u64, i: u64) -> i64 {
        o as i64 * self.outer_stride + i as i64 * self.reduce_stride
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
        let mut out = vec![0f32; (self.outer * self.len) as usize];
        let nan_max = |a: f32, b: f32| if a.is_nan() || b.is_nan() { f32::NAN } else { a.max(b) };
        for o in 0..self.outer {
            let max = self.tree_reduce(o, f32::NEG_INFINITY, |off| input[off as usize], nan_max);
            let sum = self.tree_reduce(o, 0f32, |off| Unary::Exp.eval(input[off as usize] - max), |a, b| a + b);
            for i in 0..self.len {
                let value = Unary::Exp.eval(input[self.input_offset(o, i) as usize] - max) / sum;
                out[(o as i64 * self.out_outer_stride + i as i64 * self.out_reduce_stride) as usize] = value;
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
