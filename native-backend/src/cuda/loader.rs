//! Finding, opening and initialising the CUDA driver library at run time.
//!
//! Search order: the file named by `TORCHLOWER_CUDA_DRIVER` when that variable is set (and
//! only it: a user who names a file wants that file), otherwise `libcuda.so.1` (what the
//! NVIDIA driver installs) and then `libcuda.so` (the development symlink). Every attempt
//! that fails is kept with its OS error, so the final error names every path tried.
//!
//! Every entry point is resolved once, at load, into an `Option`: a missing symbol does not
//! stop an older driver from loading; calling it later returns
//! [`CudaError::MissingSymbol`](super::result::CudaError::MissingSymbol). Only `cuInit` is
//! required, because a library without it is not a CUDA driver at all.
//!
//! This layer's error is [`LoadError`]: what was searched, each path tried with its OS error,
//! and a failed `cuInit` as a [`DriverError`] (from [`super::error`], below this module).

use std::fmt;
use std::sync::OnceLock;

use libloading::Library;

use super::error::{DriverError, ErrorTables};
use super::sys;

/// Environment variable naming the driver library to load instead of the default search.
pub const DRIVER_ENV: &str = "TORCHLOWER_CUDA_DRIVER";
/// The default search list, in order.
pub const DEFAULT_CANDIDATES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];

macro_rules! driver_api {
    ($($symbol:ident),* $(,)?) => {
        /// The resolved entry points of one loaded driver; `None` where the library lacks the
        /// symbol (an older driver, or not a driver at all).
        #[allow(non_snake_case)]
        #[derive(Clone, Copy)]
        pub struct Api {
            $(pub $symbol: Option<sys::$symbol>,)*
        }

        impl Api {
            /// Looks every symbol up in `library`, keeping the ones it exports.
            ///
            /// # Safety
            /// `library` must be a CUDA driver (or a stand-in with the same C signatures): the
            /// pointers are typed by the declarations in [`sys`] without any check.
            unsafe fn resolve(library: &Library) -> Api {
                Api {
                    $($symbol: unsafe {
                        library
                            .get::<sys::$symbol>(concat!(stringify!($symbol), "\0").as_bytes())
                            .ok()
                            .map(|symbol| *symbol)
                    },)*
                }
            }

            /// The names of the symbols this library does not export (for diagnostics).
            pub fn missing_symbols(&self) -> Vec<&'static str> {
                let mut missing = Vec::new();
                $(if self.$symbol.is_none() { missing.push(stringify!($symbol)); })*
                missing
            }
        }
    };
}

driver_api!(
    cuInit,
    cuDriverGetVersion,
    cuGetErrorName,
    cuGetErrorString,
    cuDeviceGetCount,
    cuDeviceGet,
    cuDeviceGetName,
    cuDeviceGetAttribute,
    cuDeviceTotalMem_v2,
    cuDevicePrimaryCtxRetain,
    cuDevicePrimaryCtxRelease_v2,
    cuCtxGetCurrent,
    cuCtxSetCurrent,
    cuCtxPushCurrent_v2,
    cuCtxPopCurrent_v2,
    cuCtxSynchronize,
    cuStreamCreate,
    cuStreamDestroy_v2,
    cuStreamSynchronize,
    cuModuleLoadDataEx,
    cuModuleUnload,
    cuModuleGetFunction,
    cuMemAlloc_v2,
    cuMemFree_v2,
    cuMemcpyHtoD_v2,
    cuMemcpyDtoH_v2,
    cuLaunchKernel,
    cuEventCreate,
    cuEventDestroy_v2,
    cuEventRecord,
    cuEventSynchronize,
    cuEventElapsedTime,
);

impl Api {
    /// The driver's own tables naming its error codes (for [`DriverError::new`]).
    pub fn error_tables(&self) -> ErrorTables {
        ErrorTables { name: self.cuGetErrorName, description: self.cuGetErrorString }
    }
}

/// A loaded and initialised (`cuInit(0)` succeeded) CUDA driver.
pub struct Driver {
    api: Api,
    path: String,
    /// Kept last so the library is unloaded only after nothing else refers to it.
    _library: Library,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver").field("path", &self.path).finish_non_exhaustive()
    }
}

