//! The typing environment: for each local name, its type and whether it is definitely bound.

use crate::claim::Lit;
use crate::ir::ReturnedPair;
use crate::ty::Ty;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    pub ty: Ty,
    /// bound on every path that reaches this point
    pub definite: bool,
    /// the paths that reach this point bind it to different known types (so `ty` is
    /// unknown, and nothing reported that yet)
    pub conflicting: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Env {
    names: BTreeMap<String, Binding>,
    /// tensor locals whose storage is provably not a parameter's (fresh results of claimed ops,
    /// or views of such): in-place ops on them cannot be observed by the caller
    fresh: std::collections::BTreeSet<String>,
    /// locals bound to a value known statically and with no native form: a string literal,
    /// a dtype, a device (`device = x.device`), read back as that value
    statics: BTreeMap<String, Lit>,
    /// tuple locals bound to a list display (`to_cat = []`) and not read since: nothing else
    /// can refer to the list, so `.append(v)` may extend the local in place (timm's
    /// `to_cat.append(…)`); any read drops the name from here (an alias may then see it)
    lists: std::collections::BTreeSet<String>,
    /// tuple locals that are not plain tuples: an op's `torch.return_types` record, a module
    /// function's returned tuple (`None`: it depends on the path that reached here)
    pairs: BTreeMap<String, Option<ReturnedPair>>,
}

impl Env {
    pub fn get(&self, name: &str) -> Option<Binding> {
        self.names.get(name).copied()
    }

    pub fn bind(&mut self, name: &str, ty: Ty) {
        self.names.insert(name.to_string(), Binding { ty, definite: true, conflicting: false });
        self.fresh.remove(name);
        self.statics.remove(name);
        self.lists.remove(name);
        self.pairs.remove(name);
    }

    /// `del name`: the name is unbound from here on (a later read is an unbound-name error, as
    /// Python's `UnboundLocalError`).
    pub fn unbind(&mut self, name: &str) {
        self.names.remove(name);
        self.fresh.remove(name);
        self.statics.remove(name);
        self.lists.remove(name);
        self.pairs.remove(name);
    }

    /// Remember that the tuple local `name` holds a list nothing else refers to (see `lists`).
    pub fn mark_list(&mut self, name: &str) {
        self.lists.insert(name.to_string());
    }

    /// Whether `name` holds a list nothing else refers to (see `lists`).
    pub fn is_unshared_list(&self, name: &str) -> bool {
        self.lists.contains(name)
    }

    /// `name` was read: its list (if any) may now have an alias.
    pub fn share_list(&mut self, name: &str) {
        self.lists.remove(name);
    }

    /// Remember the Python type of the tuple local `name` (see `pairs`).
    pub fn set_pair(&mut self, name: &str, pair: Option<ReturnedPair>) {
        if pair != Some(ReturnedPair::Tuple) {
            self.pairs.insert(name.to_string(), pair);
        }
    }

    /// The Python type of the tuple local `name` (see `pairs`).
    pub fn pair(&self, name: &str) -> Option<ReturnedPair> {
        self.pairs.get(name).copied().unwrap_or(Some(ReturnedPair::Tuple))
    }

    /// [`Env::bind`] to a static value (see `statics`).
    pub fn bind_static(&mut self, name: &str, ty: Ty, value: Lit) {
        self.bind(name, ty);
        self.statics.insert(name.to_string(), value);
    }

    /// Remember the literal an int, float or bool local was just bound to (an unrolled loop's
    /// variable): reads keep the local's code and carry the literal for static decisions.
    pub fn remember_literal(&mut self, name: &str, value: Lit) {
        self.statics.insert(name.to_string(), value);
    }

    /// Forget the static values of `names` (a loop body walked once rebinds them: at the loop
    /// head, and so in the condition and the body, their value is no longer known).
    pub fn forget_statics<'n>(&mut self, names: impl IntoIterator<Item = &'n String>) {
        for name in names {
            self.statics.remove(name);
        }
    }

    /// The static value `name` is bound to, if any.
    pub fn static_value(&self, name: &str) -> Option<&Lit> {
        self.statics.get(name)
    }

    /// [`Env::bind`] to a value whose storage is not a parameter's.
    pub fn bind_fresh(&mut self, name: &str, ty: Ty) {
        self.bind(name, ty);
        self.fresh.insert(name.to_string());
    }

    /// Forget that `names` are fresh (a loop body may rebind them before the next iteration
    /// reaches an in-place op on them).
    pub fn forget_fresh<'n>(&mut self, names: impl IntoIterator<Item = &'n String>) {
        for name in names {
            self.fresh.remove(name);
        }
    }

    pub fn is_fresh(&self, name: &str) -> bool {
        self.fresh.contains(name)
    }

    /// Merge of two control-flow paths: a name keeps its type only when both agree, and is
    /// definite only when bound on both.
    pub fn join(&self, other: &Env) -> Env {
        let mut names = BTreeMap::new();
        for (name, a) in &self.names {
            let joined = match other.names.get(name) {
                Some(b) => {
                    let ty = a.ty.join(b.ty);
                    let conflicting = a.conflicting || b.conflicting || (ty == Ty::Unknown && a.ty != Ty::Unknown && b.ty != Ty::Unknown);
                    Binding { ty, definite: a.definite && b.definite, conflicting }
                }
                None => Binding { ty: a.ty, definite: false, conflicting: a.conflicting },
            };
            names.insert(name.clone(), joined);
        }
        for (name, b) in &other.names {
            names.entry(name.clone()).or_insert(Binding { ty: b.ty, definite: false, conflicting: b.conflicting });
        }
        let fresh = self.fresh.intersection(&other.fresh).cloned().collect();
        // a static value survives a merge only when both paths bound the same one
        let statics = self.statics.iter().filter(|(n, v)| other.statics.get(*n) == Some(*v)).map(|(n, v)| (n.clone(), v.clone())).collect();
        let lists = self.lists.intersection(&other.lists).cloned().collect();
        // a tuple's Python type survives a merge only when both paths agree on it
        let pairs = self.pairs.keys().chain(other.pairs.keys()).map(|n| (n.clone(), Some(self.pair(n)).filter(|p| *p == other.pair(n)).flatten())).collect();
        Env { names, fresh, statics, lists, pairs }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Binding)> {
        self.names.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ty::TensorTy;

    #[test]
    fn join_keeps_agreeing_types_only() {
        let mut a = Env::default();
        let mut b = Env::default();
        a.bind("h", Ty::Tensor(TensorTy::F32_CPU_2D));
        b.bind("h", Ty::Tensor(TensorTy::F32_CPU_1D));
        a.bind("n", Ty::Int);
        b.bind("n", Ty::Int);
        a.bind("only_a", Ty::Bool);
        let j = a.join(&b);
        assert_eq!(j.get("h"), Some(Binding { ty: Ty::Unknown, definite: true, conflicting: true }));
        assert_eq!(j.get("n"), Some(Binding { ty: Ty::Int, definite: true, conflicting: false }));
        assert_eq!(j.get("only_a"), Some(Binding { ty: Ty::Bool, definite: false, conflicting: false }));
    }
}
