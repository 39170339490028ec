//! Direct convolution on cuda:0 (`F.conv1d`, `F.conv2d`: stride, padding, dilation, groups,
//! optional bias): one thread per element of the contiguous `(N, C_out, OH, OW)` output, the
//! input read in place through its strides, the weight contiguous. Each output is
//! `Σ x·w` over its group's input channels and the kernel window in `(channel, row, column)`
//! order, accumulated by fused multiply-adds from 0, then plus the bias: the small-kernel
//! convolutions of CNN heads and 1-D conv blocks, without cuDNN. Eager's CUDA convolution is
//! cuDNN's, which sums in another order: the GPU check compares within the rounding of a
//! sum (`1e-5 · Σ|x·w|`), and the host model ([`ConvPlan::run_cpu`]) follows the kernel bit
//! for bit. 1-D convolution is 2-D convolution of planes one row high.

use super::super::launch::{KernelSignature, ParamKind, ParamKind::*};
use super::ptx::{pack16, PtxBuilder};

/// `(out, in, weight, bias, numel, out_dims, in_dims, steps, dilation_groups, n_stride,
/// c_stride, h_stride, w_stride, has_bias)`; each packed parameter holds four 16-bit fields
/// from the lowest: `out_dims = (C_out, OH, OW, C_in per group)`, `in_dims = (H, W, KH, KW)`,
/// `steps = (stride_h, stride_w, pad_h, pad_w)`, `dilation_groups = (dil_h, dil_w, groups, 0)`.
pub const CONV_PARAMS: &[ParamKind] = &[Ptr, Ptr, Ptr, Ptr, I64, I64, I64, I64, I64, I64, I64, I64, I64, U32];

/// One convolution's geometry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvPlan {
    /// `(N, C_out, OH, OW)` of the contiguous output.
    pub out: [i64; 4],
    /// `(H, W)` of the input, `(KH, KW)` of the kernel.
    pub input: [i64; 2],
    pub kernel: [i64; 2],
    /// The input's strides of N, C, H, W.
    pub strides: [i64; 4],
    pub stride: [i64; 2],
    pub padding: [i64; 2],
    pub dilation: [i64; 2],
    pub groups: i64,
    /// Input channels per group (the weight's second dim).
    pub group_channels: i64,
    pub has_bias: bool,
    /// The output's shape as eager gives it (the input's rank).
    pub out_shape: Vec<i64>,
}

impl ConvPlan {
    /// The plan of `F.conv{dims}d(x, w, b, stride, padding, dilation, groups)` (`stride`,
    /// `padding`, `dilation` one value for every dim or one per dim), or `None` where eager
    /// refuses the call (wrong ranks or channel counts, a bias of another length, a kernel
    /// larger than the padded input, non-positive steps): the op then lets libtorch raise
    /// eager's error.
    #[allow(clippy::too_many_arguments)]
    pub fn new(dims: usize, x_shape: &[i64], x_strides: &[i64], w_shape: &[i64], bias_len: Option<i64>, stride: &[i64], padding: &[i64], dilation: &[i64], groups: i64) -> Option<ConvPlan> {
        let rank = x_shape.len();
        if !(dims == 1 || dims == 2) || !(dims + 1..=dims + 2).contains(&rank) || x_strides.len() != rank || w_shape.len() != dims + 2 || groups < 1 {
            return None;
        }
        let per_dim = |values: &[i64], d: usize| -> Option<i64> {
            match values.len() {
                1 => Some(values[0]),
                n if n == dims => Some(values[d]),
                _ => None,
            }
        };
        let c = rank - dims - 1;
        let (n, n_stride) = if c == 1 { (x_shape[0], x_strides[0]) } else { (1, 0) };
        let (channels, c_stride) = (x_shape[c], x_strides[c]);
        let (out_channels, group_channels) = (w_shape[0], w_shape[1]);
        if group_channels * groups != channels || out_channels % groups != 0 || out_channels == 0 || bias_len.is_some_and(|len| len != out_channels) {
            return None;
        }
        // (H, W) with strides; 1-D: H = 1 (stride 0), the kernel one row high
        let (mut input, mut kernel, mut spatial_strides) = ([1i64; 2], [1i64; 2], [0i64; 2]);
        let (mut steps, mut pads, mut dils) = ([1i64; 2], [0i64; 2], [1i64; 2]);
        let mut out_hw = [1i64; 2];
        for d in 0..dims {
            let at = d + 2 - dims;
            input[at] = x_shape[c + 1 + d];
            spatial_strides[at] = x_strides[c + 1 + d];
            kernel[at] = w_shape[2 + d];
            steps[at] = per_dim(stride, d)?;
            pads[at] = per_dim(padding, d)?;
            dils[at] = per_dim(dilation, d)?;
            if steps[at] < 1 || pads[at] < 0 || dils[at] < 1 || kernel[at] < 1 {
                return None;
            }
            let room = input[at] + 2 * pads[at] - dils[at] * (kernel[at] - 1) - 1;
            if room < 0 {
                return None;
            }
            out_hw[at] = room / steps[at] + 1;
        }
        let mut out_shape = x_shape.to_vec();
        out_shape[c] = out_channels;
        for d in 0..dims {
            out_shape[c + 1 + d] = out_hw[d + 2 - dims];
        }
        Some(ConvPlan {
            out: [n, out_channels, out_hw[0], out_hw[1]],
            input,
            kernel,
            strides: [n_stride, c_stride, spatial_strides[0], spatial_strides[1]],
            stride: steps,
            padding: pads,
            dilation: dils,
            groups,
            group_channels,
            has_bias: bias_len.is_some(),
            out_shape,
        })
    }

