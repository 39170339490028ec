//! Chains of convolutions (each with its activations) and a closing max pool, run on oneDNN's
//! own layout between the ops where eager runs them on oneDNN (`ConvChain`, the `conv_chain`
//! fused form of `F.relu(F.conv2d(x, …))` statements, as LeNet/MNIST- and VGG-style code writes
//! them).
//!
//! Why: for a contiguous float32 batch libtorch runs most convolutions on oneDNN
//! (`ConvBackend::Mkldnn`), which computes in a blocked layout (`aBcd16b` on AVX-512): eager
//! reorders each input into it and each result out of it into a fresh NCHW tensor. Those
//! reorders, and above all the fresh result buffers (a result as large as glibc's allocation
//! threshold is mapped anew, and its pages faulted in, on every call), cost about as much as
//! the arithmetic on small images. Here a value stays an `mkldnn` tensor from one convolution
//! to the next; oneDNN picks the same primitive (its layouts follow from the shapes, not from
//! the input's layout), and a reorder only copies, so every convolution gives eager's bits.
//!
//! What runs on the blocked buffer must not care where an element lies: ReLU (element by
//! element, exactly eager's) in place; and the max pool through oneDNN's, which equals eager's
//! only without NaN (oneDNN's skips it), `-inf` (its windows start from the lowest finite
//! float) or `-0.0` (a tie with `+0.0` could pick the other zero): the buffer is scanned for
//! them first. Everything else turns the value back into an
//! NCHW tensor (`to_dense`, a copy) and runs eager's op, and so does every convolution eager
//! would not run on oneDNN (`select_conv_backend`, libtorch's own choice, asked through the
//! shim) and every invalid one (eager's error).

use crate::fused::Unary;
use crate::Result;
use tch::{Kind, Tensor};

extern "C" {
    fn tl_conv_runs_onednn(
        input: *const torch_sys::C_tensor,
        input_sizes: *const i64,
        weight: *const torch_sys::C_tensor,
        bias: *const torch_sys::C_tensor,
        stride: *const i64,
        padding: *const i64,
        dilation: *const i64,
        spatial: i64,
        groups: i64,
    ) -> std::os::raw::c_int;
    fn tl_onednn_buffer(tensor: *const torch_sys::C_tensor, data: *mut *mut std::ffi::c_void, nbytes: *mut i64) -> std::os::raw::c_int;
}

/// The value a chain holds: an ordinary tensor, or a rank-4 float32 one in oneDNN's layout
/// with its logical sizes.
enum Value {
    Dense(Tensor),
    Blocked(Tensor, [i64; 4]),
}

/// A value flowing through `conv2d` stages and an optional closing `max_pool2d`, as the
/// statements `x = act(F.conv2d(x, …)); …; x = F.max_pool2d(x, …)` compute it.
pub struct ConvChain {
    value: Value,
}

impl ConvChain {
    pub fn new(x: &Tensor) -> Result<ConvChain> {
        Ok(ConvChain { value: Value::Dense(x.shallow_clone()) })
    }

    /// `acts(F.conv2d(value, w, b, stride, padding, dilation, groups))`.
    #[allow(clippy::too_many_arguments)]
    pub fn conv2d(self, w: &Tensor, b: Option<&Tensor>, stride: &[i64], padding: &[i64], dilation: &[i64], groups: i64, acts: &[Unary]) -> Result<ConvChain> {
        let onednn = match (per_dim(stride), per_dim(padding), per_dim(dilation)) {
            (Some(stride), Some(padding), Some(dilation)) => {
                let sizes = match &self.value {
                    Value::Dense(x) => x.size(),
                    Value::Blocked(_, sizes) => sizes.to_vec(),
                };
                let runs = valid(&sizes, value_is_plain(&self.value), w, b, &stride, &padding, &dilation, groups)
                    && eager_runs_onednn(&self.value, &sizes, w, b, &stride, &padding, &dilation, groups);
                runs.then_some((stride, padding, dilation))
            }
            _ => None,
        };
        let Some((stride, padding, dilation)) = onednn else {
            let x = self.dense()?;
            let out = crate::ops::conv2d(&x, w, b, stride, padding, dilation, groups)?;
            return Ok(ConvChain { value: Value::Dense(crate::fused::acts_in_place(out, acts)?) });
        };
        let input = match self.value {
            Value::Dense(x) => x.f_to_mkldnn(Kind::Float)?,
            Value::Blocked(t, _) => t,
        };
        let out = input.f_mkldnn_convolution(w, b, padding, stride, dilation, groups)?;
        let sizes = rank4(&out)?;
        let mut blocked = ConvChain { value: Value::Blocked(out, sizes) };
        if acts.is_empty() {
            return Ok(blocked);
        }
        if acts.iter().all(|&op| op == Unary::Relu) {
            if let Some(values) = blocked.unpadded_values() {
                relu_in_place(values);
                return Ok(blocked);
            }
        }
        let dense = blocked.dense()?;
        Ok(ConvChain { value: Value::Dense(crate::fused::acts_in_place(dense, acts)?) })
    }

