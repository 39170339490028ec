//! One analysis inside a fresh, limited wasmtime store.
//!
//! The analyzer module imports nothing, so the only way it can affect the host is through
//! what it returns and how much it consumes. Every call gets a new store and instance
//! (nothing leaks from one analysis into the next: the instance's memory starts from the
//! module's initial image, whether freshly mapped or a pool slot reset by wasmtime, and a
//! trapped instance is simply dropped) with three limits: linear memory, time (an epoch
//! deadline) and native stack. Each one that is hit comes back as its own [`SandboxError`] variant,
//! which Python turns into `torchlower.AnalyzerError`.
//!
//! The ABI (analyzer-wasm/ABI.md): `tl_alloc(len) -> ptr`, `tl_analyze(src, src_len, name,
//! name_len) -> ptr` to `[u32 LE length][JSON]`, and `tl_rules() -> ptr` to the same kind of
//! block holding the rule registry. The blocks are not freed with `tl_free`: the whole store,
//! memory included, is dropped right after the result is copied out.

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use wasmtime::{Engine, Instance, Memory, Module, ResourceLimiter, Store, Trap, TypedFunc};

use crate::engine::{EPOCH_TICK, HOST_STACK_HEADROOM, MAX_MEMORY, MAX_WASM_STACK};

/// Sources larger than this are refused before any wasm runs.
pub const MAX_INPUT_BYTES: usize = 16 << 20;
/// Linear memory one analysis may grow to (also the most it may be given: see
/// [`MAX_MEMORY`]).
pub const DEFAULT_MEMORY_LIMIT: usize = MAX_MEMORY;
/// Time every analysis gets whatever its size (instantiation, small inputs).
pub const TIME_BASE: Duration = Duration::from_secs(5);
/// Extra time per source byte. The analysis takes about 0.2 µs per byte on ordinary code
/// (scripts/bench_analyze.py's 2,000-line modules, on a 2-core Xeon); a hundred times that
/// lets any ordinary file through on a loaded machine, while a pathological input that makes
/// the analysis superlinear is stopped.
pub const TIME_PER_BYTE: Duration = Duration::from_micros(20);

/// The limits of one call; `None` fields take the defaults above.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    pub memory_bytes: Option<usize>,
    pub time_limit: Option<Duration>,
}

impl Limits {
    /// The memory limit asked for, capped at [`MAX_MEMORY`] (the size of a pool slot).
    fn memory_bytes(&self) -> usize {
        self.memory_bytes.unwrap_or(DEFAULT_MEMORY_LIMIT).min(MAX_MEMORY)
    }

    /// Time proportional to the input, so a large but ordinary file is never cut short.
    fn time_for(&self, input_len: usize) -> Duration {
        self.time_limit.unwrap_or_else(|| {
            TIME_BASE.saturating_add(TIME_PER_BYTE.saturating_mul(u32::try_from(input_len).unwrap_or(u32::MAX)))
        })
    }
}

/// Why an analysis produced no report.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("input too large ({len} bytes, limit {} MiB)", MAX_INPUT_BYTES >> 20)]
    InputTooLarge { len: usize },
    #[error("invalid UTF-8 at byte {offset} of the {what}")]
    InvalidUtf8 { what: &'static str, offset: usize },
    #[error("memory limit: the analyzer needed more than {} MiB of linear memory", limit >> 20)]
    MemoryLimit { limit: usize },
    #[error("time limit: the analysis took more than {:.3} s", limit.as_secs_f64())]
    TimeLimit { limit: Duration },
    #[error(
        "stack overflow: the analyzer recursed too deeply (input nested too deeply?; \
         wasm stack limit {} MiB)", MAX_WASM_STACK >> 20
    )]
    StackOverflow,
    #[error("analyzer trapped: {0}")]
    Trapped(String),
    #[error("analyzer broke its ABI: {0}")]
    Protocol(String),
    #[error("could not run the analyzer: {0}")]
    Host(String),
}

impl SandboxError {
    /// A stable, machine-readable name for the reason (`AnalyzerError.kind` in Python).
    pub fn kind(&self) -> &'static str {
        match self {
            SandboxError::InputTooLarge { .. } => "input_too_large",
            SandboxError::InvalidUtf8 { .. } => "invalid_utf8",
            SandboxError::MemoryLimit { .. } => "memory_limit",
            SandboxError::TimeLimit { .. } => "time_limit",
            SandboxError::StackOverflow => "stack_overflow",
            SandboxError::Trapped(_) => "trap",
            SandboxError::Protocol(_) => "protocol",
            SandboxError::Host(_) => "host",
        }
    }
}

/// Caps linear memory and remembers whether the cap was hit, so the resulting trap (the
/// analyzer aborts when an allocation fails) is reported as the memory limit it really is.
struct MemoryCap {
    limit: usize,
    hit: bool,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.hit = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // The analyzer's only table holds its indirect-call targets; it never grows.
        Ok(desired <= 100_000)
    }
}

