//! `tl::fused` against the op-by-op chain of eager libtorch kernels (through tch, the same
//! kernels Python eager runs): values within rtol 1e-5 / atol 1e-6, identical NaN and ±Inf
//! positions, identical signs of zeros, identical shapes and errors, inputs untouched. Every
//! pattern runs on random data and on the special values `-inf, -3, -1, -0, 0, 1, 3, inf,
//! nan`, at the benchmark sizes and at degenerate ones, on the direct path and on the tch
//! fallback path (non-contiguous, float64, rank-3 inputs).

use tch::{Device, Kind, Tensor};
use torchlower_backend::fused::{self, Binary, Reduce, Step, Unary};

const SPECIALS: [f32; 9] = [f32::NEG_INFINITY, -3.0, -1.0, -0.0, 0.0, 1.0, 3.0, f32::INFINITY, f32::NAN];

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
    fn normal_ish(&mut self) -> f32 {
        // sum of uniforms: roughly normal, enough spread for sign changes and cancellation
        (0..4).map(|_| (self.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5).sum::<f32>() * 2.0
    }
    fn tensor(&mut self, shape: &[i64], special: bool) -> Tensor {
        // the tests run on several threads: eager's references must not race on MKL VML's
        // first calls (`torchlower_backend::vml`)
        torchlower_backend::vml::warm_up();
        let n: i64 = shape.iter().product();
        let values: Vec<f32> = (0..n)
            .map(|_| if special { SPECIALS[(self.next() % 9) as usize] } else { self.normal_ish() })
            .collect();
        Tensor::from_slice(&values).reshape(shape)
    }
}

fn values(t: &Tensor) -> Vec<f32> {
    Vec::<f32>::try_from(t.contiguous().view([-1]).to_kind(Kind::Float)).expect("float tensor")
}

/// Asserts eager parity of `got` with `want` (see the module doc).
fn assert_parity(got: &Tensor, want: &Tensor, what: &str) {
    assert_eq!(got.size(), want.size(), "{what}: shape");
    assert_eq!(got.kind(), want.kind(), "{what}: dtype");
    assert_eq!(got.device(), Device::Cpu, "{what}: device");
    assert!(!got.requires_grad(), "{what}: requires_grad");
    for (i, (g, w)) in values(got).iter().zip(values(want)).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() || w == 0.0 {
            g.to_bits() == w.to_bits()
        } else {
            (g - w).abs() <= 1e-6 + 1e-5 * w.abs()
        };
        assert!(ok, "{what}: element {i}: fused {g:?} ({:#x}), eager {w:?} ({:#x})", g.to_bits(), w.to_bits());
    }
}

fn eager_acts(mut t: Tensor, acts: &[Unary]) -> Tensor {
    for op in acts {
        t = match op {
            Unary::Relu => t.relu(),
            Unary::Sigmoid => t.sigmoid(),
            Unary::Tanh => t.tanh(),
            Unary::Gelu => t.gelu("none"),
            Unary::Abs => t.abs(),
            Unary::Neg => t.neg(),
            Unary::Square => t.square(),
            Unary::Exp => t.exp(),
            Unary::Log => t.log(),
            Unary::Sqrt => t.sqrt(),
            Unary::Silu => t.silu(),
        };
    }
    t
}

fn eager_reduce(t: Tensor, reduce: Option<Reduce>) -> Tensor {
    match reduce {
        None => t,
        Some(Reduce::Sum { dim, keepdim }) => t.sum_dim_intlist(Some(&[dim][..]), keepdim, None::<Kind>),
        Some(Reduce::Mean { dim, keepdim }) => t.mean_dim(Some(&[dim][..]), keepdim, None::<Kind>),
    }
}

const ACT_CHAINS: [&[Unary]; 8] = [
    &[],
    &[Unary::Relu],
    &[Unary::Sigmoid],
    &[Unary::Tanh],
    &[Unary::Gelu],
    &[Unary::Relu, Unary::Sigmoid],
    &[Unary::Exp, Unary::Log, Unary::Sqrt],
    &[Unary::Abs, Unary::Neg, Unary::Square],
];

const REDUCTIONS: [Option<Reduce>; 6] = [
    None,
    Some(Reduce::Mean { dim: 1, keepdim: false }),
    Some(Reduce::Sum { dim: 1, keepdim: true }),
    Some(Reduce::Mean { dim: -1, keepdim: true }),
    Some(Reduce::Sum { dim: 0, keepdim: false }),
    Some(Reduce::Mean { dim: -2, keepdim: true }),
];

/// (batch, in, out): the benchmark cells and degenerate shapes.
const SHAPES: [(i64, i64, i64); 10] =
    [(1, 32, 32), (1, 128, 64), (8, 64, 64), (16, 128, 64), (64, 128, 64), (256, 256, 128), (3, 1, 5), (1, 1, 1), (5, 2, 9), (2, 7, 1)];

fn snapshot(ts: &[&Tensor]) -> Vec<Vec<u32>> {
    ts.iter().map(|t| values(t).iter().map(|v| v.to_bits()).collect()).collect()
}

#[test]
fn linear_epilogue_matches_eager() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(1);
    for special in [false, true] {
        for &(m, k, n) in &SHAPES {
            let (x, w, b) = (rng.tensor(&[m, k], special), rng.tensor(&[n, k], special), rng.tensor(&[n], special));
            let before = snapshot(&[&x, &w, &b]);
            for bias in [Some(&b), None] {
                for acts in ACT_CHAINS {
                    for reduce in REDUCTIONS {
                        let got = fused::linear_epilogue(&x, &w, bias, acts, reduce).expect("fused");
                        let want = eager_reduce(eager_acts(x.linear(&w, bias), acts), reduce);
                        let what = format!("linear {m}x{k}x{n} bias={} {acts:?} {reduce:?} special={special}", bias.is_some());
                        assert_parity(&got, &want, &what);
                    }
                }
            }
            assert_eq!(before, snapshot(&[&x, &w, &b]), "inputs changed");
        }
    }
}

