//! Regression (fuzz find `openclaw_session-4d05d698b605b6ac`): openclaw lines that share an id
//! and are each their own parent (`"id":"x","parentId":"x"`), dropped by the repair, with a child
//! kept. Re-linking the
//! child walked up the dropped lines' parents, went round the loop and gave up still naming the
//! dropped line: the repaired session's branch stopped at a parent that was gone. Now a loop
//! through dropped lines re-links the child to the entry written before it, as a missing parent
//! is, and a parent id that a kept line also has (a repeated id) is kept.

mod openclaw_common;
use openclaw_common::{HEADER, USER, repaired};

const ANSWER: &str = r#"{"type":"message","id":"a1","parentId":"x","message":{"role":"assistant","content":[{"type":"text","text":"a and b"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop"}}"#;

/// A toolResult for a call nobody made (AN-10: the line goes), with the parent `parent`.
fn orphan(parent: &str) -> String {
    format!(
        r#"{{"type":"message","id":"x","parentId":"{parent}","message":{{"role":"toolResult","toolCallId":"call_9","toolName":"exec","content":[{{"type":"text","text":"a"}}],"isError":false}}}}"#
    )
}

fn check(input: &str, expect: &str) {
    let (p, _, _) = repaired(input);
    assert_eq!(p.text, expect);
}

#[test]
fn a_child_of_dropped_lines_that_are_their_own_parents_hangs_from_the_entry_before_it() {
    // Four lines share the id "x", each its own parent; the leaf is one of them, and each goes
    // (a result for a call nobody made), in two passes.
    let x = orphan("x");
    let input = format!("{HEADER}\n{USER}\n{x}\n{x}\n{ANSWER}\n{x}\n{x}\n");
    let answer = ANSWER.replace(r#""parentId":"x""#, r#""parentId":"u1""#);
    check(&input, &format!("{HEADER}\n{USER}\n{answer}\n"));
}

#[test]
fn a_child_of_a_dropped_line_hangs_from_that_line_s_parent() {
    let input = format!("{HEADER}\n{USER}\n{}\n{ANSWER}\n", orphan("u1"));
    let answer = ANSWER.replace(r#""parentId":"x""#, r#""parentId":"u1""#);
    check(&input, &format!("{HEADER}\n{USER}\n{answer}\n"));
}
