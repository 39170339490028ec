//! The host models of the generated kernels (which compute bit for bit what the PTX does:
//! same operations, same rounding, same order) against eager PyTorch on CPU through tch.
//! This is the numerical check that can run without a GPU; the GPU check then compares the
//! device with these same models.

use tch::{Device, Kind, Tensor};
use torchlower_backend::cuda::kernels::math::{Binary, Unary, UnaryMath};
use torchlower_backend::cuda::kernels::plan::{norm_line_len, DimsError, ElementwisePlan, Fold, MatmulPlan, Norm, NormShapeError, ReduceDims, ReducePlan};

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
    // the tests run on several threads: eager's references must not race on MKL VML's first
    // calls (a CI run once saw eager's erf(1) 224 ulps off: `torchlower_backend::vml`)
    torchlower_backend::vml::warm_up();
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
        Unary::Silu => x.silu(),
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
        Unary::Sigmoid | Unary::Tanh | Unary::Silu => (3, 0.0),
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
                let want = to_vec(&t.log_softmax(dim, Kind::Float));
                let got = plan.run_log_softmax_cpu(&data);
                assert_eq!(got.len(), want.len());
                for (g, w) in got.iter().zip(&want) {
                    let what = format!("log_softmax {:?} transposed={transpose} dim={dim}: {g} vs {w}", t.size());
                    assert_eq!(g.is_nan(), w.is_nan(), "{what}");
                    if w.is_infinite() {
                        assert_eq!(g, w, "{what}");
                    } else if !w.is_nan() {
                        // (x - max) is exact or nearly; log(sum) within the rounding of a
                        // different summation order and our 1-ulp log
                        assert!((g - w).abs() <= 2e-6 * w.abs().max(1.0), "{what}");
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

// --- N-d plans (rank ≤ 4) -----------------------------------------------------------------

use torchlower_backend::cuda::kernels::math::{NumberForm, Pointwise};
use torchlower_backend::cuda::kernels::plan::{contiguous_strides, CopyPlan};

/// How a test tensor is laid out over its storage (always at storage offset 0, so the plans
/// index the storage vector directly).
#[derive(Debug, Clone)]
enum Layout {
    /// Contiguous of this shape.
    Contig(Vec<i64>),
    /// Contiguous storage of the first shape, viewed through `permute(perm)`.
    Permuted(Vec<i64>, Vec<i64>),
    /// Contiguous storage of the first shape, `expand`ed (stride 0) to the second.
    Expanded(Vec<i64>, Vec<i64>),
    /// Contiguous storage of the shape, every `step`-th index of dimension `dim`.
    Sliced(Vec<i64>, i64, i64),
}

impl Layout {
    fn storage_shape(&self) -> &[i64] {
        match self {
            Layout::Contig(s) | Layout::Permuted(s, _) | Layout::Expanded(s, _) | Layout::Sliced(s, _, _) => s,
        }
    }

    fn storage_len(&self) -> usize {
        self.storage_shape().iter().product::<i64>() as usize
    }

    /// The view of `data` (the storage) this layout describes.
    fn view(&self, data: &[f32]) -> Tensor {
        let base = tensor(data, self.storage_shape());
        match self {
            Layout::Contig(_) => base,
            Layout::Permuted(_, perm) => base.permute(perm.as_slice()),
            Layout::Expanded(_, target) => base.expand(target.as_slice(), false),
            Layout::Sliced(_, dim, step) => base.slice(*dim, 0, None, *step),
        }
    }
}

/// Bit-identical, or both NaN (NaN payloads are not compared).
fn same(got: f32, want: f32) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

/// Random values in `[lo, hi)` with every third one replaced by a special value (NaN, ±inf,
/// ±0, extremes), starting at a different special per `salt`.
fn with_specials(rng: &mut Rng, n: usize, lo: f32, hi: f32, salt: usize) -> Vec<f32> {
    let specials = &specials()[..40];
    let mut data = rng.vec(n, lo, hi);
    for i in (0..n).step_by(3) {
        data[i] = specials[(i / 3 + salt) % specials.len()];
    }
    data
}

#[test]
fn nd_broadcast_plans_are_bit_identical_to_eager() {
    use Layout::*;
    let mut rng = Rng(21);
    let v = |s: &[i64]| s.to_vec();
    let cases: Vec<(Layout, Layout)> = vec![
        (Contig(v(&[2, 3, 4])), Contig(v(&[2, 3, 4]))),
        (Permuted(v(&[4, 2, 3]), v(&[1, 2, 0])), Contig(v(&[3, 4]))),
        (Contig(v(&[2, 3, 4])), Permuted(v(&[4, 3]), v(&[1, 0]))),
        (Contig(v(&[2, 1, 4])), Contig(v(&[3, 1]))),
        (Expanded(v(&[3, 1]), v(&[2, 3, 4])), Contig(v(&[4]))),
        (Contig(v(&[4])), Expanded(v(&[1, 3, 1]), v(&[2, 3, 4]))),
        (Contig(v(&[2, 3, 4, 5])), Permuted(v(&[5, 4]), v(&[1, 0]))),
        (Permuted(v(&[5, 2, 4, 3]), v(&[1, 3, 2, 0])), Contig(v(&[3, 1, 5]))),
        (Contig(v(&[1, 3, 1, 5])), Contig(v(&[2, 1, 4, 1]))),
        (Expanded(v(&[1, 4, 1]), v(&[3, 4, 5])), Permuted(v(&[5, 4, 3]), v(&[2, 1, 0]))),
        (Sliced(v(&[2, 6, 4]), 1, 2), Contig(v(&[2, 3, 4]))),
        (Contig(v(&[2, 3, 4])), Sliced(v(&[2, 3, 8]), 2, 2)),
        (Contig(v(&[5])), Contig(v(&[2, 3, 4, 1]))),
        (Contig(v(&[2, 3, 4, 1])), Contig(v(&[5]))),
        (Permuted(v(&[3, 2, 5, 4]), v(&[1, 0, 3, 2])), Permuted(v(&[5, 4, 3, 2]), v(&[3, 2, 1, 0]))),
        (Expanded(v(&[2, 1, 1, 5]), v(&[2, 3, 4, 5])), Expanded(v(&[1, 3, 4, 1]), v(&[2, 3, 4, 5]))),
        (Contig(v(&[2, 0, 4])), Contig(v(&[4]))),
        (Contig(v(&[1])), Permuted(v(&[4, 3, 2]), v(&[2, 0, 1]))),
    ];
    for (salt, (a_layout, b_layout)) in cases.iter().enumerate() {
        let a_data = with_specials(&mut rng, a_layout.storage_len(), -3.0, 3.0, salt);
        let b_data = with_specials(&mut rng, b_layout.storage_len(), -3.0, 3.0, 7 * salt + 1);
        let (a, b) = (a_layout.view(&a_data), b_layout.view(&b_data));
        let what = format!("{a_layout:?} {:?}/{:?} with {b_layout:?} {:?}/{:?}", a.size(), a.stride(), b.size(), b.stride());
        let plan = ElementwisePlan::broadcast(&a.size(), &a.stride(), &b.size(), &b.stride()).expect("broadcastable");
        for &op in Binary::ALL {
            let want = match op {
                Binary::Add => &a + &b,
                Binary::Sub => &a - &b,
                Binary::Mul => &a * &b,
                Binary::Div => &a / &b,
            };
            assert_eq!(plan.out_shape, want.size(), "{} {what}", op.name());
            let got = plan.run_binary_cpu(op, &a_data, &b_data);
            let want = to_vec(&want);
            assert_eq!(got.len(), want.len(), "{} {what}", op.name());
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                assert!(same(g, w), "{} {what} [{i}]: model {g:e} vs eager {w:e}", op.name());
            }
        }
        // The unary plan over the same strided views (exactly rounded ops only).
        for (data, t) in [(&a_data, &a), (&b_data, &b)] {
            let plan = ElementwisePlan::unary(&t.size(), &t.stride()).unwrap();
            assert_eq!(plan.out_shape, t.size());
            for op in [Unary::Abs, Unary::Neg, Unary::Square] {
                let got = plan.run_unary_cpu(op, data);
                let want = to_vec(&eager_unary(op, t));
                assert_eq!(got.len(), want.len());
                for (&g, &w) in got.iter().zip(&want) {
                    assert!(same(g, w), "{} {what}: {g:e} vs {w:e}", op.name());
                }
            }
        }
    }
}

#[test]
fn nd_broadcast_errors_have_eager_messages() {
    let zeros = |shape: &[i64]| Tensor::zeros(shape, (Kind::Float, Device::Cpu));
    let pairs: [(&[i64], &[i64]); 6] = [
        (&[2, 3, 4], &[2, 5, 4]),
        (&[2, 3, 4], &[5, 1]),
        (&[3], &[2, 3, 4]),
        (&[4, 3, 2, 1], &[3, 3, 1, 1]),
        (&[2, 3, 4, 5], &[3, 1, 6]),
        (&[2, 1, 4], &[7, 3, 1, 4]),
    ];
    for (a_shape, b_shape) in pairs {
        let (a, b) = (zeros(a_shape), zeros(b_shape));
        let plan_error = ElementwisePlan::broadcast(&a.size(), &a.stride(), &b.size(), &b.stride()).unwrap_err();
        let eager = eager_error(|| a.f_add(&b));
        assert!(eager.contains(&plan_error), "{a_shape:?} {b_shape:?}: plan {plan_error:?}, eager {eager:?}");
        // Strided (permuted) operands give the same message.
        let p = zeros(&a_shape.iter().rev().copied().collect::<Vec<_>>()).permute((0..a_shape.len() as i64).rev().collect::<Vec<_>>());
        let plan_error = ElementwisePlan::broadcast(&p.size(), &p.stride(), &b.size(), &b.stride()).unwrap_err();
        assert!(eager_error(|| p.f_mul(&b)).contains(&plan_error), "permuted {a_shape:?} {b_shape:?}: {plan_error}");
    }
}

/// Values for the pointwise kernels: specials, random values of several magnitudes, and
/// powers of ten from subnormal to near overflow, both signs.
fn pointwise_inputs(rng: &mut Rng) -> Vec<f32> {
    let mut inputs = specials();
    inputs.extend(rng.vec(2048, -10.0, 10.0));
    inputs.extend(rng.vec(512, -1e-3, 1e-3));
    inputs.extend(rng.vec(512, -1e6, 1e6));
    let powers: Vec<f32> = (0..260).map(|i| 10f32.powf(-45.0 + i as f32 * 0.32)).collect();
    inputs.extend(powers.iter().copied());
    inputs.extend(powers.iter().map(|p| -p));
    inputs
}

/// Eager CPU, computed the way eager's CUDA kernel computes `form` of `x` and the Python
/// number `s` (an integer when `int`).
fn eager_number_form(form: NumberForm, x: &Tensor, s: f64, int: bool) -> Tensor {
    let scalar = || if int { tch::Scalar::int(s as i64) } else { tch::Scalar::float(s) };
    match form {
        // eager CPU rounds the number to float32 as its CUDA kernel does
        NumberForm::Add => x.g_add_scalar(scalar()),
        NumberForm::Sub => x.g_sub_scalar(scalar()),
        NumberForm::Mul => x.g_mul_scalar(scalar()),
        // eager's CUDA `t / s` multiplies by the float32 reciprocal (eager CPU divides)
        NumberForm::Div => x.g_mul_scalar(f64::from(1.0f32 / s as f32)),
        NumberForm::ReverseSub => x.rsub_scalar(scalar()),
        NumberForm::ReverseDiv => x.reciprocal().g_mul_scalar(scalar()),
        NumberForm::ClampMin => x.clamp_min(scalar()),
        NumberForm::ClampMax => x.clamp_max(scalar()),
    }
}

/// Compares a pointwise model with eager: bit-identical (NaN with NaN), except that where
/// `zero_sign_free` a zero result may differ in sign. That is for clamps and
/// maximum/minimum, where eager's CUDA kernels use `fmaxf`/`fminf` (as ours) but eager
/// CPU's vectorised max/min (`_mm512_max_ps`, ...) returns whichever operand the
/// instruction picks for `max(+0, -0)`, so CPU eager does not pin the sign of a zero; the
/// GPU check compares those cases with eager on CUDA itself. Returns how many zeros
/// differed in sign.
fn assert_pointwise_matches(got: &[f32], want: &[f32], inputs: &dyn Fn(usize) -> String, zero_sign_free: bool, what: &str) -> usize {
    assert_eq!(got.len(), want.len(), "{what}");
    let mut zero_signs = 0;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if zero_sign_free && g == 0.0 && w == 0.0 && g.to_bits() != w.to_bits() {
            zero_signs += 1;
            continue;
        }
        assert!(same(g, w), "{what} at {}: model {g:e} ({:#010x}) vs eager {w:e} ({:#010x})", inputs(i), g.to_bits(), w.to_bits());
    }
    zero_signs
}

