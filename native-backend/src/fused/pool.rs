//! Max pooling of contiguous float32 CPU planes without padding or dilation: the layout and
//! arguments of CNN inference code (`F.max_pool2d(x, 2)` after a convolution).
//!
//! Why our own loop: eager's CPU kernel for contiguous NCHW input walks each output element's
//! window with index arithmetic and records the argmax index it then drops; for MNIST's
//! `64×64×24×24` it takes about 13 ms at one thread (1.5 ms for the same tensor
//! channels-last), most of the MNIST net's time outside its GEMM. This loop sweeps each
//! window row across a whole output row, which the compiler vectorizes. It compares in
//! eager's order (row-major over the window, from `-inf`, `val > max || isnan(val)`), so the
//! result is the element eager picks: bit-identical, NaN and signed zeros included.
//! Anything else (padding, dilation, `ceil_mode`, other layouts and dtypes, a window larger
//! than the input) returns `None` and takes libtorch's kernel, which also raises eager's errors.

use tch::{Device, Kind, Tensor};

use crate::error::Result;
use crate::parallel::{for_each_part, DisjointParts};

/// The window of one spatial dim: its length and step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    size: usize,
    stride: usize,
}

/// `(kernel, stride)` of `dims` spatial dims from eager's arguments (one value for every dim,
/// or one per dim; an empty stride is the kernel, as eager's `None`), when they describe a
/// plain window: no padding, dilation 1, floor mode.
fn windows(dims: usize, kernel: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Option<Vec<Window>> {
    let per_dim = |values: &[i64], d: usize| -> Option<i64> {
        match values.len() {
            1 => Some(values[0]),
            n if n == dims => Some(values[d]),
            _ => None,
        }
    };
    if ceil_mode || padding.iter().any(|&p| p != 0) || dilation.iter().any(|&d| d != 1) {
        return None;
    }
    (0..dims)
        .map(|d| {
            let size = per_dim(kernel, d)?;
            let step = if stride.is_empty() { size } else { per_dim(stride, d)? };
            (size > 0 && step > 0).then_some(Window { size: size as usize, stride: step as usize })
        })
        .collect()
}

/// `F.max_pool2d` (`dims == 2`: input `(N, C, H, W)` or `(C, H, W)`) or `F.max_pool1d`
/// (`dims == 1`: `(N, C, L)` or `(C, L)`) by our loop, or `None` where libtorch's kernel runs.
pub fn max_pool(x: &Tensor, dims: usize, kernel: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<Option<Tensor>> {
    let Some(window) = windows(dims, kernel, stride, padding, dilation, ceil_mode) else { return Ok(None) };
    let shape = x.size();
    let rank = shape.len();
    // exactly the row-major strides: `is_contiguous` ignores size-1 dims, and a one-channel
    // channels-last tensor (contiguous too) gets a channels-last output from eager
    if x.device() != Device::Cpu || x.kind() != Kind::Float || !(dims + 1..=dims + 2).contains(&rank) || x.stride() != row_major_strides(&shape) || x.numel() == 0 {
        return Ok(None);
    }
    // 1-D pooling is 2-D pooling of planes one row high
    let (height, width) = if dims == 2 { (shape[rank - 2] as usize, shape[rank - 1] as usize) } else { (1, shape[rank - 1] as usize) };
    let (rows, cols) = if dims == 2 { (window[0], window[1]) } else { (Window { size: 1, stride: 1 }, window[0]) };
    if height < rows.size || width < cols.size {
        return Ok(None);
    }
    let (out_h, out_w) = ((height - rows.size) / rows.stride + 1, (width - cols.size) / cols.stride + 1);
    let mut out_shape = shape.clone();
    out_shape[rank - 1] = out_w as i64;
    if dims == 2 {
        out_shape[rank - 2] = out_h as i64;
    }
    let planes: usize = shape[..rank - dims].iter().product::<i64>() as usize;
    let out = Tensor::f_empty(out_shape.as_slice(), (Kind::Float, Device::Cpu))?;
    let (in_plane, out_plane) = (height * width, out_h * out_w);
    // SAFETY: `x` is a live contiguous float32 CPU tensor of `planes · in_plane` elements,
    // only read; `out` is the fresh contiguous output of `planes · out_plane`, written only
    // here, each part its own planes.
    let (input, output) = unsafe {
        (
            std::slice::from_raw_parts(x.data_ptr() as *const f32, planes * in_plane),
            std::slice::from_raw_parts_mut(out.data_ptr() as *mut f32, planes * out_plane),
        )
    };
    let parts = DisjointParts::new(output);
    // a few hundred thousand comparisons per part before a second thread pays
    let grain = (1 << 16) / (in_plane.max(1)) + 1;
    for_each_part(planes, grain, &|begin, end| {
        // SAFETY: the parts of one call cover disjoint plane ranges.
        let o = unsafe { parts.part(begin * out_plane, (end - begin) * out_plane) };
        for (p, o) in (begin..end).zip(o.chunks_exact_mut(out_plane)) {
            pool_plane(&input[p * in_plane..(p + 1) * in_plane], width, rows, cols, o, out_w);
        }
    });
    Ok(Some(out))
}

fn row_major_strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1].max(1);
    }
    strides
}

