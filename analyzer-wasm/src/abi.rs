//! The plain C-style ABI for wasmtime hosts (see `ABI.md`). The module imports nothing and
//! exports `memory`, `tl_alloc`, `tl_free`, `tl_analyze` and `tl_rules`.
//!
//! On wasm32 it also sets the module's global allocator (`size_classes` below).

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

/// [`tl_analyze`] lowering for `torchlower export` ([`crate::Target::Crate`]): the report's
/// `rust` is the `lib.rs` of a plain Rust crate. Same arguments and result block.
///
/// # Safety
/// As for [`tl_analyze`].
#[no_mangle]
pub unsafe extern "C" fn tl_export(src_ptr: *const u8, src_len: u32, name_ptr: *const u8, name_len: u32) -> *mut u8 {
    // SAFETY: guaranteed by the caller.
    let src = unsafe { bytes(src_ptr, src_len) };
    let name = unsafe { bytes(name_ptr, name_len) };
    result_block(&crate::analyze_bytes_for(src, name, crate::Target::Crate).to_json())
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

/// The wasm module's global allocator: small blocks from per-size free lists, the rest from
/// the default allocator (dlmalloc).
///
/// Parsing and analysing allocate and free many small blocks (AST nodes, names, IR) and few
/// large ones. dlmalloc spent about a tenth of a 2,000-line analysis on them; a free list per
/// size class of [`GRANULE`] bytes up to [`MAX_SMALL`] pops and pushes in a few instructions.
/// Blocks of one class are carved from 64 KiB chunks taken from dlmalloc and are reused only
/// within their class (never coalesced or returned), which costs little memory in an
/// instance that lives for one analysis (the wasmtime host) or reuses the same sizes call
/// after call (the playground). Larger or more aligned blocks go to dlmalloc unchanged.
#[cfg(any(all(target_arch = "wasm32", not(target_feature = "atomics")), test))]
mod size_classes {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::UnsafeCell;

    /// Size-class step and the alignment every small block has.
    const GRANULE: usize = 8;
    /// Largest block served from the free lists.
    const MAX_SMALL: usize = 1024;
    const CLASSES: usize = MAX_SMALL / GRANULE;
    /// Bytes taken from dlmalloc at a time for small blocks.
    const CHUNK: usize = 64 << 10;

    struct State {
        /// Head of each class's free list; a free block's first word points to the next.
        free: [*mut u8; CLASSES],
        /// The unused rest of the current chunk.
        next: usize,
        end: usize,
    }

    pub struct SizeClasses(UnsafeCell<State>);

    impl SizeClasses {
        pub const fn new() -> Self {
            SizeClasses(UnsafeCell::new(State { free: [std::ptr::null_mut(); CLASSES], next: 0, end: 0 }))
        }
    }

    // SAFETY: wasm32 without the `atomics` feature has exactly one thread.
    #[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
    unsafe impl Sync for SizeClasses {}

    /// The class of a small layout, `None` for one dlmalloc serves.
    fn class(layout: Layout) -> Option<usize> {
        (layout.size() <= MAX_SMALL && layout.align() <= GRANULE)
            .then(|| layout.size().max(1).div_ceil(GRANULE) - 1)
    }

    impl SizeClasses {
        /// # Safety
        /// Single-threaded only (see the `Sync` impl); `class < CLASSES`.
        unsafe fn alloc_small(&self, class: usize) -> *mut u8 {
            // SAFETY: one thread, and no reference to the state outlives this call.
            let state = unsafe { &mut *self.0.get() };
            let head = state.free[class];
            if !head.is_null() {
                // SAFETY: a free block holds the next free block's address in its first word
                // (blocks are at least GRANULE bytes and GRANULE-aligned).
                state.free[class] = unsafe { *(head as *mut *mut u8) };
                return head;
            }
            let bytes = (class + 1) * GRANULE;
            if state.end - state.next < bytes {
                // SAFETY: CHUNK is non-zero and GRANULE a power of two.
                let chunk = unsafe { System.alloc(Layout::from_size_align_unchecked(CHUNK, GRANULE)) };
                if chunk.is_null() {
                    return chunk;
                }
                state.next = chunk as usize;
                state.end = state.next + CHUNK;
            }
            let block = state.next as *mut u8;
            state.next += bytes;
            block
        }

        /// # Safety
        /// Single-threaded only; `ptr` a live block of class `class`.
        unsafe fn free_small(&self, ptr: *mut u8, class: usize) {
            // SAFETY: as in `alloc_small`; the block is ours again and big enough for a word.
            unsafe {
                let state = &mut *self.0.get();
                *(ptr as *mut *mut u8) = state.free[class];
                state.free[class] = ptr;
            }
        }
    }

    unsafe impl GlobalAlloc for SizeClasses {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            match class(layout) {
                // SAFETY: class() < CLASSES; one thread.
                Some(class) => unsafe { self.alloc_small(class) },
                // SAFETY: forwarded unchanged.
                None => unsafe { System.alloc(layout) },
            }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            match class(layout) {
                Some(class) => {
                    // SAFETY: as in `alloc`; the block has at least `layout.size()` bytes.
                    let block = unsafe { self.alloc_small(class) };
                    if !block.is_null() {
                        unsafe { std::ptr::write_bytes(block, 0, layout.size()) };
                    }
                    block
                }
                // SAFETY: forwarded unchanged (dlmalloc knows fresh memory is zero).
                None => unsafe { System.alloc_zeroed(layout) },
            }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            match class(layout) {
                // SAFETY: the caller frees a block it got for this layout, so of this class.
                Some(class) => unsafe { self.free_small(ptr, class) },
                // SAFETY: forwarded unchanged.
                None => unsafe { System.dealloc(ptr, layout) },
            }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY: the caller guarantees a valid layout for `new_size` with this alignment.
            let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
            match (class(layout), class(new_layout)) {
                (Some(old), Some(new)) if old == new => ptr,
                // SAFETY: both blocks are dlmalloc's.
                (None, None) => unsafe { System.realloc(ptr, layout, new_size) },
                _ => {
                    // SAFETY: a new block, the common prefix copied, the old block freed.
                    unsafe {
                        let block = self.alloc(new_layout);
                        if !block.is_null() {
                            std::ptr::copy_nonoverlapping(ptr, block, layout.size().min(new_size));
                            self.dealloc(ptr, layout);
                        }
                        block
                    }
                }
            }
        }
    }

    #[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
    #[global_allocator]
    static ALLOCATOR: SizeClasses = SizeClasses::new();

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Blocks of every size around the class boundaries, written, resized across classes
        /// and into dlmalloc's range, freed and reused: contents survive, blocks never
        /// overlap, a freed block is handed out again for its class.
        #[test]
        fn blocks_keep_their_contents_and_are_reused() {
            let heap = SizeClasses::new();
            let mut live: Vec<(*mut u8, Layout, u8)> = Vec::new();
            unsafe {
                for (i, size) in (1..=MAX_SMALL + 40).step_by(7).enumerate() {
                    let align = if i % 5 == 0 { 16 } else { 1 << (i % 4) };
                    let layout = Layout::from_size_align(size, align).expect("layout");
                    let block = if i % 3 == 0 { heap.alloc_zeroed(layout) } else { heap.alloc(layout) };
                    assert!(!block.is_null() && (block as usize).is_multiple_of(align));
                    if i % 3 == 0 {
                        assert!(std::slice::from_raw_parts(block, size).iter().all(|&b| b == 0));
                    }
                    std::ptr::write_bytes(block, i as u8, size);
                    live.push((block, layout, i as u8));
                }
                // no two live blocks overlap
                let mut spans: Vec<(usize, usize)> = live.iter().map(|(p, l, _)| (*p as usize, *p as usize + l.size())).collect();
                spans.sort();
                assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0));
                // grow or shrink each block across classes and into dlmalloc and back
                for (n, (block, layout, byte)) in live.iter_mut().enumerate() {
                    let new_size = [3, 64, 700, 2000, 9][n % 5];
                    let grown = heap.realloc(*block, *layout, new_size);
                    assert!(!grown.is_null());
                    let kept = layout.size().min(new_size);
                    assert!(std::slice::from_raw_parts(grown, kept).iter().all(|b| b == byte));
                    *layout = Layout::from_size_align(new_size, layout.align()).expect("layout");
                    std::ptr::write_bytes(grown, *byte, new_size);
                    *block = grown;
                }
                for (block, layout, byte) in &live {
                    assert!(std::slice::from_raw_parts(*block, layout.size()).iter().all(|b| b == byte));
                }
                // a freed small block comes back for the next allocation of its class
                let small = Layout::from_size_align(40, 8).expect("layout");
                let a = heap.alloc(small);
                heap.dealloc(a, small);
                assert_eq!(heap.alloc(Layout::from_size_align(33, 4).expect("layout")), a);
                for (block, layout, _) in live {
                    heap.dealloc(block, layout);
                }
            }
        }
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
