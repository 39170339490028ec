//! Device memory we allocate ourselves (tests and the GPU check; the tensor ops use memory
//! PyTorch allocated).

use std::marker::PhantomData;

use super::{context::PrimaryContext, note_release, result, sys};

/// Element types that may be copied to and from the device byte for byte.
///
/// # Safety
/// Implementors must be plain data: every bit pattern valid, no padding, no pointers.
pub unsafe trait DeviceRepr: Copy + Default + 'static {}
// SAFETY: primitive numbers are plain data.
unsafe impl DeviceRepr for f32 {}
// SAFETY: as above.
unsafe impl DeviceRepr for i64 {}
// SAFETY: as above.
unsafe impl DeviceRepr for u32 {}

/// `len` elements of `T` in device memory of `context`; freed on drop.
pub struct DeviceBuffer<'c, T: DeviceRepr> {
    context: &'c PrimaryContext<'c>,
    pointer: sys::CUdeviceptr,
    len: usize,
    _element: PhantomData<T>,
}

// SAFETY: the buffer owns its allocation; freeing it or copying into it from another thread
// is allowed by the driver. `&self` methods only read device memory or return its address.
unsafe impl<T: DeviceRepr> Send for DeviceBuffer<'_, T> {}
// SAFETY: as above.
unsafe impl<T: DeviceRepr> Sync for DeviceBuffer<'_, T> {}

impl<'c, T: DeviceRepr> DeviceBuffer<'c, T> {
    /// Allocates room for `len` elements (contents undefined). A zero-length buffer allocates
    /// nothing and has address 0.
    pub fn alloc(context: &'c PrimaryContext<'c>, len: usize) -> result::Result<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            result::CudaError::Unsupported(format!("torchlower: device buffer of {len} elements is too large"))
        })?;
        let pointer = if bytes == 0 {
            0
        } else {
            let _bound = context.bind()?;
            result::memory::alloc(context.driver(), bytes)?
        };
        Ok(DeviceBuffer { context, pointer, len, _element: PhantomData })
    }

    /// Allocates and fills from `values`.
    pub fn from_host(context: &'c PrimaryContext<'c>, values: &[T]) -> result::Result<Self> {
        let mut buffer = Self::alloc(context, values.len())?;
        buffer.copy_from_host(values)?;
        Ok(buffer)
    }

    /// Overwrites the whole buffer with `values` (which must have `len` elements).
    pub fn copy_from_host(&mut self, values: &[T]) -> result::Result<()> {
        self.check_len(values.len())?;
        if self.len == 0 {
            return Ok(());
        }
        let _bound = self.context.bind()?;
        // SAFETY: `values` is plain data (DeviceRepr) of exactly the buffer's byte size.
        let bytes = unsafe { std::slice::from_raw_parts(values.as_ptr() as *const u8, std::mem::size_of_val(values)) };
        // SAFETY: the allocation holds `bytes.len()` bytes.
        unsafe { result::memory::copy_h_to_d(self.context.driver(), self.pointer, bytes) }
    }

    /// Copies the buffer back to the host (waits for prior work on the legacy stream).
    pub fn to_host(&self) -> result::Result<Vec<T>> {
        let mut values = vec![T::default(); self.len];
        if self.len == 0 {
            return Ok(values);
        }
        let _bound = self.context.bind()?;
        // SAFETY: `values` is plain data of exactly the buffer's byte size.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(values.as_mut_ptr() as *mut u8, std::mem::size_of_val(values.as_slice()))
        };
        // SAFETY: the allocation holds `bytes.len()` bytes.
        unsafe { result::memory::copy_d_to_h(self.context.driver(), bytes, self.pointer)? };
        Ok(values)
    }

    /// The device address, for kernel arguments.
    pub fn device_ptr(&self) -> u64 {
        self.pointer
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn check_len(&self, got: usize) -> result::Result<()> {
        if got == self.len {
            Ok(())
        } else {
            Err(result::CudaError::Unsupported(format!(
                "torchlower: host slice of {got} elements for a device buffer of {}",
                self.len
            )))
        }
    }
}

impl<T: DeviceRepr> Drop for DeviceBuffer<'_, T> {
    fn drop(&mut self) {
        if self.pointer == 0 {
            return;
        }
        let outcome = self.context.bind().and_then(|_bound| {
            // SAFETY: we own the allocation; callers synchronise before dropping buffers a
            // kernel may still use (cuMemFree itself waits for the device to be idle).
            unsafe { result::memory::free(self.context.driver(), self.pointer) }
        });
        note_release(outcome);
    }
}
