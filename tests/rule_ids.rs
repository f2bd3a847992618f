//! Every rule of the rule book is cited by its id in a test that checks it (as `[F-ACT-12]`, not
//! only inside a range such as `[F-ACT-1..12]`), so that `grep -rw F-ACT-12 tests` finds it.
//! The rule book is `docs/rules.md`, the project's copy of `../shared/RULES.md`; where that is
//! beside the project (in CI), the copy must hold it word for word.

use std::path::Path;

/// The ids a rule book defines: each rule's line starts with `- [ID]`.
fn defined(book: &str) -> Vec<String> {
    book.lines()
        .filter_map(|l| l.trim_start().strip_prefix("- [")?.split_once(']'))
        .map(|(id, _)| id.to_owned())
        .filter(|id| {
            id.contains('-')
                && id
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-')
        })
        .collect()
}

/// Whether `text` names `id` as a whole word (not as the start of a longer id).
fn cites(text: &str, id: &str) -> bool {
    let word =
        |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    text.match_indices(id).any(|(at, _)| {
        !word(text[..at].chars().next_back()) && !word(text[at + id.len()..].chars().next())
    })
}

fn test_sources(dir: &Path, out: &mut String) {
    for entry in std::fs::read_dir(dir)
        .expect("tests/ is readable")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            test_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            // This file's own examples name ids: they prove nothing.
            && !path.ends_with("rule_ids.rs")
        {
            out.push_str(&std::fs::read_to_string(&path).expect("a test file"));
        }
    }
}

#[test]
fn every_rule_id_is_cited_by_name_in_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let book = std::fs::read_to_string(root.join("docs/rules.md")).expect("docs/rules.md");
    let ids = defined(&book);
    assert!(ids.len() > 50, "the rule book defines {} ids", ids.len());
    let mut tests = String::new();
    test_sources(&root.join("tests"), &mut tests);
    let missing: Vec<&String> = ids.iter().filter(|id| !cites(&tests, id)).collect();
    assert!(missing.is_empty(), "rules no test cites by id: {missing:?}");
}

#[test]
fn the_rule_book_in_docs_is_the_shared_one_word_for_word() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Ok(shared) = std::fs::read_to_string(root.join("../shared/RULES.md")) else {
        eprintln!("SKIPPED: ../shared/RULES.md not found beside the project; nothing to compare");
        return;
    };
    let copy = std::fs::read_to_string(root.join("docs/rules.md")).expect("docs/rules.md");
    assert!(
        copy.contains(shared.trim()),
        "docs/rules.md is not the shared rule book: copy ../shared/RULES.md into it again"
    );
}

#[test]
fn an_id_is_cited_only_as_a_whole_word() {
    assert!(cites("// [F-ACT-12]", "F-ACT-12"));
    assert!(!cites("// [F-ACT-12]", "F-ACT-1"));
    assert!(!cites("// [F-ACT-1..12]", "F-ACT-12"));
    assert!(cites("// [F-ACT-1..12]", "F-ACT-1"));
    assert_eq!(
        defined("- [F-ACT-2] Reverse\n  - [H-STACK] x\n- [not an id] y\n"),
        ["F-ACT-2", "H-STACK"]
    );
}
