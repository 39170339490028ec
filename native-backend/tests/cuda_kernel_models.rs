//! The host models of the generated kernels (which compute bit for bit what the PTX does:
//! same operations, same rounding, same order) against eager PyTorch on CPU through tch.
//! This is the numerical check that can run without a GPU; the GPU check then compares the
//! device with these same models.

use tch::{Device, Kind, Tensor};
use torchlower_backend::cuda::kernels::math::{Binary, Unary, UnaryMath};
use torchlower_backend::cuda::kernels::plan::{ElementwisePlan, MatmulPlan, ReducePlan};

/// A small deterministic generator (splitmix64), so failures reproduce.
struct Rng(u64);
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

fn to_vec(t: &Tensor) -> Vec<f32> {
    Vec::<f32>::try_from(t.contiguous().view([-1])).expect("float tensor")
}

fn tensor(values: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(values).view(shape)
}

/// Distance in units in the last place (0 for equal values, including +0/-0).
fn ulps(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let bits = x.to_bits() as i64;
        if bits < 0x8000_0000 {
            bits
        } else {
            0x8000_0000 - bits
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Special values every unary op is checked on.
fn specials() -> Vec<f32> {
    let mut v = vec![
        0.0, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-30, -1e-30,
        f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 1e-45, -1e-45, f32::MAX, f32::MIN, 88.7, 88.8, -87.3, -103.9, -104.5,
        0.54, 0.55, 0.56, 0.999, 1.0001, 3.9, 4.0, 4.1, 5.5, 5.7, 9.0, 10.0, -3.9, -5.5, -10.0, 100.0, -100.0,
    ];
    // Pad so eager takes its vectorised path, as it does for real tensors.
    while v.len() < 64 {
        v.push(0.25);
    }
    v
}

/// Eager PyTorch's result for `op` on `x` (CPU).
fn eager_unary(op: Unary, x: &Tensor) -> Tensor {
    match op {
        Unary::Abs => x.abs(),
        Unary::Neg => x.neg(),
        Unary::Square => x.square(),
        Unary::Exp => x.exp(),
        Unary::Log => x.log(),
        Unary::Sqrt => x.sqrt(),
        Unary::Relu => x.relu(),
        Unary::Sigmoid => x.sigmoid(),
        Unary::Tanh => x.tanh(),
        Unary::Gelu => x.gelu("none"),
    }
}

/// The largest difference allowed between our model and eager, per op, in ulps, with an
/// absolute floor for results near zero. Exactly rounded operations must match exactly.
fn tolerance(op: Unary) -> (u64, f32) {
    match op {
        Unary::Abs | Unary::Neg | Unary::Square | Unary::Relu => (0, 0.0),
        // Our sqrt is IEEE-rounded (as CUDA's `sqrtf`); eager's vectorised CPU sqrt is not
        // always (e.g. sqrt(88.7): eager 9.418067, correctly rounded 9.418068).
        Unary::Sqrt => (1, 0.0),
        Unary::Exp | Unary::Log => (2, 0.0),
        Unary::Sigmoid | Unary::Tanh => (3, 0.0),
        // Eager's CPU erf is itself an approximation (about 1e-7 absolute); GELU's
        // 1 + erf(x) cancels for negative x, so the absolute floor scales with |x|.
        Unary::Gelu => (4, 3e-7),
    }
}

#[test]
fn unary_models_match_eager_on_special_and_random_values() {
    let mut rng = Rng(7);
    let mut report = Vec::new();
    for &op in Unary::ALL {
        let mut inputs = specials();
        inputs.extend(rng.vec(4096, -12.0, 12.0));
        inputs.extend(rng.vec(1024, -1.0, 1.0));
        inputs.extend(rng.vec(1024, 0.0, 100.0));
        inputs.extend((0..512).map(|i| 10f32.powf(-38.0 + i as f32 * 0.15)));
        let x = tensor(&inputs, &[inputs.len() as i64]);
        let expected = to_vec(&eager_unary(op, &x));
        let (max_ulps, abs_floor) = tolerance(op);
        let mut worst = (0u64, 0f32);
        for (i, (&input, &want)) in inputs.iter().zip(&expected).enumerate() {
            let got = op.eval(input);
            let context = format!("{}({input:e}) [{i}]: model {got:e}, eager {want:e}", op.name());
            // CUDA's GELU, `x·0.5·(1 + erf(x/√2))`, is x itself for huge x (+inf at +inf), as
            // eager CPU's AVX2 kernel; eager CPU's AVX-512 kernel overflows to inf at f32::MAX
            // and returns NaN at +inf, so CPU eager is no reference there.
            if op == Unary::Gelu && input > 1e38 {
                assert_eq!(got, input, "{context}");
                continue;
            }
            assert_eq!(got.is_nan(), want.is_nan(), "NaN mismatch: {context}");
            if want.is_nan() {
                continue;
            }
            if want.is_infinite() || got.is_infinite() {
                assert_eq!(got, want, "infinity mismatch: {context}");
                continue;
            }
            // Eager's CUDA relu (`fmaxf(x, 0)`) gives +0.0 for -0.0 where eager CPU keeps
            // -0.0; the GPU check compares with eager on CUDA itself.
            if op == Unary::Relu && input == 0.0 {
                assert_eq!(got.to_bits(), 0, "{context}");
                continue;
            }
            // Signed zero must match, except GELU where eager itself differs between its
            // scalar and vectorised paths (see docs/gpu.md).
            if want == 0.0 && got == 0.0 && op != Unary::Gelu {
                assert_eq!(got.is_sign_negative(), want.is_sign_negative(), "signed zero: {context}");
            }
            let distance = ulps(got, want);
            let within = distance <= max_ulps || (got - want).abs() <= abs_floor * input.abs().max(1.0);
            assert!(within, "{context}: {distance} ulps (allowed {max_ulps}, abs {abs_floor})");
            if distance > worst.0 {
                worst = (distance, input);
            }
        }
        report.push(format!("{}: max {} ulps (at {:e})", op.name(), worst.0, worst.1));
    }
    println!("{}", report.join("\n"));
}

#[test]
fn exact_ops_are_bit_identical_to_eager() {
    // abs/neg/square/relu are single IEEE operations: the model must equal eager bit for bit
    // on every value, including signed zeros. sqrt must be correctly rounded (checked against
    // the f64 square root rounded once to f32).
    let mut rng = Rng(11);
    let mut inputs = specials();
    inputs.extend(rng.vec(2048, -1e3, 1e3));
    let x = tensor(&inputs, &[inputs.len() as i64]);
    for &input in &inputs {
        let got = Unary::Sqrt.eval(input);
        let want = (input as f64).sqrt() as f32;
        assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "sqrt({input:e})");
    }
    for op in [Unary::Abs, Unary::Neg, Unary::Square, Unary::Relu] {
        let expected = to_vec(&eager_unary(op, &x));
        for (&input, &want) in inputs.iter().zip(&expected) {
            let got = op.eval(input);
            // eager CUDA's relu(-0.0) is +0.0 (seen on an H200), eager CPU's -0.0
            let want = if op == Unary::Relu && input == 0.0 { 0.0 } else { want };
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{}({input:e}): {got:e} vs {want:e}",
                op.name()
            );
        }
    }
}