    pub fn numel(&self) -> u64 {
        self.out.iter().product::<i64>() as u64
    }

    /// The kernel's result (`input` the storage its strides index, `weight` contiguous).
    pub fn run_cpu(&self, input: &[f32], weight: &[f32], bias: Option<&[f32]>) -> Vec<f32> {
        let [n_len, oc_len, oh_len, ow_len] = self.out;
        let [kh_len, kw_len] = self.kernel;
        let per_group = oc_len / self.groups;
        let mut out = Vec::with_capacity(self.numel() as usize);
        for n in 0..n_len {
            for oc in 0..oc_len {
                let first_channel = oc / per_group * self.group_channels;
                for oh in 0..oh_len {
                    for ow in 0..ow_len {
                        let mut acc = 0f32;
                        for ic in 0..self.group_channels {
                            for kh in 0..kh_len {
                                let h = oh * self.stride[0] - self.padding[0] + kh * self.dilation[0];
                                if h < 0 || h >= self.input[0] {
                                    continue;
                                }
                                for kw in 0..kw_len {
                                    let w = ow * self.stride[1] - self.padding[1] + kw * self.dilation[1];
                                    if w < 0 || w >= self.input[1] {
                                        continue;
                                    }
                                    let x = input[(n * self.strides[0] + (first_channel + ic) * self.strides[1] + h * self.strides[2] + w * self.strides[3]) as usize];
                                    let k = weight[(((oc * self.group_channels + ic) * kh_len + kh) * kw_len + kw) as usize];
                                    acc = x.mul_add(k, acc);
                                }
                            }
                        }
                        out.push(match bias {
                            Some(b) => acc + b[oc as usize],
                            None => acc,
                        });
                    }
                }
            }
        }
        out
    }

    /// The packed and plain arguments after the four pointers, or `None` when a field does
    /// not fit in 16 bits.
    pub fn args_tail(&self) -> Option<Vec<i64>> {
        let [_, oc, oh, ow] = self.out;
        Some(vec![
            self.numel() as i64,
            pack16([oc, oh, ow, self.group_channels])?,
            pack16([self.input[0], self.input[1], self.kernel[0], self.kernel[1]])?,
            pack16([self.stride[0], self.stride[1], self.padding[0], self.padding[1]])?,
            pack16([self.dilation[0], self.dilation[1], self.groups, 0])?,
            self.strides[0],
            self.strides[1],
            self.strides[2],
            self.strides[3],
        ])
    }
}

/// A counted loop `for v in 0..end`: places the head, returns `(v, end label)`; the body
/// follows, then [`loop_end`].
fn loop_start(b: &mut PtxBuilder, end: &str, hint: &str) -> (String, String, String) {
    let (v, head, exit, done) = (b.b64(), b.label(hint), b.label(&format!("{hint}_end")), b.pred());
    b.op(format!("mov.s64 {v}, 0"));
    b.place(&head);
    b.op(format!("setp.ge.s64 {done}, {v}, {end}"));
    b.op(format!("@{done} bra {exit}"));
    (v, head, exit)
}

