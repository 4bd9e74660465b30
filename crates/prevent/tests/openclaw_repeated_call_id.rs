//! Regression (fuzz find `openclaw_session-16e287af8de93fb0`): an openclaw assistant line that
//! repeats one call id, with no result on the branch. The repair gave every repeat a result
//! line with the same generated id; the next pass then could not tell the lines apart, dropped
//! the one a later result hung from, and left that result's parent gone. Now a repeated call id
//! is answered once, and every added line's id is unique in the file.

mod openclaw_common;
use openclaw_common::{HEADER, USER, repaired};

const CALLS: &str = r#"{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"exec","arguments":{}},{"type":"toolCall","id":"call_1","name":"exec","arguments":{}},{"type":"toolCall","id":"call_2","name":"exec","arguments":{}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse"}}"#;

fn check(input: &str, expect: &[(&str, &str)]) {
    let (p, changes, after) = repaired(input);
    let got: Vec<(&str, &str)> = changes.iter().map(|(a, id)| (*a, id.as_str())).collect();
    assert_eq!(got, expect, "the changes");
    let ids: Vec<&str> = after.lines.iter().filter_map(|l| l.id.as_deref()).collect();
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "every line id is unique: {ids:?}");
    assert!(
        p.text.starts_with(input),
        "the input lines are kept byte for byte"
    );
}

#[test]
fn a_repeated_call_id_gets_one_result() {
    check(
        &format!("{HEADER}\n{USER}\n{CALLS}\n"),
        &[("add result", "a1"), ("add result", "a1")],
    );
}

#[test]
fn an_added_result_never_takes_an_id_the_file_has() {
    // "e4395fb5" is the id the first seed ("a1:call_1") makes; a line of the file has it already.
    let label =
        r#"{"type":"label","id":"e4395fb5","parentId":"u1","targetId":"u1","label":"start"}"#;
    check(
        &format!("{HEADER}\n{USER}\n{label}\n{CALLS}\n"),
        &[("add result", "a1"), ("add result", "a1")],
    );
}
