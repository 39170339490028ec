//! The direct kernel of `fused::elementwise`: a broadcast plan (rank ≤ 2, or higher ranks whose
//! broadcast merges into a 2-D one; every operand a dense float32 view with row/column strides) and a stack machine that runs the program over
//! segments of the output.

use tch::Tensor;

use super::dense::{self, Dense};
use super::{math, Step};
use crate::error::Result;

/// An elementwise program the direct kernel runs: broadcast output shape and, per operand,
/// its view with row/column strides (0 along broadcast dims).
pub(super) struct ElementwisePlan {
    shape: Vec<i64>,
    pub(super) rows: usize,
    pub(super) cols: usize,
    operands: Vec<(Dense, usize, usize)>,
}

// SAFETY: a plan only reads its operands' values (tensors the caller keeps alive for the
// call), so the threads of one `run` may share it.
unsafe impl Sync for ElementwisePlan {}

/// How many output elements one pass of the stack machine handles: 16 KB per stack slot, so
/// the slots stay in cache while the per-pass cost (one call per step) is spread thin.
const CHUNK: usize = super::SEGMENT;

pub(super) fn elementwise_plan(operands: &[&Tensor], program: &[Step]) -> Option<ElementwisePlan> {
    // Every op of the program must apply (torch broadcasts each pair; the pairwise results
    // agree with broadcasting all operands at once when all are used).
    let mut depth = 0usize;
    for step in program {
        match *step {
            Step::Load(i) if i < operands.len() => depth += 1,
            Step::Unary(_) if depth >= 1 => {}
            Step::Binary(_) if depth >= 2 => depth -= 1,
            _ => return None,
        }
    }
    if depth != 1 {
        return None;
    }
    let used: Vec<bool> = (0..operands.len()).map(|i| program.contains(&Step::Load(i))).collect();
    let higher_rank = operands.iter().zip(&used).any(|(t, u)| *u && crate::facts::Facts::of(t).is_none_or(|f| f.rank > 2));
    if higher_rank {
        return merged_plan(operands, &used);
    }
    let views: Vec<Dense> = operands.iter().map(|t| Dense::of(t)).collect::<Option<_>>()?;
    let rank = views.iter().zip(&used).filter(|(_, u)| **u).map(|(v, _)| v.rank).max()?;
    let dims = |v: &Dense| -> [usize; 2] {
        match v.rank {
            0 => [1, 1],
            1 => [1, v.cols],
            _ => [v.rows, v.cols],
        }
    };
    let mut out = [1usize, 1usize];
    for (v, _) in views.iter().zip(&used).filter(|(_, u)| **u) {
        for (o, d) in out.iter_mut().zip(dims(v)) {
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return None;
            }
        }
    }
    let shape = match rank {
        0 => vec![],
        1 => vec![out[1] as i64],
        _ => vec![out[0] as i64, out[1] as i64],
    };
    let views = views.iter().map(|v| (*v, dims(v))).collect();
    plan_of(shape, out, views)
}

/// The plan over `rows × cols = out`, each operand given as its view and its own
/// `[rows, cols]` (1 along a broadcast dim).
fn plan_of(shape: Vec<i64>, out: [usize; 2], views: Vec<(Dense, [usize; 2])>) -> Option<ElementwisePlan> {
    if out[0] == 0 || out[1] == 0 {
        return None;
    }
    let operands = views
        .into_iter()
        .map(|(v, [r, c])| {
            let row_stride = if r == 1 { 0 } else { c };
            let col_stride = usize::from(c != 1);
            (v, row_stride, col_stride)
        })
        .collect();
    Some(ElementwisePlan { shape, rows: out[0], cols: out[1], operands })
}

