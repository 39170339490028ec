//! Max pooling of contiguous float32 CPU planes, any window, padding, dilation and ceil mode
//! (`F.max_pool2d(x, 2)` after a convolution, ResNet's `max_pool2d(x, 3, 2, 1)` stem).
//!
//! Why our own loop: eager's CPU kernel for contiguous NCHW input walks each output element's
//! window with index arithmetic and records the argmax index it then drops: about 13 ms at
//! one thread for MNIST's `64×64×24×24` (1.5 ms for the same tensor channels-last), 7 ms for
//! ResNet's stem at batch 1. This loop sweeps each window row across a whole output row with
//! a select, which the compiler vectorizes. It compares in eager's order (row-major over the
//! window, from `-inf`, `val > max || isnan(val)`, skipping the padding), so the result is the
//! element eager picks: bit-identical, NaN payloads and signed zeros included. Other layouts
//! and dtypes, and arguments eager refuses, return `None` and take libtorch's kernel, which
//! also raises eager's errors.

use tch::{Device, Kind, Tensor};

use super::math::{has_avx512, multiversion};
use crate::cuda::kernels::pool::PoolWindow;
use crate::error::Result;
use crate::parallel::{for_each_part, DisjointParts};

/// The window of one spatial dim, with eager's output length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Window {
    size: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
    out: usize,
}

impl Window {
    /// The window over an input of `len` from eager's arguments, with eager's output length,
    /// when eager accepts them (else `None`: libtorch's kernel then raises eager's error).
    /// The shape rules are the CUDA pooling plan's ([`PoolWindow::output_len`]): one source.
    fn new(len: usize, size: i64, stride: i64, padding: i64, dilation: i64, ceil_mode: bool) -> Option<Window> {
        let out = PoolWindow { size, stride, padding, dilation }.output_len(len as i64, ceil_mode)?;
        Some(Window { size: size as usize, stride: stride as usize, padding: padding as usize, dilation: dilation as usize, out: out as usize })
    }

    /// [`Window::inside`] for every element of the window over a row of `len`: computed once
    /// per call, not once per output row and window row (at ResNet-stem-sized planes of a few
    /// outputs a row, those divisions cost more than the comparisons).
    fn spans(&self, len: usize) -> Vec<(usize, usize, usize)> {
        (0..self.size).map(|k| self.inside(k, len)).collect()
    }

    /// The one-row "window" of 1-D pooling seen as 2-D.
    const ROW: Window = Window { size: 1, stride: 1, padding: 0, dilation: 1, out: 1 };

    /// Output positions `lo..hi` whose element `k` of the window lies inside `0..len`, and
    /// where the first of them reads: `o · stride + k · dilation - padding`.
    fn inside(&self, k: usize, len: usize) -> (usize, usize, usize) {
        let offset = (k * self.dilation) as i64 - self.padding as i64;
        let stride = self.stride as i64;
        let lo = if offset < 0 { (-offset + stride - 1) / stride } else { 0 };
        let last = len as i64 - 1 - offset;
        let hi = if last < 0 { 0 } else { (last / stride + 1).min(self.out as i64) };
        let lo = lo.min(hi);
        (lo as usize, hi as usize, (lo * stride + offset).max(0) as usize)
    }
}

