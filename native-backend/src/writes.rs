//! Whether the body running on this thread wrote into its arguments (TL212): set first thing
//! by the generated body of such a function, read and cleared by the Python entry
//! (`run::run_for`), which then marks an error so that auto mode does not rerun Python on
//! arguments the call changed. Without Python (an exported crate) nothing reads it.

use std::cell::Cell;

thread_local! {
    static WROTE_ARGUMENTS: Cell<bool> = const { Cell::new(false) };
}

/// Called first by the body of a function that writes into its tensor arguments.
pub fn wrote_arguments() {
    WROTE_ARGUMENTS.with(|w| w.set(true));
}

/// Whether a body wrote into its arguments since the last call; clears the mark.
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub(crate) fn take() -> bool {
    WROTE_ARGUMENTS.with(|w| w.replace(false))
}