/// What the analyzer lowers native functions for (its two analysis exports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lowering {
    /// `tl_analyze`: a Python extension (what `torchlower.compile` builds).
    Extension,
    /// `tl_export`: a plain Rust crate (`torchlower export`).
    Crate,
}

impl Lowering {
    fn export_name(self) -> &'static str {
        match self {
            Lowering::Extension => "tl_analyze",
            Lowering::Crate => "tl_export",
        }
    }
}

/// Analyzes `source` (checked here to be UTF-8) as file `filename`; returns the report JSON.
pub fn analyze(module: &Module, source: &[u8], filename: &str, limits: Limits) -> Result<String, SandboxError> {
    analyze_for(module, source, filename, limits, Lowering::Extension)
}

/// [`analyze`] with the native functions lowered for `lowering`.
pub fn analyze_for(
    module: &Module,
    source: &[u8],
    filename: &str,
    limits: Limits,
    lowering: Lowering,
) -> Result<String, SandboxError> {
    if source.len() > MAX_INPUT_BYTES {
        return Err(SandboxError::InputTooLarge { len: source.len() });
    }
    if let Err(err) = std::str::from_utf8(source) {
        return Err(SandboxError::InvalidUtf8 { what: "source", offset: err.valid_up_to() });
    }
    let time_limit = limits.time_for(source.len());
    run_isolated(module, limits.memory_bytes(), time_limit, |store, instance, memory| {
        let alloc: TypedFunc<u32, u32> = instance.get_typed_func(&mut *store, "tl_alloc")?;
        let entry = lowering.export_name();
        let analyze: TypedFunc<(u32, u32, u32, u32), u32> = instance
            .get_typed_func(&mut *store, entry)
            .map_err(|_| protocol(format!("this analyzer wasm has no `{entry}` export")))?;
        let (source_ptr, source_len) = copy_in(store, &alloc, memory, source)?;
        let (name_ptr, name_len) = copy_in(store, &alloc, memory, filename.as_bytes())?;
        let block = analyze.call(&mut *store, (source_ptr, source_len, name_ptr, name_len))?;
        if block == 0 {
            return Err(CallError::OutOfMemory(format!("{entry} returned null")));
        }
        Ok(block)
    })
}

/// The analyzer's registry of rules and diagnostic codes (JSON), from the export
/// `tl_rules() -> ptr` (same result block as `tl_analyze`).
pub fn rules(module: &Module) -> Result<String, SandboxError> {
    run_isolated(module, DEFAULT_MEMORY_LIMIT, TIME_BASE, |store, instance, _| {
        let rules: TypedFunc<(), u32> = instance
            .get_typed_func(&mut *store, "tl_rules")
            .map_err(|_| protocol("this analyzer wasm has no `tl_rules` export"))?;
        match rules.call(&mut *store, ())? {
            0 => Err(CallError::OutOfMemory("tl_rules returned null".into())),
            block => Ok(block),
        }
    })
}

/// How many analyses hold a slot of the shared engine's pool, and a signal when one ends.
static SLOTS_IN_USE: Mutex<u32> = Mutex::new(0);
static SLOT_FREED: Condvar = Condvar::new();

/// A slot of the shared engine's instance pool, held for one analysis: instantiating beyond
/// the pool's size would fail, so callers beyond it wait here (with the GIL released).
struct Slot {
    pooled: bool,
}

impl Slot {
    fn acquire(engine: &Engine) -> Slot {
        let capacity = match crate::engine::shared() {
            Ok(shared) if Engine::same(engine, &shared.engine) => shared.slots,
            _ => None,
        };
        let Some(capacity) = capacity else { return Slot { pooled: false } };
        let mut in_use = SLOTS_IN_USE.lock().unwrap_or_else(PoisonError::into_inner);
        while *in_use >= capacity {
            in_use = SLOT_FREED.wait(in_use).unwrap_or_else(PoisonError::into_inner);
        }
        *in_use += 1;
        Slot { pooled: true }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if self.pooled {
            let mut in_use = SLOTS_IN_USE.lock().unwrap_or_else(PoisonError::into_inner);
            *in_use = in_use.saturating_sub(1);
            SLOT_FREED.notify_one();
        }
    }
}