#[test]
fn pointwise_number_forms_match_eager_cuda_formulas() {
    let mut rng = Rng(17);
    let inputs = pointwise_inputs(&mut rng);
    let x = tensor(&inputs, &[inputs.len() as i64]);
    let plan = ElementwisePlan::unary(&x.size(), &x.stride()).unwrap();
    let at = |i: usize| format!("x = {:e} [{i}]", inputs[i]);
    let numbers: [(f64, bool); 6] = [(0.5, false), (-1.7, false), (3.0, false), (0.1, false), (1e-3, false), (7.0, true)];
    let mut report = Vec::new();
    for form in NumberForm::ALL {
        let zero_sign_free = matches!(form, NumberForm::ClampMin | NumberForm::ClampMax);
        let mut zero_signs = 0;
        for (s, int) in numbers {
            let (op, k) = form.kernel(s);
            let got = plan.run_pointwise_cpu(op, &inputs, &[], k, 0.0);
            let want = to_vec(&eager_number_form(form, &x, s, int));
            let what = format!("{} (kernel {}, x = {k:e}) with s = {s}{}", form.eager_name(), op.entry_name(), if int { " (int)" } else { "" });
            zero_signs += assert_pointwise_matches(&got, &want, &at, zero_sign_free, &what);
        }
        report.push(format!("{}: ok ({zero_signs} zeros of other sign)", form.eager_name()));
    }
    // How often eager CUDA's `t / s` differs from eager CPU's `t / s` (why Div is checked
    // against the multiplication by the reciprocal).
    for s in [0.1f64, -1.7, 1e-3, 7.0] {
        let (op, k) = NumberForm::Div.kernel(s);
        let got = plan.run_pointwise_cpu(op, &inputs, &[], k, 0.0);
        let cpu_div = to_vec(&x.g_div_scalar(s));
        let differ = got.iter().zip(&cpu_div).filter(|(g, w)| !same(**g, **w)).count();
        report.push(format!("t / {s}: reciprocal-multiply differs from CPU division on {differ} of {}", inputs.len()));
    }

    // The power special cases and clamps with both bounds.
    let powers: [(Pointwise, Tensor); 3] =
        [(Pointwise::Cube, &(&x * &x) * &x), (Pointwise::Reciprocal, x.reciprocal()), (Pointwise::ReciprocalSquare, (&x * &x).reciprocal())];
    for (op, want) in powers {
        let got = plan.run_pointwise_cpu(op, &inputs, &[], 0.0, 0.0);
        assert_pointwise_matches(&got, &to_vec(&want), &at, false, op.entry_name());
    }
    for (lo, hi) in [(-1.0f64, 1.0f64), (0.0, 6.0), (2.0, -2.0)] {
        let got = plan.run_pointwise_cpu(Pointwise::Clamp, &inputs, &[], lo as f32, hi as f32);
        let want = to_vec(&x.clamp(lo, hi));
        let zero_signs = assert_pointwise_matches(&got, &want, &at, true, &format!("clamp({lo}, {hi})"));
        report.push(format!("clamp({lo}, {hi}): ok ({zero_signs} zeros of other sign)"));
    }
    println!("{}", report.join("\n"));
}

/// The activation and math kernels (`Pointwise` forms of one tensor) against eager CPU:
/// `(kernel, x, y, eager, max ulps, absolute floor per max(|input|, 1), zero sign free)`.
/// Eager CPU computes the same formulas (its vectorised `exp`/`log1p`/`expm1`/`tanh`/`erf`
/// are within 1 ulp, erf about 1e-7 absolute); it divides where CUDA multiplies by 1/6
/// (hardsigmoid, hardswish: 1 ulp). Relu6 and hardtanh are eager's clamp on CUDA, whose
/// zero sign eager CPU does not pin (see [`assert_pointwise_matches`]).
fn activation_cases(x: &Tensor) -> Vec<(&'static str, Pointwise, f32, f32, Tensor, u64, f32, bool)> {
    const SELU_ALPHA: f64 = 1.673_263_242_354_377_284_817_042_991_671_7;
    const SELU_SCALE: f64 = 1.050_700_987_355_480_493_419_334_985_294_6;
    let slope = |s: f64| x.prelu(&Tensor::from_slice(&[s as f32]));
    vec![
        ("rsqrt", Pointwise::Rsqrt, 0.0, 0.0, x.rsqrt(), 2, 0.0, false),
        ("erf", Pointwise::Erf, 0.0, 0.0, x.erf(), 4, 2e-7, false),
        ("log1p", Pointwise::Log1p, 0.0, 0.0, x.log1p(), 3, 0.0, false),
        ("expm1", Pointwise::Expm1, 0.0, 0.0, x.expm1(), 3, 0.0, false),
        // 1 + tanh cancels for negative x, as GELU's 1 + erf
        ("gelu_tanh", Pointwise::GeluTanh, 0.0, 0.0, x.gelu("tanh"), 4, 3e-7, true),
        ("hardsigmoid", Pointwise::Hardsigmoid, 0.0, 0.0, x.hardsigmoid(), 1, 0.0, false),
        ("hardswish", Pointwise::Hardswish, 0.0, 0.0, x.hardswish(), 1, 0.0, false),
        ("mish", Pointwise::Mish, 0.0, 0.0, x.mish(), 6, 0.0, false),
        ("leaky_relu(0.01)", Pointwise::LeakyRelu, 0.01, 0.0, slope(0.01), 0, 0.0, false),
        ("leaky_relu(0.2)", Pointwise::LeakyRelu, 0.2, 0.0, slope(0.2), 0, 0.0, false),
        ("elu", Pointwise::Elu, 1.0, 1.0, x.elu(), 3, 0.0, false),
        ("selu", Pointwise::Elu, SELU_ALPHA as f32 * SELU_SCALE as f32, SELU_SCALE as f32, x.selu(), 4, 0.0, false),
        ("softplus", Pointwise::Softplus, 1.0, 20.0, x.softplus(), 3, 0.0, false),
        ("relu6", Pointwise::Clamp, 0.0, 6.0, x.relu6(), 0, 0.0, true),
        ("hardtanh(-2, 2)", Pointwise::Clamp, -2.0, 2.0, x.hardtanh(), 0, 0.0, true),
    ]
}

#[test]
fn activation_models_match_eager() {
    let mut rng = Rng(23);
    let mut inputs = pointwise_inputs(&mut rng);
    inputs.extend(rng.vec(512, -1.0, -0.9)); // log1p near its pole
    inputs.extend(rng.vec(512, -0.4, 0.4)); // expm1's reduced range
    inputs.extend(rng.vec(1024, -25.0, 25.0)); // expm1/softplus/mish crossovers
    let x = tensor(&inputs, &[inputs.len() as i64]);
    let plan = ElementwisePlan::unary(&x.size(), &x.stride()).unwrap();
    let mut report = Vec::new();
    for (name, op, a, b, eager, max_ulps, abs_floor, zero_sign_free) in activation_cases(&x) {
        // eager's hardtanh here has its default bounds (-1, 1): compare with those
        let (a, b, eager) = if name.starts_with("hardtanh") { (-1.0, 1.0, eager) } else { (a, b, eager) };
        let got = plan.run_pointwise_cpu(op, &inputs, &[], a, b);
        let want = to_vec(&eager);
        let (mut worst, mut subnormal) = ((0u64, 0f32), 0);
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            let input = inputs[i];
            let context = format!("{name}({input:e}) [{i}]: model {g:e}, eager {w:e}");
            assert_eq!(g.is_nan(), w.is_nan(), "NaN mismatch: {context}");
            if w.is_nan() {
                continue;
            }
            if w.is_infinite() || g.is_infinite() {
                assert_eq!(g, w, "infinity mismatch: {context}");
                continue;
            }
            if g == 0.0 && w == 0.0 {
                assert!(zero_sign_free || g.to_bits() == w.to_bits(), "signed zero: {context}");
                continue;
            }
            // below the normal range eager CPU's vectorised functions are no reference: its
            // exp flushes (mish(-104) is -0.0 there; ours, as CUDA's expf, a subnormal) and
            // its log1p(x) is not x for subnormal x (ours is); the f64 test covers our range
            if g.to_bits() != w.to_bits() && g.abs() < f32::MIN_POSITIVE && w.abs() < f32::MIN_POSITIVE {
                subnormal += 1;
                continue;
            }
            let distance = ulps(g, w);
            let within = distance <= max_ulps || (g - w).abs() <= abs_floor * input.abs().max(1.0);
            assert!(within, "{context}: {distance} ulps (allowed {max_ulps}, abs {abs_floor})");
            if distance > worst.0 {
                worst = (distance, input);
            }
        }
        report.push(format!("{name} ({}): max {} ulps (at {:e}), {subnormal} subnormal results differ", op.entry_name(), worst.0, worst.1));
    }
    println!("{}", report.join("\n"));
}

