//! Module-level name resolution: which names are bound by imports to torch / torchlower
//! paths, and how annotations map to types.
//!
//! Only unconditional top-level statements are considered. A name bound twice, or bound by
//! anything else (assignment, def, class, import inside `if`/`try`), resolves to nothing.

pub mod annotations;

use ruff_python_ast::{self as ast, Expr, Stmt};
use std::collections::BTreeMap;

/// What a module-level name refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// a module, by dotted path (`import torch.nn.functional as F` → `torch.nn.functional`)
    Module(String),
    /// an object inside a module (`from torch import relu` → `torch.relu`)
    Value(String),
    /// a number constant: bound exactly once, unconditionally, to an int or float literal
    /// (`EPS = 1e-5`), and never declared `global` in a function
    Number(Number),
    /// bound by something the analyzer does not follow (assignment, def, class, ...)
    Opaque,
}

/// The value of a module-level number constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Number {
    Int(i64),
    /// an `f64` by its bits (so that bindings compare exactly)
    Float(u64),
}

/// The module's top-level bindings (deterministic order).
#[derive(Debug, Default)]
pub struct ModuleScope {
    names: BTreeMap<String, Binding>,
    /// nesting depth of the statement being bound (blocks deeper than a limit are skipped)
    depth: usize,
}

/// Conditional blocks nested deeper than this are not searched for bindings.
const MAX_BIND_DEPTH: usize = 200;

impl ModuleScope {
    pub fn from_module(body: &[Stmt]) -> Self {
        let mut scope = ModuleScope::default();
        for stmt in body {
            scope.bind_stmt(stmt, true);
        }
        let mut globals = Vec::new();
        global_names(body, 0, &mut globals);
        for name in globals {
            if matches!(scope.names.get(&name), Some(Binding::Number(_))) {
                scope.names.insert(name, Binding::Opaque);
            }
        }
        scope
    }

    /// A second binding of a name makes a number constant opaque (it is rebound).
    fn bind(&mut self, name: &str, binding: Binding) {
        let binding = match self.names.get(name) {
            Some(Binding::Number(_)) => Binding::Opaque,
            _ => binding,
        };
        self.names.insert(name.to_string(), binding);
    }

    /// `NAME = <number literal>` at the top level: a constant if `NAME` was not bound before.
    fn bind_number(&mut self, target: &Expr, value: &Expr) -> bool {
        let (Expr::Name(n), Some(number)) = (target, number_literal(value)) else { return false };
        let binding = if self.names.contains_key(n.id.as_str()) { Binding::Opaque } else { Binding::Number(number) };
        self.names.insert(n.id.to_string(), binding);
        true
    }

