//! `turnkeeper recover` and `turnkeeper classify --json` as scripts use them: exit codes 0/2/3,
//! the body on standard output, the JSON report, and the attempts file growing across calls.

mod common;

use std::path::Path;

use common::{root, run, stderr};

/// The body of the real error `id` from corpus/errors, with `from` replaced by `to`.
fn real_error(id: &str, from: &str, to: &str) -> String {
    for file in ["found.jsonl", "public.jsonl"] {
        let text = std::fs::read_to_string(root().join("corpus/errors").join(file))
            .expect("corpus/errors is readable");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            if v["id"] == id {
                let body = v["body"].as_str().expect("a body");
                return body.replacen(from, to, 1);
            }
        }
    }
    panic!("corpus/errors has no item {id}");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writes");
    path.display().to_string()
}

fn entries(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).expect("the attempts file exists");
    let v: serde_json::Value = serde_json::from_str(&text).expect("attempts JSON");
    v["entries"].as_array().map_or(0, Vec::len)
}

#[test]
fn recover_prints_a_valid_body_then_escalates_to_give_up() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = write(
        dir.path(),
        "err.txt",
        &real_error(
            "cc-5989-tool-result-missing-wrapped",
            "messages.22",
            "messages.1",
        ),
    );
    let attempts = dir.path().join("attempts.json");
    let att = attempts.display().to_string();
    let req = "corpus/damaged/an08_aborted_turn.json";

    let first = run(&[
        "recover",
        "--request",
        req,
        "--error",
        &err,
        "--status",
        "400",
        "--attempts",
        &att,
    ]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("action: repair"),
        "{}",
        stderr(&first)
    );
    assert_eq!(entries(&attempts), 1);
    // The body on standard output passes `check`.
    let body = write(
        dir.path(),
        "body.json",
        &String::from_utf8_lossy(&first.stdout),
    );
    let check = run(&["check", &body]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));

    // Same error again on the same message: restore is skipped (no store), then give up.
    let report = dir.path().join("report.json");
    let second = run(&[
        "recover",
        "--request",
        req,
        "--error",
        &err,
        "--attempts",
        &att,
        "--report",
        &report.display().to_string(),
    ]);
    assert_eq!(second.status.code(), Some(3), "{}", stderr(&second));
    assert!(second.stdout.is_empty(), "nothing to send");
    assert_eq!(entries(&attempts), 3);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("report written"))
            .expect("report JSON");
    assert_eq!(v["action"]["type"], "give_up");
    assert_eq!(v["outcome"], "hand_back");
    assert_eq!(v["skipped"][0]["action"]["type"], "restore_from_store");
    assert_eq!(v["diagnosis"]["kind"], "tool_result_missing");
    assert_eq!(v["attempts"], 3);
    // No temporary file is left next to the attempts file.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("lists")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
}

#[test]
fn recover_reports_headers_and_writes_the_body_to_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = write(
        dir.path(),
        "err.txt",
        &real_error("opencode-48637-sig-bound-different-conversation", "", ""),
    );
    let out = dir.path().join("out.json");
    let report = dir.path().join("report.json");
    let o = run(&[
        "recover",
        "--request",
        "corpus/anthropic/adaptive_tool_loop.json",
        "--error",
        &err,
        "-o",
        &out.display().to_string(),
        "--report",
        &report.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "the body went to -o");
    let body = std::fs::read_to_string(&out).expect("body written");
    assert!(body.contains(r#""prefix_mismatch_behavior":"drop_block""#));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("report written"))
            .expect("report JSON");
    assert_eq!(v["action"]["type"], "request_drop_block");
    assert_eq!(
        v["headers"],
        serde_json::json!([{"name": "anthropic-beta", "value": "thinking-binding-controls-2026-08-01"}])
    );
    assert_eq!(v["changes"][0]["path"], "thinking");
}

#[test]
fn recover_hands_back_what_only_the_caller_can_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = write(
        dir.path(),
        "err.txt",
        &real_error("pi-102-prompt-too-long-json", "", ""),
    );
    let o = run(&[
        "recover",
        "--request",
        "corpus/damaged/an08_aborted_turn.json",
        "--error",
        &err,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("action: compact"), "{}", stderr(&o));
}

#[test]
fn recover_exits_2_on_unreadable_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = write(dir.path(), "err.txt", "529 overloaded_error");
    let broken = write(dir.path(), "broken.json", "{\"messages\": [");
    let bad_attempts = write(dir.path(), "attempts.json", "{\"entries\": 7}");
    let cases: [&[&str]; 4] = [
        &["recover", "--request", "no/such/file.json", "--error", &err],
        &["recover", "--request", &broken, "--error", &err],
        &[
            "recover",
            "--request",
            "corpus/damaged/an08_aborted_turn.json",
            "--error",
            &err,
            "--attempts",
            &bad_attempts,
        ],
        &["recover", "--error", &err],
    ];
    for args in cases {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // The broken attempts file was left as it was.
    assert_eq!(
        std::fs::read_to_string(&bad_attempts).expect("still there"),
        "{\"entries\": 7}"
    );
}

#[test]
fn classify_json_prints_the_zero_attempt_action() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = write(
        dir.path(),
        "err.txt",
        &real_error("openai-429-rate-limit-tpm-retry-in", "", ""),
    );
    let o = run(&["classify", &err, "--status", "429", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("classify --json prints one object");
    assert_eq!(v["kind"], "retryable_rate_limit");
    assert_eq!(v["retryable"], true);
    assert_eq!(v["provider"], "openai");
    assert_eq!(v["status"], 429);
    assert_eq!(
        v["location"],
        serde_json::json!({"message": null, "block": null})
    );
    assert_eq!(
        v["action"],
        serde_json::json!({"type": "retry", "after_ms": 644})
    );
}
