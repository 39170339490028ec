//! Modules (JIT-compiled PTX) and their kernels, with launches checked against the kernel's
//! parameter list.

use std::ffi::{c_void, CString};

use super::launch::{Arg, KernelSignature, LaunchConfig, MAX_PARAMS};
use super::{context::PrimaryContext, note_release, result, stream::StreamHandle, sys};

/// A loaded module; unloaded on drop.
pub struct Module<'c> {
    context: &'c PrimaryContext<'c>,
    handle: sys::CUmodule,
}

// SAFETY: module handles may be used and unloaded from any thread (driver API is
// thread-safe); we never dereference the handle.
unsafe impl Send for Module<'_> {}
// SAFETY: as above.
unsafe impl Sync for Module<'_> {}

impl<'c> Module<'c> {
    /// JIT-compiles `ptx` in `context` (`cuModuleLoadDataEx`); a failure carries the JIT log.
    pub fn load_ptx(context: &'c PrimaryContext<'c>, label: &str, ptx: &str) -> result::Result<Module<'c>> {
        let text = CString::new(ptx)
            .map_err(|_| result::CudaError::Unsupported(format!("torchlower: PTX of {label} contains NUL")))?;
        let _bound = context.bind()?;
        match result::module::load_data(context.driver(), &text) {
            Ok(handle) => Ok(Module { context, handle }),
            Err((result::CudaError::Driver(error), log)) => {
                Err(result::CudaError::Jit { kernel: label.to_string(), error: Box::new(error), log })
            }
            Err((other, _)) => Err(other),
        }
    }

    /// The kernel described by `signature` (looked up by its name). The signature is bound
    /// to the function, so every launch is checked against it.
    pub fn function(&self, signature: &'static KernelSignature) -> result::Result<Function<'_>> {
        let name = CString::new(signature.name).map_err(|_| {
            result::CudaError::Unsupported(format!("torchlower: kernel name {} contains NUL", signature.name))
        })?;
        let _bound = self.context.bind()?;
        // SAFETY: the module is live for the returned function's lifetime (it borrows self).
        let handle = unsafe { result::module::get_function(self.context.driver(), self.handle, &name)? };
        Ok(Function { module: self, handle, signature })
    }
}

impl Drop for Module<'_> {
    fn drop(&mut self) {
        let outcome = self.context.bind().and_then(|_bound| {
            // SAFETY: we own the module; its functions borrowed `self` and are gone.
            unsafe { result::module::unload(self.context.driver(), self.handle) }
        });
        note_release(outcome);
    }
}

/// A kernel of a loaded module, with its parameter list.
pub struct Function<'m> {
    module: &'m Module<'m>,
    handle: sys::CUfunction,
    signature: &'static KernelSignature,
}

// SAFETY: `cuLaunchKernel` may be called on one function from several threads.
unsafe impl Send for Function<'_> {}
// SAFETY: as above.
unsafe impl Sync for Function<'_> {}

impl Function<'_> {
    pub fn signature(&self) -> &'static KernelSignature {
        self.signature
    }

    /// Launches on `stream` after checking `args` against the kernel's parameter list.
    /// Allocates nothing: the parameter pointers live in a fixed-size array on the stack.
    ///
    /// # Safety
    /// Every pointer argument must address device memory of the function's context, large
    /// enough for what the kernel reads and writes given the other arguments (the kernel
    /// descriptions in `kernels` say what that is), and stay valid until the kernel ran.
    pub unsafe fn launch(&self, config: LaunchConfig, stream: StreamHandle, args: &[Arg]) -> result::Result<()> {
        self.signature.check(args)?;
        let mut pointers: [*mut c_void; MAX_PARAMS] = [std::ptr::null_mut(); MAX_PARAMS];
        for (slot, arg) in pointers.iter_mut().zip(args) {
            *slot = arg.value_ptr();
        }
        let context = self.module.context;
        let _bound = context.bind()?;
        // SAFETY: one pointer per parameter, each to a value of the parameter's type (checked
        // above); `args` outlives the call and the driver copies the values; the caller vouches
        // for the device pointers.
        unsafe {
            result::launch::kernel(
                context.driver(),
                self.handle,
                config.grid,
                config.block,
                config.shared_bytes,
                stream.raw(),
                &mut pointers[..args.len()],
            )
        }
    }
}