fn loop_end(b: &mut PtxBuilder, (v, head, exit): &(String, String, String), next: &str) {
    b.place(next);
    b.op(format!("add.s64 {v}, {v}, 1"));
    b.op(format!("bra {head}"));
    b.place(exit);
}

pub fn conv_ptx(signature: &KernelSignature) -> String {
    let mut b = PtxBuilder::new();
    let done = b.label("done");
    let out = b.param_global_ptr(0);
    let input = b.param_global_ptr(1);
    let weight = b.param_global_ptr(2);
    let bias = b.param_global_ptr(3);
    let index = b.output_element(4, &done);
    let (out_dims, in_dims, steps, dilation_groups) = (b.param_s64(5), b.param_s64(6), b.param_s64(7), b.param_s64(8));
    let (n_stride, c_stride, h_stride, w_stride) = (b.param_s64(9), b.param_s64(10), b.param_s64(11), b.param_s64(12));
    let (oc_len, oh_len, ow_len, group_channels) = (b.packed_field(&out_dims, 0), b.packed_field(&out_dims, 1), b.packed_field(&out_dims, 2), b.packed_field(&out_dims, 3));
    let (height, width, kh_len, kw_len) = (b.packed_field(&in_dims, 0), b.packed_field(&in_dims, 1), b.packed_field(&in_dims, 2), b.packed_field(&in_dims, 3));
    let (stride_h, stride_w, pad_h, pad_w) = (b.packed_field(&steps, 0), b.packed_field(&steps, 1), b.packed_field(&steps, 2), b.packed_field(&steps, 3));
    let (dil_h, dil_w, groups) = (b.packed_field(&dilation_groups, 0), b.packed_field(&dilation_groups, 1), b.packed_field(&dilation_groups, 2));
    let [n, oc, oh, ow] = b.split_nchw(&index, &oc_len, &oh_len, &ow_len);
    // the group's first input channel: oc / (C_out / groups) · C_in_per_group
    let (per_group, first_channel) = (b.b64(), b.b64());
    b.op(format!("div.u64 {per_group}, {oc_len}, {groups}"));
    b.op(format!("div.u64 {first_channel}, {oc}, {per_group}"));
    b.op(format!("mul.lo.s64 {first_channel}, {first_channel}, {group_channels}"));
    let (base, h0, w0) = (b.b64(), b.b64(), b.b64());
    b.op(format!("mul.lo.s64 {base}, {n}, {n_stride}"));
    b.op(format!("mad.lo.s64 {base}, {first_channel}, {c_stride}, {base}"));
    b.op(format!("mul.lo.s64 {h0}, {oh}, {stride_h}"));
    b.op(format!("sub.s64 {h0}, {h0}, {pad_h}"));
    b.op(format!("mul.lo.s64 {w0}, {ow}, {stride_w}"));
    b.op(format!("sub.s64 {w0}, {w0}, {pad_w}"));
    // the weight rows of oc: oc · C_in_per_group · KH · KW
    let (w_index, window) = (b.b64(), b.b64());
    b.op(format!("mul.lo.s64 {window}, {kh_len}, {kw_len}"));
    b.op(format!("mul.lo.s64 {w_index}, {oc}, {group_channels}"));
    b.op(format!("mul.lo.s64 {w_index}, {w_index}, {window}"));
    let acc = b.f32();
    b.op(format!("mov.f32 {acc}, 0f00000000"));
    let channel = loop_start(&mut b, &group_channels, "channel");
    let channel_next = b.label("channel_next");
    let row = loop_start(&mut b, &kh_len, "row");
    let row_next = b.label("row_next");
    let (h, outside_h, low_h) = (b.b64(), b.pred(), b.pred());
    b.op(format!("mad.lo.s64 {h}, {}, {dil_h}, {h0}", row.0));
    b.op(format!("setp.lt.s64 {low_h}, {h}, 0"));
    b.op(format!("setp.ge.s64 {outside_h}, {h}, {height}"));
    b.op(format!("or.pred {outside_h}, {outside_h}, {low_h}"));
    // a row in the padding: skip its weights too
    let skip_row = b.label("skip_row");
    b.op(format!("@{outside_h} bra {skip_row}"));
    let row_base = b.b64();
    b.op(format!("mad.lo.s64 {row_base}, {}, {c_stride}, {base}", channel.0));
    b.op(format!("mad.lo.s64 {row_base}, {h}, {h_stride}, {row_base}"));
    let column = loop_start(&mut b, &kw_len, "column");
    let column_next = b.label("column_next");
    let (w, outside_w, low_w) = (b.b64(), b.pred(), b.pred());
    b.op(format!("mad.lo.s64 {w}, {}, {dil_w}, {w0}", column.0));
    b.op(format!("setp.lt.s64 {low_w}, {w}, 0"));
    b.op(format!("setp.ge.s64 {outside_w}, {w}, {width}"));
    b.op(format!("or.pred {outside_w}, {outside_w}, {low_w}"));
    b.op(format!("@{outside_w} bra {column_next}"));
    let offset = b.b64();
    b.op(format!("mad.lo.s64 {offset}, {w}, {w_stride}, {row_base}"));
    let x_address = b.element_address(&input, &offset, 4);
    // weight element ((oc·C_in_g + ic)·KH + kh)·KW + kw
    let k_index = b.b64();
    b.op(format!("mad.lo.s64 {k_index}, {}, {kh_len}, {}", channel.0, row.0));
    b.op(format!("mad.lo.s64 {k_index}, {k_index}, {kw_len}, {}", column.0));
    b.op(format!("add.s64 {k_index}, {k_index}, {w_index}"));
    let k_address = b.element_address(&weight, &k_index, 4);
    let (xv, kv) = (b.f32(), b.f32());
    b.op(format!("ld.global.f32 {xv}, [{x_address}]"));
    b.op(format!("ld.global.f32 {kv}, [{k_address}]"));
    b.op(format!("fma.rn.f32 {acc}, {xv}, {kv}, {acc}"));
    loop_end(&mut b, &column, &column_next);
    b.place(&skip_row);
    loop_end(&mut b, &row, &row_next);
    loop_end(&mut b, &channel, &channel_next);
    let has_bias = b.b32();
    b.op(format!("ld.param.u32 {has_bias}, [p13]"));
    let with_bias = b.pred();
    b.op(format!("setp.ne.u32 {with_bias}, {has_bias}, 0"));
    let skip_bias = b.label("skip_bias");
    b.op(format!("@!{with_bias} bra {skip_bias}"));
    let bias_address = b.element_address(&bias, &oc, 4);
    let bv = b.f32();
    b.op(format!("ld.global.f32 {bv}, [{bias_address}]"));
    b.op(format!("add.rn.f32 {acc}, {acc}, {bv}"));
    b.place(&skip_bias);
    let address = b.element_address(&out, &index, 4);
    b.op(format!("st.global.f32 [{address}], {acc}"));
    b.place(&done);
    b.finish(signature)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_follow_eagers_shapes_and_refusals() {
        let plan = ConvPlan::new(2, &[2, 4, 9, 10], &[360, 90, 10, 1], &[6, 2, 3, 3], Some(6), &[2], &[1], &[1], 2).unwrap();
        assert_eq!((plan.out, plan.out_shape.clone()), ([2, 6, 5, 5], vec![2, 6, 5, 5]));
        let plan = ConvPlan::new(1, &[3, 8], &[8, 1], &[5, 3, 2], None, &[1], &[0], &[3], 1).unwrap();
        assert_eq!((plan.out, plan.strides, plan.out_shape.clone()), ([1, 5, 1, 5], [0, 8, 0, 1], vec![5, 5]));
        // channels that do not match, a bias of another length, a kernel larger than the input
        assert!(ConvPlan::new(2, &[1, 3, 8, 8], &[192, 64, 8, 1], &[4, 2, 3, 3], None, &[1], &[0], &[1], 1).is_none());
        assert!(ConvPlan::new(2, &[1, 4, 8, 8], &[256, 64, 8, 1], &[4, 2, 3, 3], Some(3), &[1], &[0], &[1], 2).is_none());
        assert!(ConvPlan::new(2, &[1, 1, 2, 2], &[4, 4, 2, 1], &[1, 1, 3, 3], None, &[1], &[0], &[1], 1).is_none());
    }
}