/// Our `log1p` and `expm1` against the exact functions (f64), on their hard ranges.
#[test]
fn log1p_and_expm1_models_against_exact_f64() {
    let mut rng = Rng(29);
    let mut worst = [(0u64, 0f32); 2];
    let mut inputs: Vec<f32> = rng.vec(20000, -0.999, 4.0);
    inputs.extend(rng.vec(20000, -1e-4, 1e-4));
    inputs.extend(rng.vec(20000, -30.0, 30.0));
    for &x in &inputs {
        for (k, (op, exact)) in [(Pointwise::Log1p, (x as f64).ln_1p()), (Pointwise::Expm1, (x as f64).exp_m1())].into_iter().enumerate() {
            if op == Pointwise::Log1p && x <= -1.0 {
                continue;
            }
            let got = op.eval(x, 0.0, 0.0, 0.0);
            let distance = ulps(got, exact as f32);
            assert!(distance <= 2, "{}({x:e}) = {got:e}, exact {exact:e}: {distance} ulps", op.entry_name());
            if distance > worst[k].0 {
                worst[k] = (distance, x);
            }
        }
    }
    println!("log1p: max {} ulps (at {:e}); expm1: max {} ulps (at {:e})", worst[0].0, worst[0].1, worst[1].0, worst[1].1);
}

#[test]
fn maximum_minimum_plans_match_eager_with_broadcasting_and_nan() {
    use Layout::*;
    let mut rng = Rng(19);
    let specials = specials()[..40].to_vec();
    let v = |s: &[i64]| s.to_vec();
    // Every pair of specials (a column against a row), then random strided layouts.
    let mut cases: Vec<(Layout, Vec<f32>, Layout, Vec<f32>)> =
        vec![(Contig(v(&[40, 1])), specials.clone(), Contig(v(&[40])), specials.clone())];
    let layouts = [
        (Permuted(v(&[4, 2, 3]), v(&[1, 2, 0])), Permuted(v(&[4, 3]), v(&[1, 0]))),
        (Contig(v(&[2, 1, 4, 5])), Expanded(v(&[3, 1, 1]), v(&[3, 4, 5]))),
        (Permuted(v(&[5, 4, 3, 2]), v(&[3, 2, 1, 0])), Contig(v(&[5]))),
        (Sliced(v(&[3, 8]), 1, 2), Contig(v(&[2, 3, 1]))),
    ];
    for (salt, (a, b)) in layouts.into_iter().enumerate() {
        let a_data = with_specials(&mut rng, a.storage_len(), -2.0, 2.0, salt);
        let b_data = with_specials(&mut rng, b.storage_len(), -2.0, 2.0, 3 * salt + 2);
        cases.push((a, a_data, b, b_data));
    }
    let mut zero_signs = [0usize; 2];
    for (a_layout, a_data, b_layout, b_data) in &cases {
        for (swap, (l, r, l_data, r_data)) in [(a_layout, b_layout, a_data, b_data), (b_layout, a_layout, b_data, a_data)].into_iter().enumerate() {
            let (a, b) = (l.view(l_data), r.view(r_data));
            let plan = ElementwisePlan::broadcast(&a.size(), &a.stride(), &b.size(), &b.stride()).unwrap();
            for (k, (op, want)) in [(Pointwise::Maximum, a.maximum(&b)), (Pointwise::Minimum, a.minimum(&b))].into_iter().enumerate() {
                assert_eq!(plan.out_shape, want.size(), "{} {l:?} {r:?}", op.entry_name());
                let got = plan.run_pointwise_cpu(op, l_data, r_data, 0.0, 0.0);
                let pair = |i: usize| {
                    let offsets: Vec<i64> = plan.input_offsets(i as u64).collect();
                    format!("({:e}, {:e}) [{i}]", l_data[offsets[0] as usize], r_data[offsets[1] as usize])
                };
                let what = format!("{} {l:?} {r:?} swapped={}", op.entry_name(), swap == 1);
                zero_signs[k] += assert_pointwise_matches(&got, &to_vec(&want), &pair, true, &what);
            }
        }
    }
    println!("maximum: {} zeros of other sign, minimum: {}", zero_signs[0], zero_signs[1]);
    // Where CPU eager is no reference for the sign of a zero, the model must give what PTX
    // `max.f32`/`min.f32` (CUDA's `fmaxf`/`fminf`) give: max(+0, -0) = +0, min = -0.
    for (a, b) in [(0.0f32, -0.0f32), (-0.0, 0.0)] {
        assert_eq!(Pointwise::Maximum.eval(a, b, 0.0, 0.0).to_bits(), 0, "maximum({a}, {b})");
        assert_eq!(Pointwise::Minimum.eval(a, b, 0.0, 0.0).to_bits(), 0x8000_0000, "minimum({a}, {b})");
        assert_eq!(Pointwise::ClampMin.eval(a, 0.0, b, 0.0).to_bits(), 0, "clamp_min({a}, {b})");
        assert_eq!(Pointwise::ClampMax.eval(a, 0.0, b, 0.0).to_bits(), 0x8000_0000, "clamp_max({a}, {b})");
        assert_eq!(Pointwise::Clamp.eval(a, 0.0, b, 6.0).to_bits(), 0, "clamp({a}, {b}, 6)");
    }
}

#[test]
fn copy_plans_match_eager_contiguous_cat_and_stack() {
    use Layout::*;
    let mut rng = Rng(23);
    let v = |s: &[i64]| s.to_vec();
    // contiguous() of strided views
    let views = [
        Permuted(v(&[2, 3, 4]), v(&[2, 0, 1])),
        Permuted(v(&[2, 3, 4]), v(&[0, 2, 1])),
        Permuted(v(&[2, 3, 4, 5]), v(&[3, 1, 0, 2])),
        Permuted(v(&[2, 3, 4, 5]), v(&[1, 0, 3, 2])),
        Permuted(v(&[5, 4, 3, 2]), v(&[3, 2, 1, 0])),
        Expanded(v(&[3, 1, 5]), v(&[2, 3, 4, 5])),
        Sliced(v(&[2, 6, 4]), 1, 3),
        Permuted(v(&[2, 0, 3]), v(&[2, 1, 0])),
    ];
    for layout in &views {
        let data = with_specials(&mut rng, layout.storage_len(), -5.0, 5.0, 3);
        let t = layout.view(&data);
        let shape = t.size();
        let plan = CopyPlan::new(&shape, &t.stride(), &contiguous_strides(&shape)).unwrap();
        let mut out = vec![f32::from_bits(0x7fc0_dead); plan.numel() as usize];
        plan.run_cpu(&data, &mut out);
        let want = to_vec(&t.contiguous());
        assert_eq!(out.len(), want.len(), "{layout:?}");
        for (i, (g, w)) in out.iter().zip(&want).enumerate() {
            assert_eq!(g.to_bits(), w.to_bits(), "contiguous {layout:?} [{i}]");
        }
    }

    // cat / stack as `tl::cuda::ops::join`: one copy per input into its slice of a
    // contiguous output (a stacked input is a size-1 slice: a new dim of stride 0).
    let join = |inputs: &[(Vec<f32>, Tensor)], d: usize, stacked: bool| -> (Vec<i64>, Vec<f32>) {
        let mut shape = inputs[0].1.size();
        if stacked {
            shape.insert(d, inputs.len() as i64);
        } else {
            shape[d] = inputs.iter().map(|(_, t)| t.size()[d]).sum();
        }
        let out_strides = contiguous_strides(&shape);
        let mut out = vec![f32::from_bits(0x7fc0_dead); shape.iter().product::<i64>() as usize];
        let mut start = 0i64;
        for (data, t) in inputs {
            let (mut sizes, mut strides) = (t.size(), t.stride());
            if stacked {
                sizes.insert(d, 1);
                strides.insert(d, 0);
            }
            let plan = CopyPlan::new(&sizes, &strides, &out_strides).unwrap();
            let offset = (start * out_strides[d]) as usize;
            if plan.numel() > 0 {
                plan.run_cpu(data, &mut out[offset..]);
            }
            start += sizes[d];
        }
        (shape, out)
    };
    let check = |what: &str, (shape, got): (Vec<i64>, Vec<f32>), want: Tensor| {
        assert_eq!(shape, want.size(), "{what}");
        let want = to_vec(&want);
        assert_eq!(got.len(), want.len(), "{what}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.to_bits(), w.to_bits(), "{what} [{i}]");
        }
    };
    for base in [v(&[2, 3, 4]), v(&[2, 3, 4, 5])] {
        let rank = base.len();
        for d in 0..rank {
            // cat: three contiguous inputs of sizes 1, base[d], 2 along d, plus the same
            // with the middle input a permuted (strided) view
            let mut inputs = Vec::new();
            for (j, size) in [1, base[d], 2].into_iter().enumerate() {
                let mut shape = base.clone();
                shape[d] = size;
                let layout = Contig(shape);
                let data = with_specials(&mut rng, layout.storage_len(), -5.0, 5.0, j);
                let t = layout.view(&data);
                inputs.push((data, t));
            }
            let tensors: Vec<&Tensor> = inputs.iter().map(|(_, t)| t).collect();
            check(&format!("cat {base:?} dim {d}"), join(&inputs, d, false), Tensor::cat(&tensors, d as i64));
            let mut storage_shape = inputs[1].1.size();
            storage_shape.reverse();
            let layout = Permuted(storage_shape, (0..rank as i64).rev().collect());
            let data = with_specials(&mut rng, layout.storage_len(), -5.0, 5.0, 9);
            inputs[1] = (data.clone(), layout.view(&data));
            let tensors: Vec<&Tensor> = inputs.iter().map(|(_, t)| t).collect();
            check(&format!("cat {base:?} dim {d} (strided middle)"), join(&inputs, d, false), Tensor::cat(&tensors, d as i64));
        }
        if rank < MAX_RANK_FOR_STACK {
            for d in 0..=rank {
                let inputs: Vec<(Vec<f32>, Tensor)> = (0..3)
                    .map(|j| {
                        let layout = Contig(base.clone());
                        let data = with_specials(&mut rng, layout.storage_len(), -5.0, 5.0, j);
                        let t = layout.view(&data);
                        (data, t)
                    })
                    .collect();
                let tensors: Vec<&Tensor> = inputs.iter().map(|(_, t)| t).collect();
                check(&format!("stack {base:?} dim {d}"), join(&inputs, d, true), Tensor::stack(&tensors, d as i64));
            }
        }
    }
    // stack of rank-3 inputs makes rank 4; also stack rank-2 inputs along each dim
    for d in 0..=2usize {
        let inputs: Vec<(Vec<f32>, Tensor)> = (0..2)
            .map(|j| {
                let layout = if j == 0 { Contig(v(&[3, 4])) } else { Permuted(v(&[4, 3]), v(&[1, 0])) };
                let data = with_specials(&mut rng, layout.storage_len(), -5.0, 5.0, j);
                let t = layout.view(&data);
                (data, t)
            })
            .collect();
        let tensors: Vec<&Tensor> = inputs.iter().map(|(_, t)| t).collect();
        check(&format!("stack [3, 4] dim {d}"), join(&inputs, d, true), Tensor::stack(&tensors, d as i64));
    }
}

/// Stacking adds a dimension: inputs of rank below this stay within the kernels' rank 4.
const MAX_RANK_FOR_STACK: usize = 4;

/// `|a| @ |b|` as the rounding scale of a product.
fn abs_matmul(a: &Tensor, b: &Tensor) -> Vec<f32> {
    to_vec(&a.abs().matmul(&b.abs()))
}

