//! Process-wide CUDA state for device 0: the driver, its primary context, and one loaded
//! module per kernel, each created on first use and kept for the life of the process (as
//! PyTorch keeps its own). JIT compilation therefore happens once per process and kernel.

use std::sync::OnceLock;

use super::kernels::Kernel;
use super::loader::{self, Driver};
use super::result::{CudaError, Result};
use super::safe::{Function, Module, PrimaryContext};

/// A kernel loaded in the primary context: its module and function.
pub struct LoadedKernel {
    pub kernel: Kernel,
    module: &'static Module<'static>,
    function: Function<'static>,
}

impl LoadedKernel {
    pub fn function(&self) -> &Function<'static> {
        &self.function
    }

    pub fn module(&self) -> &'static Module<'static> {
        self.module
    }
}

static CONTEXT: OnceLock<Result<PrimaryContext<'static>>> = OnceLock::new();
static MODULES: [OnceLock<Result<Module<'static>>>; Kernel::COUNT] = [const { OnceLock::new() }; Kernel::COUNT];
static KERNELS: [OnceLock<Result<LoadedKernel>>; Kernel::COUNT] = [const { OnceLock::new() }; Kernel::COUNT];

/// The process-wide driver (see [`loader::global`]).
pub fn driver() -> Result<&'static Driver> {
    loader::global().map_err(|error| CudaError::from(error.clone()))
}

/// The primary context of device 0, retained once per process.
pub fn context() -> Result<&'static PrimaryContext<'static>> {
    CONTEXT
        .get_or_init(|| PrimaryContext::retain(driver()?, 0))
        .as_ref()
        .map_err(Clone::clone)
}

/// `kernel`, JIT-compiled into the primary context on first use.
pub fn kernel(kernel: Kernel) -> Result<&'static LoadedKernel> {
    KERNELS[kernel.index()]
        .get_or_init(|| {
            let context = context()?;
            let module = MODULES[kernel.index()]
                .get_or_init(|| Module::load_ptx(context, kernel.name(), &kernel.ptx()))
                .as_ref()
                .map_err(Clone::clone)?;
            let function = module.function(kernel.signature())?;
            Ok(LoadedKernel { kernel, module, function })
        })
        .as_ref()
        .map_err(Clone::clone)
}
