//! What follows a GEMM (or starts from any fresh tensor): bias add, a chain of unary ops and
//! an optional sum/mean, done row by row while the row is in cache.

use super::calibrate;
use super::math::{self, Binary, Unary};

/// `sum`/`mean` over one dim, as `t.sum(dim=…, keepdim=…)` / `t.mean(…)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduce {
    Sum { dim: i64, keepdim: bool },
    Mean { dim: i64, keepdim: bool },
}

impl Reduce {
    pub fn dim(self) -> i64 {
        match self {
            Reduce::Sum { dim, .. } | Reduce::Mean { dim, .. } => dim,
        }
    }
    pub fn keepdim(self) -> bool {
        match self {
            Reduce::Sum { keepdim, .. } | Reduce::Mean { keepdim, .. } => keepdim,
        }
    }
    pub fn is_mean(self) -> bool {
        matches!(self, Reduce::Mean { .. })
    }

    /// Which axis of a `rows × cols` view of a rank-`rank` tensor this reduces, or `None`
    /// when the dim is out of range (then tch raises eager's error).
    pub fn axis(self, rank: usize) -> Option<Axis> {
        let dim = self.dim();
        match (rank, dim) {
            (1, 0 | -1) | (2, 1 | -1) => Some(Axis::Cols),
            (2, 0 | -2) => Some(Axis::Rows),
            _ => None,
        }
    }

    /// Result shape for an input of `shape` (rank 1 or 2) reduced over `axis`.
    pub fn out_shape(self, shape: &[i64], axis: Axis) -> Vec<i64> {
        let reduced = match (shape.len(), axis) {
            (1, _) => 0,
            (_, Axis::Rows) => 0,
            (_, Axis::Cols) => 1,
        };
        let mut out = shape.to_vec();
        if self.keepdim() {
            out[reduced] = 1;
        } else {
            out.remove(reduced);
        }
        out
    }
}

/// The axis of a `rows × cols` view a reduction runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Over the rows (torch dim 0 of a matrix): one result per column.
    Rows,
    /// Along each row (the last dim): one result per row.
    Cols,
}

/// The bias operand added to every row.
#[derive(Debug, Clone, Copy)]
pub enum RowBias<'a> {
    None,
    /// The same `cols` values for every row (a 1-D bias).
    Vector(&'a [f32]),
    /// A full `rows × cols` operand.
    Matrix(&'a [f32]),
}

/// Applies bias, `acts` and (when `reduce` is given) the reduction to `values`
/// (`rows × cols`, row-major, modified in place); reduction results go to `reduced`
/// (`rows` values for [`Axis::Cols`], `cols` for [`Axis::Rows`]).
pub fn apply(
    values: &mut [f32],
    rows: usize,
    cols: usize,
    bias: RowBias<'_>,
    acts: &[Unary],
    reduce: Option<(Reduce, Axis)>,
    reduced: &mut [f32],
) {
    // Row by row while the row is in cache, for large buffers whose ops are all
    // position-independent; otherwise each op over the whole buffer (which is the whole
    // tensor, as eager runs it; and one call instead of one per short row).
    const IN_CACHE: usize = 256 * 1024;
    let per_row = rows * cols > IN_CACHE && acts.iter().all(|&op| calibrate::native(op));
    if per_row {
        for (i, row) in values.chunks_exact_mut(cols.max(1)).take(rows).enumerate() {
            add_bias(row, 1, cols, bias, i);
            for &op in acts {
                math::unary_in_place(op, row); // every op is native here (checked above)
            }
        }
    } else {
        add_bias(&mut values[..rows * cols], rows, cols, bias, 0);
        for &op in acts {
            calibrate::unary_in_place(op, &mut values[..rows * cols]);
        }
    }
    if let Some((r, axis)) = reduce {
        calibrate::sum_over(&values[..rows * cols], rows, cols, axis, reduced);
        if r.is_mean() {
            let count = match axis {
                Axis::Cols => cols,
                Axis::Rows => rows,
            };
            reduced.iter_mut().for_each(|s| *s /= count as f32);
        }
    }
}

/// [`apply`] without a reduction, its rows shared among torch's threads above libtorch's grain
/// size when every op of `acts` may run on part of a buffer ([`calibrate::native`]; each row is
/// then computed exactly as on one thread). Otherwise the whole buffer on this thread, where an
/// op that must see it all is libtorch's own (parallel) kernel.
pub fn apply_over_threads(values: &mut [f32], rows: usize, cols: usize, bias: RowBias<'_>, acts: &[Unary]) {
    if !acts.iter().all(|&op| calibrate::native(op)) {
        return apply(values, rows, cols, bias, acts, None, &mut []);
    }
    let cols_or_one = cols.max(1);
    let grain_rows = (super::PARALLEL_GRAIN / cols_or_one).max(1);
    let parts = crate::parallel::DisjointParts::new(&mut values[..rows * cols]);
    crate::parallel::for_each_part(rows, grain_rows, &|first, last| {
        // SAFETY: rows `first..last` belong to this part only.
        let block = unsafe { parts.part(first * cols, (last - first) * cols) };
        let bias = match bias {
            RowBias::Matrix(b) => RowBias::Matrix(&b[first * cols..last * cols]),
            other => other,
        };
        apply(block, last - first, cols, bias, acts, None, &mut []);
    });
}

/// Adds the bias to `rows` rows (`values` holds exactly those, row-major) that start at row
/// `first` of the whole matrix.
fn add_bias(values: &mut [f32], rows: usize, cols: usize, bias: RowBias<'_>, first: usize) {
    match bias {
        RowBias::None => {}
        RowBias::Vector(b) => math::add_rows(values, b),
        RowBias::Matrix(b) => math::binary_in_place(Binary::Add, values, &b[first * cols..(first + rows) * cols]),
    }
}
