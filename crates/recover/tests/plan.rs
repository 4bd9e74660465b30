//! Planner ladders: escalation, bounds, and the rules that must never be broken.

use std::time::Duration;

use turnkeeper_prevent::RuleId;
use turnkeeper_recover::{
    Action, Attempts, ErrorKind, Location, MAX_ATTEMPTS, MAX_RETRIES, classify, plan,
};

/// Run the planner `n` times on the same error, recording each action; return the actions.
fn ladder(status: Option<u16>, body: &str, n: usize) -> Vec<Action> {
    let d = classify(status, body);
    let mut attempts = Attempts::new();
    let mut out = Vec::new();
    for _ in 0..n {
        let a = plan(&d, &attempts);
        attempts.record(&d, a.clone());
        out.push(a);
    }
    out
}

fn names(actions: &[Action]) -> Vec<&'static str> {
    actions.iter().map(Action::name).collect()
}

const ORDER: &str = "messages.5.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).";
const MODIFIED: &str = "messages.3.content.4: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.";
const BOUND: &str = "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to \"drop_block\".";

#[test]
fn order_ladder_repairs_then_restores_then_disables_then_gives_up() {
    let a = ladder(Some(400), ORDER, 5);
    assert_eq!(
        names(&a),
        [
            "repair",
            "restore_from_store",
            "disable_thinking",
            "give_up",
            "give_up"
        ]
    );
    assert_eq!(
        a[0],
        Action::Repair {
            rules: vec![RuleId::An16, RuleId::An18],
            location: Location {
                message: Some(5),
                block: Some(0)
            }
        }
    );
}

#[test]
fn modified_never_leads_to_a_repair_that_edits_thinking() {
    let a = ladder(Some(400), MODIFIED, 6);
    assert!(
        a.iter().all(|x| !matches!(x, Action::Repair { .. })),
        "{a:?}"
    );
    assert_eq!(a[0], Action::RestoreFromStore);
    assert_eq!(a[1], Action::StripThinking { from: Some(3) });
    assert_eq!(a[2], Action::DisableThinking);
    assert!(matches!(a[3], Action::GiveUp { .. }));
}

#[test]
fn prefix_bound_signature_asks_for_drop_block_first() {
    let a = ladder(Some(400), BOUND, 4);
    assert_eq!(
        names(&a),
        [
            "request_drop_block",
            "strip_thinking",
            "disable_thinking",
            "give_up"
        ]
    );
}

#[test]
fn retry_uses_the_providers_delay_then_gives_up() {
    let body = "429 Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms.";
    let a = ladder(Some(429), body, MAX_RETRIES + 1);
    for x in &a[..MAX_RETRIES] {
        assert_eq!(
            *x,
            Action::Retry {
                after: Duration::from_millis(644)
            }
        );
    }
    assert!(matches!(a[MAX_RETRIES], Action::GiveUp { .. }));
}

#[test]
fn retry_without_a_delay_backs_off() {
    let a = ladder(
        Some(529),
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        3,
    );
    let delays: Vec<Duration> = a
        .iter()
        .map(|x| match x {
            Action::Retry { after } => *after,
            other => panic!("expected retry, got {other:?}"),
        })
        .collect();
    assert!(delays[0] < delays[1] && delays[1] < delays[2], "{delays:?}");
}

#[test]
fn same_error_on_another_message_starts_its_own_ladder() {
    let first = classify(
        Some(400),
        "messages.6: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A.",
    );
    let other = classify(
        Some(400),
        "messages.9: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01B.",
    );
    let mut attempts = Attempts::new();
    let a = plan(&first, &attempts);
    assert_eq!(a.name(), "repair");
    attempts.record(&first, a);
    assert_eq!(plan(&first, &attempts), Action::RestoreFromStore);
    assert_eq!(plan(&other, &attempts).name(), "repair");
}

#[test]
fn total_attempts_are_bounded() {
    let mut attempts = Attempts::new();
    for m in 0..MAX_ATTEMPTS {
        let d = classify(
            Some(400),
            &format!(
                "messages.{m}: all messages must have non-empty content except for the optional final assistant message"
            ),
        );
        let a = plan(&d, &attempts);
        attempts.record(&d, a);
    }
    let d = classify(
        Some(400),
        "messages.99: all messages must have non-empty content",
    );
    assert!(matches!(plan(&d, &attempts), Action::GiveUp { .. }));
}

