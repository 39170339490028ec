//! Python identifiers and strings never reach the emitted Rust as-is.
//!
//! Locals: `v_` + an injective ASCII encoding of the name + a type tag. `[A-Za-z0-9]` stay,
//! `_` becomes `_0`, any other character becomes `_x{hex}_`; so after `_` in the encoded body
//! only `0` or `x` can follow, and the tag `_t`/`_i`/`_b`/`_f` (tensor / i64 / bool / f64) can never be
//! confused with body text. Any valid Python identifier (Rust keywords, `self`, `crate`,
//! non-ASCII letters) yields a valid, distinct Rust identifier.

use crate::ty::Ty;

/// Rust representation of a lowerable Python type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RustKind {
    Tensor,
    Int,
    Bool,
    Float,
}

impl RustKind {
    pub fn of(ty: Ty) -> Option<RustKind> {
        match ty {
            Ty::Tensor(_) => Some(RustKind::Tensor),
            Ty::Int => Some(RustKind::Int),
            Ty::Bool => Some(RustKind::Bool),
            Ty::Float => Some(RustKind::Float),
            _ => None,
        }
    }
    pub fn rust_type(self) -> &'static str {
        match self {
            RustKind::Tensor => "tl::tch::Tensor",
            RustKind::Int => "i64",
            RustKind::Bool => "bool",
            RustKind::Float => "f64",
        }
    }
    fn tag(self) -> &'static str {
        match self {
            RustKind::Tensor => "_t",
            RustKind::Int => "_i",
            RustKind::Bool => "_b",
            RustKind::Float => "_f",
        }
    }
}

/// The Rust variable holding Python local `name` while it has a value of `kind`.
pub fn local_ident(name: &str, kind: RustKind) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    out.push_str("v_");
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch);
        } else if ch == '_' {
            out.push_str("_0");
        } else {
            out.push_str(&format!("_x{:x}_", u32::from(ch)));
        }
    }
    out.push_str(kind.tag());
    out
}

/// A Rust string literal with the exact text of `s`, in ASCII.
pub fn rust_str_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(ch),
            _ => out.push_str(&format!("\\u{{{:x}}}", u32::from(ch))),
        }
    }
    out.push('"');
    out
}

/// Text safe inside a `//` comment: printable ASCII only, everything else escaped.
pub fn comment_text(s: &str) -> String {
    let lit = rust_str_literal(s);
    lit[1..lit.len() - 1].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_become_distinct_valid_identifiers() {
        let names = ["self", "crate", "fn", "type", "ñame", "名前", "_", "__x", "x_", "x_0", "v_x", "Self", "super", "r#x"];
        let mut seen = std::collections::BTreeSet::new();
        for n in names {
            for k in [RustKind::Tensor, RustKind::Int, RustKind::Bool] {
                let id = local_ident(n, k);
                assert!(id.is_ascii(), "{id}");
                assert!(syn::parse_str::<syn::Ident>(&id).is_ok(), "{id} is not a Rust identifier");
                assert!(seen.insert(id.clone()), "collision on {id}");
            }
        }
        assert_eq!(local_ident("_", RustKind::Tensor), "v__0_t");
        assert_eq!(local_ident("x_0", RustKind::Int), "v_x_00_i");
    }

    #[test]
    fn string_literals_are_ascii_and_exact() {
        for s in ["plain", "quo\"te", "back\\slash", "ñame", "名前", "new\nline", "\u{0}"] {
            let lit = rust_str_literal(s);
            assert!(lit.is_ascii());
            let parsed: syn::LitStr = syn::parse_str(&lit).expect("valid literal");
            assert_eq!(parsed.value(), s);
        }
        assert!(!comment_text("a\nb */ c").contains('\n'));
    }
}
