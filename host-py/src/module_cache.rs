//! The analyzer module, compiled once per machine rather than once per process.
//!
//! Cranelift takes seconds to compile the analyzer; a serialized module loads in
//! milliseconds. Entries are keyed by the sha256 of the wasm bytes together with the engine's
//! compatibility hash (wasmtime version and every setting that changes generated code), so a
//! rebuilt analyzer or an upgraded wasmtime never loads a stale entry. Entries are written to
//! a temporary file and renamed into place, so readers never see half a file; an entry that
//! fails to load (truncated, corrupt, foreign) is compiled again and overwritten.

use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::{Engine, Module};

/// How the module was obtained; reported to Python so tests and benchmarks can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from a cache entry.
    Hit,
    /// No entry: compiled and stored.
    Miss,
    /// An entry existed but could not be loaded: compiled and replaced.
    Replaced,
    /// No cache directory could be used: compiled in memory only.
    Disabled,
}

impl CacheOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheOutcome::Hit => "hit",
            CacheOutcome::Miss => "miss",
            CacheOutcome::Replaced => "replaced",
            CacheOutcome::Disabled => "disabled",
        }
    }
}

/// Feeds `Hash` output into a sha256 so the engine's compatibility hash becomes part of a
/// stable, collision-resistant file name (std's `DefaultHasher` promises no stability).
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finish(&self) -> u64 {
        // Never used: the key is taken from the full digest.
        0
    }
}

/// The cache file name for `wasm` compiled by `engine`.
pub fn cache_key(engine: &Engine, wasm: &[u8]) -> String {
    let mut hasher = Sha256Hasher(Sha256::new());
    hasher.write(&Sha256::digest(wasm));
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let digest = hasher.0.finalize();
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("analyzer-{hex}.cwasm")
}

/// Loads the compiled module for `wasm` from `cache_dir`, or compiles it and stores it there.
/// A cache directory that cannot be created or written only costs the compilation.
pub fn load_or_compile(
    engine: &Engine,
    wasm: &[u8],
    cache_dir: Option<&Path>,
) -> wasmtime::Result<(Module, CacheOutcome)> {
    let Some(dir) = cache_dir else {
        return Ok((Module::new(engine, wasm)?, CacheOutcome::Disabled));
    };
    let entry = dir.join(cache_key(engine, wasm));
    let existed = entry.is_file();
    if existed {
        // SAFETY: `deserialize_file` trusts the file to be a module that this wasmtime
        // serialized. Entries are only ever written by `store` below, under a name derived
        // from the engine's compatibility hash, into a directory owned by the user; wasmtime
        // still checks its header, version and settings and rejects foreign or truncated
        // files with an error, which we answer by compiling again.
        if let Ok(module) = unsafe { Module::deserialize_file(engine, &entry) } {
            return Ok((module, CacheOutcome::Hit));
        }
    }
    let module = Module::new(engine, wasm)?;
    let outcome = match store(&module, dir, &entry) {
        Ok(()) if existed => CacheOutcome::Replaced,
        Ok(()) => CacheOutcome::Miss,
        Err(_) => CacheOutcome::Disabled,
    };
    Ok((module, outcome))
}

/// Writes the serialized module next to its final name, then renames it into place.
fn store(module: &Module, dir: &Path, entry: &Path) -> std::io::Result<()> {
    let bytes = module
        .serialize()
        .map_err(|err| std::io::Error::other(err.to_string()))?;
    fs::create_dir_all(dir)?;
    let temporary: PathBuf = dir.join(format!(
        ".{}.{}.tmp",
        entry.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
        std::process::id()
    ));
    let result = (|| {
        let mut file = fs::File::create(&temporary)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, entry)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest module that exports something, written as binary wasm (no `wat` feature).
    fn tiny_module() -> Vec<u8> {
        // (module (func (export "f") (result i32) i32.const 7))
        vec![
            0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
            0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type section: () -> i32
            0x03, 0x02, 0x01, 0x00, // function section
            0x07, 0x05, 0x01, 0x01, b'f', 0x00, 0x00, // export "f"
            0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x07, 0x0b, // code: i32.const 7
        ]
    }

    #[test]
    fn miss_then_hit_then_corrupt_entry_is_replaced() -> wasmtime::Result<()> {
        let engine = &crate::engine::shared().map_err(wasmtime::Error::msg)?.engine;
        let dir = tempfile::tempdir()?;
        let wasm = tiny_module();

        let (_, first) = load_or_compile(engine, &wasm, Some(dir.path()))?;
        assert_eq!(first, CacheOutcome::Miss);
        let (_, second) = load_or_compile(engine, &wasm, Some(dir.path()))?;
        assert_eq!(second, CacheOutcome::Hit);

        let entry = dir.path().join(cache_key(engine, &wasm));
        fs::write(&entry, b"not a compiled module")?;
        let (module, third) = load_or_compile(engine, &wasm, Some(dir.path()))?;
        assert_eq!(third, CacheOutcome::Replaced);
        assert!(module.get_export("f").is_some());
        let (_, fourth) = load_or_compile(engine, &wasm, Some(dir.path()))?;
        assert_eq!(fourth, CacheOutcome::Hit);
        Ok(())
    }

    #[test]
    fn key_depends_on_the_wasm_bytes() -> Result<(), String> {
        let engine = &crate::engine::shared()?.engine;
        let mut other = tiny_module();
        other[32] = 0x08; // i32.const 8
        assert_ne!(cache_key(engine, &tiny_module()), cache_key(engine, &other));
        Ok(())
    }
}
