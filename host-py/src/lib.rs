//! `torchlower._native`: the analyzer wasm run sandboxed in wasmtime, exposed to Python.
//!
//! Python (`torchlower/_analyze.py`) creates one [`Analyzer`] per process from the wasm file
//! shipped in the package; each `analyze` call runs in a fresh store and instance (from the
//! shared engine's pool, see `engine.rs`) with the GIL released.
//! Failures come out as `SandboxError(kind, message)`, never as a panic.
//! Also here: [`specialising::Specialising`], the per-call router of compiled `nn.Module`s and
//! unannotated functions, checked in C (it needs no libtorch, only the Python objects it reads).

mod engine;
mod module_cache;
mod pyjson;
mod sandbox;
mod specialising;
mod torch_state;

use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use wasmtime::Module;

use crate::module_cache::CacheOutcome;
use crate::sandbox::{Limits, SandboxError};

create_exception!(
    _native,
    AnalyzerSandboxError,
    PyException,
    "The analyzer produced no report; args are (kind, message)."
);

fn to_py_err(err: SandboxError) -> PyErr {
    AnalyzerSandboxError::new_err((err.kind(), err.to_string()))
}

/// The compiled analyzer module, ready to be instantiated once per call.
#[pyclass(frozen, module = "torchlower._native")]
struct Analyzer {
    module: Module,
    cache_outcome: CacheOutcome,
}

#[pymethods]
impl Analyzer {
    /// Loads `wasm_path`, taking the compiled module from `cache_dir` when it holds one for
    /// these exact bytes and this wasmtime (and storing it there otherwise).
    ///
    /// `max_wasm_stack` (bytes, at most `MAX_WASM_STACK`) gives this analyzer an engine of its
    /// own with a smaller stack limit; for tests and diagnosis only (compiled without cache).
    #[new]
    #[pyo3(signature = (wasm_path, cache_dir=None, max_wasm_stack=None))]
    fn new(
        py: Python<'_>,
        wasm_path: PathBuf,
        cache_dir: Option<PathBuf>,
        max_wasm_stack: Option<usize>,
    ) -> PyResult<Self> {
        let wasm = std::fs::read(&wasm_path).map_err(|err| {
            to_py_err(SandboxError::Host(format!("cannot read {}: {err}", wasm_path.display())))
        })?;
        let host_err = |err: String| to_py_err(SandboxError::Host(err));
        let own_engine;
        let (engine, cache_dir) = match max_wasm_stack {
            None => (&engine::shared().map_err(host_err)?.engine, cache_dir),
            Some(limit) => {
                own_engine = engine::with_stack_limit(limit).map_err(host_err)?;
                (&own_engine, None)
            }
        };
        let (module, cache_outcome) = py
            .allow_threads(|| module_cache::load_or_compile(engine, &wasm, cache_dir.as_deref()))
            .map_err(|err| {
                to_py_err(SandboxError::Host(format!(
                    "{} is not a usable wasm module: {err:#}",
                    wasm_path.display()
                )))
            })?;
        Ok(Analyzer { module, cache_outcome })
    }

    /// How the module was obtained: "hit", "miss", "replaced" or "disabled".
    #[getter]
    fn cache_outcome(&self) -> &'static str {
        self.cache_outcome.as_str()
    }

    /// Runs the analyzer on `source` (UTF-8 bytes) and returns the report as JSON text.
    /// `memory_limit` (bytes) and `time_limit` (seconds) override the defaults; with `export`
    /// the native functions are lowered as `torchlower export`'s crate.
    #[pyo3(signature = (source, filename, *, memory_limit=None, time_limit=None, export=false))]
    fn analyze(
        &self,
        py: Python<'_>,
        source: &[u8],
        filename: &str,
        memory_limit: Option<usize>,
        time_limit: Option<f64>,
        export: bool,
    ) -> PyResult<String> {
        let limits = Limits { memory_bytes: memory_limit, time_limit: seconds(time_limit)? };
        let lowering = if export { sandbox::Lowering::Crate } else { sandbox::Lowering::Extension };
        py.allow_threads(|| sandbox::analyze_for(&self.module, source, filename, limits, lowering))
            .map_err(to_py_err)
    }

    /// Runs the analyzer like `analyze` and returns the report as Python objects (the dict
    /// `json.loads` would give, built without the intermediate text; see `pyjson.rs`).
    #[pyo3(signature = (source, filename, *, memory_limit=None, time_limit=None))]
    fn analyze_report<'py>(
        &self,
        py: Python<'py>,
        source: &[u8],
        filename: &str,
        memory_limit: Option<usize>,
        time_limit: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limits = Limits { memory_bytes: memory_limit, time_limit: seconds(time_limit)? };
        let json = py
            .allow_threads(|| sandbox::analyze(&self.module, source, filename, limits))
            .map_err(to_py_err)?;
        pyjson::loads(py, &json)
    }

    /// The analyzer's registry of rules and diagnostic codes, as JSON text.
    fn rules(&self, py: Python<'_>) -> PyResult<String> {
        py.allow_threads(|| sandbox::rules(&self.module)).map_err(to_py_err)
    }
}

/// A time limit in seconds as a `Duration`; it must be a positive finite number.
fn seconds(limit: Option<f64>) -> PyResult<Option<std::time::Duration>> {
    match limit {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => Ok(Some(std::time::Duration::from_secs_f64(s))),
        Some(s) => Err(pyo3::exceptions::PyValueError::new_err(format!("time_limit must be a positive number of seconds, got {s}"))),
    }
}

/// How many analyses the shared engine runs at once from its instance pool; 0 when it
/// allocates on demand (the pool's address space could not be reserved). Creates the engine
/// (a function, not a constant, so that importing the module does not: wasmtime's signal
/// handlers are installed when the engine is first needed, after the interpreter's own).
#[pyfunction]
fn pool_slots() -> u32 {
    engine::shared().ok().and_then(|shared| shared.slots).unwrap_or(0)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Analyzer>()?;
    m.add_class::<specialising::Specialising>()?;
    m.add("AnalyzerSandboxError", m.py().get_type::<AnalyzerSandboxError>())?;
    m.add("MAX_INPUT_BYTES", sandbox::MAX_INPUT_BYTES)?;
    m.add("DEFAULT_MEMORY_LIMIT", sandbox::DEFAULT_MEMORY_LIMIT)?;
    m.add("MAX_WASM_STACK", engine::MAX_WASM_STACK)?;
    m.add("MAX_MEMORY", engine::MAX_MEMORY)?;
    m.add_function(wrap_pyfunction!(pool_slots, m)?)?;
    Ok(())
}
