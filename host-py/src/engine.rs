//! The one wasmtime [`Engine`] of the process and the limits every analysis runs under.
//!
//! An engine owns Cranelift's settings and the signal handlers; building one per call would
//! waste time and make compiled modules incompatible, so it is created once and shared.
//!
//! The shared engine allocates instances from a pool of [`POOL_SLOTS`] slots: a slot's linear
//! memory stays mapped between analyses and is reset to the module's initial image when the
//! store is dropped (zeroed with `memset` up to [`KEEP_RESIDENT`] bytes, with `madvise`
//! beyond), so a call neither maps fresh memory nor takes a page fault for every page it
//! touches, as it would with memory allocated on demand (about a tenth of a 2,000-line
//! analysis went to the kernel that way). Nothing of one analysis is visible to the next: the
//! reset is wasmtime's, the same as for a fresh mapping. At most [`POOL_SLOTS`] analyses run at
//! once; further callers wait for a slot (see `sandbox::Slot`). Where the pool's address space
//! cannot be reserved (a tight `ulimit -v`), the engine allocates on demand instead.

use std::sync::OnceLock;
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often an engine's epoch advances: the granularity of the analysis time limit (see
/// `sandbox::Limits`). Epoch interruption costs a load and compare at loop heads and
/// function entries; fuel metering, which counts every instruction, cost 20–28% of the
/// analysis.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Bytes of native stack that wasm code may use before it traps with "call stack exhausted".
/// The analysis runs on a thread of its own whose stack is this plus [`HOST_STACK_HEADROOM`],
/// so the limit holds whatever thread Python calls us from.
pub const MAX_WASM_STACK: usize = 4 << 20;

/// Native stack left to wasmtime and our own frames beyond what wasm may use.
pub const HOST_STACK_HEADROOM: usize = 2 << 20;

/// The most linear memory one analysis may have (the default limit is this; a larger limit
/// asked for is capped here).
pub const MAX_MEMORY: usize = 512 << 20;

/// Instances (so analyses) the shared engine's pool holds at once. Each slot reserves address
/// space only (4 GiB plus guard pages, as every wasmtime memory does), not memory.
pub const POOL_SLOTS: u32 = 16;

/// Bytes of a slot's linear memory reset with `memset` rather than returned to the kernel
/// when an analysis ends: a 2,000-line analysis touches about 6 MiB.
pub const KEEP_RESIDENT: usize = 16 << 20;

/// The shared engine and how many analyses it runs at once (its pool's size, or `None` when
/// it allocates on demand).
pub struct Shared {
    pub engine: Engine,
    pub slots: Option<u32>,
}

/// The shared engine: epoch interruption on (each call gets its own deadline), the wasm stack capped
/// at [`MAX_WASM_STACK`], instances from a pool. A configuration wasmtime refuses is reported
/// (on every call), never a panic.
pub fn shared() -> Result<&'static Shared, String> {
    static ENGINE: OnceLock<Result<Shared, String>> = OnceLock::new();
    ENGINE
        .get_or_init(|| match build(MAX_WASM_STACK, true) {
            Ok(engine) => Ok(Shared { engine, slots: Some(POOL_SLOTS) }),
            Err(_) => build(MAX_WASM_STACK, false).map(|engine| Shared { engine, slots: None }),
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// An engine like the shared one with a smaller wasm stack, allocating on demand: only for
/// tests of the stack limit and for diagnosing stack-hungry inputs (it compiles the module
/// again).
pub fn with_stack_limit(max_wasm_stack: usize) -> Result<Engine, String> {
    if max_wasm_stack == 0 || max_wasm_stack > MAX_WASM_STACK {
        return Err(format!("max_wasm_stack must be in 1..={MAX_WASM_STACK} bytes"));
    }
    build(max_wasm_stack, false)
}

fn build(max_wasm_stack: usize, pooled: bool) -> Result<Engine, String> {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.max_wasm_stack(max_wasm_stack);
    // Engine::new checks max_wasm_stack <= async_stack_size even without async use.
    config.async_stack_size(max_wasm_stack);
    if pooled {
        let mut pool = PoolingAllocationConfig::new();
        pool.total_core_instances(POOL_SLOTS)
            .total_memories(POOL_SLOTS)
            .total_tables(POOL_SLOTS)
            .max_memory_size(MAX_MEMORY)
            .linear_memory_keep_resident(KEEP_RESIDENT)
            .table_keep_resident(64 << 10);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    let engine = Engine::new(&config).map_err(|err| format!("wasmtime rejected its configuration: {err:#}"))?;
    start_ticker(&engine)?;
    Ok(engine)
}

/// Advances `engine`'s epoch every [`EPOCH_TICK`] on a thread of its own, which ends once the
/// engine is dropped (it holds only a weak reference).
fn start_ticker(engine: &Engine) -> Result<(), String> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("torchlower-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .map(drop)
        .map_err(|err| format!("could not start the analyzer's clock thread: {err}"))
}