/// A strided view of `base` (row-major storage of `rows x cols`) transposed if asked.
fn case(base: &[f32], rows: i64, cols: i64, transpose: bool) -> Tensor {
    let t = tensor(base, &[rows, cols]);
    if transpose {
        t.tr()
    } else {
        t
    }
}

#[test]
fn broadcast_plans_match_eager_arithmetic() {
    let mut rng = Rng(3);
    // (a shape, a transposed?, b shape, b transposed?)
    let cases: Vec<(Vec<i64>, bool, Vec<i64>, bool)> = vec![
        (vec![3, 4], false, vec![3, 4], false),
        (vec![4, 3], true, vec![3, 4], false),
        (vec![3, 4], false, vec![4], false),
        (vec![4], false, vec![3, 4], false),
        (vec![3, 1], false, vec![1, 4], false),
        (vec![1, 4], false, vec![3, 1], false),
        (vec![5], false, vec![5], false),
        (vec![1], false, vec![5], false),
        (vec![3, 4], false, vec![1], false),
        (vec![4, 3], true, vec![4], false),
        (vec![0, 4], false, vec![4], false),
    ];
    for (a_shape, a_t, b_shape, b_t) in cases {
        let a_n: i64 = a_shape.iter().product();
        let b_n: i64 = b_shape.iter().product();
        let mut a_data = rng.vec(a_n as usize, -3.0, 3.0);
        let b_data = rng.vec(b_n as usize, -3.0, 3.0);
        if !a_data.is_empty() {
            a_data[0] = f32::NAN;
        }
        let make = |data: &[f32], shape: &[i64], t: bool| {
            if shape.len() == 2 { case(data, shape[0], shape[1], t) } else { tensor(data, shape) }
        };
        let a = make(&a_data, &a_shape, a_t);
        let b = make(&b_data, &b_shape, b_t);
        let plan = ElementwisePlan::broadcast(&a.size(), &a.stride(), &b.size(), &b.stride()).expect("broadcastable");
        for &op in Binary::ALL {
            let want = match op {
                Binary::Add => &a + &b,
                Binary::Sub => &a - &b,
                Binary::Mul => &a * &b,
                Binary::Div => &a / &b,
            };
            assert_eq!(plan.out_shape, want.size(), "{a_shape:?} {b_shape:?}");
            let got = plan.run_binary_cpu(op, &a_data, &b_data);
            let want = to_vec(&want);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert!(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()), "{} {a_shape:?}{a_t} {b_shape:?}: {g} vs {w}", op.name());
            }
        }
    }
}

