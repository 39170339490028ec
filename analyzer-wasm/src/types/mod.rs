//! Typing of functions: a single flow-sensitive pass over each function body that tracks the
//! type of every local, asks [`crate::claim`] about every torch site, records diagnostics and
//! builds the [`crate::ir`] tree when everything is lowerable.

pub mod env;
pub mod function;
pub mod locals;
pub mod ty;