/// Sigmoid and SiLU epilogues are eager's bits, not just within tolerance, at lengths on both
/// sides of every vector width and tail (eager's scalar loop takes the last `len mod 2·lanes`
/// elements, and its bits differ from the vectorised loop's): whichever path `calibrate`
/// chose here, our model with its scalar tail or libtorch's kernel.
#[test]
fn sigmoid_and_silu_epilogues_are_eagers_bits() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(41);
    for special in [false, true] {
        for (m, k, n) in [(1, 16, 1), (1, 16, 5), (1, 64, 16), (1, 64, 17), (1, 32, 31), (1, 32, 33), (3, 8, 11), (1, 64, 170), (8, 64, 170), (2, 16, 683), (5, 8, 1000), (40, 8, 900)] {
            let (x, w, b) = (rng.tensor(&[m, k], special), rng.tensor(&[n, k], special) * 4.0, rng.tensor(&[n], special));
            for acts in [&[Unary::Silu][..], &[Unary::Sigmoid], &[Unary::Relu, Unary::Silu]] {
                let got = fused::linear_epilogue(&x, &w, Some(&b), acts, None).expect("fused");
                let want = eager_acts(x.linear(&w, Some(&b)), acts);
                for (i, (g, e)) in values(&got).iter().zip(values(&want)).enumerate() {
                    let same = g.to_bits() == e.to_bits() || (g.is_nan() && e.is_nan());
                    assert!(same, "linear {m}x{k}x{n} {acts:?} special={special}: element {i}: fused {g:?}, eager {e:?}");
                }
            }
        }
    }
}

/// A lone sigmoid or SiLU (`fused::unary`) and an activation chain on a fresh tensor
/// (`fused::acts_in_place`, a convolution's result) are eager's bits too, at lengths on both
/// sides of every width and tail, up to and past the single-loop limit, at rank 0 to 4.
#[test]
fn lone_and_in_place_sigmoid_and_silu_are_eagers_bits() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(43);
    let shapes: [&[i64]; 13] = [&[], &[1], &[5], &[16], &[17], &[31], &[33], &[4, 170], &[2, 683], &[3, 5461], &[2, 8, 5, 7], &[1, 8, 64, 64], &[1, 3, 100, 120]];
    for special in [false, true] {
        for shape in shapes {
            let x = rng.tensor(shape, special) * 8.0;
            let before = snapshot(&[&x]);
            for acts in [&[Unary::Silu][..], &[Unary::Sigmoid], &[Unary::Relu, Unary::Silu], &[Unary::Silu, Unary::Tanh]] {
                let want = eager_acts(x.shallow_clone(), acts);
                let mut outputs = vec![("acts_in_place", fused::acts_in_place(x.copy(), acts).expect("fused"))];
                if let [op] = acts {
                    outputs.push(("unary", fused::unary(*op, &x).expect("fused")));
                }
                for (path, got) in outputs {
                    assert_eq!(got.size(), want.size(), "{path} {shape:?} {acts:?}: shape");
                    for (i, (g, e)) in values(&got).iter().zip(values(&want)).enumerate() {
                        let same = g.to_bits() == e.to_bits() || (g.is_nan() && e.is_nan());
                        assert!(same, "{path} {shape:?} {acts:?} special={special}: element {i}: fused {g:?}, eager {e:?}");
                    }
                }
            }
            assert_eq!(before, snapshot(&[&x]), "input changed");
        }
    }
}