/// A program over operands of rank up to 4 whose broadcast is a 2-D one once dims are merged:
/// the output's dims split into a leading block (the plan's rows) and a trailing block (its
/// columns) such that every operand, aligned to the right as torch aligns it, has each block
/// either whole or all ones — a residual `x + h` of one shape, a bias or an embedding over the
/// trailing dims, SqueezeExcitation's `[B, C, 1, 1]` scale over `[B, C, H, W]`. Every used
/// operand must be a contiguous float32 CPU tensor (its merged dims then lie row-major) and
/// one of them must have the output's shape (so eager's output is contiguous as ours is).
/// `None` for anything else, including shapes that do not broadcast (libtorch raises).
fn merged_plan(operands: &[&Tensor], used: &[bool]) -> Option<ElementwisePlan> {
    // Each used operand's sizes aligned to the right over 4 dims (leading ones), as torch
    // broadcasts them, read in one shim call each: this plan is per call, and at a few hundred
    // elements its allocations and tch queries cost as much as the pass.
    let mut shapes: Vec<([i64; 4], *mut f32, bool)> = Vec::with_capacity(operands.len());
    let mut rank = 0;
    for (t, &u) in operands.iter().zip(used) {
        if !u {
            shapes.push(([1; 4], std::ptr::null_mut(), false));
            continue;
        }
        let layout = crate::facts::Layout::of(t).filter(|l| l.dense_f32_cpu)?;
        let mut aligned = [1i64; 4];
        aligned[4 - layout.rank..].copy_from_slice(&layout.sizes[..layout.rank]);
        rank = rank.max(layout.rank);
        shapes.push((aligned, layout.data, true));
    }
    let used_shapes = || shapes.iter().filter(|(_, _, u)| *u).map(|(s, _, _)| &s[4 - rank..]);
    let mut out = [1i64; 4];
    let out = &mut out[4 - rank..];
    for s in used_shapes() {
        for (o, &d) in out.iter_mut().zip(s) {
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return None;
            }
        }
    }
    let out: &[i64] = out;
    if !used_shapes().any(|s| s == out) {
        return None;
    }
    // Whether `s` is whole over `dims` (Some(true)), all ones there where the output is not
    // (Some(false)), or neither.
    let block = |s: &[i64], dims: std::ops::Range<usize>| -> Option<bool> {
        let (mut whole, mut ones) = (true, true);
        for d in dims.filter(|&d| out[d] != 1) {
            whole &= s[d] == out[d];
            ones &= s[d] == 1;
        }
        if whole { Some(true) } else { ones.then_some(false) }
    };
    let split = (0..=rank).find(|&p| used_shapes().all(|s| block(s, 0..p).is_some() && block(s, p..rank).is_some()))?;
    let size = |dims: &[i64]| dims.iter().product::<i64>() as usize;
    let grid = [size(&out[..split]), size(&out[split..])];
    let views = shapes
        .iter()
        .map(|(s, ptr, u)| {
            let s = &s[4 - rank..];
            let whole = |dims| *u && block(s, dims) == Some(true);
            let own = [if whole(0..split) { grid[0] } else { 1 }, if whole(split..rank) { grid[1] } else { 1 }];
            (Dense { ptr: *ptr, rank: 2, rows: own[0], cols: own[1] }, own)
        })
        .collect();
    plan_of(out.to_vec(), grid, views)
}

impl ElementwisePlan {
    /// Whether an operand holds one value per row (its own per row, not one for all),
    /// broadcast along rows longer than one.
    pub(super) fn has_column_broadcast(&self) -> bool {
        self.cols > 1 && self.operands.iter().any(|&(_, row_stride, col_stride)| col_stride == 0 && row_stride > 0)
    }

    /// Evaluates `program` pass by pass over segments of at most [`CHUNK`] output elements
    /// (whole rows when rows are shorter, else part of one row). The bottom stack slot is the
    /// output segment itself, so the result is written where it ends up; the other slots are
    /// scratch. Above libtorch's grain size the segments are shared among torch's threads
    /// (each op is elementwise, so every element is computed as on one thread).
    pub(super) fn run(&self, program: &[Step]) -> Result<Tensor> {
        let (tensor, view) = dense::empty(&self.shape)?;
        // SAFETY: a fresh tensor only this call holds.
        let out = crate::parallel::DisjointParts::new(unsafe { view.values_mut() });
        let (rows, cols) = (self.rows, self.cols);
        let rows_per_pass = (CHUNK / cols).clamp(1, rows);
        let part = cols.min(CHUNK);
        let parts_per_row_block = cols.div_ceil(part);
        let segments = rows.div_ceil(rows_per_pass) * parts_per_row_block;
        let grain = (super::PARALLEL_GRAIN / (rows_per_pass * part)).max(1);
        crate::parallel::for_each_part(segments, grain, &|first, last| {
            // Stack slots above the first, allocated on first use: a lone binary op whose
            // operands are read in place (the common case) needs none, and zeroing 16 KiB per
            // call cost it a fifth of eager's time at 4096 elements.
            let mut scratch: Vec<f32> = Vec::new();
            for segment_index in first..last {
                let first_row = segment_index / parts_per_row_block * rows_per_pass;
                let start = segment_index % parts_per_row_block * part;
                let nrows = rows_per_pass.min(rows - first_row);
                let width = part.min(cols - start);
                // SAFETY: segments are disjoint ranges of the fresh output, each written by
                // the one part that holds its index.
                let output = unsafe { out.part(first_row * cols + start, nrows * width) };
                self.run_segment(program, output, &mut scratch, rows_per_pass * part, first_row, nrows, start, width);
            }
        });
        Ok(tensor)
    }

