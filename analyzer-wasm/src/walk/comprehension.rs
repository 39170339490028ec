//! List comprehensions over sequences whose elements are known while analysing — llama2.c's
//! `[d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]`, pyGAT's
//! `[layer(x, adj, att[0], att[1]) for att in attentions]` — unrolled into the list display
//! Python builds: one element per item whose `if` clauses hold.
//!
//! Python gives a comprehension its own scope: its targets are not the function's locals, so
//! they are never assigned; while an element is walked, each target name stands for its item
//! ([`Walker::comprehension`], read first by `Walker::name`). An item is substituted, not held,
//! so only items that can be read again without evaluating anything twice are taken (names,
//! literals, shape sizes, tuples of those); anything else keeps the comprehension in Python.

use super::{Val, Walker};
use crate::claim::Lit;
use crate::ir;
use crate::rules;
use crate::ty::Ty;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

impl Walker<'_> {
    /// `[elt for target in iterable if cond …]` with one `for` clause: the list of its
    /// elements, or an explained unknown (with its diagnostic) when it cannot be unrolled.
    pub(super) fn list_comprehension(&mut self, comp: &ast::ExprListComp) -> Val {
        let refuse = |w: &mut Self, why: String| {
            w.diag(&rules::NESTED_SCOPE, format!("list comprehension inside a native function: {why}"), comp.range());
            Val::explained(Ty::Unknown)
        };
        let [generator] = &comp.generators[..] else {
            return refuse(self, "only one `for` clause is unrolled".into());
        };
        if generator.is_async {
            return refuse(self, "`async for` is not lowered".into());
        }
        let Some(items) = self.comprehension_items(&generator.iter) else {
            return refuse(self, "its iterable's elements are not known while analysing (a tuple or list of known length, `enumerate`/`zip` of those, or `range` of known bounds are)".into());
        };
        if let Some(name) = target_names(&generator.target).into_iter().find(|n| self.scope.get(n).is_some() || INTERPRETED_BUILTINS.contains(&n.as_str())) {
            // the walk resolves module names and builtins from the syntax, not through the
            // substitution: a target that shadows one is not followed
            return refuse(self, format!("its target `{name}` shadows a module-level name or a builtin"));
        }
        if nests_a_scope(&comp.elt) || generator.ifs.iter().any(nests_a_scope) {
            return refuse(self, "a comprehension or lambda nested in it is not unrolled".into());
        }
        if !items.iter().all(rereadable) {
            return refuse(self, "an element of its iterable is computed (the elements are read once per use)".into());
        }
        if self.unrolled + items.len() > super::loops::MAX_UNROLLED {
            return refuse(self, format!("more than {} iterations unrolled in one function", super::loops::MAX_UNROLLED));
        }
        self.unrolled += items.len();
        let mut elems = Vec::with_capacity(items.len());
        for item in items {
            let mark = self.comprehension.len();
            let bound = self.bind_comprehension_target(&generator.target, item);
            let kept = bound.and_then(|()| self.comprehension_conditions(&generator.ifs));
            let elem = kept.map(|keep| keep.then(|| self.expr(&comp.elt)));
            self.comprehension.truncate(mark);
            match elem {
                Ok(Some(v)) => elems.push(v),
                Ok(None) => {}
                Err(why) => return refuse(self, why),
            }
        }
        let mut made = Val::sequence(Ty::List(0), elems);
        made.fresh = true;
        made
    }

    /// The items a comprehension iterates, evaluated once: `range(…)` of known bounds,
    /// `enumerate(seq)` / `zip(a, b, …)` of known sequences, or a tuple / list value.
    fn comprehension_items(&mut self, iter: &Expr) -> Option<Vec<Val>> {
        if let Expr::Call(c) = iter {
            if let Some(ints) = self.literal_range(c) {
                return Some(ints.into_iter().map(int_val).collect());
            }
            let builtin = |w: &Self, name: &str| matches!(&*c.func, Expr::Name(f) if f.id.as_str() == name && !w.locals.contains(name) && w.scope.is_builtin(name));
            let args = &c.arguments.args;
            let plain = !args.iter().any(|a| matches!(a, Expr::Starred(_)));
            if builtin(self, "enumerate") && args.len() == 1 && c.arguments.keywords.is_empty() {
                let items = self.comprehension_items(&args[0])?;
                return Some(items.into_iter().zip(0..).map(|(v, i)| Val::tuple(vec![int_val(i), v])).collect());
            }
            if builtin(self, "zip") && !args.is_empty() && plain && c.arguments.keywords.is_empty() {
                let mut columns = Vec::with_capacity(args.len());
                for arg in args {
                    columns.push(self.comprehension_items(arg)?);
                }
                let n = columns.iter().map(Vec::len).min().unwrap_or(0);
                return Some((0..n).map(|i| Val::tuple(columns.iter().map(|c| c[i].clone()).collect())).collect());
            }
        }
        self.expr(iter).sequence_items()
    }

    /// Binds the target names of one item (a name, or a tuple of targets unpacking a tuple
    /// item of that length).
    fn bind_comprehension_target(&mut self, target: &Expr, item: Val) -> Result<(), String> {
        match target {
            Expr::Name(n) => {
                self.comprehension.push((n.id.to_string(), item));
                Ok(())
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => match item.sequence_items() {
                Some(items) if items.len() == elts.len() => elts.iter().zip(items).try_for_each(|(t, v)| self.bind_comprehension_target(t, v)),
                _ => Err(format!("its target unpacks {} values from {}", elts.len(), item.ty.describe())),
            },
            _ => Err("its target is not a name or a tuple of names".into()),
        }
    }

    /// Whether every `if` clause holds for the bound item (Python stops at the first that
    /// does not); each must be known while analysing.
    fn comprehension_conditions(&mut self, ifs: &[Expr]) -> Result<bool, String> {
        for cond in ifs {
            let truth = match self.expr(cond).lit {
                Lit::Bool(b) => b,
                Lit::Int(i) => i != 0,
                Lit::None => false,
                _ => return Err("an `if` clause is known only at run time".into()),
            };
            if !truth {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The builtins the walk interprets by name (`len(…)`, `range(…)`, `int(…)` …).
const INTERPRETED_BUILTINS: &[&str] = &[
    "abs", "all", "any", "bool", "divmod", "enumerate", "float", "getattr", "hasattr", "int", "isinstance", "len", "list", "max", "min", "pow", "print",
    "range", "round", "str", "sum", "super", "tuple", "type", "zip",
];

/// The names a comprehension target binds.
fn target_names(target: &Expr) -> Vec<String> {
    match target {
        Expr::Name(n) => vec![n.id.to_string()],
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => elts.iter().flat_map(target_names).collect(),
        _ => Vec::new(),
    }
}

/// Whether `e` holds a scope of its own (a comprehension, a generator, a lambda), whose names
/// the substitution would not see.
fn nests_a_scope(e: &Expr) -> bool {
    use ruff_python_ast::visitor::{walk_expr, Visitor};
    struct Finder(bool);
    impl<'a> Visitor<'a> for Finder {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if matches!(expr, Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) | Expr::Lambda(_)) {
                self.0 = true;
            } else {
                walk_expr(self, expr);
            }
        }
    }
    let mut finder = Finder(false);
    finder.visit_expr(e);
    finder.0
}

fn int_val(i: i64) -> Val {
    Val::lowered(Ty::Int, Lit::Int(i), ir::Expr::Int(i))
}

/// Whether reading `v` again evaluates nothing: a literal, a local, a size of a local, or a
/// tuple of those.
fn rereadable(v: &Val) -> bool {
    if let Some(elems) = &v.elems {
        return elems.iter().all(rereadable);
    }
    match &v.ir {
        Some(ir::Expr::Local { .. } | ir::Expr::Int(_) | ir::Expr::Float(_) | ir::Expr::Bool(_)) => true,
        Some(ir::Expr::Size { tensor, .. }) => matches!(**tensor, ir::Expr::Local { .. }),
        Some(_) => false,
        None => v.lit != Lit::NotLiteral && !v.explained,
    }
}