/// The text of eager's error for `f`, without libtorch's C++ trace.
fn eager_error(f: impl FnOnce() -> Result<Tensor, tch::TchError>) -> String {
    let error = f().expect_err("eager must fail").to_string();
    error.split("\nException raised from").next().unwrap_or_default().trim().to_string()
}

#[test]
fn shape_errors_have_eager_messages() {
    let a = Tensor::zeros([2, 3], (Kind::Float, Device::Cpu));
    let b = Tensor::zeros([4], (Kind::Float, Device::Cpu));
    let m = Tensor::zeros([4, 5], (Kind::Float, Device::Cpu));
    let plan_error = ElementwisePlan::broadcast(&a.size(), &a.stride(), &b.size(), &b.stride()).unwrap_err();
    assert!(eager_error(|| a.f_add(&b)).contains(&plan_error), "{plan_error}");
    let plan_error = MatmulPlan::matmul(&a.size(), &a.stride(), &m.size(), &m.stride()).unwrap_err();
    assert!(eager_error(|| a.f_matmul(&m)).contains(&plan_error), "{plan_error}");
    let plan_error = MatmulPlan::matmul(&a.size(), &a.stride(), &b.size(), &b.stride()).unwrap_err();
    assert!(eager_error(|| a.f_matmul(&b)).contains(&plan_error), "{plan_error}");
    let v3 = Tensor::zeros([3], (Kind::Float, Device::Cpu));
    let plan_error = MatmulPlan::matmul(&v3.size(), &v3.stride(), &m.size(), &m.stride()).unwrap_err();
    assert!(eager_error(|| v3.f_matmul(&m)).contains(&plan_error), "{plan_error}");
    let w = Tensor::zeros([5, 4], (Kind::Float, Device::Cpu));
    let plan_error = MatmulPlan::linear(&a.size(), &a.stride(), &w.size(), &w.stride(), None).unwrap_err();
    assert!(eager_error(|| a.f_linear::<Tensor>(&w, None)).contains(&plan_error), "{plan_error}");
}

/// `|got - want| <= 1e-5 * (sum of |a_i b_i| + |bias|)`: the rounding bound of two
/// different summation orders.
fn assert_close_to_eager(got: &[f32], want: &[f32], scale: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, ((g, w), s)) in got.iter().zip(want).zip(scale).enumerate() {
        assert!((g - w).abs() <= 1e-5 * s.max(1e-30), "{what}[{i}]: {g} vs {w} (scale {s})");
    }
}

