//! Shape queries of generated code (`t.shape[i]`, `t.size(i)`, `t.numel()`): Python ints.
//! The dims are checked against the annotated rank by the analyzer, and the boundary checked
//! the rank, so an index here is always in range.

use tch::Tensor;

use crate::error::{Error, Result};

/// `t.shape[dim]` / `t.size(dim)` for a non-negative `dim` below the rank.
#[inline]
pub fn size(t: &Tensor, dim: usize) -> i64 {
    t.size().get(dim).copied().unwrap_or(1)
}

/// `t.numel()`.
#[inline]
pub fn numel(t: &Tensor) -> Result<i64> {
    i64::try_from(t.numel()).map_err(|_| Error::Overflow("torchlower: numel() does not fit in 64 bits"))
}
