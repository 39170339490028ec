//! Basic indexing, `t[…]` with ints, slices, `None` and `...`, exactly as eager's Python
//! indexing applies it (`applySlicing` in torch/csrc/autograd/python_variable_indexing.cpp):
//! left to right, an int selects (with eager's bounds check and message), a slice narrows
//! (a full `:` leaves the dim alone), `None` inserts a size-1 dim, `...` skips the dims no
//! other item names. The result is a view of `t` with eager's strides and offset.

use tch::Tensor;

use crate::error::{Error, Result};

/// One item of an index expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    /// `t[i]`: selects index `i` (negative counts from the end) and drops the dim.
    Int(i64),
    /// `t[a:b:c]`, each bound optional.
    Slice(Option<i64>, Option<i64>, Option<i64>),
    /// `t[None]`: a new dim of size 1.
    NewAxis,
    /// `t[...]`: as many full slices as the other items leave dims.
    Ellipsis,
}

/// `t[items]`.
pub fn get(t: &Tensor, items: &[Item]) -> Result<Tensor> {
    let rank = t.dim() as i64;
    let specified = items.iter().filter(|i| matches!(i, Item::Int(_) | Item::Slice(..))).count() as i64;
    if specified > rank {
        return Err(Error::Index(format!("too many indices for tensor of dimension {rank}")));
    }
    let mut result: Option<Tensor> = None;
    // `dim`: the dim of the result the next item applies to; `real_dim`: the same dim of `t`
    let (mut dim, mut real_dim) = (0i64, 0i64);
    for item in items {
        let current = result.as_ref().unwrap_or(t);
        match *item {
            Item::Int(index) => {
                let size = current.size()[dim as usize];
                if index < -size || index >= size {
                    return Err(Error::Index(format!("index {index} is out of bounds for dimension {real_dim} with size {size}")));
                }
                result = Some(current.f_select(dim, index)?);
                real_dim += 1;
            }
            Item::Slice(start, stop, step) => {
                let step = step.unwrap_or(1);
                if step == 0 {
                    return Err(Error::Value("slice step cannot be zero".into()));
                }
                if step < 0 {
                    return Err(Error::Value("step must be greater than zero".into()));
                }
                let (start, stop) = (start.unwrap_or(0), stop.unwrap_or(i64::MAX));
                let length = current.size()[dim as usize];
                // eager leaves a full slice alone (no new view for that dim)
                if !(start == 0 && stop >= length && step == 1) {
                    result = Some(current.f_slice(dim, Some(start), Some(stop), step)?);
                }
                dim += 1;
                real_dim += 1;
            }
            Item::NewAxis => {
                result = Some(current.f_unsqueeze(dim)?);
                dim += 1;
            }
            Item::Ellipsis => {
                dim += rank - specified;
                real_dim += rank - specified;
            }
        }
    }
    // nothing applied (`t[...]`, `t[:]`): eager returns an alias of `t`
    match result {
        Some(r) => Ok(r),
        None => Ok(t.f_alias()?),
    }
}