#[test]
fn matmul_plans_match_eager_for_every_rank_and_layout() {
    let mut rng = Rng(5);
    for &(m, k, n) in &[(1usize, 1usize, 1usize), (3, 5, 7), (17, 33, 16), (40, 3, 65), (2, 0, 3)] {
        let a_data = rng.vec(m * k, -2.0, 2.0);
        let b_data = rng.vec(k * n, -2.0, 2.0);
        let bias_data = rng.vec(n, -1.0, 1.0);
        let abs = |v: &[f32]| v.iter().map(|x| x.abs()).collect::<Vec<_>>();
        for (a_t, b_t) in [(false, false), (true, false), (false, true), (true, true)] {
            // Storage laid out so that the (maybe transposed) view has the wanted shape.
            let a = if a_t { case(&a_data, k as i64, m as i64, true) } else { case(&a_data, m as i64, k as i64, false) };
            let b = if b_t { case(&b_data, n as i64, k as i64, true) } else { case(&b_data, k as i64, n as i64, false) };
            let plan = MatmulPlan::matmul(&a.size(), &a.stride(), &b.size(), &b.stride()).unwrap();
            let got = plan.run_cpu(&a_data, &b_data, None);
            let scale = to_vec(&a.abs().matmul(&b.abs()));
            assert_close_to_eager(&got, &to_vec(&a.matmul(&b)), &scale, &format!("matmul {m}x{k}x{n} {a_t}{b_t}"));
            // linear(x = a, w = b^T, bias)
            let w = b.tr();
            let bias = tensor(&bias_data, &[n as i64]);
            let plan = MatmulPlan::linear(&a.size(), &a.stride(), &w.size(), &w.stride(), Some((&bias.size(), &bias.stride()))).unwrap();
            let got = plan.run_cpu(&a_data, &b_data, Some(&bias_data));
            let want = a.linear(&w, Some(&bias));
            let scale = to_vec(&(a.abs().matmul(&b.abs()) + bias.abs()));
            assert_close_to_eager(&got, &to_vec(&want), &scale, &format!("linear {m}x{k}x{n}"));
            let _ = abs;
        }
        // Mixed ranks: matrix @ vector and vector @ matrix.
        let a = case(&a_data, m as i64, k as i64, false);
        let v = tensor(&b_data[..k], &[k as i64]);
        let plan = MatmulPlan::matmul(&a.size(), &a.stride(), &v.size(), &v.stride()).unwrap();
        assert_eq!(plan.out_shape, vec![m as i64]);
        let scale = to_vec(&a.abs().matmul(&v.abs()));
        assert_close_to_eager(&plan.run_cpu(&a_data, &b_data[..k], None), &to_vec(&a.matmul(&v)), &scale, "2/1");
        let u = tensor(&a_data[..k], &[k as i64]);
        let b = case(&b_data, k as i64, n as i64, false);
        let plan = MatmulPlan::matmul(&u.size(), &u.stride(), &b.size(), &b.stride()).unwrap();
        assert_eq!(plan.out_shape, vec![n as i64]);
        let scale = to_vec(&u.abs().matmul(&b.abs()));
        assert_close_to_eager(&plan.run_cpu(&a_data[..k], &b_data, None), &to_vec(&u.matmul(&b)), &scale, "1/2");
    }
}

#[test]
fn reduction_plans_match_eager_sum_mean_softmax_argmax() {
    let mut rng = Rng(9);
    for &(rows, cols) in &[(1i64, 1i64), (3, 5), (7, 300), (300, 7), (2, 1000), (0, 4), (4, 0)] {
        let mut data = rng.vec((rows * cols) as usize, -4.0, 4.0);
        // Ties and specials for argmax/softmax: a repeated maximum, a NaN row, an inf.
        if rows >= 3 && cols >= 5 {
            data[1] = 10.0;
            data[3] = 10.0;
            data[cols as usize + 2] = f32::NAN;
            data[2 * cols as usize + 4] = f32::INFINITY;
        }
        for transpose in [false, true] {
            let t = if transpose { case(&data, cols, rows, true) } else { case(&data, rows, cols, false) };
            for dim in [0i64, 1, -1] {
                for keepdim in [false, true] {
                    let plan = ReducePlan::along(&t.size(), &t.stride(), dim, keepdim).unwrap().expect("rank 2 always has a plan");
                    let what = format!("{:?} transposed={transpose} dim={dim} keepdim={keepdim}", t.size());
                    let sum = t.sum_dim_intlist([dim].as_slice(), keepdim, Kind::Float);
                    assert_eq!(plan.out_shape, sum.size(), "{what}");
                    let scale = to_vec(&t.abs().sum_dim_intlist([dim].as_slice(), keepdim, Kind::Float));
                    let got = plan.run_sum_cpu(&data, 1.0);
                    for ((g, w), s) in got.iter().zip(to_vec(&sum)).zip(&scale) {
                        assert!((g.is_nan() && w.is_nan()) || g == &w || (g - w).abs() <= 1e-5 * s, "sum {what}: {g} vs {w}");
                    }
                    let mean = t.mean_dim([dim].as_slice(), keepdim, Kind::Float);
                    let got = plan.run_sum_cpu(&data, 1.0 / plan.len as f32);
                    for ((g, w), s) in got.iter().zip(to_vec(&mean)).zip(&scale) {
                        let tol = 1e-5 * s / plan.len.max(1) as f32;
                        assert!((g.is_nan() && w.is_nan()) || g == &w || (g - w).abs() <= tol, "mean {what}: {g} vs {w}");
                    }
                    if plan.len > 0 {
                        let argmax = t.argmax(dim, keepdim);
                        assert_eq!(plan.out_shape, argmax.size(), "{what}");
                        let want = Vec::<i64>::try_from(argmax.view([-1])).unwrap();
                        assert_eq!(plan.run_argmax_cpu(&data), want, "argmax {what}");
                    }
                }
                let plan = ReducePlan::along(&t.size(), &t.stride(), dim, true).unwrap().expect("rank 2 always has a plan");
                let want = to_vec(&t.softmax(dim, Kind::Float));
                let got = plan.run_softmax_cpu(&data);
                assert_eq!(got.len(), want.len());
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!(g.is_nan(), w.is_nan(), "softmax {:?} dim={dim}: {g} vs {w}", t.size());
                    if !w.is_nan() {
                        assert!((g - w).abs() <= 2e-6 * w.abs().max(1e-6) + 1e-7, "softmax {:?} dim={dim}: {g} vs {w}", t.size());
                    }
                }
            }
        }
    }
}

