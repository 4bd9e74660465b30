//! Regression (fuzz find in the CI of e138779, `openclaw_session-90c364f4b18a9828`): an openclaw tool
//! call whose leftover `partialJson` key is followed by whitespace (`"partialJson"\r:`). The
//! repair looked for the bytes `"partialJson":`, found none, reported the block edited and left
//! it as it was. Now the member is found by scanning the block's object: whitespace, an escaped
//! key and a key of that name inside `arguments` are all read as JSON reads them.

mod openclaw_common;
use openclaw_common::{HEADER, USER, repaired};

/// The assistant line with `block` as its one content block.
fn call(block: &str) -> String {
    format!(
        r#"{{"type":"message","id":"a1","parentId":"u1","message":{{"role":"assistant","content":[{block}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse"}}}}"#
    )
}

/// The result for `call_1`.
const RESULT: &str = r#"{"type":"message","id":"r1","parentId":"a1","message":{"role":"toolResult","toolCallId":"call_1","toolName":"exec","content":[{"type":"text","text":"a"}],"isError":false}}"#;

/// Repairs a session whose call block is `block`, and expects that block to become `expect`
/// with one `edit block` change and every other line kept byte for byte.
fn check(block: &str, expect: &str) {
    let input = format!("{HEADER}\n{USER}\n{}\n{RESULT}\n", call(block));
    let (p, changes, _) = repaired(&input);
    assert_eq!(changes, [("edit block", "a1".to_owned())], "the changes");
    assert_eq!(
        p.text,
        format!("{HEADER}\n{USER}\n{}\n{RESULT}\n", call(expect))
    );
}

#[test]
fn whitespace_between_the_key_and_its_colon() {
    check(
        "{\"type\":\"toolCall\",\"id\":\"call_1\",\"name\":\"exec\",\"arguments\":{},\"partialJson\"\r:\"{\\\"command\\\":\\\"l\\ts\"}",
        r#"{"type":"toolCall","id":"call_1","name":"exec","arguments":{}}"#,
    );
}

#[test]
fn whitespace_around_the_commas() {
    check(
        r#"{"type":"toolCall", "partialJson" : "{\"c\":\"\t\"" , "id":"call_1","name":"exec","arguments":{}}"#,
        r#"{"type":"toolCall" , "id":"call_1","name":"exec","arguments":{}}"#,
    );
}

#[test]
fn an_escaped_key() {
    check(
        r#"{"type":"toolCall","id":"call_1","name":"exec","arguments":{},"partial\u004ason":"{\"c\":\"\t"}"#,
        r#"{"type":"toolCall","id":"call_1","name":"exec","arguments":{}}"#,
    );
}

#[test]
fn a_key_of_that_name_in_the_arguments_is_kept() {
    check(
        r#"{"type":"toolCall","id":"call_1","name":"exec","arguments":{"partialJson":"x"},"partialJson":"{\"c\":\"\t"}"#,
        r#"{"type":"toolCall","id":"call_1","name":"exec","arguments":{"partialJson":"x"}}"#,
    );
}