/// One plane: each output row starts at `-inf`; each window row is swept across the output
/// row, and within it each window element in order — per output element that is eager's
/// row-major order over the window.
fn pool_plane(input: &[f32], width: usize, rows: Window, cols: Window, out: &mut [f32], out_w: usize) {
    for (oh, o) in out.chunks_exact_mut(out_w).enumerate() {
        o.fill(f32::NEG_INFINITY);
        for i in 0..rows.size {
            let line = &input[(oh * rows.stride + i) * width..][..width];
            match (cols.size, cols.stride) {
                // windows side by side (kernel = stride, MNIST's 2×2): consecutive chunks
                (2, 2) => sweep_chunks::<2>(line, o),
                (3, 3) => sweep_chunks::<3>(line, o),
                _ => {
                    for j in 0..cols.size {
                        for (m, &v) in o.iter_mut().zip(line[j..].iter().step_by(cols.stride)) {
                            *m = pick(*m, v);
                        }
                    }
                }
            }
        }
    }
}

fn sweep_chunks<const K: usize>(line: &[f32], o: &mut [f32]) {
    for (m, chunk) in o.iter_mut().zip(line.chunks_exact(K)) {
        let mut best = *m;
        for &v in chunk {
            best = pick(best, v);
        }
        *m = best;
    }
}

/// Eager's comparison, `val > max || isnan(val)`, as a select: random data would mispredict a
/// branch on it every other element.
#[inline(always)]
fn pick(max: f32, v: f32) -> f32 {
    if v > max || v.is_nan() {
        v
    } else {
        max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_windows_only() {
        let w = |size, stride| Window { size, stride };
        assert_eq!(windows(2, &[2], &[], &[0], &[1], false), Some(vec![w(2, 2), w(2, 2)]));
        assert_eq!(windows(2, &[3, 2], &[1, 2], &[0, 0], &[1, 1], false), Some(vec![w(3, 1), w(2, 2)]));
        assert_eq!(windows(1, &[4], &[3], &[0], &[1], false), Some(vec![w(4, 3)]));
        assert_eq!(windows(2, &[2], &[], &[1], &[1], false), None);
        assert_eq!(windows(2, &[2], &[], &[0], &[2], false), None);
        assert_eq!(windows(2, &[2], &[], &[0], &[1], true), None);
        assert_eq!(windows(2, &[2, 2, 2], &[], &[0], &[1], false), None);
        assert_eq!(windows(2, &[0], &[], &[0], &[1], false), None);
    }
}
