//! Regression (fuzz find `openclaw_session-e4e238716c83c1d7`): an openclaw session that ends in
//! a run of lines the repair drops one at a time (each the leaf of the active branch, a result
//! for a call nobody made). Each pass dropped the leaf it saw and showed the one behind it; the
//! repair stopped after four passes, and the damage of the line the branch came back to (a
//! leftover `partialJson`, a call with no result) was never judged. Now the passes go on while
//! they change something.

mod openclaw_common;
use openclaw_common::{HEADER, USER, repaired};

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
    let (_, changes, _) = repaired(input);
    let got: Vec<(&str, &str)> = changes.iter().map(|(a, id)| (*a, id.as_str())).collect();
    assert_eq!(got, expect, "the changes");
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
