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

/// A Responses body whose second reasoning item carries the blob openai/codex#8145 quotes
/// (`gAAA...DQ==`).
const RESPONSES: &str = r#"{"model":"gpt-5","input":[{"role":"user","content":"list files"},{"type":"reasoning","id":"rs_01","summary":[],"encrypted_content":"gAAAAABpAAAA"},{"type":"function_call","id":"fc_01","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a.txt"},{"type":"reasoning","id":"rs_02","summary":[],"encrypted_content":"gAAAAABpBBDQ=="},{"type":"message","id":"msg_02","role":"assistant","content":[{"type":"output_text","text":"a.txt"}]},{"role":"user","content":"thanks"}]}"#;

#[test]
fn recover_drops_the_unverifiable_item_of_a_responses_body_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let req = write(dir.path(), "req.json", RESPONSES);
    // openai/codex#8145 (corpus/errors found.jsonl).
    let err = write(
        dir.path(),
        "err.txt",
        &real_error("codex-8145-encrypted-content-unverified", "", ""),
    );
    let store = dir.path().join("store");
    std::fs::create_dir(&store).expect("store dir");
    let attempts = dir.path().join("attempts.json");
    let (att, st) = (attempts.display().to_string(), store.display().to_string());
    let first = run(&[
        "recover",
        "--request",
        &req,
        "--error",
        &err,
        "--store",
        &st,
        "--attempts",
        &att,
    ]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let sent = String::from_utf8_lossy(&first.stdout).into_owned();
    assert_eq!(
        sent,
        r#"{"model":"gpt-5","input":[{"role":"user","content":"list files"},{"type":"reasoning","id":"rs_01","summary":[],"encrypted_content":"gAAAAABpAAAA"},{"type":"function_call","id":"fc_01","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a.txt"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a.txt"}]},{"role":"user","content":"thanks"}]}"#
    );
    let e = stderr(&first);
    assert!(e.contains("action: drop items"), "{e}");
    assert!(e.contains("change* [OR-04] removed_block input[4]"), "{e}");
    assert!(
        e.contains("change* [OR-02] removed_field input[5].id"),
        "{e}"
    );
    assert!(e.contains("send this body once"), "{e}");
    assert_eq!(entries(&attempts), 1);

    // The retried body fails the same way: give up, nothing on standard output.
    let retried = write(dir.path(), "retried.json", &sent);
    let second = run(&[
        "recover",
        "--request",
        &retried,
        "--error",
        &err,
        "--store",
        &st,
        "--attempts",
        &att,
    ]);
    assert_eq!(second.status.code(), Some(3), "{}", stderr(&second));
    assert!(second.stdout.is_empty());
    assert!(
        stderr(&second).contains("action: give up"),
        "{}",
        stderr(&second)
    );
    assert_eq!(entries(&attempts), 2);
}

#[test]
fn recover_edits_converse_chat_and_store_false_responses_bodies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&str, String, &str, &str); 3] = [
        (
            // BR-05, api-rules-reasoning-2026-11.md §8.2 (langchain-ai/langchain-aws#401).
            r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"think"}}},{"text":"a"}]},{"role":"user","content":[{"text":"q2"}]}]}"#,
            "User messages cannot contain reasoning content. Please remove the reasoning content and try again.".to_owned(),
            r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"text":"a"}]},{"role":"user","content":[{"text":"q2"}]}]}"#,
            "[BR-05] removed_block messages[1].content[0]",
        ),
        (
            // DS-01, api-rules-reasoning-2026-11.md §4.2 (Euyug/Mirai-Gpt-Plugin#4).
            r#"{"model":"deepseek-reasoner","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a","reasoning_content":"think"},{"role":"user","content":"q2"}]}"#,
            "The reasoning_content is an intermediate result for display purposes only and will not be included in the context for inference. Please remove the reasoning_content from your message to reduce network traffic.".to_owned(),
            r#"{"model":"deepseek-reasoner","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"user","content":"q2"}]}"#,
            "[recover] removed_field messages[1].reasoning_content",
        ),
        (
            // OR-03, can1357/oh-my-pi#41 (corpus/errors public.jsonl).
            r#"{"model":"gpt-5","store":false,"input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_04962823ecde01b901698e138042688193a657e07614b238c3","summary":[]},{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"hello"}]},{"role":"user","content":"more"}]}"#,
            real_error("ohmypi-responses-item-not-found-store-false", "", ""),
            r#"{"model":"gpt-5","store":false,"input":[{"role":"user","content":"hi"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]},{"role":"user","content":"more"}]}"#,
            "[OR-03] removed_block input[1]",
        ),
    ];
    for (n, (request, error, expect, change)) in cases.iter().enumerate() {
        let req = write(dir.path(), &format!("req{n}.json"), request);
        let err = write(dir.path(), &format!("err{n}.txt"), error);
        let o = run(&["recover", "--request", &req, "--error", &err]);
        assert_eq!(o.status.code(), Some(0), "{n}: {}", stderr(&o));
        assert_eq!(String::from_utf8_lossy(&o.stdout), *expect, "{n}");
        assert!(stderr(&o).contains(change), "{n}: {}", stderr(&o));
    }
}
