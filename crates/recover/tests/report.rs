//! What `recover` tells its caller at each step: the action, whether to send and after how
//! long, the headers, the rungs it skipped and why, its notes, which changes address the
//! diagnosis, and what is left. Each case is a request, an error and the options, and the
//! successive recoveries of that error rendered one per line.

use turnkeeper_prevent::{Options, PrefixEdit, ProfileOverrides, Severity};
use turnkeeper_recover::{Attempts, Recovered, classify, recover_with};

/// A signature that looks like a real one.
const SIG: &str = "EqQBCkYIBxgCKkDv";

/// One recovery in one line.
fn render(r: &Recovered) -> String {
    let mut out = vec![format!(
        "{} {:?} sends={}",
        r.action.name(),
        r.outcome,
        r.sends()
    )];
    if let Some(w) = r.wait() {
        out.push(format!("wait={}ms", w.as_millis()));
    }
    for (k, v) in &r.headers {
        out.push(format!("header {k}: {v}"));
    }
    for s in &r.report.skipped {
        out.push(format!("skipped {} ({})", s.action.name(), s.reason));
    }
    for n in &r.report.notes {
        out.push(format!("note {n}"));
    }
    for (i, c) in r.report.changes.iter().enumerate() {
        let mark = if r.report.addressing.contains(&i) {
            "*"
        } else {
            ""
        };
        out.push(format!("change{mark} {} {} {}", c.rule, c.action, c.path));
    }
    for f in &r.report.findings_left {
        if f.severity == Severity::Error {
            out.push(format!("left {} {}", f.rule, f.path));
        }
    }
    out.push(format!("has_errors={}", r.report.has_errors()));
    out.join(" | ")
}

/// Recovers from the same error `expect.len()` times in a row and compares each step.
fn check(request: &str, status: Option<u16>, error: &str, opts: &Options<'_>, expect: &[&str]) {
    let d = classify(status, error);
    let mut attempts = Attempts::new();
    let got: Vec<String> = expect
        .iter()
        .map(|_| {
            let r = recover_with(request, &d, &mut attempts, opts).expect("recovers");
            render(&r)
        })
        .collect();
    assert_eq!(got, expect, "{error}");
}

/// A request for `model` with `thinking` and the given messages.
fn body(model: &str, thinking: &str, messages: &str) -> String {
    format!(
        r#"{{"model":"{model}","max_tokens":8000,"thinking":{thinking},"messages":[{messages}]}}"#
    )
}

const OPEN_CALL: &str = r#"{"role":"user","content":"list files"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}]},{"role":"user","content":"never mind"}"#;

#[test]
fn a_location_outside_the_request_is_noted() {
    check(
        &body("claude-sonnet-4-5", r#"{"type":"disabled"}"#, OPEN_CALL),
        Some(400),
        "messages.9: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
        &Options::default(),
        &[
            "repair Send sends=true | note the error points at messages[9], but this request has 3 messages: was the error reported for this body? | change* AN-08 inserted_block messages[2].content[0] (new block) | has_errors=false",
        ],
    );
}

#[test]
fn a_model_that_needs_thinking_is_not_switched_off() {
    // DeepSeek's Anthropic-format wording (DS-06): the stored turn, else thinking off.
    let error =
        "messages.1: The `content[].thinking` in the thinking mode must be passed back to the API.";
    check(
        &body("claude-opus-5-5", r#"{"type":"adaptive"}"#, OPEN_CALL),
        Some(400),
        error,
        &Options::default(),
        &[
            "give_up HandBack sends=false | skipped restore_from_store (no turn store was given) | skipped disable_thinking ('claude-opus-5-5' cannot run with thinking disabled) | note giving up: thinking_block_order at messages[1] persisted after 2 recovery attempt(s) | has_errors=false",
        ],
    );
    let overrides =
        ProfileOverrides::parse("[models.\"\"]\ndisabled_ok = false\n", false).expect("parses");
    let no_model = r#"{"max_tokens":8000,"thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"q"}]}"#;
    check(
        no_model,
        Some(400),
        error,
        &Options {
            overrides: Some(&overrides),
            ..Options::default()
        },
        &[
            "give_up HandBack sends=false | skipped restore_from_store (no turn store was given) | skipped disable_thinking (this model cannot run with thinking disabled) | note giving up: thinking_block_order at messages[1] persisted after 2 recovery attempt(s) | has_errors=false",
        ],
    );
}

#[test]
fn retries_config_fixes_and_compaction_say_what_to_do() {
    let req = body("claude-sonnet-4-5", r#"{"type":"disabled"}"#, OPEN_CALL);
    let opts = Options::default();
    check(
        &req,
        Some(529),
        "Overloaded. Please retry after 3s",
        &opts,
        &[
            "retry Send sends=true | wait=3000ms | note send the same bytes again after 3000 ms | has_errors=false",
            "retry Send sends=true | wait=3000ms | note send the same bytes again after 3000 ms | has_errors=false",
        ],
    );
    check(
        &req,
        Some(400),
        "`temperature` may only be set to 1 when thinking is enabled",
        &opts,
        &[
            "fix_config HandBack sends=false | note the request parameter `temperature` must be fixed by the caller; no transcript change helps | has_errors=false",
            "give_up HandBack sends=false | note giving up: request_config_invalid at (no location) persisted after 1 recovery attempt(s) | has_errors=false",
        ],
    );
    check(
        &req,
        Some(400),
        "prompt is too long: 219898 tokens > 200000 maximum",
        &opts,
        &[
            "compact HandBack sends=false | note the transcript must be compacted (summarised or truncated) by the caller | has_errors=false",
        ],
    );
}

#[test]
fn a_repair_that_cannot_fix_everything_says_so() {
    // The open call is answered; the breakpoint on the thinking block is left (never edited).
    let messages = format!(
        r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"thinking","thinking":"t","signature":"{SIG}","cache_control":{{"type":"ephemeral"}}}},{{"type":"text","text":"a"}}]}},{OPEN_CALL}"#
    );
    check(
        &body(
            "claude-sonnet-4-5",
            r#"{"type":"enabled","budget_tokens":2048}"#,
            &messages,
        ),
        Some(400),
        "messages.3: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
        &Options::default(),
        &[
            "repair Send sends=true | change* AN-08 inserted_block messages[4].content[0] (new block) | left AN-06 messages[1].content[0] | has_errors=true",
        ],
    );
}

#[test]
fn a_repair_of_a_prefix_bound_model_can_ask_to_drop_blocks() {
    // Answering the open call edits the prefix of the later signed turn; with the drop-block
    // policy the API is asked to drop what no longer verifies, and the beta goes in a header.
    let messages = format!(
        r#"{OPEN_CALL},{{"role":"assistant","content":[{{"type":"thinking","thinking":"t","signature":"{SIG}"}},{{"type":"text","text":"ok"}}]}},{{"role":"user","content":"go"}}"#
    );
    let mut opts = Options::default();
    opts.policy.on_prefix_edit = PrefixEdit::DropBlock;
    check(
        &body("claude-opus-5-5", r#"{"type":"adaptive"}"#, &messages),
        Some(400),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
        &opts,
        &[
            "repair Send sends=true | header anthropic-beta: thinking-binding-controls-2026-08-01 | change* AN-08 inserted_block messages[2].content[0] (new block) | change AN-25 request thinking | has_errors=false",
        ],
    );
}