    fn bind_stmt(&mut self, stmt: &Stmt, unconditional: bool) {
        match stmt {
            Stmt::Import(s) => {
                for alias in &s.names {
                    let full = alias.name.as_str();
                    let binding = match &alias.asname {
                        // `import torch.nn.functional as F` binds F to the submodule
                        Some(asname) => (asname.as_str(), Binding::Module(full.to_string())),
                        // `import torch.nn.functional` binds only `torch`
                        None => {
                            let head = full.split('.').next().unwrap_or(full);
                            (head, Binding::Module(head.to_string()))
                        }
                    };
                    self.bind(binding.0, if unconditional { binding.1 } else { Binding::Opaque });
                }
            }
            Stmt::ImportFrom(s) => {
                let relative = s.level > 0;
                let module = s.module.as_ref().map(|m| m.as_str()).unwrap_or("");
                for alias in &s.names {
                    let local = alias.asname.as_ref().unwrap_or(&alias.name).as_str();
                    if local == "*" {
                        continue; // star imports: names unknown, nothing bound that we track
                    }
                    let binding = if relative || !unconditional || module.is_empty() {
                        Binding::Opaque
                    } else {
                        from_import_binding(module, alias.name.as_str())
                    };
                    self.bind(local, binding);
                }
            }
            Stmt::FunctionDef(s) => self.bind(s.name.as_str(), Binding::Opaque),
            Stmt::ClassDef(s) => self.bind(s.name.as_str(), Binding::Opaque),
            Stmt::Assign(s) => {
                let constant = unconditional && matches!(s.targets.as_slice(), [target] if self.bind_number(target, &s.value));
                if !constant {
                    for target in &s.targets {
                        self.bind_target(target);
                    }
                }
            }
            Stmt::AnnAssign(s) => {
                let constant = unconditional && s.value.as_deref().is_some_and(|v| self.bind_number(&s.target, v));
                if !constant {
                    self.bind_target(&s.target);
                }
            }
            Stmt::AugAssign(s) => self.bind_target(&s.target),
            Stmt::For(s) => {
                self.bind_target(&s.target);
                self.bind_block(&s.body);
                self.bind_block(&s.orelse);
            }
            Stmt::While(s) => {
                self.bind_block(&s.body);
                self.bind_block(&s.orelse);
            }
            Stmt::If(s) => crate::parse::if_blocks(s).for_each(|b| self.bind_block(b)),
            Stmt::With(s) => {
                for item in &s.items {
                    if let Some(var) = &item.optional_vars {
                        self.bind_target(var);
                    }
                }
                self.bind_block(&s.body);
            }
            Stmt::Try(s) => {
                self.bind_block(&s.body);
                for handler in &s.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = handler;
                    if let Some(name) = &h.name {
                        self.bind(name.as_str(), Binding::Opaque);
                    }
                    self.bind_block(&h.body);
                }
                self.bind_block(&s.orelse);
                self.bind_block(&s.finalbody);
            }
            _ => {}
        }
    }

    /// Bindings inside compound statements are conditional: anything bound there is opaque.
    fn bind_block(&mut self, body: &[Stmt]) {
        if self.depth >= MAX_BIND_DEPTH {
            return;
        }
        self.depth += 1;
        for stmt in body {
            self.bind_stmt(stmt, false);
        }
        self.depth -= 1;
    }

    fn bind_target(&mut self, target: &Expr) {
        match target {
            Expr::Name(n) => self.bind(n.id.as_str(), Binding::Opaque),
            Expr::Tuple(t) => t.elts.iter().for_each(|e| self.bind_target(e)),
            Expr::List(t) => t.elts.iter().for_each(|e| self.bind_target(e)),
            Expr::Starred(s) => self.bind_target(&s.value),
            _ => {}
        }
    }

    pub fn get(&self, name: &str) -> Option<&Binding> {
        self.names.get(name)
    }

    /// Whether `import <module> [as <name>]` inside a function rebinds `name` to what it
    /// already names at module level (Transformers' `torch_int` re-imports `torch`): the
    /// statement changes nothing, so `name` is not a local.
    pub fn reimports(&self, name: &str, module: &str) -> bool {
        matches!(self.names.get(name), Some(Binding::Module(m)) if m == module)
    }

    /// Whether `name` refers to the Python builtin of that name (not rebound at module level).
    pub fn is_builtin(&self, name: &str) -> bool {
        !self.names.contains_key(name)
    }

    /// Dotted path of an expression made of a module-level name and attributes, e.g.
    /// `F.linear` → `torch.nn.functional.linear`. `is_local` tells which names are function
    /// locals (they shadow module names).
    pub fn dotted_path(&self, expr: &Expr, is_local: &dyn Fn(&str) -> bool) -> Option<String> {
        let mut attrs: Vec<&str> = Vec::new();
        let mut cur = expr;
        loop {
            match cur {
                Expr::Attribute(a) => {
                    attrs.push(a.attr.as_str());
                    cur = &a.value;
                }
                Expr::Name(n) => {
                    let name = n.id.as_str();
                    if is_local(name) {
                        return None;
                    }
                    let mut path = match self.names.get(name)? {
                        Binding::Module(m) => m.clone(),
                        Binding::Value(v) => v.clone(),
                        Binding::Number(_) | Binding::Opaque => return None,
                    };
                    for attr in attrs.iter().rev() {
                        path.push('.');
                        path.push_str(attr);
                    }
                    return Some(path);
                }
                _ => return None,
            }
        }
    }
}

/// The value of an int or float literal, or of `-` one.
fn number_literal(e: &Expr) -> Option<Number> {
    match e {
        Expr::NumberLiteral(n) => match &n.value {
            ast::Number::Int(i) => i.as_i64().map(Number::Int),
            ast::Number::Float(f) => Some(Number::Float(f.to_bits())),
            ast::Number::Complex { .. } => None,
        },
        Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::USub) => match number_literal(&u.operand)? {
            Number::Int(v) => v.checked_neg().map(Number::Int),
            Number::Float(bits) => Some(Number::Float((-f64::from_bits(bits)).to_bits())),
        },
        _ => None,
    }
}

