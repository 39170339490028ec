// A hand-written generated lib.rs following native-backend/API.md exactly: the build
// pipeline's fixture that does not depend on the analyzer (tests/python/test_native_cpu.py
// builds it directly). It mirrors what the analyzer emits for these Python functions:
//
//   def head(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
//       return F.linear(x, w, b).relu().mean(dim=1)
//   def alternating(x, weight, bias, depth: int, phase: int) -> TensorF32Cpu1D: (the seed's loop)
//   def classify(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorI64Cpu1D:
//       return torch.softmax(x @ w, 1).argmax(dim=1)
//   def int_ops(a: int, b: int, op: int) -> int   (op 0..5: + - * // % neg)
//   def range_sum(start: int, stop: int, step: int) -> int
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
    let v_w = tl::boundary::tensor_arg(p1, "w", tl::TensorSpec::F32_CPU_2D)?;
    let v_b = tl::boundary::tensor_arg(p2, "b", tl::TensorSpec::F32_CPU_1D)?;
    tl::run(py, move || -> tl::Result<tl::tch::Tensor> {
        Ok(tl::ops::mean_dim(&tl::ops::relu(&tl::ops::linear(&v_x, &v_w, Some(&v_b))?)?, 1, false)?)
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
        let mut v_hidden = v_x.shallow_clone();
        for v_layer in tl::scalar::range(0, v_depth, 1)? {
            if tl::scalar::rem(tl::scalar::add(v_layer, v_phase)?, 2)? == 0 {
                let v_even = tl::ops::add(&tl::ops::matmul(&v_hidden, &v_weight)?, &v_bias)?;
                v_hidden = tl::ops::relu(&v_even)?;
            } else {
                let v_odd = tl::ops::add(&tl::ops::matmul(&v_hidden, &v_weight)?, &v_bias)?;
                v_hidden = tl::ops::sigmoid(&v_odd)?;
            }
        }
        Ok(tl::ops::mean_dim(&v_hidden, 1, false)?)
    })
}

#[pyo3::pyfunction]
#[pyo3(signature = (p0, p1))]
fn tl_fn_2<'py>(
    py: pyo3::Python<'py>,
    p0: &pyo3::Bound<'py, pyo3::PyAny>,
    p1: &pyo3::Bound<'py, pyo3::PyAny>,
) -> pyo3::PyResult<pyo3::PyObject> {
    let v_x = tl::boundary::tensor_arg(p0, "x", tl::TensorSpec::F32_CPU_2D)?;
    let v_w = tl::boundary::tensor_arg(p1, "w", tl::TensorSpec::F32_CPU_2D)?;
    tl::run(py, move || -> tl::Result<tl::tch::Tensor> {
        Ok(tl::ops::argmax(&tl::ops::softmax(&tl::ops::matmul(&v_x, &v_w)?, 1)?, 1, false)?)
    })
}

#[pyo3::pyfunction]
#[pyo3(signature = (p0, p1, p2))]
fn tl_fn_3<'py>(
    py: pyo3::Python<'py>,
    p0: &pyo3::Bound<'py, pyo3::PyAny>,
    p1: &pyo3::Bound<'py, pyo3::PyAny>,
    p2: &pyo3::Bound<'py, pyo3::PyAny>,
) -> pyo3::PyResult<pyo3::PyObject> {
    let v_a = tl::boundary::int_arg(p0, "a")?;
    let v_b = tl::boundary::int_arg(p1, "b")?;
    let v_op = tl::boundary::int_arg(p2, "op")?;
    tl::run(py, move || -> tl::Result<i64> {
        if v_op == 0 {
            return Ok(tl::scalar::add(v_a, v_b)?);
        }
        if v_op == 1 {
            return Ok(tl::scalar::sub(v_a, v_b)?);
        }
        if v_op == 2 {
            return Ok(tl::scalar::mul(v_a, v_b)?);
        }
        if v_op == 3 {
            return Ok(tl::scalar::floordiv(v_a, v_b)?);
        }
        if v_op == 4 {
            return Ok(tl::scalar::rem(v_a, v_b)?);
        }
        Ok(tl::scalar::neg(v_a)?)
    })
}

#[pyo3::pyfunction]
#[pyo3(signature = (p0, p1, p2))]
fn tl_fn_4<'py>(
    py: pyo3::Python<'py>,
    p0: &pyo3::Bound<'py, pyo3::PyAny>,
    p1: &pyo3::Bound<'py, pyo3::PyAny>,
    p2: &pyo3::Bound<'py, pyo3::PyAny>,
) -> pyo3::PyResult<pyo3::PyObject> {
    let v_start = tl::boundary::int_arg(p0, "start")?;
    let v_stop = tl::boundary::int_arg(p1, "stop")?;
    let v_step = tl::boundary::int_arg(p2, "step")?;
    tl::run(py, move || -> tl::Result<i64> {
        let mut v_total = 0i64;
        for v_i in tl::scalar::range(v_start, v_stop, v_step)? {
            v_total = tl::scalar::add(tl::scalar::mul(v_total, 3)?, v_i)?;
            v_total = tl::scalar::rem(v_total, 1000003)?;
        }
        Ok(v_total)
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
