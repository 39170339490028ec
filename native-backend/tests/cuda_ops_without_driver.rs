//! Without a CUDA driver every `tl::cuda::ops` function fails with the loader's error, which
//! names the path searched and the OS error, and becomes a Python `RuntimeError`.
//! (One process per test file: the driver is loaded once per process.)

use tch::{Device, Kind, Tensor};
use torchlower_backend::cuda::ops;

#[test]
fn every_op_reports_the_paths_searched() {
    let missing = "/nonexistent/torchlower-test/libcuda.so.1";
    // Set before anything in this process loads the driver.
    std::env::set_var("TORCHLOWER_CUDA_DRIVER", missing);
    let t = Tensor::ones([2, 3], (Kind::Float, Device::Cpu));
    let v = Tensor::ones([3], (Kind::Float, Device::Cpu));
    let results = vec![
        ("relu", ops::relu(&t)),
        ("gelu", ops::gelu(&t)),
        ("add", ops::add(&t, &v)),
        ("matmul", ops::matmul(&t, &v)),
        ("linear", ops::linear(&t, &t, None)),
        ("sum_dim", ops::sum_dim(&t, 1, false)),
        ("mean_dim", ops::mean_dim(&t, 0, true)),
        ("softmax", ops::softmax(&t, 1)),
        ("argmax", ops::argmax(&t, 1, false)),
        ("layer_norm", ops::layer_norm(&t, &[3], Some(&t), None, 1e-5)),
        ("rms_norm", ops::rms_norm(&t, &[3], None, None)),
        ("amax", ops::amax(&t, &[0, 1], false)),
        ("var", ops::var(&t, &[1], true, false, None)),
        ("logsumexp", ops::logsumexp(&t, &[1], true)),
        ("sum_dims", ops::sum_dims(&t, &[], false)),
        ("scaled_dot_product_attention", ops::scaled_dot_product_attention(&t, &t, &t, None, false, None, false)),
        ("log_softmax", ops::log_softmax(&t, Some(1), 3)),
        ("rsqrt", ops::rsqrt(&t)),
        ("erf", ops::erf(&t)),
        ("log1p", ops::log1p(&t)),
        ("expm1", ops::expm1(&t)),
        ("gelu_tanh", ops::gelu_tanh(&t)),
        ("hardsigmoid", ops::hardsigmoid(&t)),
        ("hardswish", ops::hardswish(&t)),
        ("mish", ops::mish(&t)),
        ("leaky_relu", ops::leaky_relu(&t, 0.2)),
        ("elu", ops::elu(&t)),
        ("selu", ops::selu(&t)),
        ("softplus", ops::softplus(&t)),
        ("relu6", ops::relu6(&t)),
        ("hardtanh", ops::hardtanh(&t, -1.0, 1.0)),
        ("max_pool1d", ops::max_pool1d(&t, &[2], &[], &[0], &[1], false)),
        ("max_pool2d", ops::max_pool2d(&t, &[2], &[], &[0], &[1], false)),
        ("avg_pool1d", ops::avg_pool1d(&t, &[2], &[], &[0], false, true)),
        ("avg_pool2d", ops::avg_pool2d(&t, &[2], &[], &[0], false, true)),
        ("adaptive_avg_pool1d", ops::adaptive_avg_pool1d(&t, &[1])),
        ("adaptive_avg_pool2d", ops::adaptive_avg_pool2d(&t, &[2, 2])),
        ("adaptive_max_pool2d", ops::adaptive_max_pool2d(&t, &[1, 1])),
        ("batch_norm", ops::batch_norm(&t, &v, &v, None, None, 0.1, 1e-5)),
        ("prod", ops::prod(&t, 1, false)),
        ("glu", ops::glu(&t, 0)),
        ("reshape_as", ops::reshape_as(&t, &t)),
        ("vector_norm", ops::vector_norm(&t, 2.0, &[1], false)),
        ("normalize", ops::normalize(&t, 2.0, 1, 1e-12)),
        ("group_norm", ops::group_norm(&t, 3, Some(&v), Some(&v), 1e-5)),
        ("conv1d", ops::conv1d(&t, &t.unsqueeze(0), None, &[1], &[0], &[1], 1)),
        ("conv2d", ops::conv2d(&t.unsqueeze(0), &t.unsqueeze(0).unsqueeze(0), None, &[1], &[0], &[1], 1)),
    ];
    for (name, result) in results {
        let error = result.err().unwrap_or_else(|| panic!("{name} must fail without a driver"));
        let text = error.to_string();
        assert!(text.contains("no usable CUDA driver library found"), "{name}: {text}");
        assert!(text.contains(&format!("tried {missing}: {missing}: cannot open shared object file: No such file or directory")), "{name}: {text}");
        // tl::run maps it to RuntimeError.
        #[cfg(feature = "python")]
        pyo3::prepare_freethreaded_python();
        #[cfg(feature = "python")]
        pyo3::Python::with_gil(|py| {
            let err = error.into_pyerr();
            assert!(err.is_instance_of::<pyo3::exceptions::PyRuntimeError>(py), "{name}");
        });
    }
}