/// Batched products of rank 3 and 4 (attention's `q @ k.transpose(-2, -1)` and `p @ v`) are
/// eager's bits: at sequence lengths and widths around the small kernels' limits, tiny ones
/// (eager's own loop), with bias and acts; broadcast batches, other layouts and mismatched
/// sizes keep libtorch's results and errors.
#[test]
fn batched_products_are_eagers_bits() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(47);
    let same_bits = |got: &Tensor, want: &Tensor, what: &str| {
        assert_eq!(got.size(), want.size(), "{what}: shape");
        for (i, (g, e)) in values(got).iter().zip(values(want)).enumerate() {
            assert!(g.to_bits() == e.to_bits() || (g.is_nan() && e.is_nan()), "{what}: element {i}: fused {g:?}, eager {e:?}");
        }
    };
    for special in [false, true] {
        for batch in [&[1i64][..], &[3], &[2, 4]] {
            for (t, d) in [(1, 8), (2, 3), (16, 64), (16, 32), (7, 17), (128, 64), (5, 200)] {
                let shape = |rows: i64, cols: i64| batch.iter().copied().chain([rows, cols]).collect::<Vec<i64>>();
                let (q, k, v) = (rng.tensor(&shape(t, d), special), rng.tensor(&shape(t, d), special), rng.tensor(&shape(t, d), special));
                let before = snapshot(&[&q, &k, &v]);
                let kt = k.transpose(-2, -1);
                let scores = fused::matmul_epilogue(&q, &kt, None, &[], None).expect("fused");
                let what = format!("q @ kᵀ {batch:?} t={t} d={d} special={special}");
                same_bits(&scores, &q.matmul(&kt), &what);
                let p = scores.softmax(-1, Kind::Float);
                same_bits(&fused::matmul_epilogue(&p, &v, None, &[], None).expect("fused"), &p.matmul(&v), &format!("p @ v {what}"));
                let bias = rng.tensor(&[t], special);
                let got = fused::matmul_epilogue(&q, &kt, Some(&bias), &[Unary::Relu, Unary::Silu], None).expect("fused");
                same_bits(&got, &(q.matmul(&kt) + &bias).relu().silu(), &format!("relu(silu(q @ kᵀ + b)) {what}"));
                assert_eq!(before, snapshot(&[&q, &k, &v]), "inputs changed");
            }
        }
    }
    // broadcast batch, a non-contiguous left operand, a permuted right one: libtorch's path
    let (a, b) = (rng.tensor(&[3, 16, 32], false), rng.tensor(&[1, 32, 16], false));
    same_bits(&fused::matmul_epilogue(&a, &b, None, &[], None).expect("fused"), &a.matmul(&b), "broadcast batch");
    let strided = rng.tensor(&[3, 32, 16], false).transpose(-2, -1);
    same_bits(&fused::matmul_epilogue(&strided, &b.expand([3, 32, 16], false), None, &[], None).expect("fused"), &strided.matmul(&b.expand([3, 32, 16], false)), "strided");
    let permuted = rng.tensor(&[16, 3, 32], false).permute([1, 2, 0]);
    same_bits(&fused::matmul_epilogue(&a, &permuted, None, &[], None).expect("fused"), &a.matmul(&permuted), "permuted");
    let mismatched = rng.tensor(&[3, 31, 16], false);
    let fused_error = error_text(fused::matmul_epilogue(&a, &mismatched, None, &[], None));
    let eager_error = error_text(torchlower_backend::ops::matmul(&a, &mismatched));
    assert_eq!(fused_error, eager_error, "mismatched inner sizes");
}

/// `fused::scale` in place on a fresh float32 tensor is eager's `t * s` / `t / s` bit for
/// bit (the number rounded to float32 first, as TensorIterator converts it); other dtypes and
/// layouts take libtorch's op, whose promotion (int64 times a float is float32) is eager's.
#[test]
fn scale_is_eagers_mul_and_div() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(53);
    let same = |got: &Tensor, want: &Tensor, what: &str| {
        assert_eq!((got.size(), got.kind()), (want.size(), want.kind()), "{what}: shape and dtype");
        let (g, w) = (got.to_kind(Kind::Double).flatten(0, -1), want.to_kind(Kind::Double).flatten(0, -1));
        let (g, w) = (Vec::<f64>::try_from(&g).expect("values"), Vec::<f64>::try_from(&w).expect("values"));
        for (i, (a, b)) in g.iter().zip(&w).enumerate() {
            assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "{what}: element {i}: fused {a:?}, eager {b:?}");
        }
    };
    let floats = [0.125, -0.0, 0.0, f64::INFINITY, f64::NAN, 1e-45, 3.4e38, 1e300, -1.0 / 3.0];
    let ints = [0i64, 3, -7, (1 << 40) + 1, i64::MAX];
    for shape in [&[1i64, 1][..], &[3, 16, 16], &[2, 4, 16, 16], &[70_000]] {
        for special in [false, true] {
            let t = rng.tensor(shape, special);
            for s in floats {
                let what = format!("{shape:?} special={special} s={s}");
                same(&fused::scale(t.copy(), Binary::Mul, s).expect("mul"), &(&t * s), &format!("mul {what}"));
                same(&fused::scale(t.copy(), Binary::Div, s).expect("div"), &(&t / s), &format!("div {what}"));
            }
            for n in ints {
                let what = format!("{shape:?} special={special} n={n}");
                same(&fused::scale(t.copy(), Binary::Mul, n).expect("mul"), &t.f_mul_scalar(n).expect("eager"), &format!("mul {what}"));
                same(&fused::scale(t.copy(), Binary::Div, n).expect("div"), &t.f_div_scalar(n).expect("eager"), &format!("div {what}"));
            }
        }
    }
    // libtorch's op: a transposed (non-contiguous) tensor, int64 with an int and with a float
    let strided = rng.tensor(&[5, 7], true).transpose(0, 1);
    same(&fused::scale(strided.shallow_clone(), Binary::Mul, 0.5).expect("mul"), &(&strided * 0.5), "strided");
    let ints_tensor = Tensor::arange(20, (Kind::Int64, Device::Cpu)) - 10;
    same(&fused::scale(ints_tensor.copy(), Binary::Mul, 3i64).expect("mul"), &ints_tensor.f_mul_scalar(3i64).expect("eager"), "int64 * int");
    same(&fused::scale(ints_tensor.copy(), Binary::Mul, 0.5).expect("mul"), &(&ints_tensor * 0.5), "int64 * float");
    same(&fused::scale(ints_tensor.copy(), Binary::Div, 3i64).expect("div"), &ints_tensor.f_div_scalar(3i64).expect("eager"), "int64 / int");
    assert!(fused::scale(ints_tensor.copy(), Binary::Add, 1.0).is_err(), "only Mul and Div");
}

