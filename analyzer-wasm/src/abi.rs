//! The plain C-style ABI for wasmtime hosts (see `ABI.md`). The module imports nothing and
//! exports `memory`, `tl_alloc`, `tl_free`, `tl_analyze` and `tl_rules`.

use std::alloc::{alloc, dealloc, Layout};

fn layout(len: u32) -> Option<Layout> {
    // size 0 is not allowed by the allocator; a 1-byte block stands in for it
    Layout::from_size_align((len as usize).max(1), 1).ok()
}

/// Allocate `len` bytes in the module's memory for the host to write into.
/// Returns null if the allocation fails.
#[no_mangle]
pub extern "C" fn tl_alloc(len: u32) -> *mut u8 {
    match layout(len) {
        // SAFETY: the layout has a non-zero size.
        Some(l) => unsafe { alloc(l) },
        None => std::ptr::null_mut(),
    }
}

/// Free a block from `tl_alloc` (with the same `len`) or from `tl_analyze` (with `len + 4`).
///
/// # Safety
/// `ptr` must come from `tl_alloc(len)` / `tl_analyze` and not be freed twice.
#[no_mangle]
pub unsafe extern "C" fn tl_free(ptr: *mut u8, len: u32) {
    if ptr.is_null() {
        return;
    }
    if let Some(l) = layout(len) {
        // SAFETY: guaranteed by the caller (same pointer and size as allocated).
        unsafe { dealloc(ptr, l) }
    }
}

/// Analyze `src` (UTF-8) named `name`; returns a block `[u32 LE length][JSON bytes]` that the
/// host frees with `tl_free(ptr, length + 4)`. Null only if memory is exhausted.
///
/// # Safety
/// The pointer/length pairs must describe readable memory of this module (null allowed when
/// the length is 0).
#[no_mangle]
pub unsafe extern "C" fn tl_analyze(src_ptr: *const u8, src_len: u32, name_ptr: *const u8, name_len: u32) -> *mut u8 {
    // SAFETY: guaranteed by the caller.
    let src = unsafe { bytes(src_ptr, src_len) };
    let name = unsafe { bytes(name_ptr, name_len) };
    result_block(&crate::analyze_bytes_json(src, name))
}

/// The rule registry (`rules::registry_json()`: every claim rule, extension and diagnostic
/// code with its summary, explanation, example and hint) in the same kind of block as
/// [`tl_analyze`]; the host frees it with `tl_free(ptr, length + 4)`. Null only if memory is
/// exhausted.
#[no_mangle]
pub extern "C" fn tl_rules() -> *mut u8 {
    result_block(&crate::rules::registry_json())
}

/// A block `[u32 LE length][bytes of text]` allocated with [`tl_alloc`]; null if it does not
/// fit in memory.
fn result_block(text: &str) -> *mut u8 {
    let Ok(len) = u32::try_from(text.len()) else { return std::ptr::null_mut() };
    let Some(total) = len.checked_add(4) else { return std::ptr::null_mut() };
    let out = tl_alloc(total);
    if out.is_null() {
        return out;
    }
    // SAFETY: `out` points to `total` writable bytes just allocated.
    unsafe {
        std::ptr::copy_nonoverlapping(len.to_le_bytes().as_ptr(), out, 4);
        std::ptr::copy_nonoverlapping(text.as_ptr(), out.add(4), text.len());
    }
    out
}

unsafe fn bytes<'a>(ptr: *const u8, len: u32) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller of `tl_analyze`.
        unsafe { std::slice::from_raw_parts(ptr, len as usize) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analyze_round_trip_through_the_abi() {
        let src = b"def f(x):\n    return x\n";
        let name = b"m.py";
        unsafe {
            let sp = tl_alloc(src.len() as u32);
            std::ptr::copy_nonoverlapping(src.as_ptr(), sp, src.len());
            let np = tl_alloc(name.len() as u32);
            std::ptr::copy_nonoverlapping(name.as_ptr(), np, name.len());
            let out = tl_analyze(sp, src.len() as u32, np, name.len() as u32);
            assert!(!out.is_null());
            let mut len_bytes = [0u8; 4];
            std::ptr::copy_nonoverlapping(out, len_bytes.as_mut_ptr(), 4);
            let len = u32::from_le_bytes(len_bytes);
            let json = std::slice::from_raw_parts(out.add(4), len as usize);
            let value: serde_json::Value = serde_json::from_slice(json).expect("valid JSON");
            assert_eq!(value["schema"], 1);
            assert_eq!(value["filename"], "m.py");
            tl_free(out, len + 4);
            tl_free(sp, src.len() as u32);
            tl_free(np, name.len() as u32);
        }
    }

    /// Reads a result block and frees it.
    unsafe fn take_block(out: *mut u8) -> serde_json::Value {
        assert!(!out.is_null());
        let mut len_bytes = [0u8; 4];
        unsafe {
            std::ptr::copy_nonoverlapping(out, len_bytes.as_mut_ptr(), 4);
            let len = u32::from_le_bytes(len_bytes);
            let json = std::slice::from_raw_parts(out.add(4), len as usize);
            let value = serde_json::from_slice(json).expect("valid JSON");
            tl_free(out, len + 4);
            value
        }
    }

    #[test]
    fn rules_export_is_the_registry() {
        let value = unsafe { take_block(tl_rules()) };
        let registry: serde_json::Value =
            serde_json::from_str(&crate::rules::registry_json()).expect("valid JSON");
        assert_eq!(value, registry);
        let codes = value["codes"].as_array().expect("codes");
        assert_eq!(codes.len(), crate::rules::ALL_CODES.len());
        let rules = value["rules"].as_array().expect("rules");
        assert_eq!(rules.len(), crate::rules::ALL_RULES.len());
        for (entry, code) in codes.iter().zip(crate::rules::ALL_CODES) {
            assert_eq!(entry["code"], code.code);
            assert_eq!(entry["explanation"], code.explanation);
            assert_eq!(entry["hint"], code.hint);
        }
    }

    #[test]
    fn invalid_utf8_is_a_diagnostic_not_a_trap() {
        let json = crate::analyze_bytes_json(b"x = '\xff'\n", b"\xfe.py");
        let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(value["diagnostics"][0]["code"], "TL003");
    }
}