#[test]
fn argmax_takes_the_first_maximum_and_counts_nan_as_maximum() {
    // Long enough that the tie and the NaNs land in different threads of the tree.
    let mut data = vec![0.0f32; 1000];
    data[700] = 5.0;
    data[300] = 5.0;
    let t = tensor(&data, &[1000]);
    let plan = ReducePlan::along(&t.size(), &t.stride(), 0, true).unwrap().expect("rank 1 always has a plan");
    assert_eq!(plan.run_argmax_cpu(&data), Vec::<i64>::try_from(t.argmax(0, true)).unwrap());
    assert_eq!(plan.run_argmax_cpu(&data), vec![300]);
    data[900] = f32::NAN;
    data[600] = f32::NAN;
    let t = tensor(&data, &[1000]);
    assert_eq!(plan.run_argmax_cpu(&data), Vec::<i64>::try_from(t.argmax(0, true)).unwrap());
    assert_eq!(plan.run_argmax_cpu(&data), vec![600]);
    let all_neg_inf = vec![f32::NEG_INFINITY; 10];
    let t = tensor(&all_neg_inf, &[10]);
    let plan = ReducePlan::along(&t.size(), &t.stride(), 0, true).unwrap().expect("rank 1 always has a plan");
    assert_eq!(plan.run_argmax_cpu(&all_neg_inf), Vec::<i64>::try_from(t.argmax(0, true)).unwrap());
}

#[test]
fn erf_and_gelu_models_against_exact_f64() {
    // erf against the f64 `libm::erf` rounded to f32, and GELU against the f64 formula;
    // eager's CPU erf is itself approximate, so this is the accuracy that CUDA's `erff`
    // (documented max 2 ulp) is held to.
    use torchlower_backend::cuda::kernels::math::{erf, CpuScalar};
    let mut rng = Rng(13);
    let mut inputs = rng.vec(20_000, -6.0, 6.0);
    inputs.extend(rng.vec(2_000, -1e-3, 1e-3));
    let (mut worst_erf, mut worst_gelu_abs) = (0u64, 0f64);
    for &x in &inputs {
        let got = erf(&mut CpuScalar, &x);
        let exact = libm::erf(x as f64);
        worst_erf = worst_erf.max(ulps(got, exact as f32));
        let gelu_exact = x as f64 * 0.5 * libm::erfc(-(x as f64) / std::f64::consts::SQRT_2);
        let gelu = Unary::Gelu.eval(x) as f64;
        // Relative to |x|: GELU(x) is x times a factor in [0, 1].
        worst_gelu_abs = worst_gelu_abs.max((gelu - gelu_exact).abs() / (x.abs() as f64).max(1e-30));
    }
    println!("erf: max {worst_erf} ulps vs exact; gelu: max |error|/|x| {worst_gelu_abs:e} vs exact");
    assert!(worst_erf <= 2, "erf max {worst_erf} ulps");
    // GELU's error is dominated by the float rounding of 1 + erf(x) for negative x, which
    // eager PyTorch's formula shares: a few times |x| * 2^-24.
    assert!(worst_gelu_abs <= 2.5e-7, "gelu max |error|/|x| {worst_gelu_abs:e}");
}