#[test]
fn matmul_epilogue_matches_eager() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(2);
    for special in [false, true] {
        for &(m, k, n) in &SHAPES {
            let (x, w) = (rng.tensor(&[m, k], special), rng.tensor(&[k, n], special));
            let biases = [rng.tensor(&[n], special), rng.tensor(&[m, n], special), rng.tensor(&[m, 1], special)];
            let before = snapshot(&[&x, &w]);
            for bias in [None, Some(&biases[0]), Some(&biases[1]), Some(&biases[2])] {
                for acts in ACT_CHAINS {
                    for reduce in REDUCTIONS {
                        let got = fused::matmul_epilogue(&x, &w, bias, acts, reduce).expect("fused");
                        let product = x.matmul(&w);
                        let biased = match bias {
                            Some(b) => product + b,
                            None => product,
                        };
                        let want = eager_reduce(eager_acts(biased, acts), reduce);
                        let what = format!("matmul {m}x{k}x{n} bias={:?} {acts:?} {reduce:?} special={special}", bias.map(|b| b.size()));
                        assert_parity(&got, &want, &what);
                    }
                }
            }
            assert_eq!(before, snapshot(&[&x, &w]), "inputs changed");
        }
    }
}

/// The exact `x @ w` product is libtorch's own BLAS call, so even the signs of zeros that
/// MKL's small-size kernels produce (e.g. `-0.0` for an inner size of 1) are eager's.
#[test]
fn all_negative_zero_products_keep_eager_signs() {
    let _guard = tch::no_grad_guard();
    for &(m, k, n) in &[(1, 1, 4), (2, 1, 3), (1, 4, 4), (8, 1, 8), (1, 32, 32), (64, 128, 64)] {
        let x = Tensor::full([m, k], -0.0, (Kind::Float, Device::Cpu));
        let w_lin = Tensor::ones([n, k], (Kind::Float, Device::Cpu));
        let w_mm = Tensor::ones([k, n], (Kind::Float, Device::Cpu));
        let b = Tensor::full([n], -0.0, (Kind::Float, Device::Cpu));
        for bias in [Some(&b), None] {
            let got = fused::linear_epilogue(&x, &w_lin, bias, &[], None).expect("fused");
            assert_parity(&got, &x.linear(&w_lin, bias), &format!("linear -0 {m}x{k}x{n}"));
            let got = fused::matmul_epilogue(&x, &w_mm, bias, &[Unary::Relu], None).expect("fused");
            let want = match bias {
                Some(b) => x.matmul(&w_mm) + b,
                None => x.matmul(&w_mm),
            };
            assert_parity(&got, &want.relu(), &format!("matmul -0 {m}x{k}x{n}"));
        }
    }
}

#[test]
fn fallback_inputs_keep_eager_semantics() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(3);
    let x = rng.tensor(&[6, 5], false);
    let w = rng.tensor(&[4, 5], false);
    let b = rng.tensor(&[4], false);
    let transposed_x = rng.tensor(&[5, 6], false).tr(); // non-contiguous
    let reduce = Some(Reduce::Mean { dim: 1, keepdim: false });
    let cases: Vec<(Tensor, Tensor, Tensor)> = vec![
        (transposed_x, w.shallow_clone(), b.shallow_clone()),
        (x.to_kind(Kind::Double), w.to_kind(Kind::Double), b.to_kind(Kind::Double)),
        (x.reshape([3, 2, 5]), w.shallow_clone(), b.shallow_clone()),
        (x.select(0, 0), w.shallow_clone(), b.shallow_clone()), // rank-1 input
    ];
    for (x, w, b) in cases {
        let got = fused::linear_epilogue(&x, &w, Some(&b), &[Unary::Relu], reduce);
        let want = torchlower_backend::ops::linear(&x, &w, Some(&b))
            .and_then(|y| torchlower_backend::ops::relu(&y))
            .and_then(|y| torchlower_backend::ops::mean_dim(&y, 1, false));
        match (got, want) {
            (Ok(got), Ok(want)) => {
                assert_eq!((got.size(), got.kind()), (want.size(), want.kind()), "fallback {:?}", x.size());
                assert!(got.allclose(&want, 1e-5, 1e-6, false), "fallback {:?}", x.size());
            }
            (Err(got), Err(want)) => assert_eq!(got.to_string(), want.to_string()),
            (got, want) => panic!("fallback {:?}: fused {:?} vs eager {:?}", x.size(), got.is_ok(), want.is_ok()),
        }
    }
}

fn error_text<T>(result: Result<T, torchlower_backend::Error>) -> String {
    match result {
        Ok(_) => "no error".to_string(),
        Err(error) => error.to_string(),
    }
}

#[test]
fn errors_are_eagers() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(4);
    let x = rng.tensor(&[3, 4], false);
    let w_bad = rng.tensor(&[5, 6], false);
    let eager = error_text(torchlower_backend::ops::linear(&x, &w_bad, None));
    assert!(eager.contains("shapes cannot be multiplied"), "{eager}");
    assert_eq!(error_text(fused::linear_epilogue(&x, &w_bad, None, &[Unary::Relu], None)), eager);
    let eager = error_text(torchlower_backend::ops::matmul(&x, &w_bad));
    assert_eq!(error_text(fused::matmul_epilogue(&x, &w_bad, None, &[], None)), eager);
    let bad_dim = Some(Reduce::Mean { dim: 2, keepdim: false });
    let w = rng.tensor(&[5, 4], false);
    let eager = error_text(torchlower_backend::ops::mean_dim(&x.linear(&w, None::<&Tensor>), 2, false));
    assert!(eager.contains("Dimension out of range"), "{eager}");
    assert_eq!(error_text(fused::linear_epilogue(&x, &w, None, &[], bad_dim)), eager);
    assert_eq!(error_text(fused::reduce(&x, bad_dim.expect("some"))), eager);
    let bias_bad = rng.tensor(&[7], false);
    let w_sq = rng.tensor(&[4, 4], false);
    let eager = error_text(torchlower_backend::ops::add(&x.matmul(&w_sq), &bias_bad));
    assert_eq!(error_text(fused::matmul_epilogue(&x, &w_sq, Some(&bias_bad), &[], None)), eager);
}

