//! The check's cases: each runs one kernel on the device with arguments built by
//! `kernels::args` (as the tensor ops build them) and compares with the plan's host model.

use std::time::Instant;

use serde_json::{json, Value};

use crate::kernels::args;
use crate::dump::{Dump, Input, Output};
use crate::kernels::math::{Binary, BinaryMath, NumberForm, Pointwise, Unary, UnaryMath};
use crate::kernels::plan::{CopyPlan, ElementwisePlan, Fold, MatmulPlan, Norm, ReducePlan};
use crate::kernels::conv::ConvPlan;
use crate::kernels::pool::{PoolKind, PoolPlan};
use crate::kernels::Kernel;
use crate::launch::{Arg, LaunchConfig};
use crate::result::Result;
use crate::safe::{DeviceBuffer, Event, Module, PrimaryContext, StreamHandle};

/// splitmix64, so a failing case reproduces.
pub struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
    fn vec(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }
}

const SPECIALS: [f32; 24] = [
    0.0, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.0, -1.0, 1e-30, -1e-30, f32::MIN_POSITIVE, 1e-45, -1e-45,
    f32::MAX, f32::MIN, 88.7, 88.8, -103.9, -104.5, 0.55, 3.9, 4.0, -5.5, 10.0, -100.0,
];

fn ulps(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let bits = x.to_bits() as i64;
        if bits < 0x8000_0000 { bits } else { 0x8000_0000 - bits }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Compares bit for bit (any NaN equals any NaN).
fn compare_f32(name: String, got: &[f32], want: &[f32]) -> Value {
    let mut mismatches = 0usize;
    let mut max_ulps = 0u64;
    let mut first = Value::Null;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let same = g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
        if !same {
            mismatches += 1;
            if !g.is_nan() && !w.is_nan() {
                max_ulps = max_ulps.max(ulps(*g, *w));
            }
            if first.is_null() {
                first = json!({ "index": i, "device": format!("{g:e}"), "model": format!("{w:e}") });
            }
        }
    }
    let ok = mismatches == 0 && got.len() == want.len();
    json!({ "case": name, "ok": ok, "elements": want.len(), "mismatches": mismatches, "max_ulps": max_ulps, "first_mismatch": first })
}

/// One tensor of a case: its whole storage and the view of it the kernel reads.
struct View<'a> {
    storage: &'a [f32],
    shape: &'a [i64],
    strides: &'a [i64],
}

impl<'a> View<'a> {
    fn input(&self) -> Input<'a> {
        Input { storage: self.storage, shape: self.shape, strides: self.strides, offset: 0 }
    }
}

/// Contiguous strides of `shape`.
fn contiguous(shape: &[i64]) -> Vec<i64> {
    crate::kernels::plan::contiguous_strides(shape)
}

/// Storage size that holds a view of `shape` with non-negative `strides`.
fn span(shape: &[i64], strides: &[i64]) -> usize {
    if shape.iter().any(|&s| s == 0) {
        return 0;
    }
    1 + shape.iter().zip(strides).map(|(&s, &t)| ((s - 1) * t) as usize).sum::<usize>()
}

pub struct Runner<'c, 'm> {
    context: &'c PrimaryContext<'c>,
    modules: &'m [(Kernel, Module<'c>)],
    rng: Rng,
    /// Where every case's inputs and device output go for the comparison with eager CUDA.
    dump: Option<Dump>,
    dump_errors: usize,
}