    /// One segment of [`Self::run`]: `program` over rows `first_row..first_row + nrows`,
    /// columns `start..start + width`, into `output`, with `scratch` for the upper slots
    /// (`segment` elements each).
    ///
    /// Loads are lazy: an operand whose values lie contiguously for the segment, or a row
    /// vector repeated down its rows (a bias, a LayerScale `gamma`), stays where it is until an
    /// op reads it, which then writes its result straight into the slot. So `x + h * gamma`
    /// is two passes, as eager's two ops, not a copy of each operand first (×0.53 of eager at
    /// 64×16×64). A column broadcast (`[B, C, 1, 1]` over `[B, C, H, W]`) takes the unary ops
    /// that follow its load on its one value per row before filling the rows (SqueezeExcitation's
    /// `x * sigmoid(scale)` computes B·C sigmoids, as eager does, not B·C·H·W).
    #[allow(clippy::too_many_arguments)]
    fn run_segment(
        &self,
        program: &[Step],
        output: &mut [f32],
        scratch: &mut Vec<f32>,
        segment: usize,
        first_row: usize,
        nrows: usize,
        start: usize,
        width: usize,
    ) {
        let len = nrows * width;
        let scratch_len = segment * max_depth(program).saturating_sub(1);
        let mut stack: Vec<Entry> = Vec::with_capacity(4);
        let mut at = 0usize;
        while let Some(step) = program.get(at) {
            at += 1;
            match *step {
                Step::Load(i) => {
                    if let Some(entry) = self.lazy(i, first_row, nrows, start, width) {
                        stack.push(entry);
                        continue;
                    }
                    let (view, row_stride, col_stride) = self.operands[i];
                    if col_stride == 0 {
                        // one value per row: the unary ops that follow act on those values
                        // SAFETY: the operand is alive for this call and only read.
                        let values = unsafe { view.values() };
                        let mut buffer = [0f32; 64];
                        let mut heap = Vec::new();
                        let per_row: &mut [f32] = if nrows <= buffer.len() {
                            &mut buffer[..nrows]
                        } else {
                            heap.resize(nrows, 0.0);
                            &mut heap
                        };
                        for (r, value) in per_row.iter_mut().enumerate() {
                            *value = values[(first_row + r) * row_stride];
                        }
                        while let Some(&Step::Unary(op)) = program.get(at) {
                            math::unary_in_place(op, per_row);
                            at += 1;
                        }
                        // the right operand of the next op, whose left one is read in place
                        // or in its slot: one pass, the value per row broadcast along it
                        let left = stack.last().copied();
                        if let (Some(&Step::Binary(op)), Some(a @ (Entry::Slot | Entry::Whole(_)))) = (program.get(at), left) {
                            let k = stack.len() - 1;
                            let out = slot_mut(output, scratch, scratch_len, segment, len, k);
                            let a_values = match a {
                                Entry::Whole(j) => Some(self.whole(j, first_row, nrows, start, width)),
                                _ => None,
                            };
                            math::binary_row_scalars(op, a_values, per_row, false, out);
                            stack[k] = Entry::Slot;
                            at += 1;
                            continue;
                        }
                        // the left operand of an op whose right one is read in place
                        // (`scale * x`): the same one pass, operands in their order
                        if let (Some(&Step::Load(j)), Some(&Step::Binary(op))) = (program.get(at), program.get(at + 1)) {
                            if let Some(Entry::Whole(j)) = self.lazy(j, first_row, nrows, start, width) {
                                let k = stack.len();
                                let out = slot_mut(output, scratch, scratch_len, segment, len, k);
                                math::binary_row_scalars(op, Some(self.whole(j, first_row, nrows, start, width)), per_row, true, out);
                                stack.push(Entry::Slot);
                                at += 2;
                                continue;
                            }
                        }
                        let slot = slot_mut(output, scratch, scratch_len, segment, len, stack.len());
                        for (row, value) in slot.chunks_exact_mut(width).zip(per_row.iter()) {
                            row.fill(*value);
                        }
                    } else {
                        let slot = slot_mut(output, scratch, scratch_len, segment, len, stack.len());
                        self.load(i, slot, first_row, start, width);
                    }
                    stack.push(Entry::Slot);
                }
                // Every op agrees with eager (checked by `elementwise`).
                Step::Unary(op) => {
                    let k = stack.len() - 1;
                    let entry = stack[k];
                    let slot = slot_mut(output, scratch, scratch_len, segment, len, k);
                    match entry {
                        Entry::Slot => math::unary_in_place(op, slot),
                        Entry::Whole(i) => math::unary_into(op, self.whole(i, first_row, nrows, start, width), slot),
                        Entry::Row(i) => {
                            let row = self.row(i, start, width);
                            for out_row in slot.chunks_exact_mut(width) {
                                math::unary_into(op, row, out_row);
                            }
                        }
                    }
                    stack[k] = Entry::Slot;
                }
                Step::Binary(op) => {
                    let b = stack.pop().expect("a binary op has two operands");
                    let k = stack.len() - 1;
                    let a = stack[k];
                    let (out, upper) = slot_pair(output, scratch, scratch_len, segment, len, k, matches!(b, Entry::Slot));
                    // the right operand: a whole segment, or one row repeated
                    let b_whole = match b {
                        Entry::Slot => Some(upper),
                        Entry::Whole(j) => Some(self.whole(j, first_row, nrows, start, width)),
                        Entry::Row(_) => None,
                    };
                    match (a, b_whole) {
                        (Entry::Slot, Some(b)) => math::binary_in_place(op, out, b),
                        (Entry::Whole(i), Some(b)) => math::binary_into(op, self.whole(i, first_row, nrows, start, width), b, out),
                        (Entry::Row(i), Some(b)) => math::binary_rows_into(op, b, self.row(i, start, width), true, out),
                        (Entry::Slot, None) => {
                            let Entry::Row(j) = b else { unreachable!("only a row has no whole segment") };
                            math::binary_rows_in_place(op, out, self.row(j, start, width));
                        }
                        (Entry::Whole(i), None) => {
                            let Entry::Row(j) = b else { unreachable!("only a row has no whole segment") };
                            math::binary_rows_into(op, self.whole(i, first_row, nrows, start, width), self.row(j, start, width), false, out);
                        }
                        (Entry::Row(i), None) => {
                            let Entry::Row(j) = b else { unreachable!("only a row has no whole segment") };
                            let (a_row, b_row) = (self.row(i, start, width), self.row(j, start, width));
                            for out_row in out.chunks_exact_mut(width) {
                                math::binary_into(op, a_row, b_row, out_row);
                            }
                        }
                    }
                    stack[k] = Entry::Slot;
                }
            }
        }
        // a program that is one load (or ends on a lazy operand) copies it into the output
        match stack.first() {
            Some(Entry::Whole(i)) => output.copy_from_slice(self.whole(*i, first_row, nrows, start, width)),
            Some(Entry::Row(i)) => {
                let row = self.row(*i, start, width);
                output.chunks_exact_mut(width).for_each(|out_row| out_row.copy_from_slice(row));
            }
            _ => {}
        }
    }