/// The seed's weight-tied alternating loop, op by op.
/// The seed's alternating loop, op by op in eager libtorch (without its final mean).
fn eager_hidden(x: &Tensor, w: &Tensor, b: &Tensor, depth: i64, phase: i64) -> Tensor {
    let mut hidden = x.shallow_clone();
    for layer in 0..depth {
        let pre = hidden.matmul(w) + b;
        hidden = if (layer + phase) % 2 == 0 { pre.relu() } else { pre.sigmoid() };
    }
    hidden
}

fn eager_loop(x: &Tensor, w: &Tensor, b: &Tensor, depth: i64, phase: i64) -> Tensor {
    eager_hidden(x, w, b, depth, phase).mean_dim(Some(&[1i64][..]), false, None::<Kind>)
}

/// A layer loop's operands; the weight is scaled so that activations neither saturate nor
/// vanish over 16 layers.
fn loop_operands(rng: &mut Rng, batch: i64, width: i64, special: bool) -> (Tensor, Tensor, Tensor) {
    let x = rng.tensor(&[batch, width], special);
    let w = rng.tensor(&[width, width], special) * (1.0 / (width as f64).sqrt());
    (x, w, rng.tensor(&[width], special))
}

fn fused_loop(x: &Tensor, w: &Tensor, b: &Tensor, depth: i64, phase: i64) -> Result<Tensor, torchlower_backend::Error> {
    const RELU: &[Unary] = &[Unary::Relu];
    const SIGMOID: &[Unary] = &[Unary::Sigmoid];
    let hidden = fused::iterate_matmul_epilogue(x, w, Some(b), 0..depth, |layer| {
        Ok(if (layer + phase) % 2 == 0 { RELU } else { SIGMOID })
    })?;
    fused::reduce(&hidden, Reduce::Mean { dim: 1, keepdim: false })
}

#[test]
fn weight_tied_loop_matches_eager() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(5);
    let cells = [(1, 16, 4, 0), (1, 32, 8, 1), (4, 32, 16, 0), (8, 64, 16, 1), (32, 128, 8, 0), (64, 128, 16, 1), (3, 5, 0, 0), (3, 5, 1, 1), (2, 1, 3, 0)];
    for special in [false, true] {
        for &(batch, width, depth, phase) in &cells {
            let (x, w, b) = loop_operands(&mut rng, batch, width, special);
            let before = snapshot(&[&x, &w, &b]);
            let got = fused_loop(&x, &w, &b, depth, phase).expect("fused");
            let want = eager_loop(&x, &w, &b, depth, phase);
            assert_parity(&got, &want, &format!("loop {batch}x{width} depth {depth} phase {phase} special={special}"));
            assert_eq!(before, snapshot(&[&x, &w, &b]), "inputs changed");
        }
    }
    // Shape errors surface at the first product, as in eager; scalar errors stop the loop.
    let x = rng.tensor(&[2, 3], false);
    let w = rng.tensor(&[4, 4], false);
    let b = rng.tensor(&[4], false);
    let eager = error_text(torchlower_backend::ops::matmul(&x, &w));
    assert_eq!(error_text(fused_loop(&x, &w, &b, 2, 0)), eager);
    let w = rng.tensor(&[3, 3], false);
    let b = rng.tensor(&[3], false);
    let stopped = fused::iterate_matmul_epilogue(&x, &w, Some(&b), 0..4, |layer| {
        if layer == 2 { Err(torchlower_backend::Error::Overflow("integer overflow")) } else { Ok(&[Unary::Tanh][..]) }
    });
    assert_eq!(error_text(stopped), "integer overflow");
    // Zero iterations: the input itself.
    let same = fused::iterate_matmul_epilogue(&x, &w, Some(&b), 0..0, |_| Ok(&[][..])).expect("fused");
    assert_eq!(same.data_ptr(), x.data_ptr());
}

/// The loop and its following reduction as one call, for every reduction form (including
/// dims a matrix does not have: eager's error, after the loop's own errors).
#[test]
fn weight_tied_loop_then_reduce_matches_eager() {
    const RELU: &[Unary] = &[Unary::Relu];
    const SIGMOID: &[Unary] = &[Unary::Sigmoid];
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(17);
    let cells = [(1, 16, 4, 0), (4, 32, 16, 0), (8, 64, 3, 1), (3, 5, 0, 0), (3, 5, 1, 1), (2, 1, 3, 0)];
    for special in [false, true] {
        for &(batch, width, depth, phase) in &cells {
            let (x, w, b) = loop_operands(&mut rng, batch, width, special);
            let before = snapshot(&[&x, &w, &b]);
            let acts = |layer: i64| Ok(if (layer + phase) % 2 == 0 { RELU } else { SIGMOID });
            for r in REDUCTIONS.into_iter().flatten().chain([Reduce::Sum { dim: 2, keepdim: false }]) {
                let got = fused::iterate_matmul_reduce(&x, &w, Some(&b), 0..depth, acts, r);
                let hidden = eager_hidden(&x, &w, &b, depth, phase);
                let what = format!("loop+{r:?} {batch}x{width} depth {depth} phase {phase} special={special}");
                match r.dim() {
                    2 => assert_eq!(error_text(got), error_text(torchlower_backend::ops::sum_dim(&hidden, 2, false)), "{what}"),
                    _ => assert_parity(&got.expect("fused"), &eager_reduce(hidden, Some(r)), &what),
                }
            }
            assert_eq!(before, snapshot(&[&x, &w, &b]), "inputs changed");
        }
    }
    // The loop's shape error comes first.
    let (x, w, b) = (rng.tensor(&[2, 3], false), rng.tensor(&[4, 4], false), rng.tensor(&[4], false));
    let got = fused::iterate_matmul_reduce(&x, &w, Some(&b), 0..2, |_| Ok(RELU), Reduce::Sum { dim: 5, keepdim: false });
    assert_eq!(error_text(got), error_text(torchlower_backend::ops::matmul(&x, &w)));
}

