//! `docs/rules.md` is generated from the registry and must not go stale.

use std::path::Path;

#[test]
fn rules_md_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules.md");
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    let generated = torchlower_analyzer::rules::rules_markdown();
    assert!(
        on_disk == generated,
        "docs/rules.md is stale. Regenerate it with:\n  cargo run -q -p torchlower-analyzer --bin torchlower-analyze -- --rules-md > docs/rules.md"
    );
}

#[test]
fn registry_ids_are_unique_and_documented() {
    use std::collections::BTreeSet;
    let mut ids = BTreeSet::new();
    for r in torchlower_analyzer::rules::ALL_RULES {
        assert!(r.id.starts_with("torchlower/"), "{}", r.id);
        assert!(!r.summary.is_empty() && !r.explanation.is_empty() && !r.example.is_empty(), "{}", r.id);
        assert!(ids.insert(r.id), "duplicate rule {}", r.id);
    }
    for c in torchlower_analyzer::rules::ALL_CODES {
        assert!(c.code.len() == 5 && c.code.starts_with("TL"), "{}", c.code);
        assert!(!c.summary.is_empty() && !c.explanation.is_empty() && !c.example.is_empty() && !c.hint.is_empty(), "{}", c.code);
        assert!(ids.insert(c.code), "duplicate code {}", c.code);
    }
    let json: serde_json::Value = serde_json::from_str(&torchlower_analyzer::rules::registry_json()).expect("registry JSON");
    assert_eq!(json["rules"].as_array().map(Vec::len), Some(torchlower_analyzer::rules::ALL_RULES.len()));
}