/// Instantiates `module` in a fresh store limited to `memory_limit` bytes and `time_limit`, lets
/// `call` produce a result block inside it and returns the block's text. Runs on a thread of
/// its own with a known stack size (see [`MAX_WASM_STACK`]), so the stack limit holds
/// whatever thread Python calls us from.
fn run_isolated<F>(module: &Module, memory_limit: usize, time_limit: Duration, call: F) -> Result<String, SandboxError>
where
    F: FnOnce(&mut Store<MemoryCap>, Instance, Memory) -> Result<u32, CallError> + Send,
{
    let _slot = Slot::acquire(module.engine());
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("torchlower-analyzer".into())
            .stack_size(MAX_WASM_STACK + HOST_STACK_HEADROOM)
            .spawn_scoped(scope, || {
                let mut store = Store::new(module.engine(), MemoryCap { limit: memory_limit, hit: false });
                store.limiter(|cap| cap);
                // the deadline is in ticks of the engine's clock; the trap comes at the first
                // tick past it, so a limit below one tick still allows up to one tick
                let ticks = time_limit.as_nanos().div_ceil(EPOCH_TICK.as_nanos()).max(1);
                store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX));
                store.epoch_deadline_trap();
                let result = instantiate_and_call(&mut store, module, call);
                let memory_cap_hit = store.data().hit;
                result.map_err(|err| classify(err, memory_cap_hit, memory_limit, time_limit))
            })
            .map_err(|err| SandboxError::Host(format!("could not start a thread: {err}")))?;
        worker
            .join()
            .map_err(|_| SandboxError::Host("the wasm host panicked".into()))?
    })
}

fn instantiate_and_call<F>(store: &mut Store<MemoryCap>, module: &Module, call: F) -> Result<String, CallError>
where
    F: FnOnce(&mut Store<MemoryCap>, Instance, Memory) -> Result<u32, CallError>,
{
    let instance = Instance::new(&mut *store, module, &[])?;
    let memory = instance
        .get_memory(&mut *store, "memory")
        .ok_or_else(|| protocol("no exported memory named `memory`"))?;
    let block = call(store, instance, memory)?;
    read_block(memory.data(&*store), block)
}

/// Failures while the instance runs: straight from wasmtime, an allocation that came back
/// null, or an ABI violation. The first two are classified once the store can say whether
/// the memory cap was hit.
enum CallError {
    Wasm(wasmtime::Error),
    OutOfMemory(String),
    Sandbox(SandboxError),
}

impl From<wasmtime::Error> for CallError {
    fn from(err: wasmtime::Error) -> Self {
        CallError::Wasm(err)
    }
}

fn protocol(message: impl Into<String>) -> CallError {
    CallError::Sandbox(SandboxError::Protocol(message.into()))
}

/// The text of a result block `[u32 LE length][UTF-8 bytes]` at `block`.
fn read_block(data: &[u8], block: u32) -> Result<String, CallError> {
    let header = read(data, block as usize, 4)
        .ok_or_else(|| protocol(format!("result pointer {block} is outside memory")))?;
    let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
    let text = read(data, block as usize + 4, len)
        .ok_or_else(|| protocol(format!("result length {len} runs past the end of memory")))?;
    String::from_utf8(text.to_vec()).map_err(|err| {
        protocol(format!("the result is not UTF-8 (byte {})", err.utf8_error().valid_up_to()))
    })
}

/// Allocates `bytes.len()` bytes inside the instance and copies `bytes` there.
fn copy_in(
    store: &mut Store<MemoryCap>,
    alloc: &TypedFunc<u32, u32>,
    memory: Memory,
    bytes: &[u8],
) -> Result<(u32, u32), CallError> {
    let len = u32::try_from(bytes.len()).map_err(|_| {
        CallError::Sandbox(SandboxError::InputTooLarge { len: bytes.len() })
    })?;
    let ptr = alloc.call(&mut *store, len)?;
    if ptr == 0 {
        return Err(CallError::OutOfMemory(format!("tl_alloc({len}) returned null")));
    }
    memory
        .write(&mut *store, ptr as usize, bytes)
        .map_err(|_| protocol(format!("tl_alloc({len}) returned {ptr}, outside memory")))?;
    Ok((ptr, len))
}

fn read(data: &[u8], start: usize, len: usize) -> Option<&[u8]> {
    data.get(start..start.checked_add(len)?)
}

/// Names the limit behind a failed call, if any.
fn classify(err: CallError, memory_cap_hit: bool, memory_limit: usize, time_limit: Duration) -> SandboxError {
    let limit_hit = SandboxError::MemoryLimit { limit: memory_limit };
    match err {
        CallError::Sandbox(err) => err,
        CallError::OutOfMemory(_) if memory_cap_hit => limit_hit,
        CallError::OutOfMemory(what) => SandboxError::Protocol(what),
        CallError::Wasm(err) => match err.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => SandboxError::TimeLimit { limit: time_limit },
            Some(Trap::StackOverflow) => SandboxError::StackOverflow,
            // A refused memory.grow makes the analyzer's allocator abort (an `unreachable`).
            _ if memory_cap_hit => limit_hit,
            Some(trap) => SandboxError::Trapped(trap.to_string()),
            None => SandboxError::Trapped(format!("{err:#}")),
        },
    }
}