#[test]
fn reduce_matches_eager() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(6);
    for special in [false, true] {
        // Both sides of where our own sum loops run (up to 4096 elements, at most 8 rows along
        // the last dim, at least 2 down the columns; libtorch's kernel on the buffer otherwise).
        for shape in [
            vec![7i64], vec![1, 1], vec![5, 3], vec![64, 128], vec![3, 1000], vec![4096], vec![4097], vec![64, 64], vec![65, 64],
            vec![100, 90], vec![3, 5000], vec![8, 512], vec![9, 100], vec![1, 4096], vec![2, 2048],
        ] {
            let t = rng.tensor(&shape, special);
            for reduce in REDUCTIONS.iter().flatten() {
                let dim = reduce.dim();
                if shape.len() == 1 && !(dim == 0 || dim == -1) {
                    continue;
                }
                let got = fused::reduce(&t, *reduce).expect("fused");
                assert_parity(&got, &eager_reduce(t.shallow_clone(), Some(*reduce)), &format!("reduce {shape:?} {reduce:?}"));
            }
        }
    }
    let all_negative_zero = Tensor::full([4, 9], -0.0, (Kind::Float, Device::Cpu));
    for reduce in REDUCTIONS.iter().flatten() {
        let got = fused::reduce(&all_negative_zero, *reduce).expect("fused");
        assert_parity(&got, &eager_reduce(all_negative_zero.shallow_clone(), Some(*reduce)), "reduce -0");
    }
}

