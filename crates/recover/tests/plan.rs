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
    for body in [
        "Item 'rs_123abc' of type 'reasoning' was provided without its required following item.",
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_abc123",
    ] {
        let a = ladder(Some(400), body, 1);
        assert!(matches!(a[0], Action::GiveUp { .. }), "{body}: {a:?}");
    }
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
