//! Specialised copies of module functions: Python code calls a helper with whatever types it
//! has (CLIP's `ln_post` on a matrix where its annotation says rank 3, torchvision's `_upcast`
//! on an `[N, M, 2]` box tensor), and Python ignores annotations. A call whose argument types
//! differ from the helper's annotation walks the helper's body again with those types (its
//! return type inferred from its `return`s) as a hidden native function, once per distinct
//! argument types; the caller is native only if that copy is.

use super::{analyze_with, Analyzed, Callees};
use crate::parse::LineIndex;
use crate::resolve::ModuleScope;
use crate::ty::Ty;
use ruff_python_ast as ast;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Most specialised copies per module: every distinct (helper, argument types) is one walk, so
/// a hostile module cannot make the analysis grow without bound.
pub const MAX_VARIANTS: usize = 64;

const FALLS_BACK: &str = "with these types it falls back to Python (";

/// A specialised copy: of which function, for which parameter types, and its analysis.
pub struct Variant {
    pub of: usize,
    pub params: Vec<Ty>,
    state: State,
}

enum State {
    /// being walked (a call reaching it again is recursion)
    Walking,
    Done(Box<Analyzed>),
}

impl Variant {
    /// The analysis (an empty, fallback one while a walk was cut short).
    pub fn into_analyzed(self) -> Analyzed {
        match self.state {
            State::Done(a) => *a,
            State::Walking => Analyzed::empty(),
        }
    }
}

/// The module's functions as specialisation needs them, and the copies made so far.
pub struct Specialiser<'a> {
    pub scope: &'a ModuleScope,
    pub index: &'a LineIndex<'a>,
    pub callees: &'a Callees,
    /// the definitions of the callable functions, by their index in the report
    pub defs: BTreeMap<usize, &'a ast::StmtFunctionDef>,
    /// how many functions the report has: copy `k` is function `functions + k`
    pub functions: usize,
    variants: RefCell<Vec<Variant>>,
}

/// A usable copy: its function index, its return type and tuple element types.
pub type Specialised = (usize, Ty, Vec<Ty>);

impl<'a> Specialiser<'a> {
    pub fn new(scope: &'a ModuleScope, index: &'a LineIndex<'a>, callees: &'a Callees, defs: BTreeMap<usize, &'a ast::StmtFunctionDef>, functions: usize) -> Self {
        Specialiser { scope, index, callees, defs, functions, variants: RefCell::new(Vec::new()) }
    }

    /// The copy of function `of` for `params`, walked on first request; `Err` says why there
    /// is none (recursion, too many copies, no return type).
    pub fn variant(&self, of: usize, params: &[Ty]) -> Result<Specialised, String> {
        let found = self.variants.borrow().iter().position(|v| v.of == of && v.params == params);
        let slot = match found {
            Some(slot) => slot,
            None => {
                let Some(def) = self.defs.get(&of).copied() else { return Err("it cannot be specialised".into()) };
                let slot = {
                    let mut variants = self.variants.borrow_mut();
                    if variants.len() >= MAX_VARIANTS {
                        return Err(format!("more than {MAX_VARIANTS} specialised copies in the module"));
                    }
                    variants.push(Variant { of, params: params.to_vec(), state: State::Walking });
                    variants.len() - 1
                };
                // the borrow is released: the walk may ask for further copies
                let analyzed = analyze_with(def, self.scope, self.index, self.callees, self, Some(params), false);
                self.variants.borrow_mut()[slot].state = State::Done(Box::new(analyzed));
                slot
            }
        };
        let variants = self.variants.borrow();
        match &variants[slot].state {
            State::Walking => Err("it calls itself with these types (recursion is not lowered)".into()),
            State::Done(a) => match &a.ir {
                Some(ir) => Ok((self.functions + slot, ir.returns, ir.returns_tuple.clone())),
                None => Err(match a.diagnostics.first() {
                    // the innermost reason of a chain of copies
                    Some(d) => {
                        let nested = d.message.matches(FALLS_BACK).count();
                        let inner = d.message.rsplit(FALLS_BACK).next().unwrap_or(&d.message);
                        let inner = inner.get(..inner.len().saturating_sub(nested)).unwrap_or(inner);
                        format!("{FALLS_BACK}{inner})")
                    }
                    None => "with these types it falls back to Python".into(),
                }),
            },
        }
    }

    /// The report index of `def`, when it can be specialised.
    pub fn index_of(&self, def: &ast::StmtFunctionDef) -> Option<usize> {
        self.defs.iter().find(|(_, d)| std::ptr::eq(**d, def)).map(|(i, _)| *i)
    }

    /// The copies, in function-index order after the report's functions.
    pub fn into_variants(self) -> Vec<Variant> {
        self.variants.into_inner()
    }
}
