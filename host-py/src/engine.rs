//! The one wasmtime [`Engine`] of the process and the limits every analysis runs under.
//!
//! An engine owns Cranelift's settings and the signal handlers; building one per call would
//! waste time and make compiled modules incompatible, so it is created once and shared.

use std::sync::OnceLock;

use wasmtime::{Config, Engine};

/// Bytes of native stack that wasm code may use before it traps with "call stack exhausted".
/// The analysis runs on a thread of its own whose stack is this plus [`HOST_STACK_HEADROOM`],
/// so the limit holds whatever thread Python calls us from.
pub const MAX_WASM_STACK: usize = 4 << 20;

/// Native stack left to wasmtime and our own frames beyond what wasm may use.
pub const HOST_STACK_HEADROOM: usize = 2 << 20;

/// The shared engine: fuel metering on (each call gets its own budget), the wasm stack capped
/// at [`MAX_WASM_STACK`]. A configuration wasmtime refuses is reported (on every call), never
/// a panic.
pub fn shared() -> Result<&'static Engine, String> {
    static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();
    ENGINE.get_or_init(|| build(MAX_WASM_STACK)).as_ref().map_err(Clone::clone)
}

/// An engine like the shared one with a smaller wasm stack: only for tests of the stack limit
/// and for diagnosing stack-hungry inputs (it compiles the module again).
pub fn with_stack_limit(max_wasm_stack: usize) -> Result<Engine, String> {
    if max_wasm_stack == 0 || max_wasm_stack > MAX_WASM_STACK {
        return Err(format!("max_wasm_stack must be in 1..={MAX_WASM_STACK} bytes"));
    }
    build(max_wasm_stack)
}

fn build(max_wasm_stack: usize) -> Result<Engine, String> {
    let mut config = Config::new();
    config.consume_fuel(true);
    config.max_wasm_stack(max_wasm_stack);
    // Engine::new checks max_wasm_stack <= async_stack_size even without async use.
    config.async_stack_size(max_wasm_stack);
    Engine::new(&config).map_err(|err| format!("wasmtime rejected its configuration: {err:#}"))
}
