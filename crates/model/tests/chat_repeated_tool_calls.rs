//! A Chat message that names `tool_calls` twice keeps the calls of the last one, and the body's
//! flat call members are exactly those calls' members, so a reading moved over from an earlier
//! body is the body's own (fuzz: corpus/regressions/wire_families-87f46b3141ec9c9d).

use turnkeeper_model::wire::chat;

/// Reads `input`, requires the members of each message's calls, by key, to be `expect`, and the
/// flat members to hold nothing else; then reads it again against itself and requires the same.
fn check(input: &str, expect: &[&[&[&str]]]) {
    let b = chat::read(input).expect("the body reads");
    let keys = |b: &chat::ChatBody<'_>| -> Vec<Vec<Vec<String>>> {
        b.messages
            .iter()
            .map(|m| {
                m.calls
                    .iter()
                    .map(|c| {
                        b.call_members(c)
                            .iter()
                            .map(|k| k.key.decode(input).into_owned())
                            .collect()
                    })
                    .collect()
            })
            .collect()
    };
    let want: Vec<Vec<Vec<String>>> = expect
        .iter()
        .map(|m| {
            m.iter()
                .map(|c| c.iter().map(|k| (*k).to_owned()).collect())
                .collect()
        })
        .collect();
    assert_eq!(keys(&b), want);
    let total: usize = want.iter().flatten().map(Vec::len).sum();
    assert_eq!(
        b.call_members.len(),
        total,
        "no member of a replaced call is left"
    );
    let (again, reused) = chat::read_reusing(input, &b).expect("the body reads again");
    assert_eq!(reused, b.messages.len());
    assert_eq!(keys(&again), want);
    assert_eq!(again.call_members, b.call_members);
}

#[test]
fn the_last_tool_calls_of_a_message_are_its_calls() {
    check(
        r#"{"messages":[{"role":"assistant","tool_calls":[{"a":0}],"tool_calls":[{"idx":0}]}]}"#,
        &[&[&["idx"]]],
    );
}

#[test]
fn a_replaced_call_between_two_messages_leaves_no_member() {
    check(
        r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"x","type":"function"}]},{"role":"assistant","tool_calls":[{"a":1,"b":2}],"content":"","tool_calls":[{"id":"y"},3]},{"role":"assistant","tool_calls":[{"id":"z"}]}]}"#,
        &[&[&["id", "type"]], &[&["id"], &[]], &[&["id"]]],
    );
}
