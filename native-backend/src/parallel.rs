//! Our kernels on torch's intra-op threads.
//!
//! Why libtorch's pool and not one of our own: with more than one torch thread, eager's ops run
//! on libtorch's OpenMP threads, which spin for a while after each parallel region. A second
//! pool would compete with them for the same cores and pay a wake-up per call; joining theirs
//! costs a fork-join of already spinning threads, follows `torch.set_num_threads`, and runs
//! inline when called from inside another parallel region (`at::parallel_for`'s own rules,
//! through `tl_parallel_for` of src/shim.cpp).

use std::any::Any;
use std::os::raw::{c_int, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

extern "C" {
    fn tl_parallel_for(
        begin: i64,
        end: i64,
        grain: i64,
        body: extern "C" fn(*mut c_void, i64, i64),
        context: *mut c_void,
    ) -> c_int;
}

/// What the C side hands back to [`run_part`]: the body, and the first panic of any part.
struct Job<'a> {
    body: &'a (dyn Fn(usize, usize) + Sync),
    panicked: Mutex<Option<Box<dyn Any + Send>>>,
}

/// Runs `body(begin, end)` over disjoint parts covering `0..n`: on this thread when `n ≤ grain`
/// or torch has one thread, else split by libtorch across its threads (this one included). A
/// panic in a part is raised again here once every part has ended.
pub(crate) fn for_each_part(n: usize, grain: usize, body: &(dyn Fn(usize, usize) + Sync)) {
    if n == 0 {
        return;
    }
    if n <= grain || crate::facts::num_threads() <= 1 {
        body(0, n);
        return;
    }
    let job = Job { body, panicked: Mutex::new(None) };
    // SAFETY: `job` outlives the call (tl_parallel_for returns after every part has run);
    // `run_part` only reads it and never unwinds into C++.
    let status = unsafe { tl_parallel_for(0, n as i64, grain as i64, run_part, &job as *const Job as *mut c_void) };
    if let Some(payload) = job.panicked.into_inner().unwrap_or_else(|e| e.into_inner()) {
        panic::resume_unwind(payload);
    }
    if status != 0 {
        // libtorch threw before running anything (it does not, short of memory): run it here.
        body(0, n);
    }
}

/// A buffer that the parts of one [`for_each_part`] write, each its own disjoint ranges.
pub(crate) struct DisjointParts<'a, T = f32> {
    ptr: *mut T,
    len: usize,
    _buffer: std::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: see `part`: no two live slices of it overlap, and `T: Send` values may be written
// from the thread that holds a part.
unsafe impl<T: Send> Sync for DisjointParts<'_, T> {}

impl<'a, T> DisjointParts<'a, T> {
    pub(crate) fn new(buffer: &'a mut [T]) -> Self {
        DisjointParts { ptr: buffer.as_mut_ptr(), len: buffer.len(), _buffer: std::marker::PhantomData }
    }

    /// Elements `offset..offset + len` of the buffer.
    ///
    /// SAFETY: no other live slice from this buffer overlaps the range (each part of a
    /// `for_each_part` takes the ranges of its own indices).
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn part(&self, offset: usize, len: usize) -> &mut [T] {
        assert!(offset + len <= self.len, "a part past the end of the buffer");
        std::slice::from_raw_parts_mut(self.ptr.add(offset), len)
    }
}

extern "C" fn run_part(context: *mut c_void, begin: i64, end: i64) {
    // SAFETY: `context` is the `Job` that `for_each_part` passed and keeps alive.
    let job = unsafe { &*(context as *const Job) };
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| (job.body)(begin as usize, end as usize))) {
        let mut first = job.panicked.lock().unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// torch's thread count is one setting for the whole process: tests that set it take turns.
    static THREAD_COUNT: Mutex<()> = Mutex::new(());

    #[test]
    fn parts_cover_the_range_once_at_any_thread_count() {
        let _turn = THREAD_COUNT.lock().unwrap_or_else(|e| e.into_inner());
        for threads in [1, 2, 4] {
            tch::set_num_threads(threads);
            let seen: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(0)).collect();
            for_each_part(1000, 7, &|begin, end| {
                for i in begin..end {
                    seen[i].fetch_add(1, Ordering::Relaxed);
                }
            });
            assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1), "threads {threads}");
        }
    }

    #[test]
    fn more_than_one_thread_splits_the_range() {
        let _turn = THREAD_COUNT.lock().unwrap_or_else(|e| e.into_inner());
        tch::set_num_threads(2);
        let parts = Mutex::new(Vec::new());
        for_each_part(64, 1, &|begin, end| parts.lock().unwrap().push((begin, end)));
        let mut parts = parts.into_inner().unwrap();
        parts.sort();
        // one part per thread when the shim joins libtorch's OpenMP pool; the whole range otherwise
        let expected = if cfg!(torchlower_openmp) { vec![(0, 32), (32, 64)] } else { vec![(0, 64)] };
        assert_eq!(parts, expected);
    }

    #[test]
    fn a_panic_in_a_part_reaches_the_caller() {
        let _turn = THREAD_COUNT.lock().unwrap_or_else(|e| e.into_inner());
        tch::set_num_threads(2);
        let caught = panic::catch_unwind(|| for_each_part(100, 1, &|begin, _| panic!("part at {begin}")));
        let message = caught.expect_err("a part's panic");
        let text = message.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(text.starts_with("part at "), "{text}");
    }
}
