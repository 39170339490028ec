//! The device's primary context: the context the CUDA runtime creates for a device, and so
//! the one PyTorch's tensors and streams live in. Retaining it (rather than creating a
//! context of our own) is what lets our kernels read PyTorch's device pointers.

use super::{loader::Driver, note_release, result, sys};

/// One retained reference on a device's primary context; released on drop.
pub struct PrimaryContext<'d> {
    driver: &'d Driver,
    device: sys::CUdevice,
    ordinal: i32,
    handle: sys::CUcontext,
}

// SAFETY: the primary context is a process-wide driver object; the driver API is thread-safe
// and allows any thread to make it current, use it and release a reference on it. We hold
// only its handle (an opaque pointer we never dereference).
unsafe impl Send for PrimaryContext<'_> {}
// SAFETY: as above; every method takes `&self` and goes through thread-safe driver calls.
unsafe impl Sync for PrimaryContext<'_> {}

impl<'d> PrimaryContext<'d> {
    /// Retains the primary context of device `ordinal` (`cuDeviceGet` +
    /// `cuDevicePrimaryCtxRetain`).
    pub fn retain(driver: &'d Driver, ordinal: i32) -> result::Result<PrimaryContext<'d>> {
        let device = result::device::get(driver, ordinal)?;
        let handle = result::ctx::primary_retain(driver, device)?;
        Ok(PrimaryContext { driver, device, ordinal, handle })
    }

    pub fn driver(&self) -> &'d Driver {
        self.driver
    }

    pub fn device(&self) -> sys::CUdevice {
        self.device
    }

    pub fn ordinal(&self) -> i32 {
        self.ordinal
    }

    pub fn handle(&self) -> sys::CUcontext {
        self.handle
    }

    /// Makes this context current on the calling thread for the guard's lifetime. When it
    /// already is (the usual case on a thread where PyTorch ran CUDA work) this costs one
    /// `cuCtxGetCurrent`; otherwise it is pushed and popped again when the guard drops, so
    /// the thread's own context stack is left as it was.
    pub fn bind(&self) -> result::Result<CurrentContext<'_>> {
        let current = result::ctx::get_current(self.driver)?;
        if current == self.handle {
            return Ok(CurrentContext { driver: self.driver, pushed: false });
        }
        // SAFETY: the context stays retained for the guard's lifetime (it borrows `self`).
        unsafe { result::ctx::push_current(self.driver, self.handle)? };
        Ok(CurrentContext { driver: self.driver, pushed: true })
    }

    /// Waits for all work in this context (`cuCtxSynchronize`).
    pub fn synchronize(&self) -> result::Result<()> {
        let _bound = self.bind()?;
        result::ctx::synchronize(self.driver)
    }
}

impl Drop for PrimaryContext<'_> {
    fn drop(&mut self) {
        // SAFETY: we own exactly one retained reference; everything that used the context
        // borrowed `self` and so is gone.
        note_release(unsafe { result::ctx::primary_release(self.driver, self.device) });
    }
}

/// Proof that a context is current on this thread; see [`PrimaryContext::bind`].
pub struct CurrentContext<'c> {
    driver: &'c Driver,
    pushed: bool,
}

impl Drop for CurrentContext<'_> {
    fn drop(&mut self) {
        if self.pushed {
            note_release(result::ctx::pop_current(self.driver).map(|_| ()));
        }
    }
}