/// One library path tried and why it was not usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadAttempt {
    pub path: String,
    /// The OS error from `dlopen`, or why a library that did open is not a driver.
    pub error: String,
}

/// Why no CUDA driver is available: every attempt in order, and if a library did load, the
/// failure of `cuInit`.
#[derive(Debug, Clone)]
pub struct LoadError {
    /// Where the candidate list came from (`TORCHLOWER_CUDA_DRIVER=...` or the default list).
    pub searched: String,
    pub attempts: Vec<LoadAttempt>,
    /// Set when a library loaded but `cuInit(0)` failed (e.g. no device, driver too old).
    pub init_failure: Option<(String, DriverError)>,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.init_failure {
            Some((path, error)) => write!(
                f,
                "torchlower: the CUDA driver {path} loaded but did not initialise: {error}"
            )?,
            None => write!(
                f,
                "torchlower: no usable CUDA driver library found (searched {}; set {DRIVER_ENV} \
                 to the path of libcuda.so.1 to choose one)",
                self.searched
            )?,
        }
        for attempt in &self.attempts {
            write!(f, "\n  tried {}: {}", attempt.path, attempt.error)?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// The candidate paths for the current environment and a description of where they came from.
pub fn candidates_from_env() -> (Vec<String>, String) {
    match std::env::var_os(DRIVER_ENV) {
        Some(value) if !value.is_empty() => {
            let path = value.to_string_lossy().into_owned();
            let searched = format!("{DRIVER_ENV}={path}");
            (vec![path], searched)
        }
        _ => (
            DEFAULT_CANDIDATES.iter().map(|s| s.to_string()).collect(),
            DEFAULT_CANDIDATES.join(", "),
        ),
    }
}

impl Driver {
    /// Loads the first usable driver among `candidates` and calls `cuInit(0)` on it.
    /// Not cached: see [`global`] for the process-wide driver.
    // Both sides are large (the entry-point table, the list of attempts); this runs once.
    #[allow(clippy::result_large_err)]
    pub fn load_from(candidates: &[String], searched: &str) -> Result<Driver, LoadError> {
        let mut attempts = Vec::new();
        for path in candidates {
            // SAFETY: loading a shared library runs its initialisers; the driver's (or a test
            // stand-in's) are the ones we mean to run.
            let library = match unsafe { Library::new(path) } {
                Ok(library) => library,
                Err(error) => {
                    attempts.push(LoadAttempt { path: path.clone(), error: os_error_text(&error) });
                    continue;
                }
            };
            // SAFETY: the signatures in `sys` are those of the CUDA driver API.
            let api = unsafe { Api::resolve(&library) };
            let Some(init) = api.cuInit else {
                attempts.push(LoadAttempt {
                    path: path.clone(),
                    error: "loaded, but it does not export cuInit, so it is not a CUDA driver"
                        .to_string(),
                });
                continue;
            };
            let driver = Driver { api, path: path.clone(), _library: library };
            // SAFETY: cuInit takes a flags word that must be 0.
            let code = unsafe { init(0) };
            if code != sys::CUDA_SUCCESS {
                let error = DriverError::new(driver.api.error_tables(), "cuInit", code);
                return Err(LoadError {
                    searched: searched.to_string(),
                    attempts,
                    init_failure: Some((path.clone(), error)),
                });
            }
            return Ok(driver);
        }
        Err(LoadError { searched: searched.to_string(), attempts, init_failure: None })
    }

    /// Loads the driver the environment selects (see the module docs). Not cached.
    #[allow(clippy::result_large_err)]
    pub fn load() -> Result<Driver, LoadError> {
        let (candidates, searched) = candidates_from_env();
        Driver::load_from(&candidates, &searched)
    }

    /// The resolved entry points.
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// The path the driver was loaded from.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// libloading's message carries the `dlerror()` text, which names the file and the reason.
fn os_error_text(error: &libloading::Error) -> String {
    match std::error::Error::source(error) {
        Some(source) => source.to_string(),
        None => error.to_string(),
    }
}

static GLOBAL: OnceLock<Result<Driver, LoadError>> = OnceLock::new();

/// The process-wide driver, loaded on first use from the environment at that moment; the
/// outcome (success or the error) is kept for the life of the process.
pub fn global() -> Result<&'static Driver, &'static LoadError> {
    GLOBAL.get_or_init(Driver::load).as_ref()
}
