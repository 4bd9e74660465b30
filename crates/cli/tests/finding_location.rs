//! The text report places each finding at its line and column in a body written over several
//! lines (the line index is built with `memchr`; a wrong index puts every finding on line 1 or
//! one byte off).

mod common;

use common::*;

/// Checks `body` (written to a file) and compares each `-->` line of the report with `expect`.
fn check(body: &str, expect: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("body.json");
    std::fs::write(&path, body).expect("write");
    let p = path.to_str().expect("utf-8 path");
    let o = run(&["check", p]);
    let out = stdout(&o);
    let got: Vec<String> = out
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--> "))
        .map(|l| l.replace(p, "FILE"))
        .collect();
    assert_eq!(got, expect, "{out}");
}

#[test]
fn findings_point_at_their_line_and_column() {
    // Line 6 holds the empty text block after 69 characters (70 bytes: the `é` is two), so at
    // column 70; line 7 the message that should hold the missing tool result.
    let body = r#"{
  "model": "claude-sonnet-4-5",
  "max_tokens": 1024,
  "messages": [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": [{"type": "text", "text": "é"}, {"type": "text", "text": ""}, {"type": "tool_use", "id": "toolu_01", "name": "f", "input": {}}]},
    {"role": "user", "content": "more"},
    {"role": "assistant", "content": "done"}
  ]
}"#;
    check(
        body,
        &[
            "FILE:6:70 (messages[1].content[1])",
            "FILE:7:5 (messages[2])",
        ],
    );
}