#[test]
fn openai_side_kinds_give_up_for_now() {
    let body = "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_abc123";
    let a = ladder(Some(400), body, 1);
    assert!(matches!(a[0], Action::GiveUp { .. }), "{body}: {a:?}");
}

#[test]
fn config_and_context_errors_change_the_request_not_the_thinking() {
    assert_eq!(
        ladder(
            Some(400),
            "`temperature` may only be set to 1 when thinking is enabled",
            1
        )[0],
        Action::FixConfig {
            what: "temperature".into()
        }
    );
    assert_eq!(
        ladder(
            Some(400),
            "'claude-3-5-haiku-20241022' does not support thinking.",
            1
        )[0],
        Action::DisableThinking
    );
    assert_eq!(
        names(&ladder(
            Some(400),
            "prompt is too long: 219898 tokens > 200000 maximum",
            2
        )),
        ["compact", "give_up"]
    );
}

#[test]
fn attempts_round_trip_through_json() {
    let d = classify(Some(400), ORDER);
    let mut attempts = Attempts::new();
    attempts.record(&d, plan(&d, &attempts));
    attempts.record(
        &d,
        Action::Retry {
            after: Duration::from_millis(644),
        },
    );
    let json = attempts.to_json().expect("serialises");
    assert!(
        json.contains(r#""type": "retry""#) && json.contains(r#""after_ms": 644"#),
        "{json}"
    );
    assert_eq!(Attempts::from_json(&json).expect("parses"), attempts);
    assert_eq!(
        Attempts::from_json("  ").expect("empty is none"),
        Attempts::new()
    );
    assert_eq!((attempts.len(), attempts.is_empty()), (2, false));
    assert!(Attempts::new().is_empty());
    assert!(Attempts::from_json("{nope").is_err());
    assert_eq!(d.kind, ErrorKind::ThinkingBlockOrder);
}

#[test]
fn action_json_shape_is_tagged() {
    let v = serde_json::to_value(Action::Retry {
        after: Duration::from_millis(644),
    })
    .expect("json");
    assert_eq!(v, serde_json::json!({"type": "retry", "after_ms": 644}));
    let v = serde_json::to_value(Action::RestoreFromStore).expect("json");
    assert_eq!(v, serde_json::json!({"type": "restore_from_store"}));
}

/// An action in a few words: its name, the rules and location of a repair, the message of a
/// strip, the field of a config fix, the wait of a retry, the reason of a give-up.
fn show(a: &Action) -> String {
    match a {
        Action::Repair { rules, location } => {
            let ids: Vec<&str> = rules.iter().map(|r| r.as_str()).collect();
            format!("repair({} at {location})", ids.join(","))
        }
        Action::StripThinking { from } => format!("strip_thinking({from:?})"),
        Action::FixConfig { what } => format!("fix_config({what})"),
        Action::Retry { after } => format!("retry({}ms)", after.as_millis()),
        Action::GiveUp { reason } => format!("give_up({reason})"),
        Action::RestoreReasoning { from } => format!("restore_reasoning({from:?})"),
        Action::EmptyReasoning { from } => format!("empty_reasoning({from:?})"),
        Action::DropItems { ids } => format!("drop_items([{}])", ids.join(",")),
        Action::StripItemIds { ids } => format!("strip_item_ids([{}])", ids.join(",")),
        other => other.name().to_owned(),
    }
}

/// Plans the same error until the planner gives up (at most eight times) and compares the
/// ladder with the expected one, rung by rung, ` → ` between rungs.
fn check(status: Option<u16>, body: &str, expect: &str) {
    let d = classify(status, body);
    let mut attempts = Attempts::new();
    let mut rungs = Vec::new();
    for _ in 0..8 {
        let a = plan(&d, &attempts);
        let done = matches!(a, Action::GiveUp { .. });
        rungs.push(show(&a));
        attempts.record(&d, a);
        if done {
            break;
        }
    }
    assert_eq!(rungs.join(" → "), expect, "{body}");
}

#[test]
fn every_kind_climbs_its_own_ladder() {
    check(
        Some(400),
        ORDER,
        "repair(AN-16,AN-18 at messages[5].content[0]) → restore_from_store → disable_thinking → give_up(thinking_block_order at messages[5].content[0] persisted after 3 recovery attempt(s))",
    );
    check(
        Some(400),
        "messages.3: The `reasoning_content` in the thinking mode must be passed back to the API.",
        "restore_reasoning(Some(3)) → empty_reasoning(Some(3)) → disable_thinking → give_up(thinking_block_order at messages[3] persisted after 3 recovery attempt(s))",
    );
    check(
        Some(400),
        "thinking is enabled but reasoning_content is missing in assistant tool call message at index 4",
        "restore_reasoning(Some(4)) → empty_reasoning(Some(4)) → disable_thinking → give_up(thinking_block_order at messages[4] persisted after 3 recovery attempt(s))",
    );
    check(
        Some(400),
        "messages.2.content.0: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
        "repair(AN-20 at messages[2].content[0]) → strip_thinking(Some(2)) → give_up(thinking_disabled_violation at messages[2].content[0] persisted after 2 recovery attempt(s))",
    );
    check(
        Some(400),
        MODIFIED,
        "restore_from_store → strip_thinking(Some(3)) → disable_thinking → give_up(thinking_block_modified at messages[3].content[4] persisted after 3 recovery attempt(s))",
    );
    check(
        Some(400),
        BOUND,
        "request_drop_block → strip_thinking(Some(1)) → disable_thinking → give_up(thinking_signature_invalid at messages[1].content[0] persisted after 3 recovery attempt(s))",
    );
    check(
        Some(400),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
        "repair(AN-23 at messages[1].content[0]) → restore_from_store → strip_thinking(Some(1)) → disable_thinking → give_up(thinking_signature_invalid at messages[1].content[0] persisted after 4 recovery attempt(s))",
    );
    check(
        Some(400),
        "messages.1.content.0.thinking.signature: Field required",
        "repair(AN-06,AN-23 at messages[1].content[0]) → restore_from_store → strip_thinking(Some(1)) → disable_thinking → give_up(thinking_signature_invalid at messages[1].content[0] persisted after 4 recovery attempt(s))",
    );
    check(
        Some(400),
        "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly.",
        "repair(GM-01 at (no location)) → restore_from_store → give_up(thinking_signature_invalid at (no location) persisted after 2 recovery attempt(s))",
    );
    check(
        Some(400),
        "Corrupted thought signature.",
        "restore_from_store → give_up(thinking_signature_invalid at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "messages.4: The final block in an assistant message cannot be `thinking`.",
        "repair(AN-19 at messages[4]) → restore_from_store → disable_thinking → give_up(thinking_block_trailing at messages[4] persisted after 3 recovery attempt(s))",
    );
    check(
        Some(400),
        "messages.6: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A.",
        "repair(AN-08,AN-09,AN-11 at messages[6]) → restore_from_store → give_up(tool_result_missing at messages[6] persisted after 2 recovery attempt(s))",
    );
    check(
        Some(400),
        "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
        "repair(GM-10,GM-03 at (no location)) → restore_from_store → give_up(tool_result_missing at (no location) persisted after 2 recovery attempt(s))",
    );
    check(
        Some(400),
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_abc123",
        "give_up(repairs of OpenAI-format tool messages (OC-01) are not implemented yet)",
    );
    check(
        Some(400),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        "repair(AN-10 at messages[2].content[0]) → restore_from_store → give_up(tool_use_id_mismatch at messages[2].content[0] persisted after 2 recovery attempt(s))",
    );
    check(
        Some(400),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: srvtoolu_9x. Each `tool_result` block must have a corresponding `server_tool_use` block in the previous message.",
        "repair(AN-10,AN-15 at messages[2].content[0]) → restore_from_store → give_up(tool_use_id_mismatch at messages[2].content[0] persisted after 2 recovery attempt(s))",
    );
    check(
        Some(400),
        "Please ensure that function response turn comes immediately after a function call turn.",
        "repair(GM-09 at (no location)) → restore_from_store → give_up(tool_use_id_mismatch at (no location) persisted after 2 recovery attempt(s))",
    );
    check(
        Some(400),
        "No tool call found for function call output with call_id call_Q7.",
        "repair(AN-10 at (no location)) → restore_from_store → give_up(tool_use_id_mismatch at (no location) persisted after 2 recovery attempt(s))",
    );
    check(
        Some(400),
        "OpenAI: No tool call found for function call output with call_id call_Q7.",
        "give_up(repairs of OpenAI-format tool messages (OC-02) are not implemented yet)",
    );
    check(
        Some(400),
        "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
        "repair(AN-12 at messages[1].content[0]) → give_up(tool_use_id_format at messages[1].content[0] persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "Invalid 'input[3].id': 'fc_123'. Expected an ID that begins with 'msg'.",
        "strip_item_ids([fc_123]) → give_up(tool_use_id_format at messages[3] persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "messages.4: all messages must have non-empty content except for the optional final assistant message",
        "repair(AN-04,AN-05 at messages[4]) → give_up(empty_content at messages[4] persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "messages: first message must use the \"user\" role",
        "repair(AN-01 at (no location)) → give_up(role_order at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "This model does not support assistant message prefill. The conversation must end with a user message.",
        "repair(AN-03 at (no location)) → give_up(role_order at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row",
        "repair(AN-02 at (no location)) → give_up(role_order at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "Please ensure that multiturn requests ends with a user role or a function response.",
        "repair(GM-09,GM-12 at (no location)) → give_up(role_order at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
        "repair(GM-09,GM-12 at (no location)) → give_up(role_order at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "Item 'rs_123abc' of type 'reasoning' was provided without its required following item.",
        "drop_items([rs_123abc]) → give_up(reasoning_item_orphan at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "prompt is too long: 219898 tokens > 200000 maximum",
        "compact → give_up(context_length_exceeded at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "`temperature` may only be set to 1 when thinking is enabled",
        "fix_config(temperature) → give_up(request_config_invalid at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "'claude-3-5-haiku-20241022' does not support thinking.",
        "disable_thinking → give_up(request_config_invalid at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and output_config.effort to control thinking behavior.",
        "use_adaptive → give_up(request_config_invalid at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        r#"{"error":{"message":"Unknown parameter: 'tools.defer_loading'.","param":"tools.defer_loading"}}"#,
        "fix_config(defer_loading) → give_up(request_config_invalid at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(400),
        "调用参数有误",
        "fix_config(request parameters) → give_up(request_config_invalid at (no location) persisted after 1 recovery attempt(s))",
    );
    check(
        Some(529),
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        "retry(2000ms) → retry(4000ms) → retry(8000ms) → retry(16000ms) → give_up(retryable_overloaded persisted after 4 retries)",
    );
    check(
        Some(429),
        "rate_limit_error",
        "retry(5000ms) → retry(10000ms) → retry(20000ms) → retry(40000ms) → give_up(retryable_rate_limit persisted after 4 retries)",
    );
    check(
        Some(500),
        "upstream failed",
        "retry(1000ms) → retry(2000ms) → retry(4000ms) → retry(8000ms) → give_up(retryable_server persisted after 4 retries)",
    );
    check(
        Some(400),
        "something nobody has seen",
        "give_up(the error was not recognised)",
    );
}

/// A prefix-bound modified block (a diagnosis the classifier does not make from the texts seen so
/// far, but a caller may) gets the drop-block rung after the restore.
#[test]
fn a_prefix_bound_modified_block_asks_for_drop_block_after_the_restore() {
    let mut d = classify(Some(400), MODIFIED);
    d.prefix_binding = true;
    let mut attempts = Attempts::new();
    let mut rungs = Vec::new();
    for _ in 0..5 {
        let a = plan(&d, &attempts);
        rungs.push(show(&a));
        attempts.record(&d, a);
    }
    assert_eq!(
        rungs.join(" → "),
        "restore_from_store → request_drop_block → strip_thinking(Some(3)) → disable_thinking → give_up(thinking_block_modified at messages[3].content[4] persisted after 4 recovery attempt(s))"
    );
}