/// The windows of `dims` spatial dims (sizes `lens`) from eager's arguments: one value for
/// every dim or one per dim; an empty stride is the kernel, as eager's `None`.
fn windows(lens: &[usize], kernel: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Option<Vec<Window>> {
    let dims = lens.len();
    let per_dim = |values: &[i64], d: usize| -> Option<i64> {
        match values.len() {
            1 => Some(values[0]),
            n if n == dims => Some(values[d]),
            _ => None,
        }
    };
    (0..dims)
        .map(|d| {
            let size = per_dim(kernel, d)?;
            let step = if stride.is_empty() { size } else { per_dim(stride, d)? };
            Window::new(lens[d], size, step, per_dim(padding, d)?, per_dim(dilation, d)?, ceil_mode)
        })
        .collect()
}

/// `F.max_pool2d` (`dims == 2`: input `(N, C, H, W)` or `(C, H, W)`) or `F.max_pool1d`
/// (`dims == 1`: `(N, C, L)` or `(C, L)`) by our loop, or `None` where libtorch's kernel runs.
pub fn max_pool(x: &Tensor, dims: usize, kernel: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<Option<Tensor>> {
    let shape = x.size();
    let rank = shape.len();
    // exactly the row-major strides: `is_contiguous` ignores size-1 dims, and a one-channel
    // channels-last tensor (contiguous too) gets a channels-last output from eager
    if x.device() != Device::Cpu || x.kind() != Kind::Float || !(dims + 1..=dims + 2).contains(&rank) || x.stride() != row_major_strides(&shape) || x.numel() == 0 {
        return Ok(None);
    }
    let lens: Vec<usize> = shape[rank - dims..].iter().map(|&n| n as usize).collect();
    let Some(window) = windows(&lens, kernel, stride, padding, dilation, ceil_mode) else { return Ok(None) };
    // 1-D pooling is 2-D pooling of planes one row high
    let (height, width) = if dims == 2 { (lens[0], lens[1]) } else { (1, lens[0]) };
    let (rows, cols) = if dims == 2 { (window[0], window[1]) } else { (Window::ROW, window[0]) };
    let (out_h, out_w) = (rows.out, cols.out);
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
    let spans = cols.spans(width);
    let parts = DisjointParts::new(output);
    // Work per plane: its comparisons and its reads, plus a fixed cost of the plane's loops
    // that dominates small planes. A part takes at least 2^14 such units (about 10 µs here),
    // so a second thread pays for its wake-up: eager's kernel splits the planes at any size,
    // which at 64×8×64 halves its time on two threads and left our serial loop at ×0.69.
    let per_plane = out_plane * rows.size * cols.size + in_plane + 64;
    let grain = (1 << 14) / per_plane + 1;
    for_each_part(planes, grain, &|begin, end| {
        // SAFETY: the parts of one call cover disjoint plane ranges.
        let o = unsafe { parts.part(begin * out_plane, (end - begin) * out_plane) };
        for (p, o) in (begin..end).zip(o.chunks_exact_mut(out_plane)) {
            pool_plane(&input[p * in_plane..(p + 1) * in_plane], width, rows, cols, &spans, o, out_w);
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

multiversion! {
/// One plane: each output row starts at `-inf`; each window row is swept across the output
/// row, and within it each window element in order — per output element that is eager's
/// row-major order over the window, skipping what lies in the padding as eager does (for
/// `pick` a skipped element and `-inf` are the same).
/// `spans` is `cols.spans(width)`.
/// Built for AVX-512 and AVX2 too: the window sweeps are selects the compiler vectorizes.
fn pool_plane(input: &[f32], width: usize, rows: Window, cols: Window, spans: &[(usize, usize, usize)], out: &mut [f32], out_w: usize) {
    let height = input.len() / width;
    let side_by_side = cols.padding == 0 && cols.dilation == 1 && cols.size == cols.stride && cols.out * cols.size <= width;
    for (oh, o) in out.chunks_exact_mut(out_w).enumerate() {
        o.fill(f32::NEG_INFINITY);
        for i in 0..rows.size {
            let ih = (oh * rows.stride + i * rows.dilation) as i64 - rows.padding as i64;
            if ih < 0 || ih >= height as i64 {
                continue;
            }
            let line = &input[ih as usize * width..][..width];
            match (side_by_side, cols.size) {
                // windows side by side (kernel = stride, MNIST's 2×2): consecutive chunks
                (true, 2) => sweep_chunks::<2>(line, o),
                (true, 3) => sweep_chunks::<3>(line, o),
                _ => {
                    for &(lo, hi, first) in spans {
                        // no output reads this window column (`first` may then lie past the row)
                        if lo >= hi {
                            continue;
                        }
                        for (m, &v) in o[lo..hi].iter_mut().zip(line[first..].iter().step_by(cols.stride)) {
                            *m = pick(*m, v);
                        }
                    }
                }
            }
        }
    }
}
}

#[inline(always)]
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

    /// Eager's CPU loop for one plane, written plainly: the window from `o·stride - padding`
    /// with `dilation`, clipped to the input, `val > max || isnan(val)` from `-inf`.
    fn eager_plane(input: &[f32], height: usize, width: usize, rows: Window, cols: Window) -> Vec<f32> {
        let mut out = Vec::new();
        for oh in 0..rows.out {
            for ow in 0..cols.out {
                let mut max = f32::NEG_INFINITY;
                for i in 0..rows.size {
                    let h = (oh * rows.stride + i * rows.dilation) as i64 - rows.padding as i64;
                    for j in 0..cols.size {
                        let w = (ow * cols.stride + j * cols.dilation) as i64 - cols.padding as i64;
                        if (0..height as i64).contains(&h) && (0..width as i64).contains(&w) {
                            let v = input[h as usize * width + w as usize];
                            if v > max || v.is_nan() {
                                max = v;
                            }
                        }
                    }
                }
                out.push(max);
            }
        }
        out
    }

    /// Every window eager accepts on small planes (sizes, strides, paddings, dilations, ceil
    /// mode): the sweep gives eager's elements, bit for bit, and never reads past a row.
    #[test]
    fn the_sweep_is_eagers_loop_on_every_small_window() {
        let mut checked = 0;
        for (height, width) in [(1usize, 3usize), (3, 4), (5, 7)] {
            let input: Vec<f32> = (0..height * width).map(|i| [0.5, -0.0, 0.0, f32::NAN, -1.0, 2.0, f32::INFINITY][i % 7] + (i / 7) as f32).collect();
            for size in 1..=4 {
                for stride in 1..=5 {
                    for padding in 0..=2 {
                        for dilation in 1..=2 {
                            for ceil_mode in [false, true] {
                                let Some(cols) = Window::new(width, size, stride, padding, dilation, ceil_mode) else { continue };
                                let rows = if height == 1 { Window::ROW } else { match Window::new(height, size, stride, padding, dilation, ceil_mode) { Some(r) => r, None => continue } };
                                let mut got = vec![0f32; rows.out * cols.out];
                                pool_plane(&input, width, rows, cols, &cols.spans(width), &mut got, cols.out);
                                let want = eager_plane(&input, height, width, rows, cols);
                                let same = got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits());
                                assert!(same, "{height}x{width} k={size} s={stride} p={padding} d={dilation} ceil={ceil_mode}: {got:?} vs {want:?}");
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 300, "{checked}");
    }

    #[test]
    fn inside_covers_the_positions_in_range() {
        let w = Window::new(10, 3, 2, 1, 1, false).unwrap();
        for k in 0..3 {
            let (lo, hi, first) = w.inside(k, 10);
            for o in 0..w.out {
                let at = (o * 2 + k) as i64 - 1;
                assert_eq!((lo..hi).contains(&o), (0..10).contains(&at), "k={k} o={o}");
            }
            assert_eq!(first as i64, (lo * 2 + k) as i64 - 1);
        }
    }
}

#[cfg(test)]
mod timing {
    /// Paired timing of our loop against libtorch's kernel (`TL_POOL="n,c,h,w,k,s,p;…"` for
    /// 2-D pooling, `"n,c,l,k,s,p"` for 1-D; `TL_THREADS`, default 1); prints medians and the
    /// median ratio. Run by hand: `cargo test --release --lib pool::timing -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn time_max_pool() {
        tch::set_num_threads(std::env::var("TL_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(1));
        let shapes = std::env::var("TL_POOL").unwrap_or_else(|_| "1,8,16,4,3,2,1;1,8,16,16,3,2,1;64,8,16,4,3,2,1;64,8,16,16,3,2,1;1,64,112,112,3,2,1;1,8,16,4,2,2,0".into());
        for shape in shapes.split(';') {
            let d: Vec<i64> = shape.split(',').map(|v| v.trim().parse().unwrap()).collect();
            let dims = if d.len() == 6 { 1 } else { 2 };
            let x = tch::Tensor::randn(&d[..dims + 2], (tch::Kind::Float, tch::Device::Cpu));
            let (k, s, p) = ([d[dims + 2]], [d[dims + 3]], [d[dims + 4]]);
            let reps = (4_000_000 / x.numel()).clamp(3, 20_000);
            let time = |ours: bool| {
                let t = std::time::Instant::now();
                for _ in 0..reps {
                    let out = match (ours, dims) {
                        (true, _) => super::max_pool(&x, dims, &k, &s, &p, &[1], false).unwrap().unwrap(),
                        (false, 1) => x.max_pool1d(k, s, p, [1], false),
                        (false, _) => x.max_pool2d(k, s, p, [1], false),
                    };
                    let _ = std::hint::black_box(out);
                }
                t.elapsed().as_secs_f64() / reps as f64 * 1e6
            };
            let (ours, reference, ratio) = crate::fused::paired_timing::paired_medians(time);
            println!("{shape}: ours {:.2} us libtorch {:.2} us  libtorch/ours x{:.2}", ours, reference, ratio);
        }
    }
}
