//! Events, used to time kernels on the device.

use super::{context::PrimaryContext, note_release, result, stream::StreamHandle, sys};

/// A CUDA event; destroyed on drop.
pub struct Event<'c> {
    context: &'c PrimaryContext<'c>,
    handle: sys::CUevent,
}

impl<'c> Event<'c> {
    pub fn create(context: &'c PrimaryContext<'c>) -> result::Result<Event<'c>> {
        let _bound = context.bind()?;
        Ok(Event { context, handle: result::event::create(context.driver())? })
    }

    /// Records the event on `stream`.
    pub fn record(&self, stream: StreamHandle) -> result::Result<()> {
        let _bound = self.context.bind()?;
        // SAFETY: the event is live; the stream handle is live or special by construction.
        unsafe { result::event::record(self.context.driver(), self.handle, stream.raw()) }
    }

    /// Milliseconds from `self` to `end`, waiting for `end` first.
    pub fn elapsed_ms(&self, end: &Event<'_>) -> result::Result<f32> {
        let _bound = self.context.bind()?;
        // SAFETY: both events are live.
        unsafe {
            result::event::synchronize(self.context.driver(), end.handle)?;
            result::event::elapsed_ms(self.context.driver(), self.handle, end.handle)
        }
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        // SAFETY: we own the event.
        note_release(unsafe { result::event::destroy(self.context.driver(), self.handle) });
    }
}
