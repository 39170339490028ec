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

/// Rust's keywords (strict, reserved and 2018+), which a plain identifier cannot be.
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn", "for",
    "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self",
    "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract", "become", "box",
    "do", "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// The public Rust name of an exported function or parameter (`torchlower export`): the
/// Python name itself where Rust spells it plainly; `r#name` for a keyword a raw identifier
/// allows; otherwise `py_` and the injective encoding of [`local_ident`] (non-ASCII names,
/// `self`/`Self`/`super`/`crate`/`_`, the prelude's `Ok`/`Err`/`Some`/`None`/`drop` that the
/// bodies use, and our own `tl_` prefix).
pub fn public_ident(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let claimed = ["Ok", "Err", "Some", "None", "drop", "_"].contains(&name) || name.starts_with("tl_");
    if plain && !claimed && !RUST_KEYWORDS.contains(&name) {
        return name.to_string();
    }
    if plain && !claimed && !["crate", "self", "Self", "super"].contains(&name) {
        return format!("r#{name}");
    }
    let encoded = local_ident(name, RustKind::Tensor);
    format!("py_{}", &encoded[2..encoded.len() - 2])
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
    fn public_names_are_the_python_names_where_rust_allows() {
        assert_eq!(public_ident("pooled_head"), "pooled_head");
        assert_eq!(public_ident("match"), "r#match");
        assert_eq!(public_ident("type"), "r#type");
        for (name, public) in [("self", "py_self"), ("Self", "py_Self"), ("Ok", "py_Ok"), ("名前", "py__x540d__x524d_"), ("tl_body_0", "py_tl_0body_00")] {
            assert_eq!(public_ident(name), public);
        }
        let names = ["self", "crate", "fn", "type", "ñame", "名前", "_", "__x", "x_", "Self", "super", "Ok", "drop", "tl_x", "gen"];
        let mut seen = std::collections::BTreeSet::new();
        for n in names {
            let id = public_ident(n);
            assert!(syn::parse_str::<syn::Ident>(&id).is_ok(), "{id} is not a Rust identifier");
            assert!(seen.insert(id.clone()), "collision on {id}");
        }
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
