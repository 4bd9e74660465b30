//! Regression (fuzz find `openclaw_session-e4e238716c83c1d7`): an openclaw session that ends in
//! a run of lines the repair drops one at a time (each the leaf of the active branch, a result
//! for a call nobody made). Each pass dropped the leaf it saw and showed the one behind it; the
//! repair stopped after four passes, and the damage of the line the branch came back to (a
//! leftover `partialJson`, a call with no result) was never judged. Now the passes go on while
//! they change something.

use turnkeeper_model::openclaw::Session;
use turnkeeper_prevent::openclaw::{check_session, plan};

const HEADER: &str = r#"{"type":"session","version":3,"id":"0a1b2c3d-0000-4000-8000-000000000002","timestamp":"2026-05-02T10:00:00.000Z","cwd":"/w"}"#;
const USER: &str = r#"{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"List the files."}]}}"#;
/// A call whose `partialJson` holds a raw tab, and no result.
const CALL: &str = r#"{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"exec","arguments":{},"partialJson":"{\"command\":\"l\ts"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse"}}"#;

/// The n-th dead leaf: a result for a call nobody made, a root of its own (so that the active
/// branch, from the file's last entry, is that line alone).
fn dead(n: usize) -> String {
    format!(
        r#"{{"type":"message","id":"d{n}","parentId":null,"message":{{"role":"toolResult","toolCallId":"call_x{n}","toolName":"exec","content":[{{"type":"text","text":"a"}}],"isError":false}}}}"#
    )
}

fn check(input: &str, expect: &[(&str, &str)]) {
    let s = Session::parse(input.to_owned(), "test").expect("the session reads");
    let p = plan(&s, None).expect("a plan");
    let got: Vec<(&str, &str)> = p
        .changes
        .iter()
        .map(|c| (c.action, c.id.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(got, expect, "the changes");
    let after = Session::parse(p.text.clone(), "repaired").expect("the repaired text reads");
    let left = check_session(&after, None).findings;
    assert!(left.is_empty(), "the repaired session still has {left:#?}");
}

#[test]
fn a_run_of_dead_leaves_is_dropped_and_the_line_behind_them_repaired() {
    let leaves: Vec<String> = (0..6).map(dead).collect();
    let input = format!("{HEADER}\n{USER}\n{CALL}\n{}\n", leaves.join("\n"));
    let mut expect: Vec<(&str, &str)> = Vec::new();
    let ids: Vec<String> = (0..6).rev().map(|n| format!("d{n}")).collect();
    for id in &ids {
        expect.push(("drop line", id));
    }
    expect.push(("edit block", "a1"));
    expect.push(("add result", "a1"));
    check(&input, &expect);
}
