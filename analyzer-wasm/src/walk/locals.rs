//! Python scoping: a name bound anywhere in a function body is local to the whole function
//! (and so shadows module-level names such as `torch` everywhere in it).

use ruff_python_ast::{self as ast, Expr, Stmt};
use std::collections::BTreeSet;

/// Names bound in `body` (not descending into nested functions/classes, whose own names are
/// bound here but whose bodies are separate scopes). Blocks nested deeper than `max_depth`
/// are not searched (the walk refuses them anyway).
/// `reimport(name, module)`: an `import` that rebinds `name` to the module it already names at
/// module level, which binds no new local.
pub fn collect(body: &[Stmt], out: &mut BTreeSet<String>, max_depth: usize, reimport: &dyn Fn(&str, &str) -> bool) {
    collect_at(body, out, 0, max_depth, reimport);
}

fn collect_at(body: &[Stmt], out: &mut BTreeSet<String>, depth: usize, max_depth: usize, reimport: &dyn Fn(&str, &str) -> bool) {
    if depth > max_depth {
        return;
    }
    let collect = |b: &[Stmt], out: &mut BTreeSet<String>| collect_at(b, out, depth + 1, max_depth, reimport);
    for stmt in body {
        match stmt {
            Stmt::Assign(s) => s.targets.iter().for_each(|t| target(t, out)),
            Stmt::AnnAssign(s) => target(&s.target, out),
            Stmt::AugAssign(s) => target(&s.target, out),
            Stmt::For(s) => {
                target(&s.target, out);
                collect(&s.body, out);
                collect(&s.orelse, out);
            }
            Stmt::While(s) => {
                collect(&s.body, out);
                collect(&s.orelse, out);
            }
            Stmt::If(s) => crate::parse::if_blocks(s).for_each(|b| collect(b, out)),
            Stmt::With(s) => {
                for item in &s.items {
                    if let Some(v) = &item.optional_vars {
                        target(v, out);
                    }
                }
                collect(&s.body, out);
            }
            Stmt::Try(s) => {
                collect(&s.body, out);
                for h in &s.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    if let Some(n) = &h.name {
                        out.insert(n.to_string());
                    }
                    collect(&h.body, out);
                }
                collect(&s.orelse, out);
                collect(&s.finalbody, out);
            }
            Stmt::FunctionDef(s) => {
                out.insert(s.name.to_string());
            }
            Stmt::ClassDef(s) => {
                out.insert(s.name.to_string());
            }
            Stmt::Import(s) => {
                for a in &s.names {
                    let (name, module) = imported_binding(a);
                    if !reimport(name, module) {
                        out.insert(name.to_string());
                    }
                }
            }
            Stmt::ImportFrom(s) => {
                for a in &s.names {
                    out.insert(a.asname.as_ref().unwrap_or(&a.name).to_string());
                }
            }
            _ => {}
        }
    }
}

fn target(t: &Expr, out: &mut BTreeSet<String>) {
    match t {
        Expr::Name(n) => {
            out.insert(n.id.to_string());
        }
        Expr::Tuple(t) => t.elts.iter().for_each(|e| target(e, out)),
        Expr::List(t) => t.elts.iter().for_each(|e| target(e, out)),
        Expr::Starred(s) => target(&s.value, out),
        _ => {}
    }
}

/// The name an `import` binds and the module it binds it to (`import torch.nn as nn` → (`nn`,
/// `torch.nn`); `import torch.nn` binds `torch` to `torch`).
pub fn imported_binding(alias: &ast::Alias) -> (&str, &str) {
    match &alias.asname {
        Some(name) => (name.as_str(), alias.name.as_str()),
        None => {
            let top = alias.name.split('.').next().unwrap_or("");
            (top, top)
        }
    }
}
