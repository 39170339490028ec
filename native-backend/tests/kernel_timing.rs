//! Timings of the fused kernels against libtorch's own ops, from Rust (no Python in between):
//! `cargo test --release -p torchlower-backend --test kernel_timing -- --ignored --nocapture`.
//! Ignored in the test run: numbers, not checks (the sweep benchmark is the measured floor).

use std::time::Instant;
use tch::Tensor;
use torchlower_backend::{fused::{self, Reduce, Step, Unary}, ops};

fn median_us(mut body: impl FnMut()) -> f64 {
    let mut samples = Vec::new();
    for _ in 0..9 {
        let start = Instant::now();
        let mut n = 0u32;
        while start.elapsed().as_micros() < 20_000 {
            body();
            n += 1;
        }
        samples.push(start.elapsed().as_secs_f64() * 1e6 / n as f64);
    }
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    samples[4]
}

#[test]
#[ignore]
fn kernels_against_libtorch() {
    tch::set_num_threads(1);
    let _guard = tch::no_grad_guard();
    for &(m, n) in &[(1i64, 64i64), (64, 256), (256, 1024), (64, 4096), (1024, 1024)] {
        let x = Tensor::randn([m, n], (tch::Kind::Float, tch::Device::Cpu));
        let relu = median_us(|| drop(ops::relu(&x).unwrap()));
        let relu_fused = median_us(|| drop(fused::elementwise(&[&x], &[Step::Load(0), Step::Unary(Unary::Relu)]).unwrap()));
        let relu_abs_ops = median_us(|| drop(ops::abs(&ops::relu(&x).unwrap()).unwrap()));
        let relu_abs = median_us(|| drop(fused::elementwise(&[&x], &[Step::Load(0), Step::Unary(Unary::Relu), Step::Unary(Unary::Abs)]).unwrap()));
        let sum = median_us(|| drop(ops::sum_dim(&x, 1, false).unwrap()));
        let sum_fused = median_us(|| drop(fused::reduce(&x, Reduce::Sum { dim: 1, keepdim: false }).unwrap()));
        let sum0 = median_us(|| drop(ops::sum_dim(&x, 0, false).unwrap()));
        let sum0_fused = median_us(|| drop(fused::reduce(&x, Reduce::Sum { dim: 0, keepdim: false }).unwrap()));
        println!("{m}x{n}: relu ops {relu:.2} fused {relu_fused:.2} | relu+abs ops {relu_abs_ops:.2} fused {relu_abs:.2} | sum1 ops {sum:.2} fused {sum_fused:.2} | sum0 ops {sum0:.2} fused {sum0_fused:.2}");
        let y = Tensor::randn([m, n], (tch::Kind::Float, tch::Device::Cpu));
        let b = Tensor::randn([n], (tch::Kind::Float, tch::Device::Cpu));
        let mut line = format!("{m}x{n}:");
        for op in [Unary::Abs, Unary::Neg, Unary::Square, Unary::Relu] {
            let ours = median_us(|| drop(fused::unary(op, &x).unwrap()));
            let theirs = median_us(|| drop(match op { Unary::Abs => ops::abs(&x), Unary::Neg => ops::neg(&x), Unary::Square => ops::square(&x), _ => ops::relu(&x) }.unwrap()));
            line += &format!(" {op:?} ops {theirs:.2} fused {ours:.2} |");
        }
        let add = median_us(|| drop(ops::add(&x, &y).unwrap()));
        let add_fused = median_us(|| drop(fused::elementwise(&[&x, &y], &[Step::Load(0), Step::Load(1), Step::Binary(fused::Binary::Add)]).unwrap()));
        let row = median_us(|| drop(ops::add(&x, &b).unwrap()));
        let row_fused = median_us(|| drop(fused::elementwise(&[&x, &b], &[Step::Load(0), Step::Load(1), Step::Binary(fused::Binary::Add)]).unwrap()));
        println!("{line} add ops {add:.2} fused {add_fused:.2} | add_row ops {row:.2} fused {row_fused:.2}");
    }
}

/// SqueezeExcitation's gate `x * sigmoid(scale)` (`[B, C, H, W]` by `[B, C, 1, 1]`): the fused
/// pass against libtorch's two ops, and the parts of the fused call.
#[test]
#[ignore]
fn channel_gate_against_libtorch() {
    tch::set_num_threads(1);
    let _guard = tch::no_grad_guard();
    use fused::Binary;
    let program = [Step::Load(0), Step::Load(1), Step::Unary(Unary::Sigmoid), Step::Binary(Binary::Mul)];
    for &(b, c, h, w) in &[(1i64, 8i64, 16i64, 4i64), (1, 8, 16, 16), (64, 8, 16, 4)] {
        let x = Tensor::randn([b, c, h, w], (tch::Kind::Float, tch::Device::Cpu));
        let scale = Tensor::randn([b, c, 1, 1], (tch::Kind::Float, tch::Device::Cpu));
        let ops_us = median_us(|| drop(ops::mul(&x, &ops::sigmoid(&scale).unwrap()).unwrap()));
        let fused_us = median_us(|| drop(fused::elementwise(&[&x, &scale], &program).unwrap()));
        let sigmoid_us = median_us(|| drop(ops::sigmoid(&scale).unwrap()));
        let gate = ops::sigmoid(&scale).unwrap();
        let mul_us = median_us(|| drop(fused::elementwise(&[&x, &gate], &[Step::Load(0), Step::Load(1), Step::Binary(Binary::Mul)]).unwrap()));
        let empty_us = median_us(|| drop(Tensor::empty([b, c, h, w], (tch::Kind::Float, tch::Device::Cpu))));
        println!("{b}x{c}x{h}x{w}: ops {ops_us:.2} fused {fused_us:.2} | parts: sigmoid {sigmoid_us:.2} fused mul {mul_us:.2} empty {empty_us:.2}");
    }
}