    /// Operand `i` as a lazy stack entry, when its segment can be read where it lies.
    fn lazy(&self, i: usize, first_row: usize, nrows: usize, start: usize, width: usize) -> Option<Entry> {
        if self.source(i, first_row, nrows, start, width).is_some() {
            return Some(Entry::Whole(i));
        }
        let (_, row_stride, col_stride) = self.operands[i];
        (row_stride == 0 && col_stride == 1).then_some(Entry::Row(i))
    }

    /// The segment of an [`Entry::Whole`] operand.
    fn whole(&self, i: usize, first_row: usize, nrows: usize, start: usize, width: usize) -> &[f32] {
        self.source(i, first_row, nrows, start, width).expect("a whole entry reads in place")
    }

    /// Columns `start..start + width` of an [`Entry::Row`] operand, the same for every row.
    fn row(&self, i: usize, start: usize, width: usize) -> &[f32] {
        // SAFETY: the operand is alive for this call and only read.
        let values = unsafe { self.operands[i].0.values() };
        &values[start..start + width]
    }

    /// Operand `i`'s values for the segment when they lie contiguously in its storage.
    fn source(&self, i: usize, first_row: usize, nrows: usize, start: usize, width: usize) -> Option<&[f32]> {
        let (view, row_stride, col_stride) = self.operands[i];
        if !(col_stride == 1 && (nrows == 1 || row_stride == width)) {
            return None;
        }
        // SAFETY: the operand is alive for this call and only read.
        let values = unsafe { view.values() };
        let base = first_row * row_stride + start;
        Some(&values[base..base + nrows * width])
    }