    /// `F.max_pool2d(value, kernel_size, stride, padding, dilation, ceil_mode)`: oneDNN's on
    /// the blocked value where it is eager's (no padding or dilation, a valid window, and no
    /// NaN, `-inf` or `-0.0` in the buffer), else ours/eager's on the NCHW value
    /// (`ops::max_pool2d`).
    pub fn max_pool2d(mut self, kernel_size: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<ConvChain> {
        let kernel = per_dim(kernel_size);
        let step = if stride.is_empty() { kernel } else { per_dim(stride) };
        let plain = padding.iter().all(|&p| p == 0) && dilation.iter().all(|&d| d == 1) && !ceil_mode;
        if let (Value::Blocked(_, sizes), Some(kernel), Some(step), true) = (&self.value, kernel, step, plain) {
            let fits = (0..2).all(|d| kernel[d] >= 1 && step[d] >= 1 && kernel[d] <= sizes[2 + d]);
            if fits && self.unpadded_values().is_some_and(|values| !pools_differently(values)) {
                if let Value::Blocked(t, _) = &self.value {
                    let out = t.f_max_pool2d(kernel, step, [0, 0], [1, 1], false)?;
                    let sizes = rank4(&out)?;
                    return Ok(ConvChain { value: Value::Blocked(out, sizes) });
                }
            }
        }
        let x = self.dense()?;
        Ok(ConvChain { value: Value::Dense(crate::ops::max_pool2d(&x, kernel_size, stride, padding, dilation, ceil_mode)?) })
    }

    /// The value as an ordinary (NCHW) tensor.
    pub fn finish(self) -> Result<Tensor> {
        self.dense()
    }

    fn dense(self) -> Result<Tensor> {
        match self.value {
            Value::Dense(x) => Ok(x),
            Value::Blocked(t, _) => Ok(t.f_to_dense(Kind::Float, false)?),
        }
    }

    /// The blocked value's elements when its buffer holds nothing else (no padded channels),
    /// in oneDNN's order.
    fn unpadded_values(&mut self) -> Option<&mut [f32]> {
        let Value::Blocked(t, sizes) = &self.value else { return None };
        let len = sizes.iter().product::<i64>();
        let mut data = std::ptr::null_mut();
        let mut nbytes = 0i64;
        if unsafe { tl_onednn_buffer(t.as_ptr(), &mut data, &mut nbytes) } != 0 || data.is_null() || nbytes != len * 4 {
            return None;
        }
        // SAFETY: the buffer holds `len` float32 values (its size says so) and belongs to a
        // tensor this chain made and alone holds; the slice borrows the chain mutably.
        Some(unsafe { std::slice::from_raw_parts_mut(data.cast::<f32>(), len as usize) })
    }
}

/// A contiguous (NCHW, not channels-last) float32 CPU tensor: what the oneDNN path takes.
fn plain_f32(t: &Tensor) -> bool {
    t.kind() == Kind::Float && t.device() == tch::Device::Cpu && t.is_contiguous()
}

fn value_is_plain(value: &Value) -> bool {
    match value {
        Value::Dense(x) => plain_f32(x),
        Value::Blocked(..) => true,
    }
}

/// Whether eager, given this value as an NCHW tensor, runs the convolution on oneDNN.
#[allow(clippy::too_many_arguments)]
fn eager_runs_onednn(value: &Value, sizes: &[i64], w: &Tensor, b: Option<&Tensor>, stride: &[i64; 2], padding: &[i64; 2], dilation: &[i64; 2], groups: i64) -> bool {
    if !may_run_onednn(sizes, &w.size(), stride, dilation, groups) {
        return false;
    }
    let input = match value {
        Value::Dense(x) => x.as_ptr(),
        Value::Blocked(..) => std::ptr::null(),
    };
    let bias = b.map_or(std::ptr::null(), |b| b.as_ptr());
    let answer = unsafe {
        tl_conv_runs_onednn(input, sizes.as_ptr(), w.as_ptr(), bias, stride.as_ptr(), padding.as_ptr(), dilation.as_ptr(), 2, groups)
    };
    answer == 1
}

/// A quick "no" before asking libtorch: it runs a float32 convolution on oneDNN only when (a
/// stride or dilation above 1, a batch of 16 or more, a kernel other than 1×1, or more than
/// one thread) and (groups, a kernel above 3×3, a batch above 1, or an input of more than
/// 20,480 elements) (`ConvParams::use_mkldnn`). Asking costs about as much as a tiny
/// convolution (squeeze-and-excitation's 1×1 ones on pooled maps); a libtorch whose
/// conditions grow only loses the fast path, never eager's values.
fn may_run_onednn(xs: &[i64], ws: &[i64], stride: &[i64; 2], dilation: &[i64; 2], groups: i64) -> bool {
    let strided = stride.iter().chain(dilation).any(|&s| s > 1);
    let one_by_one = ws[2..] == [1, 1];
    let first = strided || xs[0] >= 16 || !one_by_one || crate::facts::num_threads() > 1;
    let second = groups > 1 || (ws[2] > 3 && ws[3] > 3) || xs[0] > 1 || xs.iter().product::<i64>() > 20_480;
    first && second
}

/// A list of one value per spatial dim, as eager expands `stride=1` to `(1, 1)`.
fn per_dim(values: &[i64]) -> Option<[i64; 2]> {
    match values {
        [one] => Some([*one; 2]),
        _ => values.try_into().ok(),
    }
}

/// The arguments eager's `conv2d` accepts, for the oneDNN path: a rank-4 contiguous float32
/// CPU batch and weight, groups dividing both channel counts, one bias value per output
/// channel, and a non-empty output. Anything else goes to libtorch's `conv2d`, which raises
/// eager's error or runs eager's kernel.
#[allow(clippy::too_many_arguments)]
fn valid(xs: &[i64], plain_input: bool, w: &Tensor, b: Option<&Tensor>, stride: &[i64; 2], padding: &[i64; 2], dilation: &[i64; 2], groups: i64) -> bool {
    if !plain_input || !plain_f32(w) || b.is_some_and(|b| !plain_f32(b)) {
        return false;
    }
    let ws = w.size();
    if xs.len() != 4 || ws.len() != 4 || groups < 1 || xs[0] < 1 || ws[0] < 1 || ws[0] % groups != 0 || xs[1] != ws[1] * groups {
        return false;
    }
    if b.is_some_and(|b| b.size() != [ws[0]]) {
        return false;
    }
    if stride.iter().any(|&s| s < 1) || padding.iter().any(|&p| p < 0) || dilation.iter().any(|&d| d < 1) {
        return false;
    }
    (0..2).all(|d| xs[2 + d] + 2 * padding[d] - dilation[d] * (ws[2 + d] - 1) - 1 >= 0)
}

/// Eager's ReLU element by element: NaN stays NaN (with its payload), `-0.0` stays `-0.0`,
/// anything below zero becomes `+0.0`.
fn relu_in_place(values: &mut [f32]) {
    crate::fused::acts_on_values(values, &[Unary::Relu]);
}

/// Whether oneDNN's max pool could differ from eager's over these values: it skips NaN (eager's
/// propagates it), starts from the lowest finite float (a window of `-inf` gives that, eager's
/// `-inf`), and may pick the other zero of a `-0.0`/`+0.0` tie (eager's keeps the first).
fn pools_differently(values: &[f32]) -> bool {
    // per chunk without early exit, so the loop vectorises
    values.chunks(1024).any(|chunk| {
        chunk.iter().fold(false, |found, &v| {
            let bits = v.to_bits();
            found | ((bits & 0x7fff_ffff) > 0x7f80_0000) | (bits == 0x8000_0000) | (bits == 0xff80_0000)
        })
    })
}

/// The sizes of a rank-4 result.
fn rank4(t: &Tensor) -> Result<[i64; 4]> {
    t.size().as_slice().try_into().map_err(|_| crate::Error::Runtime("torchlower: a oneDNN result of rank other than 4".into()))
}
