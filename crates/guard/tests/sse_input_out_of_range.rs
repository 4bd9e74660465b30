//! Regression (fuzz find `sse_assembly-e9d629abef4877ac`): a tool's `partial_json` deltas that
//! make a number out of range (`99999E999`) were taken as the tool's input, because they were
//! only skipped (`IgnoredAny`) to see whether they were JSON. Reading the assembled message
//! again, as the events are read (a `Value`), refused that number and lost the block. Such input
//! is now not JSON, as for a cut stream: the start object's input stays.

use turnkeeper_guard::sse::assemble;

/// The stream of one tool call whose input deltas are `partial`.
fn call_with_input(partial: &str) -> String {
    let start = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}"#;
    let delta = serde_json::json!({
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": partial},
    });
    format!(
        "data: {start}\n\ndata: {delta}\n\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n"
    )
}

fn check(partial: &str, expect: &str) {
    assert_eq!(
        assemble(&call_with_input(partial)).content,
        expect,
        "{partial}"
    );
}

#[test]
fn an_input_with_a_number_out_of_range_keeps_the_start_input() {
    let kept = r#"[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]"#;
    check("99999E999", kept);
    check(r#"{"n":1E400}"#, kept);
    check(
        r#"{"n":1E300}"#,
        r#"[{"type":"tool_use","id":"toolu_1","name":"f","input":{"n":1E300}}]"#,
    );
}