#[test]
fn batched_matmul_bmm_and_linear_plans_match_eager() {
    use Layout::*;
    let mut rng = Rng(29);
    let v = |s: &[i64]| s.to_vec();
    let matmuls: Vec<(Layout, Layout)> = vec![
        (Contig(v(&[2, 3, 4])), Contig(v(&[2, 4, 5]))),
        (Contig(v(&[2, 1, 3, 4])), Contig(v(&[5, 4, 6]))),
        (Contig(v(&[3, 4])), Contig(v(&[2, 4, 5]))),
        (Contig(v(&[2, 3, 4])), Contig(v(&[4, 5]))),
        (Contig(v(&[2, 3, 4])), Contig(v(&[4]))),
        (Contig(v(&[4])), Contig(v(&[2, 4, 5]))),
        // transposed batched operands
        (Contig(v(&[2, 3, 4])), Permuted(v(&[2, 5, 4]), v(&[0, 2, 1]))),
        (Permuted(v(&[2, 4, 3]), v(&[0, 2, 1])), Permuted(v(&[2, 5, 4]), v(&[0, 2, 1]))),
        // batch dimension not outermost in memory, fully reversed, expanded (stride 0)
        (Permuted(v(&[3, 2, 4]), v(&[1, 0, 2])), Contig(v(&[2, 4, 5]))),
        (Permuted(v(&[4, 3, 2]), v(&[2, 1, 0])), Permuted(v(&[5, 4, 2]), v(&[2, 1, 0]))),
        (Expanded(v(&[1, 3, 4]), v(&[2, 3, 4])), Contig(v(&[2, 4, 5]))),
        (Contig(v(&[2, 3, 4])), Contig(v(&[1, 4, 5]))),
        // rank 4, two batch dims
        (Contig(v(&[2, 3, 4, 5])), Permuted(v(&[2, 3, 6, 5]), v(&[0, 1, 3, 2]))),
        (Contig(v(&[3, 1, 2, 4])), Contig(v(&[1, 2, 4, 3]))),
        (Permuted(v(&[5, 4, 3, 2]), v(&[3, 2, 1, 0])), Contig(v(&[5, 6]))),
        (Contig(v(&[2, 3, 4, 5])), Contig(v(&[5]))),
        (Contig(v(&[5])), Contig(v(&[2, 3, 5, 4]))),
        (Contig(v(&[4, 5])), Contig(v(&[2, 3, 5, 6]))),
        // larger than one tile, and empty
        (Contig(v(&[2, 17, 33])), Permuted(v(&[2, 40, 33]), v(&[0, 2, 1]))),
        (Contig(v(&[2, 3, 0])), Contig(v(&[2, 0, 5]))),
        (Contig(v(&[0, 3, 4])), Contig(v(&[4, 5]))),
    ];
    for (a_layout, b_layout) in &matmuls {
        let a_data = rng.vec(a_layout.storage_len(), -2.0, 2.0);
        let b_data = rng.vec(b_layout.storage_len(), -2.0, 2.0);
        let (a, b) = (a_layout.view(&a_data), b_layout.view(&b_data));
        let what = format!("matmul {:?}@{:?} ({a_layout:?} @ {b_layout:?})", a.size(), b.size());
        let plan = MatmulPlan::matmul(&a.size(), &a.stride(), &b.size(), &b.stride()).unwrap_or_else(|e| panic!("{what}: {e}"));
        let want = a.matmul(&b);
        assert_eq!(plan.out_shape, want.size(), "{what}");
        assert_close_to_eager(&plan.run_cpu(&a_data, &b_data, None), &to_vec(&want), &abs_matmul(&a, &b), &what);
    }
    let bmms: Vec<(Layout, Layout)> = vec![
        (Contig(v(&[2, 3, 4])), Contig(v(&[2, 4, 5]))),
        (Permuted(v(&[3, 2, 4]), v(&[1, 0, 2])), Permuted(v(&[2, 5, 4]), v(&[0, 2, 1]))),
        (Contig(v(&[3, 16, 17])), Contig(v(&[3, 17, 18]))),
    ];
    for (a_layout, b_layout) in &bmms {
        let a_data = rng.vec(a_layout.storage_len(), -2.0, 2.0);
        let b_data = rng.vec(b_layout.storage_len(), -2.0, 2.0);
        let (a, b) = (a_layout.view(&a_data), b_layout.view(&b_data));
        let what = format!("bmm {:?}@{:?}", a.size(), b.size());
        let plan = MatmulPlan::bmm(&a.size(), &a.stride(), &b.size(), &b.stride()).unwrap_or_else(|e| panic!("{what}: {e}"));
        let want = a.bmm(&b);
        assert_eq!(plan.out_shape, want.size(), "{what}");
        assert_close_to_eager(&plan.run_cpu(&a_data, &b_data, None), &to_vec(&want), &abs_matmul(&a, &b), &what);
    }
    // linear(x, w, bias) with x of rank 3 and 4, strided x and w, with and without bias
    let linears: Vec<(Layout, Layout, bool)> = vec![
        (Contig(v(&[2, 3, 4])), Contig(v(&[5, 4])), true),
        (Contig(v(&[2, 3, 4])), Contig(v(&[5, 4])), false),
        (Contig(v(&[2, 3, 2, 4])), Contig(v(&[6, 4])), true),
        (Permuted(v(&[3, 2, 4]), v(&[1, 0, 2])), Permuted(v(&[4, 5]), v(&[1, 0])), true),
        (Permuted(v(&[4, 2, 3, 5]), v(&[1, 2, 0, 3])), Contig(v(&[7, 5])), true),
        (Expanded(v(&[1, 3, 4]), v(&[2, 3, 4])), Contig(v(&[5, 4])), true),
        (Contig(v(&[2, 20, 33])), Contig(v(&[17, 33])), true),
    ];
    for (x_layout, w_layout, with_bias) in &linears {
        let x_data = rng.vec(x_layout.storage_len(), -2.0, 2.0);
        let w_data = rng.vec(w_layout.storage_len(), -2.0, 2.0);
        let (x, w) = (x_layout.view(&x_data), w_layout.view(&w_data));
        let n = w.size()[0];
        let bias_data = rng.vec(n as usize, -1.0, 1.0);
        let bias = tensor(&bias_data, &[n]);
        let what = format!("linear {:?} {:?} bias={with_bias} ({x_layout:?}, {w_layout:?})", x.size(), w.size());
        let (bias_size, bias_stride) = (bias.size(), bias.stride());
        let bias_layout = with_bias.then_some((bias_size.as_slice(), bias_stride.as_slice()));
        let plan = MatmulPlan::linear(&x.size(), &x.stride(), &w.size(), &w.stride(), bias_layout).unwrap_or_else(|e| panic!("{what}: {e}"));
        let want = if *with_bias { x.linear(&w, Some(&bias)) } else { x.linear::<Tensor>(&w, None) };
        assert_eq!(plan.out_shape, want.size(), "{what}");
        let got = plan.run_cpu(&x_data, &w_data, with_bias.then_some(bias_data.as_slice()));
        let mut scale = x.abs().matmul(&w.abs().tr());
        if *with_bias {
            scale += bias.abs();
        }
        assert_close_to_eager(&got, &to_vec(&want), &to_vec(&scale), &what);
    }
}

#[test]
fn batched_matmul_errors_have_eager_messages() {
    let zeros = |shape: &[i64]| Tensor::zeros(shape, (Kind::Float, Device::Cpu));
    let check = |what: &str, plan: Result<MatmulPlan, String>, eager: String| {
        let plan_error = plan.expect_err(what);
        assert!(eager.contains(&plan_error), "{what}: plan {plan_error:?}, eager {eager:?}");
    };
    // batched k mismatch (also with broadcast batch dims)
    // (a matrix or vector left operand with a batched right one: eager, for tensors that do
    // not require grad, broadcasts it to a bmm and names the bmm sizes)
    let k_mismatches: [(&[i64], &[i64]); 6] =
        [(&[2, 3, 4], &[2, 5, 6]), (&[2, 1, 3, 4], &[5, 6, 7]), (&[2, 3, 4], &[1, 5, 6]), (&[3, 4], &[2, 5, 6]), (&[4], &[2, 5, 6]), (&[3, 4], &[2, 2, 5, 6])];
    for (a_shape, b_shape) in k_mismatches {
        let (a, b) = (zeros(a_shape), zeros(b_shape));
        check(&format!("k {a_shape:?}@{b_shape:?}"), MatmulPlan::matmul(&a.size(), &a.stride(), &b.size(), &b.stride()), eager_error(|| a.f_matmul(&b)));
    }
    // batch broadcast mismatch
    for (a_shape, b_shape) in [(&[2, 3, 4][..], &[3, 4, 5][..]), (&[2, 3, 3, 4], &[4, 4, 5]), (&[2, 2, 3, 4], &[3, 1, 4, 5])] {
        let (a, b) = (zeros(a_shape), zeros(b_shape));
        check(&format!("batch {a_shape:?}@{b_shape:?}"), MatmulPlan::matmul(&a.size(), &a.stride(), &b.size(), &b.stride()), eager_error(|| a.f_matmul(&b)));
    }
    // a batched left operand with a matrix or vector: eager folds it to 2-d
    for (a_shape, b_shape) in [(&[2, 3, 4][..], &[5, 6][..]), (&[2, 2, 3, 4], &[5, 6]), (&[2, 3, 4], &[5])] {
        let (a, b) = (zeros(a_shape), zeros(b_shape));
        check(&format!("folded {a_shape:?}@{b_shape:?}"), MatmulPlan::matmul(&a.size(), &a.stride(), &b.size(), &b.stride()), eager_error(|| a.f_matmul(&b)));
    }
    // bmm: k mismatch and batch mismatch (bmm does not broadcast)
    for (a_shape, b_shape) in [(&[2, 3, 4][..], &[2, 5, 6][..]), (&[2, 3, 4], &[3, 4, 5]), (&[2, 3, 4], &[1, 4, 5])] {
        let (a, b) = (zeros(a_shape), zeros(b_shape));
        check(&format!("bmm {a_shape:?}@{b_shape:?}"), MatmulPlan::bmm(&a.size(), &a.stride(), &b.size(), &b.stride()), eager_error(|| a.f_bmm(&b)));
    }
    // linear with a rank-3 / rank-4 input whose last dim does not match
    for (x_shape, w_shape) in [(&[2, 3, 4][..], &[6, 5][..]), (&[2, 3, 2, 4], &[6, 5])] {
        let (x, w) = (zeros(x_shape), zeros(w_shape));
        check(&format!("linear {x_shape:?} {w_shape:?}"), MatmulPlan::linear(&x.size(), &x.stride(), &w.size(), &w.stride(), None), eager_error(|| x.f_linear::<Tensor>(&w, None)));
    }
}

