//! Data-driven rule tests: the exact transcript before and after, through one `check` helper.
//!
//! Cases named `seedNN` are the repair seeds of peers.md §7; the others exercise each rule of
//! api-rules.md with the error text it prevents quoted in the finding.

use turnkeeper_model::{FormatHint, read};
use turnkeeper_prevent::{Options, Severity, check as run_check, repair};

/// A signature that looks like a real one (base64); what matters is that it is never altered.
const SIG: &str = "EqQBCkYIBxgCKkDv\\u002bZ9Q==";

struct Expect<'a> {
    /// Error-level rule ids `check` must report, in order.
    rules: &'a [&'a str],
    /// The repaired body, or `None` when it must be the input, byte for byte.
    after: Option<&'a str>,
    /// Error-level rule ids left after repair.
    left: &'a [&'a str],
}

fn check(input: &str, expect: Expect<'_>) {
    let t = read(input, FormatHint::Auto).expect("test input parses");
    let opts = Options::default();
    let found: Vec<&str> = run_check(&t, &opts)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| f.rule.as_str())
        .collect();
    assert_eq!(found, expect.rules, "findings of {input}");
    let r = repair(&t, &opts).expect("repair passes the guard");
    match expect.after {
        None => assert_eq!(r.body, input, "a valid body must come back unchanged"),
        Some(after) => assert_eq!(
            r.body, after,
            "repair of {input}\nreport: {:#?}",
            r.report.changes
        ),
    }
    let left: Vec<&str> = r
        .report
        .findings_left
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| f.rule.as_str())
        .collect();
    assert_eq!(
        left, expect.left,
        "left after repair: {:#?}",
        r.report.findings_left
    );
    // Idempotence: a second repair changes nothing.
    let t2 = read(&r.body, FormatHint::Auto).expect("output parses");
    let mut again = opts.clone();
    for rc in &r.report.request_changes {
        if let turnkeeper_prevent::RequestChange::AddBeta { value, .. } = rc {
            again.betas.push(value.clone());
        }
    }
    let r2 = repair(&t2, &again).expect("second repair");
    assert_eq!(r2.body, r.body, "repair is idempotent");
}

fn thinking(text: &str) -> String {
    format!(r#"{{"type":"thinking","thinking":"{text}","signature":"{SIG}"}}"#)
}

fn body(model: &str, thinking_param: &str, messages: &str) -> String {
    let th = if thinking_param.is_empty() {
        String::new()
    } else {
        format!(r#""thinking":{thinking_param},"#)
    };
    format!(r#"{{"model":"{model}","max_tokens":8000,{th}"messages":[{messages}]}}"#)
}

const MANUAL: &str = r#"{"type":"enabled","budget_tokens":2048}"#;

#[test]
fn valid_tool_loop_with_manual_thinking_is_unchanged() {
    let th = thinking("Let me look.\\nOK \u{e9}");
    let input = body(
        "claude-sonnet-4-5",
        MANUAL,
        &format!(
            r#"{{"role":"user","content":"ls"}}, {{"role":"assistant","content":[{th},{{"type":"tool_use","id":"toolu_1","name":"ls","input":{{}}}}]}},
               {{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"a"}}]}}"#
        ),
    );
    check(
        &input,
        Expect {
            rules: &[],
            after: None,
            left: &[],
        },
    );
}

