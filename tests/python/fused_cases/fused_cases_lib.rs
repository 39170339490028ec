// Hand-written fused lib.rs for fused_cases.py, following native-backend/API.md ("Fused
// kernels"): what the analyzer's fusion pass emits for these functions.
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
        Ok(tl::fused::linear_epilogue(&v_x, &v_weight, Some(&v_bias), &[tl::fused::Unary::Relu], Some(tl::fused::Reduce::Mean { dim: 1, keepdim: false }))?)
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
        let v_hidden = tl::fused::iterate_matmul_epilogue(&v_x, &v_weight, Some(&v_bias), tl::scalar::range(0, v_depth, 1)?, |v_layer| -> tl::Result<&'static [tl::fused::Unary]> {
            if tl::scalar::rem(tl::scalar::add(v_layer, v_phase)?, 2)? == 0 {
                Ok(&[tl::fused::Unary::Relu])
            } else {
                Ok(&[tl::fused::Unary::Sigmoid])
            }
        })?;
        Ok(tl::fused::reduce(&v_hidden, tl::fused::Reduce::Mean { dim: 1, keepdim: false })?)
    })
}

#[pyo3::pyfunction]
#[pyo3(signature = (p0, p1, p2))]
fn tl_fn_2<'py>(
    py: pyo3::Python<'py>,
    p0: &pyo3::Bound<'py, pyo3::PyAny>,
    p1: &pyo3::Bound<'py, pyo3::PyAny>,
    p2: &pyo3::Bound<'py, pyo3::PyAny>,
) -> pyo3::PyResult<pyo3::PyObject> {
    let v_x = tl::boundary::tensor_arg(p0, "x", tl::TensorSpec::F32_CPU_2D)?;
    let v_w = tl::boundary::tensor_arg(p1, "w", tl::TensorSpec::F32_CPU_2D)?;
    let v_b = tl::boundary::tensor_arg(p2, "b", tl::TensorSpec::F32_CPU_1D)?;
    tl::run(py, move || -> tl::Result<tl::tch::Tensor> {
        Ok(tl::fused::matmul_epilogue(&v_x, &v_w, Some(&v_b), &[tl::fused::Unary::Tanh], Some(tl::fused::Reduce::Sum { dim: 0, keepdim: true }))?)
    })
}

#[pyo3::pyfunction]
#[pyo3(signature = (p0, p1))]
fn tl_fn_3<'py>(
    py: pyo3::Python<'py>,
    p0: &pyo3::Bound<'py, pyo3::PyAny>,
    p1: &pyo3::Bound<'py, pyo3::PyAny>,
) -> pyo3::PyResult<pyo3::PyObject> {
    let v_x = tl::boundary::tensor_arg(p0, "x", tl::TensorSpec::F32_CPU_2D)?;
    let v_w = tl::boundary::tensor_arg(p1, "w", tl::TensorSpec::F32_CPU_2D)?;
    tl::run(py, move || -> tl::Result<tl::tch::Tensor> {
        Ok(tl::fused::linear_epilogue(&v_x, &v_w, None, &[tl::fused::Unary::Gelu], None)?)
    })
}

#[pyo3::pyfunction]
#[pyo3(signature = (p0, p1))]
fn tl_fn_4<'py>(
    py: pyo3::Python<'py>,
    p0: &pyo3::Bound<'py, pyo3::PyAny>,
    p1: &pyo3::Bound<'py, pyo3::PyAny>,
) -> pyo3::PyResult<pyo3::PyObject> {
    let v_a = tl::boundary::tensor_arg(p0, "a", tl::TensorSpec::F32_CPU_2D)?;
    let v_b = tl::boundary::tensor_arg(p1, "b", tl::TensorSpec::F32_CPU_1D)?;
    tl::run(py, move || -> tl::Result<tl::tch::Tensor> {
        use tl::fused::{Binary, Step, Unary};
        Ok(tl::fused::elementwise(
            &[&v_a, &v_b],
            &[
                Step::Load(0), Step::Load(1), Step::Binary(Binary::Add), Step::Unary(Unary::Relu),
                Step::Load(0), Step::Binary(Binary::Mul), Step::Load(1), Step::Binary(Binary::Sub),
                Step::Unary(Unary::Sigmoid),
            ],
        )?)
    })
}

#[pyo3::pymodule]
fn __TORCHLOWER_MODULE__(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
    pyo3::types::PyModuleMethods::add_function(m, pyo3::wrap_pyfunction!(tl_fn_0, m)?)?;
    pyo3::types::PyModuleMethods::add_function(m, pyo3::wrap_pyfunction!(tl_fn_1, m)?)?;
    pyo3::types::PyModuleMethods::add_function(m, pyo3::wrap_pyfunction!(tl_fn_2, m)?)?;
    pyo3::types::PyModuleMethods::add_function(m, pyo3::wrap_pyfunction!(tl_fn_3, m)?)?;
    pyo3::types::PyModuleMethods::add_function(m, pyo3::wrap_pyfunction!(tl_fn_4, m)?)?;
    Ok(())
}