#[test]
fn nd_reduction_plans_match_eager_sum_mean_softmax_argmax() {
    use Layout::*;
    let mut rng = Rng(31);
    let v = |s: &[i64]| s.to_vec();
    let layouts = [
        Contig(v(&[3, 4, 5])),
        Permuted(v(&[5, 3, 4]), v(&[1, 2, 0])),
        Permuted(v(&[4, 5, 3]), v(&[2, 0, 1])),
        Permuted(v(&[3, 5, 4]), v(&[0, 2, 1])),
        Contig(v(&[2, 3, 4, 5])),
        Permuted(v(&[5, 4, 3, 2]), v(&[3, 2, 1, 0])),
        Permuted(v(&[2, 4, 3, 5]), v(&[0, 2, 1, 3])),
        Permuted(v(&[3, 2, 5, 4]), v(&[1, 0, 3, 2])),
        Permuted(v(&[4, 2, 5, 3]), v(&[1, 3, 0, 2])),
        Contig(v(&[2, 1, 300, 3])),
        Permuted(v(&[3, 300, 2]), v(&[2, 0, 1])),
        Permuted(v(&[2, 3, 1, 4]), v(&[3, 2, 0, 1])),
        Expanded(v(&[1, 4, 5]), v(&[3, 4, 5])),
        Sliced(v(&[2, 6, 4, 3]), 1, 2),
        Contig(v(&[2, 0, 3])),
    ];
    let (mut replanned, mut cases) = (0, 0);
    for layout in &layouts {
        for quantised in [true, false] {
            let n = layout.storage_len();
            // Quantised data has many ties (argmax must take the first); both get a NaN and
            // an inf, which poison their lines in every reduction.
            let mut data = rng.vec(n, -4.0, 4.0);
            if quantised {
                data.iter_mut().for_each(|x| *x = (*x * 2.0).round() / 2.0);
            }
            if n > 20 {
                data[7] = f32::NAN;
                data[n - 5] = f32::INFINITY;
            }
            let t0 = layout.view(&data);
            let rank = t0.dim() as i64;
            for dim in -rank..rank {
                for keepdim in [false, true] {
                    cases += 1;
                    let what = format!("{layout:?} {:?}/{:?} quantised={quantised} dim={dim} keepdim={keepdim}", t0.size(), t0.stride());
                    // As the ops: without a plan, reduce a contiguous copy.
                    let (plan, t, input) = match ReducePlan::along(&t0.size(), &t0.stride(), dim, keepdim).unwrap() {
                        Some(plan) => (plan, t0.shallow_clone(), data.clone()),
                        None => {
                            replanned += 1;
                            let t = t0.contiguous();
                            let shape = t.size();
                            let plan = ReducePlan::along(&shape, &contiguous_strides(&shape), dim, keepdim)
                                .unwrap()
                                .unwrap_or_else(|| panic!("no plan for the contiguous copy: {what}"));
                            (plan, t.shallow_clone(), to_vec(&t))
                        }
                    };
                    let sum = t.sum_dim_intlist([dim].as_slice(), keepdim, Kind::Float);
                    assert_eq!(plan.out_shape, sum.size(), "{what}");
                    let scale = to_vec(&t.abs().sum_dim_intlist([dim].as_slice(), keepdim, Kind::Float));
                    let got = plan.run_sum_cpu(&input, 1.0);
                    let want = to_vec(&sum);
                    assert_eq!(got.len(), want.len(), "sum {what}");
                    for (i, ((g, w), s)) in got.iter().zip(&want).zip(&scale).enumerate() {
                        assert!((g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 1e-5 * s, "sum {what} [{i}]: {g} vs {w}");
                    }
                    let mean = t.mean_dim([dim].as_slice(), keepdim, Kind::Float);
                    assert_eq!(plan.out_shape, mean.size(), "{what}");
                    let got = plan.run_sum_cpu(&input, 1.0 / plan.len as f32);
                    for (i, ((g, w), s)) in got.iter().zip(to_vec(&mean)).zip(&scale).enumerate() {
                        let tol = 1e-5 * s / plan.len.max(1) as f32;
                        assert!((g.is_nan() && w.is_nan()) || *g == w || (g - w).abs() <= tol, "mean {what} [{i}]: {g} vs {w}");
                    }
                    if plan.len > 0 {
                        let argmax = t.argmax(dim, keepdim);
                        assert_eq!(plan.out_shape, argmax.size(), "{what}");
                        let want = Vec::<i64>::try_from(argmax.view([-1])).unwrap();
                        assert_eq!(plan.run_argmax_cpu(&input), want, "argmax {what}");
                    }
                    if keepdim {
                        let want = to_vec(&t.softmax(dim, Kind::Float));
                        let got = plan.run_softmax_cpu(&input);
                        assert_eq!(got.len(), want.len(), "softmax {what}");
                        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                            assert_eq!(g.is_nan(), w.is_nan(), "softmax {what} [{i}]: {g} vs {w}");
                            if !w.is_nan() {
                                assert!((g - w).abs() <= 2e-6 * w.abs().max(1e-6) + 1e-7, "softmax {what} [{i}]: {g} vs {w}");
                            }
                        }
                    }
                }
            }
        }
    }
    println!("reductions: {cases} cases, {replanned} planned on a contiguous copy");
    assert!(replanned > 0, "some layout must need the contiguous fallback");
}

/// Layer and RMS norm: the kernels' model (two-pass statistics, every step correctly
/// rounded) against eager's `layer_norm`/`rms_norm` with NaN at the same places and finite
/// values within `1e-5 (|eager| + 1) c`. Eager computes the statistics with Welford's
/// update, so the last bits differ, by as much as the line's conditioning allows: `c` is
/// `1 + |mean| / std` for layer norm (the mean's rounding is amplified by `rstd`), 1 for
/// RMS norm. Rows cover a NaN, an inf, a constant line (variance 0), a large offset (the
/// cancellation `c` accounts for), lines longer than the block, with and without the affine
/// vectors, a strided (transposed) input read in place and two normalized dims.
#[test]
fn norm_plans_match_eager_layer_norm_and_rms_norm() {
    let mut rng = Rng(17);
    for &(lines, len) in &[(1i64, 1i64), (3, 5), (7, 300), (2, 1000), (5, 4096), (6, 257)] {
        let mut data = rng.vec((lines * len) as usize, -3.0, 3.0);
        if lines >= 5 {
            data[2] = f32::NAN; // line 0
            data[len as usize + 1] = f32::INFINITY; // line 1
            data[2 * len as usize..3 * len as usize].fill(0.75); // line 2: variance 0
            for x in &mut data[3 * len as usize..4 * len as usize] {
                *x += 1.0e3; // line 3: a large mean
            }
        }
        let weight = rng.vec(len as usize, -2.0, 2.0);
        let bias = rng.vec(len as usize, -1.0, 1.0);
        let (w, b) = (tensor(&weight, &[len]), tensor(&bias, &[len]));
        for transpose in [false, true] {
            // Transposed: the storage holds [len, lines], the normalized dim has stride `lines`.
            let t = if transpose { tensor(&data, &[len, lines]).tr() } else { tensor(&data, &[lines, len]) };
            let plan = ReducePlan::along(&t.size(), &t.stride(), -1, true).unwrap().expect("rank 2 always has a plan");
            let condition = line_conditions(&to_vec(&t), len as usize);
            for (affine, eps) in [(false, 1e-5f64), (true, 1e-12), (true, 1e-5)] {
                let (wo, bo) = if affine { (Some(&w), Some(&b)) } else { (None, None) };
                let what = format!("[{lines}, {len}] transposed={transpose} affine={affine} eps={eps}");
                let want = to_vec(&t.layer_norm([len].as_slice(), wo, bo, eps, false));
                let got = plan.run_norm_cpu(&data, affine.then_some(&weight[..]), affine.then_some(&bias[..]), eps as f32, Norm::Layer);
                assert_norm_close(&got, &want, &condition, &format!("layer_norm {what}"));
                let want = to_vec(&t.rms_norm([len].as_slice(), wo, Some(eps)));
                let got = plan.run_norm_cpu(&data, affine.then_some(&weight[..]), None, eps as f32, Norm::Rms);
                assert_norm_close(&got, &want, &[1.0], &format!("rms_norm {what}"));
            }
            // eps=None is float32's machine epsilon.
            let want = to_vec(&t.rms_norm([len].as_slice(), None::<&Tensor>, None));
            assert_norm_close(&plan.run_norm_cpu(&data, None, None, f32::EPSILON, Norm::Rms), &want, &[1.0], "rms_norm eps=None");
        }
    }
    // Two normalized dims: lines of 3 * 40 elements of a [2, 3, 40] tensor.
    let data = rng.vec(240, -3.0, 3.0);
    let t = tensor(&data, &[2, 3, 40]);
    let plan = ReducePlan::along(&[2, 120], &[120, 1], -1, true).unwrap().expect("a plan");
    let want = to_vec(&t.layer_norm([3, 40].as_slice(), None::<&Tensor>, None::<&Tensor>, 1e-5, false));
    let condition = line_conditions(&data, 120);
    assert_norm_close(&plan.run_norm_cpu(&data, None, None, 1e-5, Norm::Layer), &want, &condition, "layer_norm over [3, 40]");
}

/// `1 + |mean| / std` of each line of `len` elements (float64; 1 for a constant or
/// non-finite line), repeated for each of its elements.
fn line_conditions(values: &[f32], len: usize) -> Vec<f64> {
    values
        .chunks(len)
        .flat_map(|line| {
            let n = line.len() as f64;
            let mean = line.iter().map(|&x| x as f64).sum::<f64>() / n;
            let std = (line.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n).sqrt();
            let c = if std > 0.0 && mean.is_finite() { 1.0 + mean.abs() / std } else { 1.0 };
            std::iter::repeat_n(c, line.len())
        })
        .collect()
}

/// `conditions` per element, or one for all.
fn assert_norm_close(got: &[f32], want: &[f32], conditions: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.is_nan(), w.is_nan(), "{what} [{i}]: {g} vs {w}");
        if !w.is_nan() {
            let c = conditions[i.min(conditions.len() - 1)];
            let tol = 1e-5 * (w.abs() as f64 + 1.0) * c;
            assert!(((g - w).abs() as f64) <= tol, "{what} [{i}]: {g} vs {w} ({} ulps)", ulps(*g, *w));
        }
    }
}

