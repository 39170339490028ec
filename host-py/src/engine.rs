//! The one wasmtime [`Engine`] of the process and the limits every analysis runs under.
//!
//! An engine owns Cranelift's settings and the signal handlers; building one per call would
//! waste time and make compiled modules incompatible, so it is created once and shared.

use std::sync::OnceLock;

use wasmtime::{Config, Engine};

/// Bytes of native stack that wasm code may use before it traps with "call stack exhausted".
/// The analysis runs on a thread of its own whose stack is this plus [`HOST_STACK_HEADROOM`],
/// so the limit holds whatever thread Python calls us from.
pub const MAX_WASM_STACK: usize = 8 << 20;

/// Native stack left to wasmtime and our own frames beyond what wasm may use.
pub const HOST_STACK_HEADROOM: usize = 2 << 20;

/// The shared engine: fuel metering on (each call gets its own budget), the wasm stack capped.
pub fn shared() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut config = Config::new();
        config.consume_fuel(true);
        config.max_wasm_stack(MAX_WASM_STACK);
        // The fixed configuration above is always valid, so a failure here is a bug in this
        // file, not something a caller can cause.
        #[allow(clippy::expect_used)]
        Engine::new(&config).expect("the fixed wasmtime configuration is valid")
    })
}
