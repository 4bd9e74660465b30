//! The conversion of an OpenCode session to the Anthropic request records, for every request
//! message, the OpenCode messages it came from (`AnthropicRequest::messages`): a request
//! message that kept no block is located through it (the check's AN-04), and one the AI SDK
//! merged from several (a tool result and the prompt after it) names each of them, in order.

use std::path::Path;

use turnkeeper_model::opencode::{AnthropicOptions, load_export, to_anthropic_request};

/// The request messages' origins for the corpus export `name`, and the first origin of each.
fn check(name: &str, expect: &[&[&str]]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/opencode/export")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("the corpus export");
    let s = load_export(&text, name).expect("the export loads");
    let r = to_anthropic_request(&s, None, &AnthropicOptions::default());
    assert_eq!(r.messages, expect, "{name}");
    for (i, ids) in expect.iter().enumerate() {
        assert_eq!(
            r.message_origin(i),
            ids.first().copied(),
            "{name}: messages[{i}]"
        );
    }
    assert_eq!(
        r.message_origin(expect.len()),
        None,
        "past the last message"
    );
}

#[test]
fn every_request_message_names_the_opencode_messages_behind_it() {
    // The assistant message's steps alternate with their tool results (one request message
    // each), and the last tool result is merged with the prompt after it.
    let asst = "msg_abf98695c0091ERer4HUhu7KXk";
    check(
        "healthy.json",
        &[
            &["msg_abf986538002ERer4HUhu7KXkx"],
            &[asst],
            &[asst],
            &[asst],
            &[asst],
            &[asst],
            &[asst, "msg_abf986dda019p2FSfs5IViv8LY"],
            &["msg_abf9871d601cANan0DQdq3GTgt"],
            &["msg_abf9875f0022q3GTgt6JWjw9MZ"],
            &["msg_abf9879e20244HUhu7KXkxANan"],
            &["msg_abf987de8028Wjw9MZmzCPcp2F"],
        ],
    );
}