/// The norms' shape checks refuse what eager refuses, with its message (and `ValueError`
/// where eager raises one), and give the line length otherwise.
#[test]
fn norm_shape_errors_have_eager_messages() {
    let zeros = |shape: &[i64]| Tensor::zeros(shape, (Kind::Float, Device::Cpu));
    // (input, normalized_shape, weight, bias)
    let cases: [(&[i64], &[i64], Option<&[i64]>, Option<&[i64]>); 7] = [
        (&[2, 3], &[4], None, None),
        (&[2, 3], &[3, 4], None, None),
        (&[2, 3], &[3], Some(&[4]), None),
        (&[2, 3], &[3], None, Some(&[2])),
        (&[2, 3], &[], None, None),
        (&[3], &[2, 3], None, None),
        (&[2, 3, 4], &[3, 4], Some(&[3, 4]), Some(&[3, 4])),
    ];
    for (shape, normalized, weight, bias) in cases {
        let (x, w, b) = (zeros(shape), weight.map(zeros), bias.map(zeros));
        let affine = [("weight", weight.map(<[i64]>::to_vec)), ("bias", bias.map(<[i64]>::to_vec))];
        let what = format!("{shape:?} over {normalized:?} weight {weight:?} bias {bias:?}");
        let ours = norm_line_len(Norm::Layer, shape, normalized, &affine);
        match x.f_layer_norm(normalized, w.as_ref(), b.as_ref(), 1e-5, false) {
            Ok(_) => assert_eq!(ours, Ok(normalized.iter().product()), "layer_norm {what}"),
            Err(e) => match ours {
                Err(NormShapeError::Runtime(m)) => assert!(e.to_string().contains(&m), "layer_norm {what}: {m} / {e}"),
                other => panic!("layer_norm {what}: eager raised {e}, ours {other:?}"),
            },
        }
        let ours = norm_line_len(Norm::Rms, shape, normalized, &affine[..1]);
        match x.f_rms_norm(normalized, w.as_ref(), Some(1e-5)) {
            Ok(_) => assert_eq!(ours, Ok(normalized.iter().product()), "rms_norm {what}"),
            Err(e) => match ours {
                Err(NormShapeError::Runtime(m) | NormShapeError::Value(m)) => assert!(e.to_string().contains(&m), "rms_norm {what}: {m} / {e}"),
                Ok(n) => panic!("rms_norm {what}: eager raised {e}, ours {n}"),
            },
        }
    }
}

/// The lines a reduction over a list of dims reads, as `tl::cuda::ops` lays them out: one
/// dim in place (from a contiguous copy where the kept dims do not merge), several moved
/// last by a permuted contiguous copy. `storage` is `t`'s (a view at offset 0). Returns the
/// plan and the values it indexes.
fn lines_of(t: &Tensor, storage: &[f32], over: &ReduceDims, keepdim: bool) -> (ReducePlan, Vec<f32>) {
    if let [d] = over.reduced[..] {
        if let Some(plan) = ReducePlan::along(&t.size(), &t.stride(), d as i64, keepdim).unwrap() {
            return (plan, storage.to_vec());
        }
        let copy = t.contiguous();
        return (ReducePlan::along(&copy.size(), &copy.stride(), d as i64, keepdim).unwrap().unwrap(), to_vec(&copy));
    }
    (over.plan().expect("a plan"), to_vec(&t.permute(over.order.as_slice())))
}

/// amax/amin (exact), sum/mean over dim lists, var/std with
/// corrections, and logsumexp: the kernels' models on the layouts the CUDA ops give them,
/// against eager on CPU — values, NaN/±inf and result shapes — and the dim-list errors with
/// eager's messages.
#[test]
fn dim_list_reductions_match_eager() {
    let mut rng = Rng(23);
    // (shape, permutation of a contiguous base: a non-contiguous view when not the identity)
    let layouts: [(&[i64], &[i64]); 5] = [(&[7, 300], &[0, 1]), (&[300, 7], &[1, 0]), (&[2, 3, 4, 5], &[0, 1, 2, 3]), (&[3, 7, 9], &[2, 0, 1]), (&[4, 2, 33], &[0, 2, 1])];
    let dim_lists: [&[i64]; 7] = [&[0], &[-1], &[1], &[0, -1], &[], &[-1, 0], &[1, 2]];
    for (shape, permutation) in layouts {
        let base_shape: Vec<i64> = {
            let mut inverse = vec![0i64; shape.len()];
            for (i, &p) in permutation.iter().enumerate() {
                inverse[p as usize] = shape[i];
            }
            inverse
        };
        let n: i64 = shape.iter().product();
        let mut data = rng.vec(n as usize, -4.0, 4.0);
        data[3] = f32::NAN;
        data[11] = f32::INFINITY;
        data[12] = f32::NEG_INFINITY;
        data[20] = -0.0;
        let t = tensor(&data, &base_shape).permute(permutation);
        assert_eq!(t.size(), shape);
        for dims in dim_lists {
            if dims.iter().any(|&d| d >= shape.len() as i64 || d < -(shape.len() as i64)) {
                continue;
            }
            for keepdim in [false, true] {
                let what = format!("{shape:?} perm {permutation:?} dims {dims:?} keepdim={keepdim}");
                let over = ReduceDims::new(&shape, dims, keepdim).unwrap();
                let (plan, storage) = lines_of(&t, &data, &over, keepdim);
                let exact = |got: Vec<f32>, want: &Tensor, op: &str| {
                    assert_eq!(over.out_shape, want.size(), "{op} {what}");
                    for (g, w) in got.iter().zip(to_vec(want)) {
                        assert!(g == &w || (g.is_nan() && w.is_nan()), "{op} {what}: {g} vs {w}");
                    }
                };
                exact(plan.run_fold_cpu(&storage, Fold::Max, 1.0), &t.amax(dims, keepdim), "amax");
                exact(plan.run_fold_cpu(&storage, Fold::Min, 1.0), &t.amin(dims, keepdim), "amin");
                let close = |got: Vec<f32>, want: &Tensor, op: &str, tol: f32| {
                    assert_eq!(over.out_shape, want.size(), "{op} {what}");
                    for (g, w) in got.iter().zip(to_vec(want)) {
                        assert_eq!(g.is_nan(), w.is_nan(), "{op} {what}: {g} vs {w}");
                        assert!(g == &w || w.is_nan() || (g - w).abs() <= tol * (w.abs() + 1.0), "{op} {what}: {g} vs {w}");
                    }
                };
                let dims_opt = Some(dims);
                // |x| ≤ 4 over at most 300 elements: the sums' rounding stays below 1e-5·(|s| + 1)·len/100
                let sum_tol = 1e-5 * (plan.len as f32 / 100.0).max(1.0);
                close(plan.run_fold_cpu(&storage, Fold::Sum, 1.0), &t.sum_dim_intlist(dims_opt, keepdim, Kind::Float), "sum", sum_tol);
                close(plan.run_fold_cpu(&storage, Fold::Sum, 1.0 / plan.len as f32), &t.mean_dim(dims_opt, keepdim, Kind::Float), "mean", sum_tol);
                for correction in [0.0, 1.0, 2.5] {
                    let divisor = (plan.len as f64 - correction).max(0.0) as f32;
                    close(plan.run_var_cpu(&storage, divisor, false), &t.var_correction(dims_opt, correction, keepdim), "var", 1e-5);
                    close(plan.run_var_cpu(&storage, divisor, true), &t.std_correction(dims_opt, correction, keepdim), "std", 1e-5);
                }
                if !dims.is_empty() {
                    close(plan.run_logsumexp_cpu(&storage), &t.logsumexp(dims, keepdim), "logsumexp", 1e-5);
                }
            }
        }
    }
    // A line without NaN/inf for var/std/logsumexp to compare finite values, and lines that
    // are all -inf (logsumexp -inf) or hold +inf (inf).
    let special = tensor(&[f32::NEG_INFINITY, f32::NEG_INFINITY, 1.0, f32::INFINITY, 0.5, 0.25], &[3, 2]);
    let plan = ReducePlan::along(&[3, 2], &[2, 1], 1, false).unwrap().unwrap();
    let got = plan.run_logsumexp_cpu(&to_vec(&special));
    let want = to_vec(&special.logsumexp([1].as_slice(), false));
    assert_eq!(got[..2], want[..2]);
    assert!((got[2] - want[2]).abs() <= 1e-6, "{got:?} vs {want:?}");
    // the dim-list errors
    let t = Tensor::zeros([2, 3, 4], (Kind::Float, Device::Cpu));
    for dims in [&[1i64, 1][..], &[1, -2], &[3], &[-4]] {
        let ours = ReduceDims::new(&[2, 3, 4], dims, false).unwrap_err();
        let eager = t.f_amax(dims, false).unwrap_err().to_string();
        let (DimsError::Index(m) | DimsError::Runtime(m)) = &ours;
        assert!(eager.contains(m.as_str()), "{dims:?}: {m} / {eager}");
    }
}

/// Attention on cuda:0 is composed from the matmul, scale, add and softmax kernels; their
/// models composed the same way (`softmax(q kᵀ · scale + mask) v`) against eager's
/// `scaled_dot_product_attention` on CPU, rank 3 and 4, with and without a float mask, the
/// default and an explicit scale.
#[test]
fn composed_attention_matches_eager_sdpa() {
    let mut rng = Rng(31);
    for (shape, kv_len) in [(&[2i64, 5, 8][..], 7i64), (&[2, 3, 16, 32][..], 16)] {
        let rank = shape.len();
        let mut k_shape = shape.to_vec();
        k_shape[rank - 2] = kv_len;
        let numel = |s: &[i64]| s.iter().product::<i64>() as usize;
        let (q_data, k_data, v_data) = (rng.vec(numel(shape), -1.0, 1.0), rng.vec(numel(&k_shape), -1.0, 1.0), rng.vec(numel(&k_shape), -1.0, 1.0));
        let (q, k, v) = (tensor(&q_data, shape), tensor(&k_data, &k_shape), tensor(&v_data, &k_shape));
        let mut scores_shape = shape.to_vec();
        scores_shape[rank - 1] = kv_len;
        let mask_data = rng.vec(numel(&scores_shape), -2.0, 0.0);
        let mask = tensor(&mask_data, &scores_shape);
        for (masked, scale) in [(false, None), (true, None), (false, Some(0.125f64))] {
            let kt = k.transpose(-2, -1);
            let scores_plan = MatmulPlan::matmul(&q.size(), &q.stride(), &kt.size(), &kt.stride()).unwrap();
            let factor = scale.unwrap_or(1.0 / (shape[rank - 1] as f64).sqrt()) as f32;
            let mut scores: Vec<f32> = scores_plan.run_cpu(&q_data, &k_data, None).into_iter().map(|s| s * factor).collect();
            if masked {
                scores.iter_mut().zip(&mask_data).for_each(|(s, m)| *s += m);
            }
            let softmax_plan = ReducePlan::along(&scores_shape, &torchlower_backend::cuda::kernels::plan::contiguous_strides(&scores_shape), -1, true).unwrap().unwrap();
            let weights = softmax_plan.run_softmax_cpu(&scores);
            let w = tensor(&weights, &scores_shape);
            let out_plan = MatmulPlan::matmul(&w.size(), &w.stride(), &v.size(), &v.stride()).unwrap();
            let got = out_plan.run_cpu(&weights, &v_data, None);
            let want = Tensor::scaled_dot_product_attention(&q, &k, &v, masked.then_some(&mask), 0.0, false, scale, false);
            assert_eq!(out_plan.out_shape, want.size());
            for (i, (g, w)) in got.iter().zip(to_vec(&want)).enumerate() {
                assert!((g - w).abs() <= 2e-6 * (w.abs() + 1.0), "sdpa {shape:?} masked={masked} scale={scale:?} [{i}]: {g} vs {w}");
            }
        }
    }
}

use torchlower_backend::cuda::kernels::pool::{PoolKind, PoolPlan};

/// Eager's pooling on CPU, the plan for the same call, and its name.
type PoolCase = (String, Option<PoolPlan>, Result<Tensor, tch::TchError>);