#[test]
fn elementwise_chains_match_eager() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(7);
    use Step::{Binary as B, Load, Unary as U};
    // ((a + b).relu() * c - a) / b   and   sigmoid(a) * tanh(bias) + gelu(c)
    let program_1 = [Load(0), Load(1), B(Binary::Add), U(Unary::Relu), Load(2), B(Binary::Mul), Load(0), B(Binary::Sub), Load(1), B(Binary::Div)];
    let program_2 = [Load(0), U(Unary::Sigmoid), Load(1), U(Unary::Tanh), B(Binary::Mul), Load(2), U(Unary::Gelu), B(Binary::Add)];
    // a + b * c (a residual with a LayerScale: two lazy operands into one slot) and
    // b - exp(a) * c (a lazy row on the left of a computed slot)
    let program_3 = [Load(0), Load(1), Load(2), B(Binary::Mul), B(Binary::Add)];
    let program_4 = [Load(1), Load(0), U(Unary::Exp), Load(2), B(Binary::Mul), B(Binary::Sub)];
    // a / sigmoid(c): SqueezeExcitation's gate (c one value per row) on an operand read in place
    let program_5 = [Load(0), Load(2), U(Unary::Sigmoid), B(Binary::Div)];
    let bits = |t: &Tensor| values(t).iter().map(|v| if v.is_nan() { u32::MAX } else { v.to_bits() }).collect::<Vec<_>>();
    for special in [false, true] {
        for (sa, sb, sc) in [
            (vec![4i64, 5], vec![4i64, 5], vec![4i64, 5]),
            (vec![4, 5], vec![5], vec![4, 5]),
            (vec![4, 1], vec![1, 5], vec![5]),
            (vec![300], vec![300], vec![]),
            (vec![], vec![], vec![]),
            (vec![64, 700], vec![700], vec![64, 1]),
            // Passes of several whole rows with a remainder, rows split across passes, and a
            // long vector: the kernel's segmenting (4096 elements per pass).
            (vec![300, 20], vec![20], vec![300, 1]),
            (vec![2, 5000], vec![5000], vec![2, 5000]),
            (vec![9000], vec![9000], vec![1]),
            // Ranks 3–4 whose broadcast merges into a 2-D one (a residual, a bias over the
            // trailing dims, a per-row factor, SqueezeExcitation's [B, C, 1, 1] scale), and
            // ones that do not (a middle broadcast, no operand of the output's shape: libtorch)
            (vec![2, 3, 4], vec![2, 3, 4], vec![2, 3, 4]),
            (vec![2, 3, 4], vec![4], vec![3, 4]),
            (vec![2, 3, 4], vec![2, 3, 1], vec![2, 3, 4]),
            (vec![2, 6, 1, 1], vec![2, 6, 5, 5], vec![2, 6, 5, 5]),
            (vec![3, 4, 5, 6], vec![5, 6], vec![3, 4, 1, 1]),
            (vec![8, 16, 300], vec![300], vec![8, 16, 1]),
            (vec![4, 64, 64], vec![4, 64, 64], vec![1, 1, 64]),
            (vec![16, 16, 64], vec![64], vec![16, 16, 64]),
            (vec![64, 8, 16, 16], vec![64, 8, 1, 1], vec![64, 8, 16, 16]),
            (vec![64, 8, 16, 16], vec![16], vec![64, 8, 1, 1]),
            (vec![2, 1, 4], vec![1, 3, 4], vec![2, 3, 4]),
            (vec![2, 1, 4], vec![1, 3, 4], vec![4]),
        ] {
            let (a, b, c) = (rng.tensor(&sa, special), rng.tensor(&sb, special), rng.tensor(&sc, special));
            let before = snapshot(&[&a, &b, &c]);
            let want_1 = ((&a + &b).relu() * &c - &a) / &b;
            let got_1 = fused::elementwise(&[&a, &b, &c], &program_1).expect("fused");
            assert_parity(&got_1, &want_1, &format!("program 1 {sa:?} {sb:?} {sc:?}"));
            let want_2 = a.sigmoid() * b.tanh() + c.gelu("none");
            let got_2 = fused::elementwise(&[&a, &b, &c], &program_2).expect("fused");
            assert_parity(&got_2, &want_2, &format!("program 2 {sa:?} {sb:?} {sc:?}"));
            // IEEE adds and multiplies only: eager's bits
            let got_3 = fused::elementwise(&[&a, &b, &c], &program_3).expect("fused");
            assert_eq!(bits(&got_3), bits(&(&a + &b * &c)), "program 3 {sa:?} {sb:?} {sc:?}");
            assert_eq!(got_3.size(), (&a + &b * &c).size(), "program 3 shape");
            let want_4 = &b - a.exp() * &c;
            assert_parity(&fused::elementwise(&[&a, &b, &c], &program_4).expect("fused"), &want_4, &format!("program 4 {sa:?} {sb:?} {sc:?}"));
            // libtorch's own sigmoid and tanh where ours are not eager's (hoisted onto the
            // operand, `fused::elementwise`), eager's GELU model where ours is: eager's bits
            let got_5 = fused::elementwise(&[&a, &b, &c], &program_5).expect("fused");
            assert_parity(&got_5, &(&a / c.sigmoid()), &format!("program 5 {sa:?} {sb:?} {sc:?}"));
            assert_eq!(bits(&got_5), bits(&(&a / c.sigmoid())), "program 5 bits {sa:?} {sb:?} {sc:?}");
            assert_eq!(bits(&got_2), bits(&want_2), "program 2 bits {sa:?} {sb:?} {sc:?}");
            for &op in Unary::ALL {
                assert_parity(&fused::unary(op, &a).expect("fused"), &eager_acts(a.shallow_clone(), &[op]), &format!("{op:?} {sa:?}"));
            }
            assert_eq!(before, snapshot(&[&a, &b, &c]), "inputs changed");
        }
    }
    for (sa, sb) in [(&[3i64, 4][..], &[5i64][..]), (&[2, 3, 4], &[2, 5, 4]), (&[2, 3, 4, 5], &[3, 1, 6])] {
        let (a, b) = (rng.tensor(sa, false), rng.tensor(sb, false));
        let eager = error_text(torchlower_backend::ops::add(&a, &b));
        assert_eq!(error_text(fused::elementwise(&[&a, &b], &[Load(0), Load(1), B(Binary::Add)])), eager);
    }
    // a non-contiguous operand of rank 3 takes libtorch's chain
    let (a, b) = (rng.tensor(&[4, 3, 5], true).transpose(0, 2), rng.tensor(&[5, 3, 4], true));
    let want = ((&a + &b).relu() * &b - &a) / &b;
    assert_parity(&fused::elementwise(&[&a, &b, &b], &program_1).expect("fused"), &want, "strided rank 3");
}

/// Products below the BLAS size threshold run our own kernel only where it reproduces the
/// BLAS's order; whichever path a shape takes, the result is eager's bit for bit. Shapes on
/// both sides of every threshold of `small_gemm` (rows 1–4, 16 columns, m·k·n = 2^19 for a
/// packed `F.linear` and 2^20 for `@`, k a multiple of 4 for one-row `F.linear`, weights of
/// 2^13 elements, row groups of 32), and `k` on both sides of MKL's panels (192, 384, odd `k`).
#[test]
fn products_on_both_sides_of_the_small_kernel_thresholds_are_bit_identical() {
    let mut rng = Rng(99);
    let shapes: [(i64, i64, i64); 38] = [
        (1, 16, 16), (1, 32, 32), (1, 30, 32), (1, 128, 64), (1, 4, 3), (2, 32, 32), (3, 32, 32), (4, 32, 32),
        (4, 32, 15), (4, 32, 16), (8, 64, 64), (8, 64, 65), (16, 128, 64), (8, 192, 16), (8, 193, 16),
        (64, 128, 64), (64, 128, 65), (64, 128, 128), (64, 128, 129), (33, 100, 130), (256, 256, 128),
        // MKL's panels and the row-vectorised F.linear
        (8, 200, 40), (8, 201, 40), (5, 256, 23), (8, 383, 64), (8, 384, 64), (13, 385, 64), (8, 64, 128), (8, 64, 129),
        (8, 128, 128), (8, 256, 1024), (8, 1024, 256), (32, 256, 96), (33, 256, 96), (64, 256, 1024), (65, 256, 128),
        (16, 768, 768), (4, 3072, 64),
    ];
    let bits = |t: &Tensor| values(t).iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for (m, k, n) in shapes {
        let x = rng.tensor(&[m, k], false);
        let w_mm = rng.tensor(&[k, n], false);
        let w_lin = rng.tensor(&[n, k], false);
        let b = rng.tensor(&[n], false);
        let mm = fused::matmul_epilogue(&x, &w_mm, None, &[], None).expect("matmul");
        assert_eq!(bits(&mm), bits(&x.matmul(&w_mm)), "x @ w at {m}x{k}x{n}");
        let lin = fused::linear_epilogue(&x, &w_lin, Some(&b), &[], None).expect("linear");
        assert_eq!(bits(&lin), bits(&x.linear(&w_lin, Some(&b))), "F.linear(x, w, b) at {m}x{k}x{n}");
        let lin = fused::linear_epilogue(&x, &w_lin, None, &[], None).expect("linear");
        assert_eq!(bits(&lin), bits(&x.linear::<&Tensor>(&w_lin, None)), "F.linear(x, w) at {m}x{k}x{n}");
    }
}

