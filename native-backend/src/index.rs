//! Indexing, `t[…]`, exactly as eager's Python indexing applies it (`applySlicing` in
//! torch/csrc/autograd/python_variable_indexing.cpp): left to right, an int selects (with
//! eager's bounds check and message), a slice narrows (a full `:` leaves the dim alone),
//! `None` inserts a size-1 dim, `...` skips the dims no other item names — the result a view
//! of `t` with eager's strides and offset. An index tensor (int64, or a bool mask) or a list
//! of ints is recorded for its dim(s), and when there is one the recorded list goes to
//! `at::index` at the end, as eager does (advanced indexing: a gathered copy).

use tch::Tensor;

use crate::error::{Error, Result};

/// One item of an index expression.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Item<'a> {
    /// `t[i]`: selects index `i` (negative counts from the end) and drops the dim.
    Int(i64),
    /// `t[a:b:c]`, each bound optional.
    Slice(Option<i64>, Option<i64>, Option<i64>),
    /// `t[None]`: a new dim of size 1.
    NewAxis,
    /// `t[...]`: as many full slices as the other items leave dims.
    Ellipsis,
    /// `t[idx]`: an int64 index tensor (one dim) or a bool mask (as many dims as its rank).
    Tensor(&'a Tensor),
    /// `t[[i, j]]`: a list of ints, an int64 index tensor of rank 1.
    List(&'a [i64]),
}

/// How many dims of the indexed tensor an item names.
fn dims_named(item: &Item) -> i64 {
    match item {
        Item::Int(_) | Item::Slice(..) | Item::List(_) => 1,
        Item::Tensor(t) if t.kind() == tch::Kind::Bool => t.dim() as i64,
        Item::Tensor(_) => 1,
        Item::NewAxis | Item::Ellipsis => 0,
    }
}

/// The basic part of `t[items]` applied (a view of `t`, or `t` itself when nothing applies)
/// and at::index's list of the index tensors recorded per dim (empty of `Some` for basic
/// indexing).
fn walk(t: &Tensor, items: &[Item]) -> Result<(Option<Tensor>, Vec<Option<Tensor>>)> {
    let rank = t.dim() as i64;
    let specified: i64 = items.iter().map(dims_named).sum();
    if specified > rank {
        return Err(Error::Index(format!("too many indices for tensor of dimension {rank}")));
    }
    let mut result: Option<Tensor> = None;
    // `dim`: the dim of the result the next item applies to; `real_dim`: the same dim of `t`
    let (mut dim, mut real_dim) = (0i64, 0i64);
    // at::index's list: per dim of the result so far, the index tensor recorded for it (a
    // bool mask's entry stands for as many dims as its rank)
    let mut recorded: Vec<Option<Tensor>> = Vec::new();
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
                recorded.push(None);
                dim += 1;
                real_dim += 1;
            }
            Item::NewAxis => {
                result = Some(current.f_unsqueeze(dim)?);
                recorded.push(None);
                dim += 1;
            }
            Item::Ellipsis => {
                recorded.extend((0..rank - specified).map(|_| None));
                dim += rank - specified;
                real_dim += rank - specified;
            }
            Item::Tensor(index) => {
                let named = dims_named(item);
                recorded.push(Some(index.shallow_clone()));
                dim += named;
                real_dim += named;
            }
            Item::List(values) => {
                recorded.push(Some(Tensor::f_from_slice(values)?));
                dim += 1;
                real_dim += 1;
            }
        }
    }
    if !recorded.iter().any(Option::is_some) {
        recorded.clear();
    }
    Ok((result, recorded))
}

/// `t[items]`.
pub fn get(t: &Tensor, items: &[Item]) -> Result<Tensor> {
    let (result, recorded) = walk(t, items)?;
    let current = result.as_ref().unwrap_or(t);
    if !recorded.is_empty() {
        return Ok(current.f_index(&recorded)?);
    }
    // nothing applied (`t[...]`, `t[:]`): eager returns an alias of `t`
    match result {
        Some(r) => Ok(r),
        None => Ok(t.f_alias()?),
    }
}

/// The right-hand side of `t[items] = value`.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    /// A Python number, converted to `t`'s dtype as eager converts it.
    Number(f64),
    Tensor(&'a Tensor),
}

/// `t[items] = value`, in place on `t` as eager's `__setitem__`: the basic part a view of `t`;
/// with index tensors `index_put_` through it (a number as a 0-dim tensor of `t`'s dtype),
/// else `fill_` with a number or `copy_` of a tensor (broadcast).
pub fn set(t: &Tensor, items: &[Item], value: Value) -> Result<()> {
    let (result, recorded) = walk(t, items)?;
    let mut target = result.unwrap_or_else(|| t.shallow_clone());
    if !recorded.is_empty() {
        let source = match value {
            Value::Number(x) => Tensor::from(x).f_to_kind(t.kind())?,
            Value::Tensor(v) => v.shallow_clone(),
        };
        let _ = target.f_index_put_(&recorded, &source, false)?;
        return Ok(());
    }
    match value {
        Value::Number(x) => {
            let _ = target.f_fill_(x)?;
        }
        Value::Tensor(v) => {
            // eager's `copy_to` for `__setitem__`: the value's leading size-1 dims dropped,
            // then expanded to the target (so a misfit raises eager's "expanded size" text)
            let sizes = v.size();
            if sizes == target.size() || sizes.is_empty() {
                target.f_copy_(v)?;
            } else {
                let ones = sizes.iter().take_while(|&&n| n == 1).count();
                let trimmed = v.f_view(&sizes[ones..])?;
                target.f_copy_(&trimmed.f_expand(target.size(), false)?)?;
            }
        }
    }
    Ok(())
}