fn pool_cases(x: &Tensor, dims: usize) -> Vec<PoolCase> {
    let (shape, strides) = (x.size(), x.stride());
    let mut cases = Vec::new();
    // (kernel, stride, padding, dilation, ceil_mode)
    let windows: &[(&[i64], &[i64], &[i64], &[i64], bool)] = &[
        (&[2], &[], &[0], &[1], false),
        (&[3], &[2], &[1], &[1], false),
        (&[3], &[1], &[1], &[2], true),
        (&[2], &[2], &[1], &[1], true),
        (&[3], &[3], &[0], &[1], true),
        // eager refuses these: padding above half the kernel (even within the dilated span), no output
        (&[3], &[1], &[2], &[2], false),
        (&[9], &[1], &[0], &[1], false),
    ];
    for &(k, s, p, d, ceil) in windows {
        let (k2, s2, p2, d2): (Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>) = if dims == 2 && k[0] == 3 && s.first() == Some(&2) {
            // a non-square window too
            (vec![3, 2], vec![2, 1], vec![1, 0], vec![1, 1])
        } else {
            (k.to_vec(), s.to_vec(), p.to_vec(), d.to_vec())
        };
        let what = format!("k={k2:?} s={s2:?} p={p2:?} d={d2:?} ceil={ceil}");
        let max = PoolPlan::window(PoolKind::Max, dims, &shape, &strides, &k2, &s2, &p2, &d2, ceil, false);
        let eager = if dims == 2 { x.f_max_pool2d(&k2, &s2, &p2, &d2, ceil) } else { x.f_max_pool1d(&k2, &s2, &p2, &d2, ceil) };
        cases.push((format!("max_pool {what}"), max, eager));
        if d2.iter().all(|&v| v == 1) {
            for include in [true, false] {
                let avg = PoolPlan::window(PoolKind::Avg, dims, &shape, &strides, &k2, &s2, &p2, &[1], ceil, include);
                let eager = if dims == 2 { x.f_avg_pool2d(&k2, &s2, &p2, ceil, include, None::<i64>) } else { x.f_avg_pool1d(&k2, &s2, &p2, ceil, include) };
                cases.push((format!("avg_pool {what} count_include_pad={include}"), avg, eager));
            }
        }
    }
    for out in [[2i64, 3], [3, 3], [5, 4], [1, 2]] {
        let out = &out[..dims];
        // an output of ones is eager's mean over the pooled dims (and our mean kernel's), not a pooling
        if out.iter().any(|&o| o != 1) {
            let avg = PoolPlan::adaptive(PoolKind::AdaptiveAvg, dims, &shape, &strides, out);
            let eager = if dims == 2 { x.f_adaptive_avg_pool2d(out) } else { x.f_adaptive_avg_pool1d(out) };
            cases.push((format!("adaptive_avg_pool {out:?}"), avg, eager));
        }
        if dims == 2 {
            let max = PoolPlan::adaptive(PoolKind::AdaptiveMax, dims, &shape, &strides, out);
            cases.push((format!("adaptive_max_pool {out:?}"), max, x.f_adaptive_max_pool2d(out).map(|(v, _)| v)));
        }
    }
    cases
}

/// The pooling plans against eager CPU, bit for bit: every kind on contiguous, transposed,
/// channels-last, unbatched and 1-D inputs with special values (NaN, ±inf, signed zeros,
/// ties), and eager's refusals exactly where the plan has none.
#[test]
fn pool_plans_match_eager_bit_for_bit() {
    let mut rng = Rng(31);
    let mut checked = 0;
    for (dims, shape) in [(2usize, vec![2i64, 3, 7, 8]), (2, vec![3, 6, 9]), (1, vec![2, 3, 11]), (1, vec![4, 10])] {
        let n: i64 = shape.iter().product();
        let values = with_specials(&mut rng, n as usize, -3.0, 3.0, shape.len());
        let base = tensor(&values, &shape);
        let rank = shape.len() as i64;
        let mut layouts = vec![("contiguous", base.shallow_clone())];
        // the same values read through other strides
        layouts.push(("transposed", base.transpose(rank - 1, rank - 2).contiguous().transpose(rank - 1, rank - 2)));
        if shape.len() == 4 {
            layouts.push(("channels_last", base.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])));
        }
        for (layout, x) in layouts {
            // every layout here is a permutation of one dense storage, at offset 0
            let storage = to_vec(&x.as_strided([n], [1], None::<i64>));
            for (what, plan, eager) in pool_cases(&x, dims) {
                let what = format!("{what} on {layout} {shape:?}");
                match (plan, eager) {
                    (None, Err(_)) => {}
                    (Some(plan), Ok(want)) => {
                        assert_eq!(plan.out_shape, want.size(), "{what}");
                        let got = plan.run_cpu(&storage);
                        let want = to_vec(&want);
                        let average = matches!(plan.kind, PoolKind::Avg | PoolKind::AdaptiveAvg);
                        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                            // eager CPU's average of a window whose float32 sum is a subnormal
                            // that halves to zero gives +0.0 where the quotient (ours, CUDA's) is
                            // -0.0; the GPU check compares those with eager on the device
                            if average && g == 0.0 && w == 0.0 {
                                continue;
                            }
                            assert!(same(g, w), "{what} [{i}]: model {g:e} ({:#010x}) vs eager {w:e} ({:#010x})", g.to_bits(), w.to_bits());
                        }
                        checked += 1;
                    }
                    (plan, eager) => panic!("{what}: plan {} but eager {}", if plan.is_some() { "exists" } else { "refused" }, if eager.is_ok() { "ran" } else { "refused" }),
                }
            }
        }
    }
    println!("{checked} pooling cases bit-identical to eager");
}

use torchlower_backend::cuda::kernels::conv::ConvPlan;
use torchlower_backend::cuda::kernels::math::BinaryMath;

/// The direct-convolution plan against eager CPU (libtorch's convolution, which sums in
/// another order): within `1e-5 · Σ|x·w|` per output, NaN and ±inf where eager has them;
/// stride, padding, dilation, groups (depthwise too), bias, 1-D and unbatched inputs,
/// transposed and channels-last layouts; eager's refusals where the plan has none.
#[test]
fn conv_plans_match_eager() {
    let mut rng = Rng(37);
    let mut checked = 0;
    // (dims, input shape, weight shape, stride, padding, dilation, groups, bias)
    let cases: &[(usize, &[i64], &[i64], i64, i64, i64, i64, bool)] = &[
        (2, &[2, 4, 9, 10], &[6, 4, 3, 3], 1, 0, 1, 1, true),
        (2, &[2, 4, 9, 10], &[6, 2, 3, 3], 2, 1, 1, 2, false),
        (2, &[1, 6, 8, 8], &[6, 1, 3, 3], 1, 1, 1, 6, true), // depthwise
        (2, &[3, 7, 7], &[4, 3, 2, 2], 1, 0, 2, 1, true),    // unbatched, dilated
        (2, &[1, 32, 26, 26], &[8, 32, 3, 3], 1, 0, 1, 1, true),
        (1, &[2, 3, 17], &[5, 3, 3], 2, 1, 1, 1, true),
        (1, &[4, 12], &[4, 2, 5], 1, 2, 2, 2, false),
        // eager refuses: channels that do not match the groups, a kernel larger than the input
        (2, &[1, 3, 8, 8], &[4, 2, 3, 3], 1, 0, 1, 1, false),
        (2, &[1, 1, 2, 2], &[1, 1, 3, 3], 1, 0, 1, 1, false),
    ];
    for &(dims, x_shape, w_shape, stride, padding, dilation, groups, bias) in cases {
        let n: i64 = x_shape.iter().product();
        let values = with_specials(&mut rng, n as usize, -2.0, 2.0, x_shape.len());
        let base = tensor(&values, x_shape);
        let w = tensor(&rng.vec(w_shape.iter().product::<i64>() as usize, -1.0, 1.0), w_shape);
        let b = bias.then(|| tensor(&rng.vec(w_shape[0] as usize, -1.0, 1.0), &[w_shape[0]]));
        let rank = x_shape.len() as i64;
        let mut layouts = vec![("contiguous", base.shallow_clone())];
        layouts.push(("transposed", base.transpose(rank - 1, rank - 2).contiguous().transpose(rank - 1, rank - 2)));
        if x_shape.len() == 4 {
            layouts.push(("channels_last", base.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])));
        }
        for (layout, x) in layouts {
            let what = format!("conv{dims}d {x_shape:?} * {w_shape:?} s={stride} p={padding} d={dilation} g={groups} bias={bias} on {layout}");
            let plan = ConvPlan::new(dims, &x.size(), &x.stride(), w_shape, b.as_ref().map(|t| t.size()[0]), &[stride], &[padding], &[dilation], groups);
            let eager = if dims == 2 {
                x.f_conv2d(&w, b.as_ref(), [stride], [padding], [dilation], groups)
            } else {
                x.f_conv1d(&w, b.as_ref(), [stride], [padding], [dilation], groups)
            };
            match (plan, eager) {
                (None, Err(_)) => {}
                (Some(plan), Ok(want)) => {
                    assert_eq!(plan.out_shape, want.size(), "{what}");
                    let storage = to_vec(&x.as_strided([n], [1], None::<i64>));
                    let got = plan.run_cpu(&storage, &to_vec(&w), b.as_ref().map(to_vec).as_deref());
                    let abs = |t: &Tensor| t.abs();
                    let scale = if dims == 2 {
                        abs(&x).conv2d(&abs(&w), b.as_ref().map(abs).as_ref(), [stride], [padding], [dilation], groups)
                    } else {
                        abs(&x).conv1d(&abs(&w), b.as_ref().map(abs).as_ref(), [stride], [padding], [dilation], groups)
                    };
                    for (i, ((&g, &e), &s)) in got.iter().zip(&to_vec(&want)).zip(&to_vec(&scale)).enumerate() {
                        let context = format!("{what} [{i}]: model {g:e} vs eager {e:e}");
                        assert_eq!(g.is_nan(), e.is_nan(), "NaN: {context}");
                        if e.is_infinite() || g.is_infinite() {
                            assert_eq!(g, e, "infinity: {context}");
                        } else if !e.is_nan() {
                            assert!((g - e).abs() <= 1e-5 * s + 1e-30, "{context} (scale {s:e})");
                        }
                    }
                    checked += 1;
                }
                (plan, eager) => panic!("{what}: plan {} but eager {}", if plan.is_some() { "exists" } else { "refused" }, if eager.is_ok() { "ran" } else { "refused" }),
            }
        }
    }
    println!("{checked} convolutions within the rounding of a sum of eager");
}