/// `F.linear` of a batch of rows (rank 3 and 4) computes the flattened rows as eager does, bit
/// for bit, with and without a bias and an epilogue; transposed batches, a 2-D bias and
/// mismatched weights keep libtorch's path, its values and its errors.
#[test]
fn linear_of_batched_rows_is_eagers_bit_for_bit() {
    let _guard = tch::no_grad_guard();
    let mut rng = Rng(12);
    let bits = |t: &Tensor| values(t).iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for shape in [vec![1i64, 16, 64], vec![8, 16, 64], vec![2, 3, 5, 64], vec![1, 128, 64], vec![4, 1, 64]] {
        for n in [64i64, 192, 7] {
            let x = rng.tensor(&shape, false);
            let w = rng.tensor(&[n, 64], false);
            let b = rng.tensor(&[n], false);
            let ours = fused::linear_epilogue(&x, &w, Some(&b), &[], None).expect("linear");
            let eager = x.linear(&w, Some(&b));
            assert_eq!(ours.size(), eager.size(), "{shape:?} n={n}");
            assert_eq!(bits(&ours), bits(&eager), "F.linear(x, w, b) at {shape:?} n={n}");
            let ours = fused::linear_epilogue(&x, &w, None, &[Unary::Relu], None).expect("linear");
            assert_eq!(bits(&ours), bits(&x.linear::<&Tensor>(&w, None).relu()), "relu(F.linear(x, w)) at {shape:?} n={n}");
        }
    }
    let x = rng.tensor(&[16, 4, 64], false).transpose(0, 1);
    let (w, b) = (rng.tensor(&[32, 64], false), rng.tensor(&[32], false));
    assert_parity(&fused::linear_epilogue(&x, &w, Some(&b), &[], None).expect("linear"), &x.linear(&w, Some(&b)), "transposed batch");
    let b2 = rng.tensor(&[16, 32], false);
    let x = rng.tensor(&[4, 16, 64], false);
    assert_eq!(bits(&fused::linear_epilogue(&x, &w, Some(&b2), &[], None).expect("linear")), bits(&x.linear(&w, Some(&b2))), "2-D bias");
    let w_bad = rng.tensor(&[32, 63], false);
    let eager = error_text(torchlower_backend::ops::linear(&x, &w_bad, Some(&b)));
    assert!(eager.contains("cannot be multiplied"), "{eager}");
    assert_eq!(error_text(fused::linear_epilogue(&x, &w_bad, Some(&b), &[], None)), eager);
}

/// With two torch threads the row-vectorised `F.linear` splits its columns over them (the
/// other large products go to the BLAS, which splits them itself), and batched products
/// their matrices: still eager's bits.
#[test]
fn products_split_over_threads_are_bit_identical() {
    let _guard = tch::no_grad_guard();
    let before = tch::get_num_threads();
    tch::set_num_threads(2);
    let mut rng = Rng(21);
    let bits = |t: &Tensor| values(t).iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for (m, k, n) in [(64i64, 128i64, 512i64), (8, 256, 1024), (8, 1024, 256), (33, 300, 77), (4, 64, 200), (64, 256, 1024)] {
        let x = rng.tensor(&[m, k], false);
        let w = rng.tensor(&[n, k], false);
        let b = rng.tensor(&[n], false);
        let ours = fused::linear_epilogue(&x, &w, Some(&b), &[Unary::Gelu], None).expect("linear");
        assert_parity(&ours, &x.linear(&w, Some(&b)).gelu("none"), &format!("gelu(F.linear) at {m}x{k}x{n}, 2 threads"));
        let ours = fused::linear_epilogue(&x, &w, Some(&b), &[], None).expect("linear");
        assert_eq!(bits(&ours), bits(&x.linear(&w, Some(&b))), "F.linear(x, w, b) at {m}x{k}x{n}, 2 threads");
    }
    // batched products split their matrices over the threads
    for (batch, t, d) in [(&[8i64][..], 16i64, 64i64), (&[2, 6], 16, 32), (&[2, 4], 128, 64), (&[3], 7, 17)] {
        let shape = |rows: i64, cols: i64| batch.iter().copied().chain([rows, cols]).collect::<Vec<i64>>();
        let (q, k, v) = (rng.tensor(&shape(t, d), false), rng.tensor(&shape(t, d), false), rng.tensor(&shape(t, d), false));
        let kt = k.transpose(-2, -1);
        let scores = fused::matmul_epilogue(&q, &kt, None, &[], None).expect("fused");
        assert_eq!(bits(&scores), bits(&q.matmul(&kt)), "q @ kᵀ {batch:?} t={t} d={d}, 2 threads");
        let p = scores.softmax(-1, Kind::Float);
        assert_eq!(bits(&fused::matmul_epilogue(&p, &v, None, &[], None).expect("fused")), bits(&p.matmul(&v)), "p @ v {batch:?} t={t} d={d}, 2 threads");
    }
    tch::set_num_threads(before);
}