    /// Copies operand `i`'s values for rows `first_row..first_row + nrows`, columns
    /// `start..start + width` of the output into `slot`, row by row: the operands
    /// [`Self::run_segment`] can neither read in place ([`Self::lazy`]) nor broadcast from one
    /// value per row, i.e. rows that do not follow one another in storage.
    fn load(&self, i: usize, slot: &mut [f32], first_row: usize, start: usize, width: usize) {
        let (view, row_stride, col_stride) = self.operands[i];
        debug_assert_eq!(col_stride, 1, "a column broadcast is filled by run_segment");
        // SAFETY: the operand is alive; indices stay inside its view.
        let values = unsafe { view.values() };
        for (r, segment) in slot.chunks_exact_mut(width).enumerate() {
            let base = (first_row + r) * row_stride;
            segment.copy_from_slice(&values[base + start..base + start + width]);
        }
    }
}

/// A value on the stack of [`ElementwisePlan::run_segment`].
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// in the stack slot of its position
    Slot,
    /// operand `i`, read where it lies (contiguous for the segment)
    Whole(usize),
    /// operand `i`, one row repeated down the segment
    Row(usize),
}

/// The stack slot of position `k`: the output segment for 0, else scratch (allocated on first
/// use: a program whose operands are all read in place needs none, and zeroing 16 KiB per
/// call cost a lone binary op a fifth of eager's time at 4096 elements).
fn slot_mut<'a>(output: &'a mut [f32], scratch: &'a mut Vec<f32>, scratch_len: usize, segment: usize, len: usize, k: usize) -> &'a mut [f32] {
    match k {
        0 => output,
        k => {
            if scratch.is_empty() {
                scratch.resize(scratch_len, 0.0);
            }
            &mut scratch[(k - 1) * segment..][..len]
        }
    }
}

/// The slot of position `k` (written) and the one above it (read; empty unless `upper`).
fn slot_pair<'a>(output: &'a mut [f32], scratch: &'a mut Vec<f32>, scratch_len: usize, segment: usize, len: usize, k: usize, upper: bool) -> (&'a mut [f32], &'a [f32]) {
    if !upper {
        return (slot_mut(output, scratch, scratch_len, segment, len, k), &[]);
    }
    if scratch.is_empty() {
        scratch.resize(scratch_len, 0.0);
    }
    match k {
        0 => (output, &scratch[..len]),
        k => {
            let (lower, above) = scratch.split_at_mut(k * segment);
            (&mut lower[(k - 1) * segment..][..len], &above[..len])
        }
    }
}

/// The deepest the stack of `program` gets.
fn max_depth(program: &[Step]) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    for step in program {
        match step {
            Step::Load(_) => depth += 1,
            Step::Unary(_) => {}
            Step::Binary(_) => depth = depth.saturating_sub(1),
        }
        deepest = deepest.max(depth);
    }
    deepest
}