/// Every name declared `global` in any function or class body of the module (such a name
/// can be rebound at run time, so it is no constant).
fn global_names(body: &[Stmt], depth: usize, out: &mut Vec<String>) {
    if depth > MAX_BIND_DEPTH {
        return;
    }
    for stmt in body {
        match stmt {
            Stmt::Global(g) => out.extend(g.names.iter().map(|n| n.to_string())),
            Stmt::FunctionDef(s) => global_names(&s.body, depth + 1, out),
            Stmt::ClassDef(s) => global_names(&s.body, depth + 1, out),
            Stmt::If(s) => crate::parse::if_blocks(s).for_each(|b| global_names(b, depth + 1, out)),
            Stmt::For(s) => {
                global_names(&s.body, depth + 1, out);
                global_names(&s.orelse, depth + 1, out);
            }
            Stmt::While(s) => {
                global_names(&s.body, depth + 1, out);
                global_names(&s.orelse, depth + 1, out);
            }
            Stmt::With(s) => global_names(&s.body, depth + 1, out),
            Stmt::Try(s) => {
                global_names(&s.body, depth + 1, out);
                for handler in &s.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = handler;
                    global_names(&h.body, depth + 1, out);
                }
                global_names(&s.orelse, depth + 1, out);
                global_names(&s.finalbody, depth + 1, out);
            }
            _ => {}
        }
    }
}

/// `from M import N`: a submodule when M.N is a package we know, else a value.
fn from_import_binding(module: &str, name: &str) -> Binding {
    let full = format!("{module}.{name}");
    const MODULES: &[&str] = &["torch.nn", "torch.nn.functional", "torchlower.types", "rextio_torch.types", "torch.special", "torch.linalg"];
    if MODULES.contains(&full.as_str()) {
        Binding::Module(full)
    } else {
        Binding::Value(full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(src: &str) -> (ModuleScope, ast::Suite) {
        let m = ruff_python_parser::parse_module(src).expect("parses").into_syntax();
        (ModuleScope::from_module(&m.body), m.body)
    }

    fn path_of(scope: &ModuleScope, expr_src: &str) -> Option<String> {
        let e = ruff_python_parser::parse_expression(expr_src).expect("parses").into_syntax();
        scope.dotted_path(&e.body, &|_| false)
    }

    #[test]
    fn import_forms_resolve() {
        let (s, _) = scope(
            "import torch\nimport torch as t\nimport torch.nn.functional as F\nfrom torch.nn import functional as G\n\
             from torch import matmul, relu as r\nfrom torch.nn.functional import linear\n",
        );
        assert_eq!(path_of(&s, "torch.relu").as_deref(), Some("torch.relu"));
        assert_eq!(path_of(&s, "t.nn.functional.gelu").as_deref(), Some("torch.nn.functional.gelu"));
        assert_eq!(path_of(&s, "F.linear").as_deref(), Some("torch.nn.functional.linear"));
        assert_eq!(path_of(&s, "G.relu").as_deref(), Some("torch.nn.functional.relu"));
        assert_eq!(path_of(&s, "matmul").as_deref(), Some("torch.matmul"));
        assert_eq!(path_of(&s, "r").as_deref(), Some("torch.relu"));
        assert_eq!(path_of(&s, "linear").as_deref(), Some("torch.nn.functional.linear"));
    }

    #[test]
    fn number_constants_are_bound_once_to_a_literal() {
        let (s, _) = scope(
            "EPS = 1e-5\nN: int = -3\nTWICE = 1\nTWICE = 2\nLATE = 1.0\ndef f():\n    global LATE\n    LATE = 2.0\n\
             LOOPED = 0\nfor LOOPED in range(3): pass\nSUM = 1 + 2\nif c:\n    COND = 1\n",
        );
        assert_eq!(s.get("EPS"), Some(&Binding::Number(Number::Float(1e-5f64.to_bits()))));
        assert_eq!(s.get("N"), Some(&Binding::Number(Number::Int(-3))));
        for name in ["TWICE", "LATE", "LOOPED", "SUM", "COND"] {
            assert_eq!(s.get(name), Some(&Binding::Opaque), "{name}");
        }
    }

    #[test]
    fn rebinding_makes_a_name_opaque() {
        let (s, _) = scope("import torch\ntorch = object()\nif x:\n    import numpy as F\n");
        assert_eq!(path_of(&s, "torch.relu"), None);
        assert_eq!(path_of(&s, "F.relu"), None);
    }
}
