//! The check's cases: each runs one kernel on the device with arguments built by
//! `kernels::args` (as the tensor ops build them) and compares with the plan's host model.

use std::time::Instant;

use serde_json::{json, Value};

use crate::kernels::args;
use crate::kernels::math::{Binary, BinaryMath, Unary, UnaryMath};
use crate::kernels::plan::{ElementwisePlan, MatmulPlan, ReducePlan};
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

pub struct Runner<'c, 'm> {
    context: &'c PrimaryContext<'c>,
    modules: &'m [(Kernel, Module<'c>)],
    rng: Rng,
}

impl<'c, 'm> Runner<'c, 'm> {
    pub fn new(context: &'c PrimaryContext<'c>, modules: &'m [(Kernel, Module<'c>)]) -> Self {
        Runner { context, modules, rng: Rng(2024) }
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
        }
        let layouts: [(&[i64], &[i64], &[i64], &[i64]); 6] = [
            (&[257, 129], &[129, 1], &[257, 129], &[129, 1]),
            (&[129, 257], &[1, 129], &[129, 257], &[257, 1]),
            (&[64, 100], &[100, 1], &[100], &[1]),
            (&[100], &[1], &[64, 100], &[100, 1]),
            (&[33, 1], &[1, 1], &[1, 45], &[45, 1]),
            (&[1000], &[1], &[1], &[1]),
        ];
        for &op in Binary::ALL {
            for (a_shape, a_strides, b_shape, b_strides) in layouts {
                push(self.binary(op, a_shape, a_strides, b_shape, b_strides), op.name());
            }
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
        for &(rows, cols) in &[(1i64, 1i64), (3, 5), (7, 3000), (3000, 7), (256, 256), (5, 0)] {
            for dim in [0i64, 1] {
                match self.reductions(rows, cols, dim) {
                    Ok(values) => values.into_iter().for_each(|v| push(Ok(v), "reductions")),
                    Err(error) => push(Err(error), "reductions"),
                }
            }
        }
        results
    }

    fn unary(&mut self, op: Unary, storage: &[f32], shape: &[i64], strides: &[i64]) -> Result<Value> {
        let plan = ElementwisePlan::unary(shape, strides);
        let input = self.upload(storage)?;
        let out = DeviceBuffer::<f32>::alloc(self.context, plan.numel() as usize)?;
        self.launch(Kernel::Unary(op), args::elementwise_config(&plan)?, &args::unary_args(&plan, out.device_ptr(), input.device_ptr()))?;
        Ok(compare_f32(format!("{} {shape:?} strides {strides:?}", op.name()), &out.to_host()?, &plan.run_unary_cpu(op, storage)))
    }

    fn binary(&mut self, op: Binary, a_shape: &[i64], a_strides: &[i64], b_shape: &[i64], b_strides: &[i64]) -> Result<Value> {
        let plan = ElementwisePlan::broadcast(a_shape, a_strides, b_shape, b_strides).map_err(crate::result::CudaError::Unsupported)?;
        let a_len: i64 = a_shape.iter().product();
        let b_len: i64 = b_shape.iter().product();
        let mut a = self.rng.vec(a_len as usize, -3.0, 3.0);
        let mut b = self.rng.vec(b_len as usize, -3.0, 3.0);
        for (i, s) in SPECIALS.iter().enumerate() {
            if i < a.len() { a[i] = *s; }
            if i + 3 < b.len() { b[i + 3] = *s; }
        }
        let (da, db) = (self.upload(&a)?, self.upload(&b)?);
        let out = DeviceBuffer::<f32>::alloc(self.context, plan.numel() as usize)?;
        self.launch(Kernel::Binary(op), args::elementwise_config(&plan)?, &args::binary_args(&plan, out.device_ptr(), da.device_ptr(), db.device_ptr()))?;
        let name = format!("{} {a_shape:?}/{a_strides:?} with {b_shape:?}/{b_strides:?}", op.name());
        Ok(compare_f32(name, &out.to_host()?, &plan.run_binary_cpu(op, &a, &b)))
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
        let (da, dw, db) = (self.upload(&a)?, self.upload(&w)?, self.upload(&bias_values)?);
        let out = DeviceBuffer::<f32>::alloc(self.context, (m * n) as usize)?;
        let bias_ptr = if bias { db.device_ptr() } else { 0 };
        self.launch(Kernel::Matmul, args::matmul_config(&plan)?, &args::matmul_args(&plan, out.device_ptr(), da.device_ptr(), dw.device_ptr(), bias_ptr))?;
        let want = plan.run_cpu(&a, &w, bias.then_some(bias_values.as_slice()));
        Ok(compare_f32(format!("matmul {m}x{k}x{n} linear={transposed_w} bias={bias}"), &out.to_host()?, &want))
    }

    fn matvec(&mut self, rows: u64, k: u64, matrix_first: bool) -> Result<Value> {
        let mat = self.rng.vec((rows * k) as usize, -2.0, 2.0);
        let vec = self.rng.vec(if matrix_first { k } else { rows } as usize, -2.0, 2.0);
        let (r, c) = (rows as i64, k as i64);
        let plan = if matrix_first {
            MatmulPlan::matmul(&[r, c], &[c, 1], &[c], &[1])
        } else {
            MatmulPlan::matmul(&[r], &[1], &[r, c], &[c, 1])
        }
        .map_err(crate::result::CudaError::Unsupported)?;
        let (dm, dv) = (self.upload(&mat)?, self.upload(&vec)?);
        let out = DeviceBuffer::<f32>::alloc(self.context, (plan.m * plan.n) as usize)?;
        let (a, b, ha, hb) = if matrix_first { (&dm, &dv, &mat, &vec) } else { (&dv, &dm, &vec, &mat) };
        self.launch(Kernel::Matmul, args::matmul_config(&plan)?, &args::matmul_args(&plan, out.device_ptr(), a.device_ptr(), b.device_ptr(), 0))?;
        Ok(compare_f32(format!("matmul {:?}", plan.out_shape), &out.to_host()?, &plan.run_cpu(ha, hb, None)))
    }

    fn reductions(&mut self, rows: i64, cols: i64, dim: i64) -> Result<Vec<Value>> {
        let mut data = self.rng.vec((rows * cols) as usize, -4.0, 4.0);
        if data.len() > 20 {
            data[3] = f32::NAN;
            data[7] = f32::INFINITY;
            data[9] = 4.5;
            data[11] = 4.5;
        }
        let plan = ReducePlan::along(&[rows, cols], &[cols, 1], dim, false).map_err(crate::result::CudaError::Unsupported)?;
        let input = self.upload(&data)?;
        let tag = format!("[{rows}, {cols}] dim={dim}");
        let mut out = Vec::new();
        if plan.outer > 0 {
            for (name, factor) in [("sum", 1.0f32), ("mean", 1.0 / plan.len as f32)] {
                let o = DeviceBuffer::<f32>::alloc(self.context, plan.outer as usize)?;
                self.launch(Kernel::Sum, args::line_config(&plan)?, &args::sum_args(&plan, o.device_ptr(), input.device_ptr(), factor))?;
                out.push(compare_f32(format!("{name} {tag}"), &o.to_host()?, &plan.run_sum_cpu(&data, factor)));
            }
            if plan.len > 0 {
                let o = DeviceBuffer::<f32>::alloc(self.context, data.len())?;
                self.launch(Kernel::Softmax, args::line_config(&plan)?, &args::softmax_args(&plan, o.device_ptr(), input.device_ptr()))?;
                out.push(compare_f32(format!("softmax {tag}"), &o.to_host()?, &plan.run_softmax_cpu(&data)));
                let o = DeviceBuffer::<i64>::alloc(self.context, plan.outer as usize)?;
                self.launch(Kernel::Argmax, args::line_config(&plan)?, &args::argmax_args(&plan, o.device_ptr(), input.device_ptr()))?;
                let (got, want) = (o.to_host()?, plan.run_argmax_cpu(&data));
                let mismatches = got.iter().zip(&want).filter(|(g, w)| g != w).count();
                out.push(json!({ "case": format!("argmax {tag}"), "ok": mismatches == 0, "elements": want.len(), "mismatches": mismatches }));
            }
        }
        Ok(out)
    }

    /// Launch overhead (host time per launch of a 1-element kernel, and device time) and
    /// matmul throughput of the tiled kernel.
    pub fn performance(&mut self) -> Value {
        self.measure().unwrap_or_else(|e| json!({ "error": e.to_string() }))
    }

    fn measure(&mut self) -> Result<Value> {
        let one = self.upload(&[1.0])?;
        let out = DeviceBuffer::<f32>::alloc(self.context, 1)?;
        let plan = ElementwisePlan::unary(&[1], &[1]);
        let config = args::elementwise_config(&plan)?;
        let launch_args = args::unary_args(&plan, out.device_ptr(), one.device_ptr());
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
