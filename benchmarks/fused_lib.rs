// The lib.rs that the analyzer's fusion pass is to emit for benchmarks/cells.py, written by
// hand against native-backend/API.md ("Fused kernels"). `torchlower bench --hand-fused` builds
// it with the real pipeline as an extra lane, so the fused kernels can be measured (and are
// tested by tests/python/test_fused.py) independently of the analyzer.
//
//   linear_relu_mean: F.linear(x, weight, bias).relu().mean(dim=1)  → one linear_epilogue
//   alternating:      the weight-tied loop and its mean → one iterate_matmul_reduce (the loop
//                     body's scalar test picks each layer's activation)
use torchlower_backend as tl;

#[pyo3::pyfunction]
#[pyo3(signature = (p0, p1, p2))]
fn tl_fn_0<'py>(
    py: pyo3::Python<'py>,
    p0: &pyo3::Bound<'py, pyo3::PyAny>,
    p1: &pyo3::Bound<'py, pyo3::PyAny>,
    p2: &pyo3::Bound<'py, pyo3::PyAny>,
) -> pyo3::PyResult<pyo3::PyObject> {
    let v_x = tl::boundary::tensor_arg(p0, "x", tl::TensorSpec::F32_CPU_2D)?;
    let v_weight = tl::boundary::tensor_arg(p1, "weight", tl::TensorSpec::F32_CPU_2D)?;
    let v_bias = tl::boundary::tensor_arg(p2, "bias", tl::TensorSpec::F32_CPU_1D)?;
    tl::run(py, move || -> tl::Result<tl::tch::Tensor> {
        Ok(tl::fused::linear_epilogue(
            &v_x,
            &v_weight,
            Some(&v_bias),
            &[tl::fused::Unary::Relu],
            Some(tl::fused::Reduce::Mean { dim: 1, keepdim: false }),
        )?)
    })
}

#[pyo3::pyfunction]
#[pyo3(signature = (p0, p1, p2, p3, p4))]
fn tl_fn_1<'py>(
    py: pyo3::Python<'py>,
    p0: &pyo3::Bound<'py, pyo3::PyAny>,
    p1: &pyo3::Bound<'py, pyo3::PyAny>,
    p2: &pyo3::Bound<'py, pyo3::PyAny>,
    p3: &pyo3::Bound<'py, pyo3::PyAny>,
    p4: &pyo3::Bound<'py, pyo3::PyAny>,
) -> pyo3::PyResult<pyo3::PyObject> {
    let v_x = tl::boundary::tensor_arg(p0, "x", tl::TensorSpec::F32_CPU_2D)?;
    let v_weight = tl::boundary::tensor_arg(p1, "weight", tl::TensorSpec::F32_CPU_2D)?;
    let v_bias = tl::boundary::tensor_arg(p2, "bias", tl::TensorSpec::F32_CPU_1D)?;
    let v_depth = tl::boundary::int_arg(p3, "depth")?;
    let v_phase = tl::boundary::int_arg(p4, "phase")?;
    tl::run(py, move || -> tl::Result<tl::tch::Tensor> {
        Ok(tl::fused::iterate_matmul_reduce(
            &v_x,
            &v_weight,
            Some(&v_bias),
            tl::scalar::range(0, v_depth, 1)?,
            |v_layer| -> tl::Result<&'static [tl::fused::Unary]> {
                if tl::scalar::rem(tl::scalar::add(v_layer, v_phase)?, 2)? == 0 {
                    Ok(&[tl::fused::Unary::Relu])
                } else {
                    Ok(&[tl::fused::Unary::Sigmoid])
                }
            },
            tl::fused::Reduce::Mean { dim: 1, keepdim: false },
        )?)
    })
}

#[pyo3::pymodule]
fn __TORCHLOWER_MODULE__(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
    pyo3::types::PyModuleMethods::add_function(m, pyo3::wrap_pyfunction!(tl_fn_0, m)?)?;
    pyo3::types::PyModuleMethods::add_function(m, pyo3::wrap_pyfunction!(tl_fn_1, m)?)?;
    Ok(())
}