impl<'c, 'm> Runner<'c, 'm> {
    pub fn new(context: &'c PrimaryContext<'c>, modules: &'m [(Kernel, Module<'c>)], dump: Option<Dump>) -> Self {
        Runner { context, modules, rng: Rng(2024), dump, dump_errors: 0 }
    }

    /// The dump, finished: the manifest's path (None without a dump or when writing failed).
    pub fn finish_dump(&mut self) -> Option<std::path::PathBuf> {
        let dump = self.dump.take()?;
        if self.dump_errors > 0 {
            println!("{} cases could not be dumped", self.dump_errors);
        }
        dump.finish().ok()
    }

    fn record(&mut self, case: &str, op: &str, args: Value, inputs: &[Input<'_>], output: Output<'_>, exact: bool) {
        if let Some(dump) = self.dump.as_mut() {
            if dump.record(case, op, args, inputs, output, exact).is_err() {
                self.dump_errors += 1;
            }
        }
    }

    fn launch(&self, kernel: Kernel, config: LaunchConfig, args: &[Arg]) -> Result<()> {
        let module = self
            .modules
            .iter()
            .find(|(k, _)| *k == kernel)
            .map(|(_, m)| m)
            .ok_or_else(|| crate::result::CudaError::Unsupported(format!("{} did not JIT", kernel.name())))?;
        let function = module.function(kernel.signature())?;
        // SAFETY: every pointer is a buffer sized by the same plan the arguments come from.
        unsafe { function.launch(config, StreamHandle::LEGACY, args) }
    }

    fn upload(&self, values: &[f32]) -> Result<DeviceBuffer<'c, f32>> {
        // A zero-length buffer still needs a valid address for the kernel's (unused) pointer.
        DeviceBuffer::from_host(self.context, if values.is_empty() { &[0.0] } else { values })
    }

    /// Random values with the special values spread over the start.
    fn values(&mut self, n: usize, lo: f32, hi: f32, shift: usize) -> Vec<f32> {
        let mut v = self.rng.vec(n, lo, hi);
        for (i, s) in SPECIALS.iter().enumerate() {
            if i + shift < v.len() {
                v[i + shift] = *s;
            }
        }
        v
    }

    pub fn run_all(&mut self) -> Vec<Value> {
        let mut results = Vec::new();
        let mut push = |r: Result<Value>, name: &str| {
            results.push(r.unwrap_or_else(|e| json!({ "case": name, "ok": false, "error": e.to_string() })))
        };
        for &op in Unary::ALL {
            let mut values: Vec<f32> = SPECIALS.to_vec();
            values.extend(self.rng.vec(1 << 16, -12.0, 12.0));
            values.extend(self.rng.vec(1 << 12, -1.0, 1.0));
            values.extend((0..760).map(|i| 10f32.powf(-38.0 + i as f32 * 0.1)));
            let n = values.len() as i64;
            push(self.unary(op, &values, &[n], &[1]), op.name());
            // A transposed rank-2 view: 300 x 7 storage read as 7 x 300.
            let values = self.rng.vec(2100, -5.0, 5.0);
            push(self.unary(op, &values, &[7, 300], &[1, 7]), op.name());
            // A rank-4 view with permuted strides.
            let values = self.values(2 * 3 * 4 * 5, -5.0, 5.0, 0);
            push(self.unary(op, &values, &[2, 5, 3, 4], &[60, 1, 20, 5]), op.name());
        }
        let layouts: [(&[i64], &[i64], &[i64], &[i64]); 9] = [
            (&[257, 129], &[129, 1], &[257, 129], &[129, 1]),
            (&[129, 257], &[1, 129], &[129, 257], &[257, 1]),
            (&[64, 100], &[100, 1], &[100], &[1]),
            (&[100], &[1], &[64, 100], &[100, 1]),
            (&[33, 1], &[1, 1], &[1, 45], &[45, 1]),
            (&[1000], &[1], &[1], &[1]),
            (&[2, 3, 4, 5], &[60, 20, 5, 1], &[3, 1, 5], &[5, 5, 1]),
            (&[4, 1, 6], &[6, 6, 1], &[2, 1, 5, 1], &[5, 5, 1, 1]),
            (&[3, 8, 6], &[1, 18, 3], &[8, 6], &[6, 1]),
        ];
        for &op in Binary::ALL {
            for (a_shape, a_strides, b_shape, b_strides) in layouts {
                push(self.binary(Kernel::Binary(op), op.name(), a_shape, a_strides, b_shape, b_strides), op.name());
            }
        }
        for op in [Pointwise::Maximum, Pointwise::Minimum] {
            let name = if op == Pointwise::Maximum { "maximum" } else { "minimum" };
            for (a_shape, a_strides, b_shape, b_strides) in layouts {
                push(self.binary(Kernel::Pointwise(op), name, a_shape, a_strides, b_shape, b_strides), name);
            }
        }
        // A tensor with Python numbers: every form, numbers that round differently.
        for form in NumberForm::ALL {
            for s in [0.5f64, -1.7, 3.0, 0.1, 0.0, -0.0, 1e-3] {
                push(self.number_form(form, s), form.eager_name());
            }
        }
        for exponent in [2.0f64, 3.0, 0.5, -1.0, -2.0] {
            push(self.pow(exponent), "pow");
        }
        for (lo, hi) in [(-1.0f64, 1.0), (0.0, 6.0), (-0.0, 0.5), (2.0, -2.0)] {
            push(self.clamp(lo, hi), "clamp");
        }
        for result in self.activations() {
            push(result, "activation");
        }
        for result in self.pools() {
            push(result, "pool");
        }
        for result in self.convs() {
            push(result, "conv");
        }
        for &(m, k, n, transposed, bias) in &[
            (1u64, 1u64, 1u64, false, false),
            (3, 5, 7, false, true),
            (64, 64, 64, false, false),
            (100, 37, 53, true, true),
            (255, 257, 129, false, true),
            (512, 512, 512, true, false),
        ] {
            push(self.matmul(m, k, n, transposed, bias), "matmul");
        }
        push(self.matvec(300, 77, true), "matmul 2/1");
        push(self.matvec(77, 300, false), "matmul 1/2");
        let batched: [(&[i64], &[i64]); 6] = [
            (&[2, 3, 4], &[2, 4, 5]),
            (&[2, 1, 3, 4], &[5, 4, 6]),
            (&[3, 4], &[2, 4, 5]),
            (&[2, 3, 4], &[4, 5]),
            (&[2, 3, 4], &[4]),
            (&[4], &[2, 4, 5]),
        ];
        for (a_shape, b_shape) in batched {
            push(self.batched_matmul(a_shape, b_shape, false), "matmul batched");
        }
        push(self.batched_matmul(&[2, 5, 7], &[2, 7, 3], true), "matmul batched");
        push(self.batched_linear(&[2, 3, 17], 9), "linear batched");
        for &(rows, cols) in &[(1i64, 1i64), (3, 5), (7, 3000), (3000, 7), (256, 256), (5, 0)] {
            for dim in [0i64, 1] {
                match self.reductions(&[rows, cols], &[cols, 1], dim) {
                    Ok(values) => values.into_iter().for_each(|v| push(Ok(v), "reductions")),
                    Err(error) => push(Err(error), "reductions"),
                }
            }
        }
        let nd: [(&[i64], &[i64]); 3] = [(&[2, 3, 4, 5], &[60, 20, 5, 1]), (&[3, 7, 9], &[1, 27, 3]), (&[4, 2, 33], &[66, 33, 1])];
        for (shape, strides) in nd {
            for dim in 0..shape.len() as i64 {
                match self.reductions(shape, strides, dim) {
                    Ok(values) => values.into_iter().for_each(|v| push(Ok(v), "reductions")),
                    Err(error) => push(Err(error), "reductions"),
                }
            }
        }
        // Norms over the last dim: lines shorter and longer than the block, a transposed
        // input read in place, with and without the affine vectors.
        let norms: [(&[i64], &[i64]); 4] = [(&[4, 64], &[64, 1]), (&[3, 3000], &[3000, 1]), (&[300, 7], &[1, 300]), (&[2, 3, 768], &[2304, 768, 1])];
        for (shape, strides) in norms {
            for affine in [false, true] {
                for norm in [Norm::Layer, Norm::Rms] {
                    push(self.norm(norm, shape, strides, affine), if norm == Norm::Layer { "layer_norm" } else { "rms_norm" });
                }
            }
        }
        push(self.copy(&[3, 4, 5], &[1, 15, 3]), "contiguous");
        push(self.copy(&[2, 3, 4, 5], &[0, 20, 1, 4]), "contiguous");
        push(self.join(&[&[2, 3, 4], &[2, 5, 4], &[2, 1, 4]], 1, false), "cat");
        push(self.join(&[&[3, 4], &[3, 4]], 2, true), "stack");
        push(self.join(&[&[6], &[2]], 0, false), "cat");
        results
    }

    fn unary(&mut self, op: Unary, storage: &[f32], shape: &[i64], strides: &[i64]) -> Result<Value> {
        let plan = ElementwisePlan::unary(shape, strides).map_err(crate::result::CudaError::Unsupported)?;
        let input = self.upload(storage)?;
        let out = DeviceBuffer::<f32>::alloc(self.context, plan.numel() as usize)?;
        self.launch(Kernel::Unary(op), args::elementwise_config(&plan)?, &args::elementwise_args(&plan, out.device_ptr(), input.device_ptr(), None, 0.0, 0.0))?;
        let got = out.to_host()?;
        let name = format!("{} {shape:?} strides {strides:?}", op.name());
        // eager's CUDA transcendental functions are not correctly rounded: compared with a tolerance
        let exact = matches!(op, Unary::Abs | Unary::Neg | Unary::Square | Unary::Relu | Unary::Sqrt);
        let view = View { storage, shape, strides };
        self.record(&name, op.name(), json!({}), &[view.input()], Output::F32 { values: &got, shape }, exact);
        Ok(compare_f32(name, &got, &plan.run_unary_cpu(op, storage)))
    }

    fn binary(&mut self, kernel: Kernel, name: &str, a_shape: &[i64], a_strides: &[i64], b_shape: &[i64], b_strides: &[i64]) -> Result<Value> {
        let plan = ElementwisePlan::broadcast(a_shape, a_strides, b_shape, b_strides).map_err(crate::result::CudaError::Unsupported)?;
        let a = self.values(span(a_shape, a_strides), -3.0, 3.0, 0);
        let b = self.values(span(b_shape, b_strides), -3.0, 3.0, 3);
        let (da, db) = (self.upload(&a)?, self.upload(&b)?);
        let out = DeviceBuffer::<f32>::alloc(self.context, plan.numel() as usize)?;
        self.launch(kernel, args::elementwise_config(&plan)?, &args::elementwise_args(&plan, out.device_ptr(), da.device_ptr(), Some(db.device_ptr()), 0.0, 0.0))?;
        let got = out.to_host()?;
        let case = format!("{name} {a_shape:?}/{a_strides:?} with {b_shape:?}/{b_strides:?}");
        let (va, vb) = (View { storage: &a, shape: a_shape, strides: a_strides }, View { storage: &b, shape: b_shape, strides: b_strides });
        self.record(&case, name, json!({}), &[va.input(), vb.input()], Output::F32 { values: &got, shape: &plan.out_shape }, true);
        let want = match kernel {
            Kernel::Binary(op) => plan.run_binary_cpu(op, &a, &b),
            Kernel::Pointwise(op) => plan.run_pointwise_cpu(op, &a, &b, 0.0, 0.0),
            _ => Vec::new(),
        };
        Ok(compare_f32(case, &got, &want))
    }

    /// Runs a one-tensor [`Pointwise`] kernel on a rank-3 transposed view and records it as
    /// the eager op `eager` with `args`.
    fn pointwise(&mut self, op: Pointwise, x: f32, y: f32, eager: &str, args: Value) -> Result<Value> {
        let (shape, strides): (&[i64], &[i64]) = (&[4, 6, 5], &[5, 20, 1]);
        let a = self.values(span(shape, strides), -4.0, 4.0, 0);
        self.pointwise_on(op, x, y, eager, args, &a, shape, strides, true)
    }

    /// One tensor's [`Pointwise`] kernel over `storage` viewed as `shape`/`strides`; `exact`
    /// when eager's CUDA kernel computes the same correctly rounded steps.
    #[allow(clippy::too_many_arguments)]
    fn pointwise_on(&mut self, op: Pointwise, x: f32, y: f32, eager: &str, args: Value, storage: &[f32], shape: &[i64], strides: &[i64], exact: bool) -> Result<Value> {
        let plan = ElementwisePlan::unary(shape, strides).map_err(crate::result::CudaError::Unsupported)?;
        let da = self.upload(storage)?;
        let out = DeviceBuffer::<f32>::alloc(self.context, plan.numel() as usize)?;
        self.launch(Kernel::Pointwise(op), args::elementwise_config(&plan)?, &args::elementwise_args(&plan, out.device_ptr(), da.device_ptr(), None, x, y))?;
        let got = out.to_host()?;
        let case = format!("{eager} {args} {shape:?}/{strides:?}");
        let view = View { storage, shape, strides };
        self.record(&case, eager, args, &[view.input()], Output::F32 { values: &got, shape }, exact);
        Ok(compare_f32(case, &got, &plan.run_pointwise_cpu(op, storage, &[], x, y)))
    }

    /// The activation and math kernels: specials and wide random values contiguous, and a
    /// permuted rank-3 view; `(eager name, kernel, x, y, args, exact)`.
    fn activations(&mut self) -> Vec<Result<Value>> {
        const SELU_ALPHA: f64 = 1.673_263_242_354_377_284_817_042_991_671_7;
        const SELU_SCALE: f64 = 1.050_700_987_355_480_493_419_334_985_294_6;
        let cases: [(&str, Pointwise, f32, f32, Value, bool); 15] = [
            ("rsqrt", Pointwise::Rsqrt, 0.0, 0.0, json!({}), false),
            ("erf", Pointwise::Erf, 0.0, 0.0, json!({}), false),
            ("log1p", Pointwise::Log1p, 0.0, 0.0, json!({}), false),
            ("expm1", Pointwise::Expm1, 0.0, 0.0, json!({}), false),
            ("gelu_tanh", Pointwise::GeluTanh, 0.0, 0.0, json!({}), false),
            ("hardsigmoid", Pointwise::Hardsigmoid, 0.0, 0.0, json!({}), true),
            ("hardswish", Pointwise::Hardswish, 0.0, 0.0, json!({}), true),
            ("mish", Pointwise::Mish, 0.0, 0.0, json!({}), false),
            ("leaky_relu", Pointwise::LeakyRelu, 0.2, 0.0, json!({ "negative_slope": 0.2 }), true),
            ("elu", Pointwise::Elu, 1.0, 1.0, json!({}), false),
            ("selu", Pointwise::Elu, SELU_ALPHA as f32 * SELU_SCALE as f32, SELU_SCALE as f32, json!({}), false),
            ("softplus", Pointwise::Softplus, 1.0, 20.0, json!({}), false),
            ("relu6", Pointwise::Clamp, 0.0, 6.0, json!({}), true),
            ("hardtanh", Pointwise::Clamp, -2.0, 2.0, json!({ "min_val": -2.0, "max_val": 2.0 }), true),
            ("leaky_relu", Pointwise::LeakyRelu, 0.01, 0.0, json!({ "negative_slope": 0.01 }), true),
        ];
        let mut values: Vec<f32> = SPECIALS.to_vec();
        values.extend(self.rng.vec(1 << 14, -25.0, 25.0));
        values.extend(self.rng.vec(1 << 12, -1.0, 1.0));
        values.extend((0..760).map(|i| 10f32.powf(-38.0 + i as f32 * 0.1)));
        let n = values.len() as i64;
        let (shape, strides): (&[i64], &[i64]) = (&[4, 6, 5], &[5, 20, 1]);
        let view = self.values(span(shape, strides), -6.0, 6.0, 0);
        let mut out = Vec::new();
        for (name, op, x, y, args, exact) in cases {
            out.push(self.pointwise_on(op, x, y, name, args.clone(), &values, &[n], &[1], exact));
            out.push(self.pointwise_on(op, x, y, name, args, &view, shape, strides, exact));
        }
        out
    }

    /// The pooling kernels on contiguous, channels-last and unbatched/1-D inputs with
    /// special values, each against its host model; dumped with eager's name and arguments.
    fn pools(&mut self) -> Vec<Result<Value>> {
        let mut out = Vec::new();
        // (shape, strides) of a 2-D input: contiguous, channels-last, unbatched
        let inputs: [(&[i64], &[i64]); 3] = [(&[2, 3, 13, 14], &[546, 182, 14, 1]), (&[2, 3, 13, 14], &[546, 1, 42, 3]), (&[3, 9, 10], &[90, 10, 1])];
        for (shape, strides) in inputs {
            let storage = self.values(span(shape, strides), -3.0, 3.0, 0);
            for (k, s, p, d, ceil) in [(2i64, 2i64, 0i64, 1i64, false), (3, 2, 1, 1, false), (3, 1, 1, 2, true), (2, 2, 1, 1, true)] {
                let plan = PoolPlan::window(PoolKind::Max, 2, shape, strides, &[k], &[s], &[p], &[d], ceil, false);
                let args = json!({ "dims": 2, "kernel_size": k, "stride": s, "padding": p, "dilation": d, "ceil_mode": ceil });
                out.push(self.pool(plan, "max_pool", args, &storage, shape, strides));
                if d == 1 {
                    for include in [true, false] {
                        let plan = PoolPlan::window(PoolKind::Avg, 2, shape, strides, &[k], &[s], &[p], &[1], ceil, include);
                        let args = json!({ "dims": 2, "kernel_size": k, "stride": s, "padding": p, "ceil_mode": ceil, "count_include_pad": include });
                        out.push(self.pool(plan, "avg_pool", args, &storage, shape, strides));
                    }
                }
            }
            for size in [[3i64, 4], [5, 5], [1, 2]] {
                for (kind, name) in [(PoolKind::AdaptiveAvg, "adaptive_avg_pool"), (PoolKind::AdaptiveMax, "adaptive_max_pool")] {
                    let plan = PoolPlan::adaptive(kind, 2, shape, strides, &size);
                    out.push(self.pool(plan, name, json!({ "dims": 2, "output_size": size }), &storage, shape, strides));
                }
            }
        }
        // 1-D: (N, C, L)
        let (shape, strides): (&[i64], &[i64]) = (&[2, 4, 37], &[148, 37, 1]);
        let storage = self.values(span(shape, strides), -3.0, 3.0, 0);
        let plan = PoolPlan::window(PoolKind::Max, 1, shape, strides, &[3], &[2], &[1], &[1], false, false);
        out.push(self.pool(plan, "max_pool", json!({ "dims": 1, "kernel_size": 3, "stride": 2, "padding": 1, "dilation": 1, "ceil_mode": false }), &storage, shape, strides));
        let plan = PoolPlan::window(PoolKind::Avg, 1, shape, strides, &[4], &[3], &[0], &[1], true, true);
        out.push(self.pool(plan, "avg_pool", json!({ "dims": 1, "kernel_size": 4, "stride": 3, "padding": 0, "ceil_mode": true, "count_include_pad": true }), &storage, shape, strides));
        let plan = PoolPlan::adaptive(PoolKind::AdaptiveAvg, 1, shape, strides, &[5]);
        out.push(self.pool(plan, "adaptive_avg_pool", json!({ "dims": 1, "output_size": [5] }), &storage, shape, strides));
        out
    }

    /// Direct convolutions: groups (depthwise too), stride, padding, dilation, bias, 1-D,
    /// unbatched and channels-last inputs, MNIST's second convolution; dumped for eager.
    fn convs(&mut self) -> Vec<Result<Value>> {
        // (dims, input shape, input strides, weight shape, stride, padding, dilation, groups, bias)
        let cases: [(usize, &[i64], &[i64], &[i64], i64, i64, i64, i64, bool); 6] = [
            (2, &[2, 4, 9, 10], &[360, 90, 10, 1], &[6, 4, 3, 3], 1, 0, 1, 1, true),
            (2, &[2, 4, 9, 10], &[360, 1, 40, 4], &[6, 2, 3, 3], 2, 1, 1, 2, false),
            (2, &[1, 6, 8, 8], &[384, 64, 8, 1], &[6, 1, 3, 3], 1, 1, 1, 6, true),
            (2, &[3, 7, 7], &[49, 7, 1], &[4, 3, 2, 2], 1, 0, 2, 1, true),
            (2, &[4, 32, 26, 26], &[21632, 676, 26, 1], &[64, 32, 3, 3], 1, 0, 1, 1, true),
            (1, &[2, 3, 17], &[51, 17, 1], &[5, 3, 3], 2, 1, 1, 1, true),
        ];
        let mut out = Vec::new();
        for (dims, shape, strides, w_shape, stride, padding, dilation, groups, bias) in cases {
            out.push(self.conv(dims, shape, strides, w_shape, stride, padding, dilation, groups, bias));
        }
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn conv(&mut self, dims: usize, shape: &[i64], strides: &[i64], w_shape: &[i64], stride: i64, padding: i64, dilation: i64, groups: i64, bias: bool) -> Result<Value> {
        let storage = self.values(span(shape, strides), -2.0, 2.0, 0);
        let w: Vec<f32> = self.rng.vec(w_shape.iter().product::<i64>() as usize, -1.0, 1.0);
        let b: Vec<f32> = self.rng.vec(w_shape[0] as usize, -1.0, 1.0);
        let plan = ConvPlan::new(dims, shape, strides, w_shape, bias.then_some(w_shape[0]), &[stride], &[padding], &[dilation], groups)
            .ok_or_else(|| crate::result::CudaError::Unsupported(format!("no convolution plan for {shape:?} * {w_shape:?}")))?;
        let (input, weight, bias_buffer) = (self.upload(&storage)?, self.upload(&w)?, self.upload(&b)?);
        let o = DeviceBuffer::<f32>::alloc(self.context, (plan.numel() as usize).max(1))?;
        let bias_ptr = if bias { bias_buffer.device_ptr() } else { 0 };
        self.launch(Kernel::Conv, args::conv_config(&plan)?, &args::conv_args(&plan, o.device_ptr(), input.device_ptr(), weight.device_ptr(), bias_ptr)?)?;
        let mut got = o.to_host()?;
        got.truncate(plan.numel() as usize);
        let args = json!({ "dims": dims, "stride": stride, "padding": padding, "dilation": dilation, "groups": groups, "bias": bias });
        let case = format!("conv {args} {shape:?}/{strides:?} * {w_shape:?}");
        let w_strides = contiguous(w_shape);
        let mut inputs = vec![View { storage: &storage, shape, strides }.input(), View { storage: &w, shape: w_shape, strides: &w_strides }.input()];
        if bias {
            inputs.push(View { storage: &b, shape: &w_shape[..1], strides: &[1] }.input());
        }
        self.record(&case, "conv", args, &inputs, Output::F32 { values: &got, shape: &plan.out_shape }, false);
        Ok(compare_f32(case, &got, &plan.run_cpu(&storage, &w, bias.then_some(b.as_slice()))))
    }

    fn pool(&mut self, plan: Option<PoolPlan>, eager: &str, args: Value, storage: &[f32], shape: &[i64], strides: &[i64]) -> Result<Value> {
        let plan = plan.ok_or_else(|| crate::result::CudaError::Unsupported(format!("no pooling plan for {eager} {args}")))?;
        let input = self.upload(storage)?;
        let o = DeviceBuffer::<f32>::alloc(self.context, (plan.numel() as usize).max(1))?;
        self.launch(Kernel::Pool(plan.kind), args::pool_config(&plan)?, &args::pool_args(&plan, o.device_ptr(), input.device_ptr())?)?;
        let mut got = o.to_host()?;
        got.truncate(plan.numel() as usize);
        let case = format!("{eager} {args} {shape:?}/{strides:?}");
        let view = View { storage, shape, strides };
        // eager's CUDA kernels compute the same steps (avg up to the sign of a zero quotient)
        let exact = matches!(plan.kind, PoolKind::Max | PoolKind::AdaptiveMax);
        self.record(&case, eager, args, &[view.input()], Output::F32 { values: &got, shape: &plan.out_shape }, exact);
        Ok(compare_f32(case, &got, &plan.run_cpu(storage)))
    }

    fn number_form(&mut self, form: NumberForm, s: f64) -> Result<Value> {
        let (op, x) = form.kernel(s);
        match form {
            NumberForm::ClampMin => self.pointwise(op, x, 0.0, "clamp", json!({ "min": s, "max": null })),
            NumberForm::ClampMax => self.pointwise(op, x, 0.0, "clamp", json!({ "min": null, "max": s })),
            _ => self.pointwise(op, x, 0.0, form.eager_name(), json!({ "scalar": s })),
        }
    }

    fn pow(&mut self, exponent: f64) -> Result<Value> {
        let args = json!({ "exponent": exponent });
        let (shape, strides): (&[i64], &[i64]) = (&[4, 6, 5], &[5, 20, 1]);
        let unary = match exponent {
            2.0 => Some(Unary::Square),
            0.5 => Some(Unary::Sqrt),
            _ => None,
        };
        if let Some(op) = unary {
            let a = self.values(span(shape, strides), -4.0, 4.0, 0);
            let plan = ElementwisePlan::unary(shape, strides).map_err(crate::result::CudaError::Unsupported)?;
            let da = self.upload(&a)?;
            let out = DeviceBuffer::<f32>::alloc(self.context, plan.numel() as usize)?;
            self.launch(Kernel::Unary(op), args::elementwise_config(&plan)?, &args::elementwise_args(&plan, out.device_ptr(), da.device_ptr(), None, 0.0, 0.0))?;
            let got = out.to_host()?;
            let case = format!("pow {exponent} {shape:?}/{strides:?}");
            let view = View { storage: &a, shape, strides };
            self.record(&case, "pow", args, &[view.input()], Output::F32 { values: &got, shape }, true);
            return Ok(compare_f32(case, &got, &plan.run_unary_cpu(op, &a)));
        }
        let op = match exponent {
            3.0 => Pointwise::Cube,
            -1.0 => Pointwise::Reciprocal,
            _ => Pointwise::ReciprocalSquare,
        };
        self.pointwise(op, 0.0, 0.0, "pow", args)
    }

    fn clamp(&mut self, lo: f64, hi: f64) -> Result<Value> {
        self.pointwise(Pointwise::Clamp, lo as f32, hi as f32, "clamp", json!({ "min": lo, "max": hi }))
    }
    fn run_matmul_plan(&mut self, plan: &MatmulPlan, a: &[f32], b: &[f32], bias: Option<&[f32]>) -> Result<Vec<f32>> {
        let (da, db) = (self.upload(a)?, self.upload(b)?);
        let dbias = self.upload(bias.unwrap_or(&[]))?;
        let out = DeviceBuffer::<f32>::alloc(self.context, (plan.batches() * plan.m * plan.n).max(1) as usize)?;
        let bias_ptr = if bias.is_some() { dbias.device_ptr() } else { 0 };
        self.launch(Kernel::Matmul, args::matmul_config(plan)?, &args::matmul_args(plan, out.device_ptr(), da.device_ptr(), db.device_ptr(), bias_ptr))?;
        let mut got = out.to_host()?;
        got.truncate((plan.batches() * plan.m * plan.n) as usize);
        Ok(got)
    }

    fn matmul(&mut self, m: u64, k: u64, n: u64, transposed_w: bool, bias: bool) -> Result<Value> {
        let a = self.rng.vec((m * k) as usize, -2.0, 2.0);
        let w = self.rng.vec((k * n) as usize, -2.0, 2.0);
        let bias_values = self.rng.vec(n as usize, -1.0, 1.0);
        let (m_, k_, n_) = (m as i64, k as i64, n as i64);
        // Either linear(x, w[n,k], bias) (w read transposed) or x @ w[k,n].
        let plan = if transposed_w {
            MatmulPlan::linear(&[m_, k_], &[k_, 1], &[n_, k_], &[k_, 1], bias.then_some((&[n_][..], &[1i64][..])))
        } else {
            let mut p = MatmulPlan::matmul(&[m_, k_], &[k_, 1], &[k_, n_], &[n_, 1]);
            if let (Ok(plan), true) = (&mut p, bias) {
                plan.bias_stride = Some(1);
            }
            p
        }
        .map_err(crate::result::CudaError::Unsupported)?;
        let got = self.run_matmul_plan(&plan, &a, &w, bias.then_some(bias_values.as_slice()))?;
        let want = plan.run_cpu(&a, &w, bias.then_some(bias_values.as_slice()));
        let case = format!("matmul {m}x{k}x{n} linear={transposed_w} bias={bias}");
        if transposed_w {
            let (xa, wa) = (View { storage: &a, shape: &[m_, k_], strides: &[k_, 1] }, View { storage: &w, shape: &[n_, k_], strides: &[k_, 1] });
            let mut inputs = vec![xa.input(), wa.input()];
            let bias_shape = [n_];
            if bias {
                inputs.push(Input { storage: &bias_values, shape: &bias_shape, strides: &[1], offset: 0 });
            }
            self.record(&case, "linear", json!({}), &inputs, Output::F32 { values: &got, shape: &plan.out_shape }, false);
        } else if !bias {
            let (xa, wa) = (View { storage: &a, shape: &[m_, k_], strides: &[k_, 1] }, View { storage: &w, shape: &[k_, n_], strides: &[n_, 1] });
            self.record(&case, "matmul", json!({}), &[xa.input(), wa.input()], Output::F32 { values: &got, shape: &plan.out_shape }, false);
        }
        Ok(compare_f32(case, &got, &want))
    }

    fn matvec(&mut self, rows: u64, k: u64, matrix_first: bool) -> Result<Value> {
        let (r, c) = (rows as i64, k as i64);
        let (a_shape, b_shape): (Vec<i64>, Vec<i64>) = if matrix_first { (vec![r, c], vec![c]) } else { (vec![r], vec![r, c]) };
        self.batched_matmul(&a_shape, &b_shape, false)
    }

    /// `a @ b` for contiguous operands of the given shapes (or `b` a transposed view).
    fn batched_matmul(&mut self, a_shape: &[i64], b_shape: &[i64], b_transposed: bool) -> Result<Value> {
        let a_strides = contiguous(a_shape);
        let b_strides = if b_transposed {
            // storage laid out as b with its last two dims swapped
            let r = b_shape.len();
            let mut swapped = b_shape.to_vec();
            swapped.swap(r - 2, r - 1);
            let mut strides = contiguous(&swapped);
            strides.swap(r - 2, r - 1);
            strides
        } else {
            contiguous(b_shape)
        };
        let plan = MatmulPlan::matmul(a_shape, &a_strides, b_shape, &b_strides).map_err(crate::result::CudaError::Unsupported)?;
        let a = self.rng.vec(span(a_shape, &a_strides), -2.0, 2.0);
        let b = self.rng.vec(span(b_shape, &b_strides), -2.0, 2.0);
        let got = self.run_matmul_plan(&plan, &a, &b, None)?;
        let case = format!("matmul {a_shape:?} @ {b_shape:?}/{b_strides:?}");
        let (va, vb) = (View { storage: &a, shape: a_shape, strides: &a_strides }, View { storage: &b, shape: b_shape, strides: &b_strides });
        self.record(&case, "matmul", json!({}), &[va.input(), vb.input()], Output::F32 { values: &got, shape: &plan.out_shape }, false);
        Ok(compare_f32(case, &got, &plan.run_cpu(&a, &b, None)))
    }

    fn batched_linear(&mut self, x_shape: &[i64], n: i64) -> Result<Value> {
        let k = x_shape[x_shape.len() - 1];
        let x_strides = contiguous(x_shape);
        let (w_shape, w_strides) = ([n, k], [k, 1]);
        let plan = MatmulPlan::linear(x_shape, &x_strides, &w_shape, &w_strides, Some((&[n][..], &[1i64][..]))).map_err(crate::result::CudaError::Unsupported)?;
        let x = self.rng.vec(span(x_shape, &x_strides), -2.0, 2.0);
        let w = self.rng.vec((n * k) as usize, -2.0, 2.0);
        let bias = self.rng.vec(n as usize, -1.0, 1.0);
        let got = self.run_matmul_plan(&plan, &x, &w, Some(&bias))?;
        let case = format!("linear {x_shape:?} x [{n}, {k}] + bias");
        let inputs = [
            Input { storage: &x, shape: x_shape, strides: &x_strides, offset: 0 },
            Input { storage: &w, shape: &w_shape, strides: &w_strides, offset: 0 },
            Input { storage: &bias, shape: &[n], strides: &[1], offset: 0 },
        ];
        self.record(&case, "linear", json!({}), &inputs, Output::F32 { values: &got, shape: &plan.out_shape }, false);
        Ok(compare_f32(case, &got, &plan.run_cpu(&x, &w, Some(&bias))))
    }

    /// Layer or RMS norm over the last dim of a view (eps 1e-5), specials in the first line.
    fn norm(&mut self, norm: Norm, shape: &[i64], strides: &[i64], affine: bool) -> Result<Value> {
        let data = self.values(span(shape, strides), -3.0, 3.0, 0);
        let unsupported = crate::result::CudaError::Unsupported;
        let Some(plan) = ReducePlan::along(shape, strides, -1, true).map_err(unsupported)? else {
            return Err(unsupported(format!("no reduction plan for {shape:?}/{strides:?}")));
        };
        let len = plan.len as usize;
        let weight = self.rng.vec(len, -2.0, 2.0);
        let bias = self.rng.vec(len, -1.0, 1.0);
        let with_bias = affine && norm == Norm::Layer;
        let (input, w, b) = (self.upload(&data)?, self.upload(&weight)?, self.upload(&bias)?);
        let out = DeviceBuffer::<f32>::alloc(self.context, (plan.outer * plan.len) as usize)?;
        let eps = 1e-5f32;
        let arguments = args::norm_args(&plan, out.device_ptr(), input.device_ptr(), affine.then(|| w.device_ptr()), with_bias.then(|| b.device_ptr()), eps);
        let kernel = if norm == Norm::Layer { Kernel::LayerNorm } else { Kernel::RmsNorm };
        self.launch(kernel, args::line_config(&plan)?, &arguments)?;
        let got = out.to_host()?;
        let name = if norm == Norm::Layer { "layer_norm" } else { "rms_norm" };
        let case = format!("{name} {shape:?}/{strides:?} affine={affine}");
        let view = View { storage: &data, shape, strides };
        let affine_shape = [plan.len as i64];
        let mut inputs = vec![view.input()];
        if affine {
            inputs.push(Input { storage: &weight, shape: &affine_shape, strides: &[1], offset: 0 });
        }
        if with_bias {
            inputs.push(Input { storage: &bias, shape: &affine_shape, strides: &[1], offset: 0 });
        }
        self.record(&case, name, json!({ "normalized_shape": [plan.len], "eps": eps, "weight": affine, "bias": with_bias }), &inputs, Output::F32 { values: &got, shape }, false);
        let want = plan.run_norm_cpu(&data, affine.then_some(&weight[..]), with_bias.then_some(&bias[..]), eps, norm);
        Ok(compare_f32(case, &got, &want))
    }

    fn reductions(&mut self, shape: &[i64], strides: &[i64], dim: i64) -> Result<Vec<Value>> {
        let mut data = self.rng.vec(span(shape, strides), -4.0, 4.0);
        if data.len() > 20 {
            data[3] = f32::NAN;
            data[7] = f32::INFINITY;
            data[9] = 4.5;
            data[11] = 4.5;
        }
        let unsupported = crate::result::CudaError::Unsupported;
        let Some(plan) = ReducePlan::along(shape, strides, dim, false).map_err(unsupported)? else {
            return Err(unsupported(format!("no reduction plan for {shape:?}/{strides:?}")));
        };
        let input = self.upload(&data)?;
        let tag = format!("{shape:?}/{strides:?} dim={dim}");
        let view = View { storage: &data, shape, strides };
        let mut out = Vec::new();
        if plan.outer > 0 {
            for (name, factor) in [("sum", 1.0f32), ("mean", 1.0 / plan.len as f32)] {
                let o = DeviceBuffer::<f32>::alloc(self.context, plan.outer as usize)?;
                self.launch(Kernel::Sum, args::line_config(&plan)?, &args::sum_args(&plan, o.device_ptr(), input.device_ptr(), factor))?;
                let got = o.to_host()?;
                let case = format!("{name} {tag}");
                self.record(&case, name, json!({ "dim": dim, "keepdim": false }), &[view.input()], Output::F32 { values: &got, shape: &plan.out_shape }, false);
                out.push(compare_f32(case, &got, &plan.run_sum_cpu(&data, factor)));
            }
            // amax/amin (exact) and logsumexp: the sum kernel's arguments; var/std with a correction.
            // prod: another multiplication order than eager's, compared within tolerance
            let folds: [(&str, Kernel, Fold); 3] = [("amax", Kernel::Amax, Fold::Max), ("amin", Kernel::Amin, Fold::Min), ("prod", Kernel::Prod, Fold::Prod)];
            for (name, kernel, fold) in folds.into_iter().filter(|_| plan.len > 0) {
                let o = DeviceBuffer::<f32>::alloc(self.context, plan.outer as usize)?;
                self.launch(kernel, args::line_config(&plan)?, &args::sum_args(&plan, o.device_ptr(), input.device_ptr(), 1.0))?;
                let got = o.to_host()?;
                let case = format!("{name} {tag}");
                let dims = if fold == Fold::Prod { json!(dim) } else { json!([dim]) };
                self.record(&case, name, json!({ "dim": dims, "keepdim": false }), &[view.input()], Output::F32 { values: &got, shape: &plan.out_shape }, fold != Fold::Prod);
                out.push(compare_f32(case, &got, &plan.run_fold_cpu(&data, fold, 1.0)));
            }
            let o = DeviceBuffer::<f32>::alloc(self.context, plan.outer as usize)?;
            self.launch(Kernel::Logsumexp, args::line_config(&plan)?, &args::sum_args(&plan, o.device_ptr(), input.device_ptr(), 1.0))?;
            let got = o.to_host()?;
            let case = format!("logsumexp {tag}");
            self.record(&case, "logsumexp", json!({ "dim": [dim], "keepdim": false }), &[view.input()], Output::F32 { values: &got, shape: &plan.out_shape }, false);
            out.push(compare_f32(case, &got, &plan.run_logsumexp_cpu(&data)));
            for (name, take_sqrt) in [("var", false), ("std", true)] {
                let correction = 1.0f64;
                let divisor = (plan.len as f64 - correction).max(0.0) as f32;
                let o = DeviceBuffer::<f32>::alloc(self.context, plan.outer as usize)?;
                self.launch(Kernel::Var, args::line_config(&plan)?, &args::var_args(&plan, o.device_ptr(), input.device_ptr(), divisor, take_sqrt))?;
                let got = o.to_host()?;
                let case = format!("{name} {tag}");
                self.record(&case, name, json!({ "dim": [dim], "keepdim": false, "correction": correction }), &[view.input()], Output::F32 { values: &got, shape: &plan.out_shape }, false);
                out.push(compare_f32(case, &got, &plan.run_var_cpu(&data, divisor, take_sqrt)));
            }
            if plan.len > 0 {
                let o = DeviceBuffer::<f32>::alloc(self.context, (plan.outer * plan.len) as usize)?;
                self.launch(Kernel::Softmax, args::line_config(&plan)?, &args::softmax_args(&plan, o.device_ptr(), input.device_ptr()))?;
                let got = o.to_host()?;
                let case = format!("softmax {tag}");
                self.record(&case, "softmax", json!({ "dim": dim }), &[view.input()], Output::F32 { values: &got, shape }, false);
                out.push(compare_f32(case, &got, &plan.run_softmax_cpu(&data)));
                let o = DeviceBuffer::<f32>::alloc(self.context, (plan.outer * plan.len) as usize)?;
                self.launch(Kernel::LogSoftmax, args::line_config(&plan)?, &args::softmax_args(&plan, o.device_ptr(), input.device_ptr()))?;
                let got = o.to_host()?;
                let case = format!("log_softmax {tag}");
                self.record(&case, "log_softmax", json!({ "dim": dim }), &[view.input()], Output::F32 { values: &got, shape }, false);
                out.push(compare_f32(case, &got, &plan.run_log_softmax_cpu(&data)));
                let o = DeviceBuffer::<i64>::alloc(self.context, plan.outer as usize)?;
                self.launch(Kernel::Argmax, args::line_config(&plan)?, &args::argmax_args(&plan, o.device_ptr(), input.device_ptr()))?;
                let (got, want) = (o.to_host()?, plan.run_argmax_cpu(&data));
                let case = format!("argmax {tag}");
                self.record(&case, "argmax", json!({ "dim": dim, "keepdim": false }), &[view.input()], Output::I64 { values: &got, shape: &plan.out_shape }, true);
                let mismatches = got.iter().zip(&want).filter(|(g, w)| g != w).count();
                out.push(json!({ "case": case, "ok": mismatches == 0, "elements": want.len(), "mismatches": mismatches }));
            }
        }
        Ok(out)
    }

    /// `contiguous()` of a strided view.
    fn copy(&mut self, shape: &[i64], strides: &[i64]) -> Result<Value> {
        let data = self.values(span(shape, strides), -4.0, 4.0, 0);
        let plan = CopyPlan::new(shape, strides, &contiguous(shape)).map_err(crate::result::CudaError::Unsupported)?;
        let input = self.upload(&data)?;
        let out = DeviceBuffer::<f32>::alloc(self.context, plan.numel() as usize)?;
        self.launch(Kernel::Copy, args::copy_config(&plan)?, &args::copy_args(&plan, out.device_ptr(), input.device_ptr()))?;
        let got = out.to_host()?;
        let mut want = vec![0f32; plan.numel() as usize];
        plan.run_cpu(&data, &mut want);
        let case = format!("contiguous {shape:?}/{strides:?}");
        let view = View { storage: &data, shape, strides };
        self.record(&case, "contiguous", json!({}), &[view.input()], Output::F32 { values: &got, shape }, true);
        Ok(compare_f32(case, &got, &want))
    }

    /// `torch.cat` / `torch.stack` of contiguous inputs, as `tl::cuda::ops` joins them: one
    /// copy per input into its slice of the output.
    fn join(&mut self, shapes: &[&[i64]], dim: usize, stacked: bool) -> Result<Value> {
        let inputs: Vec<Vec<f32>> = shapes.iter().map(|s| self.values(s.iter().product::<i64>() as usize, -4.0, 4.0, 0)).collect();
        let mut out_shape = shapes[0].to_vec();
        if stacked {
            out_shape.insert(dim, shapes.len() as i64);
        } else {
            out_shape[dim] = shapes.iter().map(|s| s[dim]).sum();
        }
        let out_strides = contiguous(&out_shape);
        let total: i64 = out_shape.iter().product();
        let out = DeviceBuffer::<f32>::alloc(self.context, total as usize)?;
        let mut want = vec![0f32; total as usize];
        let mut start = 0i64;
        for (shape, data) in shapes.iter().zip(&inputs) {
            let (mut sizes, mut strides) = (shape.to_vec(), contiguous(shape));
            if stacked {
                sizes.insert(dim, 1);
                strides.insert(dim, 0);
            }
            let plan = CopyPlan::new(&sizes, &strides, &out_strides).map_err(crate::result::CudaError::Unsupported)?;
            let offset = start * out_strides[dim];
            let input = self.upload(data)?;
            self.launch(Kernel::Copy, args::copy_config(&plan)?, &args::copy_args(&plan, out.device_ptr() + offset as u64 * 4, input.device_ptr()))?;
            plan.run_cpu(data, &mut want[offset as usize..]);
            start += sizes[dim];
        }
        let got = out.to_host()?;
        let op = if stacked { "stack" } else { "cat" };
        let case = format!("{op} {shapes:?} dim={dim}");
        let strides: Vec<Vec<i64>> = shapes.iter().map(|s| contiguous(s)).collect();
        let views: Vec<Input> = shapes.iter().zip(&inputs).zip(&strides).map(|((s, d), t)| Input { storage: d, shape: s, strides: t, offset: 0 }).collect();
        self.record(&case, op, json!({ "dim": dim }), &views, Output::F32 { values: &got, shape: &out_shape }, true);
        Ok(compare_f32(case, &got, &want))
    }

    /// Launch overhead (host time per launch of a 1-element kernel, and device time) and
    /// matmul throughput of the tiled kernel.
    pub fn performance(&mut self) -> Value {
        self.measure().unwrap_or_else(|e| json!({ "error": e.to_string() }))
    }

    fn measure(&mut self) -> Result<Value> {
        let one = self.upload(&[1.0])?;
        let out = DeviceBuffer::<f32>::alloc(self.context, 1)?;
        let plan = ElementwisePlan::unary(&[1], &[1]).map_err(crate::result::CudaError::Unsupported)?;
        let config = args::elementwise_config(&plan)?;
        let launch_args = args::elementwise_args(&plan, out.device_ptr(), one.device_ptr(), None, 0.0, 0.0);
        self.launch(Kernel::Unary(Unary::Relu), config, &launch_args)?;
        StreamHandle::LEGACY.synchronize(self.context)?;
        let launches = 10_000;
        let (start, end) = (Event::create(self.context)?, Event::create(self.context)?);
        start.record(StreamHandle::LEGACY)?;
        let t0 = Instant::now();
        for _ in 0..launches {
            self.launch(Kernel::Unary(Unary::Relu), config, &launch_args)?;
        }
        let host_us = t0.elapsed().as_secs_f64() * 1e6 / launches as f64;
        end.record(StreamHandle::LEGACY)?;
        let device_us = start.elapsed_ms(&end)? as f64 * 1e3 / launches as f64;
        let mut matmul = Vec::new();
        for size in [256u64, 1024, 4096] {
            let a = self.rng.vec((size * size) as usize, -1.0, 1.0);
            let (da, db) = (self.upload(&a)?, self.upload(&a)?);
            let dout = DeviceBuffer::<f32>::alloc(self.context, (size * size) as usize)?;
            let s = size as i64;
            let plan = MatmulPlan::matmul(&[s, s], &[s, 1], &[s, s], &[s, 1]).map_err(crate::result::CudaError::Unsupported)?;
            let margs = args::matmul_args(&plan, dout.device_ptr(), da.device_ptr(), db.device_ptr(), 0);
            let mconfig = args::matmul_config(&plan)?;
            self.launch(Kernel::Matmul, mconfig, &margs)?;
            let repeats = if size >= 4096 { 3 } else { 20 };
            start.record(StreamHandle::LEGACY)?;
            for _ in 0..repeats {
                self.launch(Kernel::Matmul, mconfig, &margs)?;
            }
            end.record(StreamHandle::LEGACY)?;
            let ms = start.elapsed_ms(&end)? as f64 / repeats as f64;
            let gflops = 2.0 * (size as f64).powi(3) / (ms * 1e-3) / 1e9;
            matmul.push(json!({ "size": size, "ms": ms, "gflops": gflops }));
        }
        Ok(json!({
            "launch_host_us": host_us,
            "launch_device_us": device_us,
            "launches": launches,
            "matmul": matmul,
        }))
    }
}
