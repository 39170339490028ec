//! RAII owners of driver objects. Each borrows what it depends on (a module its context, a
//! function its module), so the borrow checker guarantees they are released in the right
//! order: buffers, functions and modules before the context, the context before the driver.
//!
//! `Drop` never panics: a failing release (the driver is shutting down, the context is
//! already gone) is counted in [`release_failures`] and otherwise ignored, because there is
//! nothing a destructor can do about it.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{launch, loader, result, sys};

mod buffer;
mod context;
mod event;
mod module;
mod stream;

pub use buffer::{DeviceBuffer, DeviceRepr};
pub use context::{CurrentContext, PrimaryContext};
pub use event::Event;
pub use module::{Function, Module};
pub use stream::{Stream, StreamHandle};

static RELEASE_FAILURES: AtomicUsize = AtomicUsize::new(0);

/// How many releases in `Drop` implementations have failed in this process.
pub fn release_failures() -> usize {
    RELEASE_FAILURES.load(Ordering::Relaxed)
}

/// Records the outcome of a release done in `Drop`.
fn note_release(outcome: result::Result<()>) {
    if outcome.is_err() {
        RELEASE_FAILURES.fetch_add(1, Ordering::Relaxed);
    }
}
