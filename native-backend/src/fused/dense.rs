//! Which tensors the fused kernels read and write directly: contiguous float32 CPU tensors
//! of rank ≤ 2. Anything else takes the tch path so that semantics never change.

use tch::{Device, Kind, Tensor};

use crate::error::Result;

/// A contiguous float32 CPU tensor of rank ≤ 2, seen as `rows × cols` (rank 1 is one row,
/// rank 0 one element).
#[derive(Debug, Clone, Copy)]
pub struct Dense {
    pub ptr: *mut f32,
    pub rank: usize,
    pub rows: usize,
    pub cols: usize,
}

impl Dense {
    /// The view, or `None` when the tensor is not one the kernels take.
    pub fn of(t: &Tensor) -> Option<Dense> {
        let facts = crate::facts::Facts::of(t)?;
        if facts.device != Device::Cpu || !facts.is_kind(Kind::Float) || facts.rank > 2 {
            return None;
        }
        let (contiguous, ptr) = crate::facts::contiguous_data(t)?;
        if !contiguous {
            return None;
        }
        let [m, n] = facts.sizes;
        let (rows, cols) = match facts.rank {
            0 => (1, 1),
            1 => (1, m as usize),
            _ => (m as usize, n as usize),
        };
        Some(Dense { ptr, rank: facts.rank, rows, cols })
    }

    /// The shape as torch reports it.
    pub fn shape(&self) -> Vec<i64> {
        match self.rank {
            0 => vec![],
            1 => vec![self.cols as i64],
            _ => vec![self.rows as i64, self.cols as i64],
        }
    }

    pub fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// The elements, read-only.
    ///
    /// # Safety
    /// The tensor this view came from is alive and not written while the slice is used.
    pub unsafe fn values<'a>(&self) -> &'a [f32] {
        if self.len() == 0 {
            return &[];
        }
        // SAFETY: contiguous storage of `len` f32s starting at `ptr` (checked in `of`).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len()) }
    }

    /// The elements, writable.
    ///
    /// # Safety
    /// As [`Dense::values`], and nothing else reads or writes the storage meanwhile (the
    /// tensor is a fresh output of this crate).
    pub unsafe fn values_mut<'a>(&self) -> &'a mut [f32] {
        if self.len() == 0 {
            return &mut [];
        }
        // SAFETY: see above.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len()) }
    }
}

/// A new uninitialised float32 CPU tensor and its view (one allocation, no fill); a tensor of
/// rank ≥ 3 is seen as the rows of its last dim (its storage is contiguous).
pub fn empty(shape: &[i64]) -> Result<(Tensor, Dense)> {
    let tensor = Tensor::f_empty(shape, (Kind::Float, Device::Cpu))?;
    let dense = match (Dense::of(&tensor), shape.split_last()) {
        (Some(dense), _) => dense,
        (None, Some((&cols, leading))) => {
            let (_, ptr) = crate::facts::contiguous_data(&tensor).expect("a fresh tensor has a data pointer");
            Dense { ptr, rank: 2, rows: leading.iter().product::<i64>() as usize, cols: cols as usize }
        }
        (None, None) => unreachable!("a rank-0 float32 CPU tensor is dense"),
    };
    Ok((tensor, dense))
}

/// 64 bytes of floats: scratch is allocated in these so that it is aligned like libtorch's own
/// buffers (the BLAS writes GEMM results there, and is measurably slower on unaligned rows).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f32; 16]);

thread_local! {
    /// Scratch space for intermediates that never become tensors (GEMM results consumed by a
    /// reduction, the ping-pong buffers of a layer loop). Grows, never shrinks.
    static SCRATCH: std::cell::RefCell<[Vec<Line>; 2]> = const { std::cell::RefCell::new([Vec::new(), Vec::new()]) };
}

/// Runs `body` with two 64-byte-aligned scratch buffers of `len` elements each.
pub fn with_scratch<T>(len: usize, body: impl FnOnce(&mut [f32], &mut [f32]) -> T) -> T {
    let lines = len.div_ceil(16);
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffers) => {
            let [a, b] = &mut *buffers;
            for buffer in [&mut *a, &mut *b] {
                if buffer.len() < lines {
                    buffer.resize(lines, Line([0.0; 16]));
                }
            }
            body(&mut floats(a)[..len], &mut floats(b)[..len])
        }
        // Re-entered (cannot happen from generated code): use fresh buffers.
        Err(_) => body(&mut vec![0.0; len], &mut vec![0.0; len]),
    })
}

fn floats(lines: &mut [Line]) -> &mut [f32] {
    // SAFETY: `Line` is `repr(C)` around `[f32; 16]` with no padding (64 bytes either way), so
    // the lines are `16 · len` contiguous, initialised f32s, borrowed for as long as `lines`.
    unsafe { std::slice::from_raw_parts_mut(lines.as_mut_ptr() as *mut f32, lines.len() * 16) }
}
