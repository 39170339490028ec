//! Streams: our own ([`Stream`]) or a borrowed handle ([`StreamHandle`]), e.g. the stream
//! PyTorch is currently using, which we must launch on so our kernels are ordered with its
//! work.

use super::{context::PrimaryContext, note_release, result, sys};

/// A stream to launch on, owned elsewhere. `Copy`: it is only a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamHandle(sys::CUstream);

// SAFETY: a stream handle may be used from any thread; the driver serialises work on it.
unsafe impl Send for StreamHandle {}
// SAFETY: as above.
unsafe impl Sync for StreamHandle {}

impl StreamHandle {
    /// The legacy default stream (`CU_STREAM_LEGACY`): PyTorch's default stream, implicitly
    /// ordered with every blocking stream of the context.
    pub const LEGACY: StreamHandle = StreamHandle(sys::CU_STREAM_LEGACY);

    /// Wraps a raw `CUstream`/`cudaStream_t` value (e.g. `torch.cuda.current_stream().cuda_stream`).
    ///
    /// # Safety
    /// The stream must belong to the primary context and stay alive while work launched
    /// through this handle is in flight.
    pub unsafe fn from_raw(raw: usize) -> StreamHandle {
        StreamHandle(raw as sys::CUstream)
    }

    pub fn raw(self) -> sys::CUstream {
        self.0
    }

    /// Waits for the work queued on this stream (`cuStreamSynchronize`).
    pub fn synchronize(self, context: &PrimaryContext<'_>) -> result::Result<()> {
        let _bound = context.bind()?;
        // SAFETY: by construction the handle is live or special.
        unsafe { result::stream::synchronize(context.driver(), self.0) }
    }
}

/// A non-blocking stream we created; destroyed on drop.
pub struct Stream<'c> {
    context: &'c PrimaryContext<'c>,
    handle: sys::CUstream,
}

// SAFETY: see `StreamHandle`; destroying a stream from another thread is allowed.
unsafe impl Send for Stream<'_> {}
// SAFETY: as above.
unsafe impl Sync for Stream<'_> {}

impl<'c> Stream<'c> {
    /// `cuStreamCreate(CU_STREAM_NON_BLOCKING)` in `context`.
    pub fn create(context: &'c PrimaryContext<'c>) -> result::Result<Stream<'c>> {
        let _bound = context.bind()?;
        let handle = result::stream::create(context.driver(), sys::CU_STREAM_NON_BLOCKING)?;
        Ok(Stream { context, handle })
    }

    pub fn handle(&self) -> StreamHandle {
        StreamHandle(self.handle)
    }

    pub fn synchronize(&self) -> result::Result<()> {
        self.handle().synchronize(self.context)
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        let outcome = self.context.bind().and_then(|_bound| {
            // SAFETY: we created the stream and nothing else owns it.
            unsafe { result::stream::destroy(self.context.driver(), self.handle) }
        });
        note_release(outcome);
    }
}