#[test]
fn seed09_aborted_turn_gets_an_error_result_before_the_user_text() {
    let th = thinking("plan");
    let before = body(
        "claude-sonnet-4-5",
        MANUAL,
        &format!(
            r#"{{"role":"user","content":"go"}},{{"role":"assistant","content":[{th},{{"type":"tool_use","id":"toolu_1","name":"f","input":{{}}}}]}},{{"role":"user","content":[{{"type":"text","text":"stop, just answer"}}]}}"#
        ),
    );
    let after = before.replace(
        r#"{"role":"user","content":[{"type":"text","text":"stop, just answer"}]}"#,
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"The tool call did not complete: no result was recorded."},{"type":"text","text":"stop, just answer"}]}"#,
    );
    check(
        &before,
        Expect {
            rules: &["AN-08"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn seed10_results_after_user_text_move_up_and_missing_ones_are_added() {
    let before = body(
        "claude-sonnet-4-5",
        "",
        r#"{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"tool_use","id":"t2","name":"g","input":{}}]},{"role":"user","content":"wait"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"two"}]}"#,
    );
    let after = body(
        "claude-sonnet-4-5",
        "",
        r#"{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"tool_use","id":"t2","name":"g","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"The tool call did not complete: no result was recorded."},{"type":"tool_result","tool_use_id":"t2","content":"two"},{"type":"text","text":"wait"}]}"#,
    );
    check(
        &before,
        Expect {
            rules: &["AN-08", "AN-11"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn seed12_duplicate_and_orphan_results_are_dropped() {
    let before = body(
        "claude-sonnet-4-5",
        "",
        r#"{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"one"},{"type":"tool_result","tool_use_id":"t1","content":"again"},{"type":"tool_result","tool_use_id":"zz","content":"who"}]}"#,
    );
    let after = body(
        "claude-sonnet-4-5",
        "",
        r#"{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"one"}]}"#,
    );
    check(
        &before,
        Expect {
            rules: &["AN-10", "AN-10"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn seed14_invalid_tool_ids_become_distinct_valid_ids_on_both_sides() {
    let before = body(
        "claude-sonnet-4-5",
        "",
        r#"{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"call_a|b","name":"f","input":{}},{"type":"tool_use","id":"call_a:b","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_a|b","content":"1"},{"type":"tool_result","tool_use_id":"call_a:b","content":"2"}]}"#,
    );
    let t = read(&before, FormatHint::Auto).expect("parses");
    let r = repair(&t, &Options::default()).expect("repairs");
    assert!(
        r.report.findings_left.is_empty(),
        "{:?}",
        r.report.findings_left
    );
    assert!(r.body.contains(r#""id":"call_a_b""#), "{}", r.body);
    assert!(r.body.contains(r#""tool_use_id":"call_a_b""#));
    let second = r.body.matches(r#""id":"call_a_b_"#).count();
    assert_eq!(second, 1, "the colliding id gets a hash suffix: {}", r.body);
    check(
        &before,
        Expect {
            rules: &["AN-12", "AN-12", "AN-12", "AN-12"],
            after: Some(&r.body),
            left: &[],
        },
    );
}

#[test]
fn seed15_empty_text_thinking_and_redacted_blocks_are_complete_not_empty() {
    let input = body(
        "claude-opus-4-7",
        r#"{"type":"adaptive"}"#,
        &format!(
            r#"{{"role":"user","content":"hi"}},{{"role":"assistant","content":[{{"type":"thinking","thinking":"","signature":"{SIG}"}},{{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"}},{{"type":"text","text":"Hello"}}]}},{{"role":"user","content":"again"}}"#
        ),
    );
    check(
        &input,
        Expect {
            rules: &[],
            after: None,
            left: &[],
        },
    );
}

#[test]
fn seed16_whitespace_text_is_removed_and_an_emptied_message_goes_too() {
    let before = body(
        "claude-sonnet-4-5",
        "",
        r#"{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"text","text":"  "}]},{"role":"user","content":"b"}"#,
    );
    let after = body(
        "claude-sonnet-4-5",
        "",
        r#"{"role":"user","content":"a"},{"role":"user","content":"b"}"#,
    );
    check(
        &before,
        Expect {
            rules: &["AN-05"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn an05_cache_control_moves_off_an_empty_text_block() {
    let before = body(
        "claude-sonnet-4-5",
        "",
        r#"{"role":"user","content":[{"type":"text","text":"context"},{"type":"text","text":"","cache_control":{"type":"ephemeral"}}]}"#,
    );
    let after = body(
        "claude-sonnet-4-5",
        "",
        r#"{"role":"user","content":[{"type":"text","text":"context","cache_control":{"type":"ephemeral"}}]}"#,
    );
    check(
        &before,
        Expect {
            rules: &["AN-05"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn an05_removing_a_whole_message_leaves_the_next_one_alone_and_still_checked() {
    // The empty text goes, its thinking is then trailing (AN-19) and goes, and the message with
    // it. The breakpoint has nowhere to go in that message (thinking is never a target) and is
    // dropped, not moved into the next message, whose whitespace text is still removed in the
    // same pass.
    let before = body(
        "claude-sonnet-4-5",
        MANUAL,
        &format!(
            r#"{{"role":"user","content":"List the crates."}},{{"role":"assistant","content":[{},{{"type":"text","text":"","cache_control":{{"type":"ephemeral"}}}}]}},{{"role":"user","content":[{{"type":"text","text":" "}},{{"type":"text","text":"Go on."}}]}},{{"role":"assistant","content":[{},{{"type":"text","text":"model, guard."}}]}},{{"role":"user","content":"Thanks."}}"#,
            thinking("t1"),
            thinking("t2")
        ),
    );
    let after = body(
        "claude-sonnet-4-5",
        MANUAL,
        &format!(
            r#"{{"role":"user","content":"List the crates."}},{{"role":"user","content":[{{"type":"text","text":"Go on."}}]}},{{"role":"assistant","content":[{},{{"type":"text","text":"model, guard."}}]}},{{"role":"user","content":"Thanks."}}"#,
            thinking("t2")
        ),
    );
    check(
        &before,
        Expect {
            rules: &["AN-05", "AN-05"],
            after: Some(&after),
            left: &[],
        },
    );
    let t = read(&before, FormatHint::Auto).expect("test input parses");
    let r = repair(&t, &Options::default()).expect("repair passes the guard");
    let changes: Vec<(&str, &str, &str)> = r
        .report
        .changes
        .iter()
        .map(|c| (c.rule.as_str(), c.action.as_str(), c.path.as_str()))
        .collect();
    assert_eq!(
        changes,
        [
            ("AN-05", "removed_block", "messages[1].content[1]"),
            ("AN-05", "removed_field", "messages[1]"),
            // What the removal exposed (AN-19, then AN-04) is repaired by AN-05's shared
            // helper and reported under AN-05, the rule whose repair caused it.
            ("AN-05", "removed_block", "messages[1].content[0]"),
            ("AN-05", "removed_message", "messages[1]"),
            ("AN-05", "removed_block", "messages[2].content[0]"),
        ],
        "{:#?}",
        r.report.changes
    );
}

#[test]
fn seed19_history_starting_with_assistant_gets_a_bootstrap_user_turn() {
    // No thinking follows, so a minimal user message in front binds nothing (api-rules.md §5.2,
    // AN-01 row) and the leading turn is kept (peers.md §7 seed 19).
    let history = r#"{"role":"assistant","content":[{"type":"tool_use","id":"t0","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t0","content":"x"}]},{"role":"user","content":"now"}"#;
    let before = body("claude-sonnet-4-5", "", history);
    let after = body(
        "claude-sonnet-4-5",
        "",
        &format!(r#"{{"role":"user","content":[{{"type":"text","text":"Continue."}}]}},{history}"#),
    );
    check(
        &before,
        Expect {
            rules: &["AN-01"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn seed20_results_for_a_split_assistant_turn_follow_the_whole_turn() {
    let input = body(
        "claude-sonnet-4-5",
        "",
        r#"{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"assistant","content":[{"type":"text","text":"working"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}"#,
    );
    check(
        &input,
        Expect {
            rules: &[],
            after: None,
            left: &[],
        },
    );
}

#[test]
fn an16_open_loop_without_thinking_disables_thinking_for_the_request() {
    let before = body(
        "claude-sonnet-4-5",
        MANUAL,
        r#"{"role":"user","content":"ls"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a"}]}"#,
    );
    let after = before.replace(MANUAL, r#"{"type":"disabled"}"#);
    check(
        &before,
        Expect {
            rules: &["AN-16"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn an18_thinking_after_text_in_manual_mode_is_removed_whole() {
    let th = thinking("late");
    let before = body(
        "claude-sonnet-4-5",
        MANUAL,
        &format!(
            r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"text","text":"Sure."}},{th},{{"type":"text","text":"Done."}}]}},{{"role":"user","content":"thanks"}}"#
        ),
    );
    let after = body(
        "claude-sonnet-4-5",
        MANUAL,
        r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"Sure."},{"type":"text","text":"Done."}]},{"role":"user","content":"thanks"}"#,
    );
    check(
        &before,
        Expect {
            rules: &["AN-18"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn adaptive_responses_that_lead_with_whitespace_text_are_accepted_as_they_are() {
    let th = thinking("");
    let input = body(
        "claude-opus-4-6",
        r#"{"type":"adaptive"}"#,
        &format!(
            r#"{{"role":"user","content":"2+2?"}},{{"role":"assistant","content":[{{"type":"text","text":"\n\n"}},{th},{{"type":"text","text":"4"}}]}},{{"role":"user","content":"and 3+3?"}}"#
        ),
    );
    check(
        &input,
        Expect {
            rules: &[],
            after: None,
            left: &[],
        },
    );
}

#[test]
fn an19_unsigned_trailing_thinking_from_an_interrupted_stream_is_dropped() {
    let before = body(
        "claude-sonnet-4-5",
        "",
        &format!(
            r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{},{{"type":"text","text":"partial"}},{{"type":"thinking","thinking":"cut","signature":""}}]}},{{"role":"user","content":"go on"}}"#,
            thinking("first")
        ),
    );
    let after = body(
        "claude-sonnet-4-5",
        "",
        &format!(
            r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{},{{"type":"text","text":"partial"}}]}},{{"role":"user","content":"go on"}}"#,
            thinking("first")
        ),
    );
    check(
        &before,
        Expect {
            rules: &["AN-23", "AN-19"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn an03_prefill_with_thinking_on_is_removed() {
    let before = body(
        "claude-sonnet-4-5",
        MANUAL,
        r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"Start with"}]}"#,
    );
    let after = body(
        "claude-sonnet-4-5",
        MANUAL,
        r#"{"role":"user","content":"q"}"#,
    );
    check(
        &before,
        Expect {
            rules: &["AN-03"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn an20_thinking_in_a_final_prefill_with_thinking_off_is_removed() {
    let before = body(
        "claude-sonnet-4-5",
        r#"{"type":"disabled"}"#,
        &format!(
            r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{},{{"type":"text","text":"Begin"}}]}}"#,
            thinking("x")
        ),
    );
    let after = body(
        "claude-sonnet-4-5",
        r#"{"type":"disabled"}"#,
        r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"Begin"}]}"#,
    );
    check(
        &before,
        Expect {
            rules: &["AN-20"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn an23_sentinel_signature_is_removed_then_an16_disables_thinking() {
    let before = body(
        "claude-sonnet-4-5",
        MANUAL,
        r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"thinking","thinking":"[Continuing from previous reasoning]","signature":"skip_thought_signature_validator"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]}"#,
    );
    let after = body(
        "claude-sonnet-4-5",
        r#"{"type":"disabled"}"#,
        r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]}"#,
    );
    check(
        &before,
        Expect {
            rules: &["AN-23"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn seed22_foreign_fields_are_stripped_from_non_thinking_blocks() {
    let before = body(
        "claude-sonnet-4-5",
        "",
        r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{},"thoughtSignature":"CiQBjz1rX0"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}"#,
    );
    let after = before.replace(r#","thoughtSignature":"CiQBjz1rX0""#, "");
    check(
        &before,
        Expect {
            rules: &["AN-06"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn config_errors_are_reported_and_left_for_the_caller() {
    let input = r#"{"model":"claude-sonnet-4-5","max_tokens":1000,"temperature":0.2,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":"q"}]}"#;
    check(
        input,
        Expect {
            rules: &["CFG-07", "CFG-09"],
            after: None,
            left: &["CFG-07", "CFG-09"],
        },
    );
}

#[test]
fn seed21_gemini_first_call_of_a_current_step_gets_the_dummy_signature_only_once() {
    let before = r#"{"model":"gemini-3-pro-preview","contents":[{"role":"user","parts":[{"text":"weather?"}]},{"role":"model","parts":[{"functionCall":{"name":"a","args":{}}},{"functionCall":{"name":"b","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"a","response":{}}},{"functionResponse":{"name":"b","response":{}}}]}]}"#;
    let after = before.replace(
        r#"{"functionCall":{"name":"a","args":{}}}"#,
        r#"{"functionCall":{"name":"a","args":{}},"thoughtSignature":"skip_thought_signature_validator"}"#,
    );
    check(
        before,
        Expect {
            rules: &["GM-01"],
            after: Some(&after),
            left: &[],
        },
    );
}

#[test]
fn gemini_missing_function_response_gets_an_error_response() {
    let before = r#"{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"a","args":{}},"thoughtSignature":"EqQBCkYIBx"}]},{"role":"user","parts":[{"text":"never mind"}]}]}"#;
    let after = r#"{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"a","args":{}},"thoughtSignature":"EqQBCkYIBx"}]},{"role":"user","parts":[{"functionResponse":{"name":"a","response":{"error":"The tool call did not complete: no result was recorded."}}},{"text":"never mind"}]}]}"#;
    check(
        before,
        Expect {
            rules: &["GM-10"],
            after: Some(after),
            left: &[],
        },
    );
}

#[test]
fn prefix_bound_models_lose_thinking_after_an_edit_point() {
    let th1 = thinking("one");
    let th2 = thinking("two");
    let before = body(
        "claude-fable-5-1",
        "",
        &format!(
            r#"{{"role":"user","content":"a"}},{{"role":"assistant","content":[{th1},{{"type":"tool_use","id":"t1","name":"f","input":{{}}}}]}},{{"role":"user","content":"skip it"}},{{"role":"assistant","content":[{th2},{{"type":"text","text":"ok"}}]}},{{"role":"user","content":"next"}}"#
        ),
    );
    let t = read(&before, FormatHint::Auto).expect("parses");
    let r = repair(&t, &Options::default()).expect("repairs");
    // The synthetic result edits messages[2]; the thinking in messages[3] can no longer verify.
    assert!(r.body.contains("\"one\""), "thinking before the edit stays");
    assert!(
        !r.body.contains("\"two\""),
        "thinking after the edit is stripped: {}",
        r.body
    );
    assert!(
        r.report
            .changes
            .iter()
            .any(|c| c.rule == "AN-25" && c.fingerprint.is_some())
    );
}

#[test]
fn an22_altered_turn_is_restored_from_the_store() {
    let original = format!(
        r#"{{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{},{{"type":"tool_use","id":"toolu_7","name":"f","input":{{}}}}],"stop_reason":"tool_use"}}"#,
        thinking("the real reasoning")
    );
    let mut store = turnkeeper_guard::TurnStore::in_memory();
    store.add_response(&original).expect("stored");
    // The agent dropped the thinking block from the replayed turn. The turn is still open (its
    // tool's result follows), so thinking is required: AN-16 restores it. (AN-22 leaves a turn
    // whose thinking was dropped whole to the rules that require thinking.)
    let before = body(
        "claude-sonnet-4-5",
        MANUAL,
        r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_7","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_7","content":"r"}]}"#,
    );
    let t = read(&before, FormatHint::Auto).expect("parses");
    let opts = Options {
        store: Some(&store),
        ..Options::default()
    };
    let found: Vec<&str> = run_check(&t, &opts)
        .iter()
        .map(|f| f.rule.as_str())
        .collect();
    assert_eq!(found, ["AN-16"]);
    let r = repair(&t, &opts).expect("repairs");
    let th = thinking("the real reasoning");
    assert_eq!(
        r.body,
        before.replace(
            r#"{"type":"tool_use","id":"toolu_7""#,
            &format!(r#"{th},{{"type":"tool_use","id":"toolu_7""#)
        )
    );
    assert!(
        r.report.findings_left.is_empty(),
        "{:?}",
        r.report.findings_left
    );
    assert!(
        r.report.request_changes.is_empty(),
        "restoring made disabling thinking unnecessary"
    );
}

#[test]
fn report_snapshot_for_an_aborted_tool_loop() {
    let th = thinking("plan");
    let before = body(
        "claude-sonnet-4-5",
        MANUAL,
        &format!(
            r#"{{"role":"user","content":"go"}},{{"role":"assistant","content":[{th},{{"type":"tool_use","id":"toolu_1","name":"f","input":{{}}}}]}},{{"role":"user","content":[{{"type":"text","text":" "}}]}}"#
        ),
    );
    let t = read(&before, FormatHint::Auto).expect("parses");
    let r = repair(&t, &Options::default()).expect("repairs");
    insta::assert_json_snapshot!(r.report);
}