/// Batch norm on cuda:0 is composed from the add-number, rsqrt, sub, mul and add kernels
/// (`(x - mean)·rsqrt(var + eps)·w + b`, the channel vectors broadcast as `(C, 1, …)`); those
/// models composed the same way against eager CPU's batch norm, which computes `x·α + β`
/// (`α = w/sqrt(var + eps)`, `β = b - mean·α`): within `1e-6·(|x·α| + |mean·α| + |b|)`.
#[test]
fn composed_batch_norm_matches_eager() {
    let mut rng = Rng(41);
    for shape in [vec![4i64, 3, 5, 6], vec![8, 5], vec![2, 4, 9]] {
        let c = shape[1];
        let n: i64 = shape.iter().product();
        let x = tensor(&rng.vec(n as usize, -3.0, 3.0), &shape);
        let layouts = if shape.len() == 4 { vec![x.shallow_clone(), x.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])] } else { vec![x.shallow_clone()] };
        let (mean, var) = (tensor(&rng.vec(c as usize, -1.0, 1.0), &[c]), tensor(&rng.vec(c as usize, 0.0, 2.0), &[c]));
        let (w, b) = (tensor(&rng.vec(c as usize, -2.0, 2.0), &[c]), tensor(&rng.vec(c as usize, -1.0, 1.0), &[c]));
        let eps = 1e-5f64;
        for x in layouts {
            let storage = to_vec(&x.as_strided([n], [1], None::<i64>));
            let vector = ElementwisePlan::unary(&[c], &[1]).unwrap();
            let rstd = vector.run_pointwise_cpu(Pointwise::AddScalar, &to_vec(&var), &[], eps as f32, 0.0);
            let rstd = vector.run_pointwise_cpu(Pointwise::Rsqrt, &rstd, &[], 0.0, 0.0);
            let mut channel_shape = vec![c];
            channel_shape.resize(shape.len() - 1, 1);
            let channel_strides = vec![1i64; channel_shape.len()];
            let contiguous = torchlower_backend::cuda::kernels::plan::contiguous_strides(&shape);
            let step = |a: &[f32], a_strides: &[i64], v: &[f32], op: Binary| {
                ElementwisePlan::broadcast(&shape, a_strides, &channel_shape, &channel_strides).unwrap().run_binary_cpu(op, a, v)
            };
            let y = step(&storage, &x.stride(), &to_vec(&mean), Binary::Sub);
            let y = step(&y, &contiguous, &rstd, Binary::Mul);
            let y = step(&y, &contiguous, &to_vec(&w), Binary::Mul);
            let got = step(&y, &contiguous, &to_vec(&b), Binary::Add);
            let want = to_vec(&x.batch_norm(Some(&w), Some(&b), Some(&mean), Some(&var), false, 0.1, eps, false));
            let alpha = (&w / (&var + eps).sqrt()).view(channel_shape.as_slice());
            let scale = to_vec(&((&x * &alpha).abs() + (mean.view(channel_shape.as_slice()) * &alpha).abs() + b.view(channel_shape.as_slice()).abs()));
            for (i, ((&g, &e), &s)) in got.iter().zip(&want).zip(&scale).enumerate() {
                assert!((g - e).abs() <= 1e-6 * s + 1e-30, "batch_norm {shape:?} strides {:?} [{i}]: model {g:e} vs eager {e:e}", x.stride());
            }
        }
    }
}

/// Group norm on cuda:0 is our layer-norm kernel over each `(n, group)` line (no affine),
/// then the per-channel mul/add kernels; those models composed the same way against eager
/// CPU's group norm, within the layer-norm tolerance (`1e-5·(|y|+1)·(1 + |mean|/std)` of the
/// group's line, times `|w|` for the affine step).
#[test]
fn composed_group_norm_matches_eager() {
    let mut rng = Rng(43);
    for (shape, groups) in [(vec![2i64, 6, 5, 4], 3i64), (vec![3, 8, 7], 2), (vec![4, 6], 6), (vec![1, 32, 4, 4], 8)] {
        let (n, c) = (shape[0], shape[1]);
        let numel: i64 = shape.iter().product();
        let values = rng.vec(numel as usize, -3.0, 5.0);
        let x = tensor(&values, &shape);
        let (w, b) = (rng.vec(c as usize, -2.0, 2.0), rng.vec(c as usize, -1.0, 1.0));
        let len = numel / (n * groups);
        let plan = ReducePlan::along(&[n * groups, len], &[len, 1], -1, true).unwrap().unwrap();
        let normalized = plan.run_norm_cpu(&values, None, None, 1e-5, Norm::Layer);
        let mut channel_shape = vec![c];
        channel_shape.resize(shape.len() - 1, 1);
        let channel_strides = vec![1i64; channel_shape.len()];
        let contiguous = torchlower_backend::cuda::kernels::plan::contiguous_strides(&shape);
        let step = |a: &[f32], v: &[f32], op: Binary| ElementwisePlan::broadcast(&shape, &contiguous, &channel_shape, &channel_strides).unwrap().run_binary_cpu(op, a, v);
        let got = step(&step(&normalized, &w, Binary::Mul), &b, Binary::Add);
        let (wt, bt) = (tensor(&w, &[c]), tensor(&b, &[c]));
        let want = to_vec(&x.group_norm(groups, Some(&wt), Some(&bt), 1e-5, false));
        // the line's conditioning `1 + |mean|·rstd` (eager's `x·a + (b - mean·a)` cancels by
        // that much; rstd includes eps, so a one-value group counts too), times the channel's |w|
        let per_channel = (numel / n / c) as usize;
        let conditions: Vec<f64> = values
            .chunks(len as usize)
            .flat_map(|line| {
                let m = line.iter().map(|&v| v as f64).sum::<f64>() / line.len() as f64;
                let var = line.iter().map(|&v| (v as f64 - m).powi(2)).sum::<f64>() / line.len() as f64;
                std::iter::repeat_n(1.0 + m.abs() / (var + 1e-5).sqrt(), line.len())
            })
            .enumerate()
            .map(|(i, k)| k * (w[(i / per_channel) % c as usize].abs() as f64).max(1.0))
            .collect();
        assert_norm_close(&got, &want, &conditions, &format!("group_norm {shape:?} groups={groups}"));
    }
}

/// The norms on cuda:0 are composed from our kernels: `Σ|x|` and `sqrt(Σx²)` (abs/square,
/// the sum kernel over the dims' lines, sqrt), and `F.normalize` divides by their
/// `clamp_min(eps)`; those models composed the same way against eager CPU's
/// `linalg.vector_norm` and `F.normalize`, within the rounding of a sum (`1e-5` relative).
#[test]
fn composed_norms_match_eager() {
    let mut rng = Rng(47);
    for (shape, dims) in [(vec![7i64, 300], vec![-1i64]), (vec![5, 6, 7], vec![0, 2]), (vec![4, 9], vec![])] {
        let n: i64 = shape.iter().product();
        let values = rng.vec(n as usize, -3.0, 3.0);
        let x = tensor(&values, &shape);
        let plan = ElementwisePlan::unary(&shape, &torchlower_backend::cuda::kernels::plan::contiguous_strides(&shape)).unwrap();
        for ord in [1.0f64, 2.0] {
            let terms = plan.run_unary_cpu(if ord == 1.0 { Unary::Abs } else { Unary::Square }, &values);
            let terms_t = tensor(&terms, &shape);
            let over = ReduceDims::new(&shape, &dims, false).unwrap();
            let (lines, storage) = lines_of(&terms_t, &terms, &over, false);
            let sums = lines.run_sum_cpu(&storage, 1.0);
            let got: Vec<f32> = if ord == 2.0 { sums.iter().map(|&s| Unary::Sqrt.eval(s)).collect() } else { sums };
            let want = to_vec(&x.norm_scalaropt_dim(ord, dims.as_slice(), false));
            assert_eq!(got.len(), want.len(), "vector_norm {shape:?} {dims:?} ord={ord}");
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-5 * w.abs(), "vector_norm {shape:?} dims={dims:?} ord={ord}: {g} vs {w}");
            }
        }
    }
    // normalize over the last dim: the composed model of x / max(‖x‖, eps) per row
    let values = rng.vec(6 * 40, -2.0, 2.0);
    let x = tensor(&values, &[6, 40]);
    let want = to_vec(&(&x / x.norm_scalaropt_dim(2.0, [-1].as_slice(), true).clamp_min(1e-12)));
    for (row, chunk) in values.chunks(40).enumerate() {
        let plan = ReducePlan::along(&[1, 40], &[40, 1], -1, false).unwrap().unwrap();
        let squares: Vec<f32> = chunk.iter().map(|&v| Unary::Square.eval(v)).collect();
        let norm = Unary::Sqrt.eval(plan.run_sum_cpu(&squares, 1.0)[0]).max(1e-12);
        for (i, &v) in chunk.iter().enumerate() {
            let (g, w) = (Binary::Div.eval(v, norm), want[row * 40 + i]);
            assert!((g - w).abs() <= 1e-6 * w.abs().max(1e-3), "normalize [{row}, {i}]: {g} vs {w}");
        }
    }
}

/// `prod` on cuda:0 is the fold kernel with `mul.rn`: its model on permuted layouts against
/// eager CPU (another multiplication order: within `4e-7·len` relative), NaN/±inf/0 where
/// eager has them, 1 for an empty dim; and `glu`'s composition (`a · sigmoid(b)` of the two
/// halves, our sigmoid and mul models) against eager's.
#[test]
fn prod_and_glu_models_match_eager() {
    use torchlower_backend::cuda::kernels::plan::contiguous_strides;
    let mut rng = Rng(53);
    for (shape, dim) in [(vec![7i64, 30], 1i64), (vec![30, 7], 0), (vec![3, 5, 9], -1), (vec![4, 0], 1)] {
        let n: i64 = shape.iter().product();
        let mut values = rng.vec(n as usize, 0.6, 1.5);
        if n > 40 {
            (values[3], values[40], values[41]) = (f32::NAN, f32::INFINITY, 0.0);
        }
        for transposed in [false, true] {
            let x = if transposed && shape.len() == 2 { tensor(&values, &[shape[1], shape[0]]).transpose(0, 1) } else { tensor(&values, &shape) };
            let storage = to_vec(&x.as_strided([n], [1], None::<i64>));
            let plan = ReducePlan::along(&x.size(), &x.stride(), dim, false).unwrap().expect("a plan");
            let got = plan.run_fold_cpu(&storage, Fold::Prod, 1.0);
            let want = to_vec(&x.prod_dim_int(dim, false, None::<Kind>));
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                let what = format!("prod {shape:?} dim={dim} transposed={transposed}: {g} vs {w}");
                assert_eq!(g.is_nan(), w.is_nan(), "{what}");
                if !w.is_nan() {
                    assert!(g == w || (g - w).abs() <= 4e-7 * plan.len as f32 * w.abs(), "{what}");
                }
            }
        }
    }
    let values = with_specials(&mut rng, 6 * 8, -4.0, 4.0, 1);
    let x = tensor(&values, &[6, 8]);
    let (a, b) = (x.narrow(1, 0, 4), x.narrow(1, 4, 4));
    let half = ElementwisePlan::unary(&[6, 4], &b.stride()).unwrap();
    let sigmoid = half.run_unary_cpu(Unary::Sigmoid, &values[4..]);
    let got = ElementwisePlan::broadcast(&[6, 4], &a.stride(), &[6, 4], &contiguous_strides(&[6, 4])).unwrap().run_binary_cpu(Binary::Mul, &values, &sigmoid);
    let want = to_vec(&x.glu(1));
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.is_nan(), w.is_nan(), "glu [{i}]: {g} vs {w}");
        if !w.is_nan() && !w.is_infinite() {
            assert!(ulps(g, w) <= 3 || (g - w).abs() <= 1e-30, "glu [{i}]: {g} vs {w}");
        }
    }
}
