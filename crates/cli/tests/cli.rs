//! The command line as scripts use it: output shapes and exit codes.

mod common;

use common::{root, run, stdout};

#[test]
fn inspect_json_counts_blocks_by_wire_type() {
    let o = run(&[
        "inspect",
        "corpus/anthropic/tool_loop_manual.json",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    assert_eq!(v["format"], "anthropic");
    assert_eq!(v["model"], "claude-sonnet-4-20250514");
    assert_eq!(v["messages"], 7);
    assert_eq!(v["thinking"], "enabled");
    assert_eq!(
        v["blocks"],
        serde_json::json!({"text": 3, "thinking": 2, "tool_result": 2, "tool_use": 2})
    );
}

#[test]
fn inspect_reads_gemini_and_opencode_storage() {
    let o = run(&[
        "inspect",
        "corpus/gemini/gemini3_signed_call_then_new_turn.json",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["format"], "gemini");
    assert!(
        v["blocks"]["functionCall"].as_u64().is_some_and(|n| n >= 1),
        "{v}"
    );
    let o = run(&["inspect", "corpus/opencode/storage", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["format"], "opencode");
}

#[test]
fn unreadable_input_is_exit_2_with_one_line() {
    let o = run(&["check", "corpus/does-not-exist.json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    let o = run(&["check", "--thinking", "sometimes", "x.json"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn check_exit_codes_and_json_shape() {
    let o = run(&["check", "corpus/anthropic/tool_loop_manual.json", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o).trim(), r#"{"findings":[]}"#);
    let o = run(&["check", "corpus/damaged/an08_aborted_turn.json", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "AN-08");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["path"], "messages[2]");
    assert_eq!(f["message_index"], 2);
    assert!(f["repair"].is_string());
}

#[test]
fn check_human_output_points_at_the_block() {
    let o = run(&["check", "corpus/damaged/an16_tool_use_before_thinking.json"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("error[AN-16]"), "{out}");
    assert!(
        out.contains("--> corpus/damaged/an16_tool_use_before_thinking.json:"),
        "{out}"
    );
    assert!(out.contains('^'), "{out}");
    assert!(out.contains("= fix:"), "{out}");
}

#[test]
fn repair_of_a_valid_body_is_byte_identical() {
    let path = "corpus/anthropic/interleaved_thinking_server_tools.json";
    let o = run(&["repair", path]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout, std::fs::read(root().join(path)).expect("reads"));
}

#[test]
fn repair_in_place_keeps_a_backup_and_writes_the_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("conv.json");
    let original =
        std::fs::read(root().join("corpus/damaged/an08_aborted_turn.json")).expect("reads");
    std::fs::write(&file, &original).expect("writes");
    let report = dir.path().join("report.json");
    let o = run(&[
        "repair",
        file.to_str().unwrap_or_default(),
        "--in-place",
        "--report",
        report.to_str().unwrap_or_default(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        std::fs::read(dir.path().join("conv.json.bak")).expect("backup"),
        original
    );
    let o = run(&["check", file.to_str().unwrap_or_default()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).expect("report")).expect("json");
    assert!(r["changes"].as_array().is_some_and(|c| !c.is_empty()));
    assert_eq!(r["findings_left"], serde_json::json!([]));
}

#[test]
fn repair_exit_3_when_errors_remain() {
    let o = run(&[
        "repair",
        "corpus/damaged/cfg_max_tokens_not_above_budget.json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        !o.stdout.is_empty(),
        "the best-effort body is still written"
    );
}

/// `turnkeeper store add --store STORE RESPONSE`, which must succeed.
fn store_add(store: &std::path::Path, response: &std::path::Path) {
    let o = run(&[
        "store",
        "add",
        "--store",
        store.to_str().unwrap_or_default(),
        response.to_str().unwrap_or_default(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn store_add_then_check_restores_an_altered_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("store");
    let response = dir.path().join("resp.json");
    std::fs::write(&response, r#"{"id":"msg_9","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"why","signature":"EqQBCkYIBxgCKkDv"},{"type":"tool_use","id":"toolu_9","name":"f","input":{}}]}"#).expect("writes");
    store_add(&store, &response);
    let req = dir.path().join("req.json");
    std::fs::write(&req, r#"{"model":"claude-sonnet-4-5","max_tokens":4000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"r"}]}]}"#).expect("writes");
    let o = run(&[
        "repair",
        req.to_str().unwrap_or_default(),
        "--store",
        store.to_str().unwrap_or_default(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout(&o).contains(r#"{"type":"thinking","thinking":"why","signature":"EqQBCkYIBxgCKkDv"},{"type":"tool_use""#), "{}", stdout(&o));
}

/// A Gemini response recorded with `store add`; a follow-up whose first call lost its
/// `thoughtSignature` gets the one Gemini sent back from the store (GM-01, restored), not the
/// documented dummy.
#[test]
fn store_add_of_a_gemini_response_re_signs_its_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("store");
    let response = dir.path().join("resp.json");
    let sig = "CiQBcsjafAbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/AbCdEfGhIjKl==";
    std::fs::write(&response, format!(r#"{{"candidates":[{{"content":{{"role":"model","parts":[{{"functionCall":{{"id":"call_1","name":"add","args":{{"a":2,"b":3}}}},"thoughtSignature":"{sig}"}}]}},"finishReason":"STOP"}}],"modelVersion":"gemini-3-pro-preview"}}"#)).expect("writes");
    store_add(&store, &response);
    let req = dir.path().join("req.json");
    let body = |signed: &str| {
        format!(
            r#"{{"contents":[{{"role":"user","parts":[{{"text":"add 2 and 3"}}]}},{{"role":"model","parts":[{{"functionCall":{{"id":"call_1","name":"add","args":{{"a":2,"b":3}}}}{signed}}}]}},{{"role":"user","parts":[{{"functionResponse":{{"id":"call_1","name":"add","response":{{"result":5}}}}}}]}}]}}"#
        )
    };
    std::fs::write(&req, body("")).expect("writes");
    let o = run(&[
        "repair",
        req.to_str().unwrap_or_default(),
        "--model",
        "gemini-3-pro-preview",
        "--store",
        store.to_str().unwrap_or_default(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(stdout(&o), body(&format!(r#","thoughtSignature":"{sig}""#)));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("GM-01 restored_field contents[1].parts[0]"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
