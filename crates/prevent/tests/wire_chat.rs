//! The Chat Completions rules, case by case: each case is a body, a target, the findings check
//! must give (rule and severity) and the exact body repair must write.
//!
//! Every case also checks the reasoning invariant: each reasoning value (`reasoning_content`,
//! `reasoning`, `reasoning_details`, a Gemini thought signature) in the output is byte-equal to
//! one in the input, or is an empty stand-in the report lists as lossy; and the repaired body,
//! checked again, has no error left.

use turnkeeper_model::Format;
use turnkeeper_prevent::wire::{check_wire, repair_wire};
use turnkeeper_prevent::{ChangeAction, Options, Policy, Severity};

/// What a case must give.
struct Expect<'e> {
    /// `rule:severity` of each finding, in order (`"KM-01:error"`).
    findings: &'e [&'e str],
    /// The repaired body; `None`: the input itself, unchanged.
    repaired: Option<&'e str>,
}

fn opts(model: Option<&str>, stand_ins: bool) -> Options<'static> {
    Options {
        model: model.map(str::to_owned),
        policy: Policy {
            empty_stand_ins: stand_ins,
            ..Policy::default()
        },
        ..Options::default()
    }
}

/// Every string value under a reasoning key, anywhere in `v`, as JSON text.
fn reasoning_values(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if matches!(
                    k.as_str(),
                    "reasoning_content" | "reasoning" | "reasoning_details" | "thought_signature"
                ) {
                    out.push(x.to_string());
                } else {
                    reasoning_values(x, out);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| reasoning_values(x, out)),
        _ => {}
    }
}

fn check(input: &str, o: &Options<'_>, expect: Expect<'_>) {
    let found: Vec<String> = check_wire(input, Format::Chat, o)
        .expect("reads")
        .iter()
        .map(|f| {
            let sev = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "info",
            };
            format!("{}:{sev}", f.rule)
        })
        .collect();
    assert_eq!(found, expect.findings, "findings of {input}");
    let fixed = repair_wire(input, Format::Chat, o).expect("repairs");
    match expect.repaired {
        None => assert_eq!(
            fixed.body, input,
            "a body with nothing to repair is unchanged"
        ),
        Some(want) => assert_eq!(fixed.body, want, "repaired body"),
    }
    assert!(
        fixed
            .report
            .findings_left
            .iter()
            .all(|f| f.severity != Severity::Error)
            || !o.policy.empty_stand_ins,
        "errors left: {:?}",
        fixed.report.findings_left
    );
    // Reasoning leaves as it came, or is a reported empty stand-in.
    let before: serde_json::Value = serde_json::from_str(input).expect("json");
    let after: serde_json::Value = serde_json::from_str(&fixed.body).expect("json out");
    let (mut a, mut b) = (Vec::new(), Vec::new());
    reasoning_values(&before, &mut a);
    reasoning_values(&after, &mut b);
    let stand_ins = fixed
        .report
        .changes
        .iter()
        .filter(|c| c.action == ChangeAction::LossyStandIn)
        .count();
    let mut made = 0;
    for v in &b {
        if let Some(k) = a.iter().position(|x| x == v) {
            a.remove(k);
        } else {
            made += 1;
            assert!(
                v == "\"\"" || v == "\"skip_thought_signature_validator\"",
                "reasoning {v} in the output is in no input"
            );
        }
    }
    assert_eq!(made, stand_ins, "each stand-in is reported as lossy");
    // Idempotent: the repaired body needs nothing more.
    let again = repair_wire(&fixed.body, Format::Chat, o).expect("repairs again");
    assert_eq!(again.body, fixed.body.as_ref(), "repair is idempotent");
}

const KIMI_VALID: &str = r#"{"model":"kimi-k2-thinking","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"weather?"},{"role":"assistant","content":"","reasoning_content":"call it","tool_calls":[{"id":"functions.get_weather:0","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"functions.get_weather:0","content":"sunny"}],"tools":[{"type":"function","function":{"name":"get_weather"}}]}"#;

#[test]
fn the_kimi_tool_turn_and_its_twins_pass_untouched() {
    for model in [
        "kimi-k2-thinking",
        "deepseek-v4-pro",
        "deepseek-reasoner",
        "qwen3-max",
        "moonshotai/kimi-k2.6",
        "deepseek/deepseek-v3.2",
        "gpt-5",
        "my-own-vllm-model",
    ] {
        let body = KIMI_VALID.replace("kimi-k2-thinking", model);
        let warnings: &[&str] = if model == "gpt-5" {
            &["OA-07:warning"]
        } else {
            &[]
        };
        check(
            &body,
            &Options::default(),
            Expect {
                findings: warnings,
                repaired: None,
            },
        );
    }
}

#[test]
fn kimi_a_tool_call_without_reasoning_gets_the_empty_stand_in() {
    let body = r#"{"model":"kimi-k2.6","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"x"}]}"#;
    check(
        body,
        &Options::default(),
        Expect {
            findings: &["KM-01:error"],
            repaired: Some(
                r#"{"model":"kimi-k2.6","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}],"reasoning_content":""},{"role":"tool","tool_call_id":"a","content":"x"}]}"#,
            ),
        },
    );
    // The policy can turn stand-ins off: reported, not repaired.
    check(
        body,
        &opts(None, false),
        Expect {
            findings: &["KM-01:error"],
            repaired: None,
        },
    );
    // Thinking off: nothing to replay.
    let off = body.replace(
        r#""messages""#,
        r#""thinking":{"type":"disabled"},"messages""#,
    );
    check(
        &off,
        &Options::default(),
        Expect {
            findings: &[],
            repaired: None,
        },
    );
}

#[test]
fn kimi_preserved_thinking_needs_reasoning_on_every_assistant_message() {
    let body = r#"{"model":"kimi-k2.6","thinking":{"type":"enabled","keep":"all"},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"again"}]}"#;
    check(
        body,
        &Options::default(),
        Expect {
            findings: &["KM-01:error"],
            repaired: Some(
                r#"{"model":"kimi-k2.6","thinking":{"type":"enabled","keep":"all"},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello","reasoning_content":""},{"role":"user","content":"again"}]}"#,
            ),
        },
    );
}

#[test]
fn deepseek_every_assistant_message_of_a_tool_span_replays_its_reasoning() {
    // The final answer of the span lacks the field; the next user turn has no tool call.
    let body = r#"{"model":"deepseek-v4-pro","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"reasoning_content":"r1","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"},{"role":"assistant","content":"done"},{"role":"user","content":"thanks"},{"role":"assistant","content":"welcome"},{"role":"user","content":"bye"}]}"#;
    check(
        body,
        &Options::default(),
        Expect {
            findings: &["DS-03:error"],
            repaired: Some(
                r#"{"model":"deepseek-v4-pro","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"reasoning_content":"r1","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"},{"role":"assistant","content":"done","reasoning_content":""},{"role":"user","content":"thanks"},{"role":"assistant","content":"welcome"},{"role":"user","content":"bye"}]}"#,
            ),
        },
    );
    // A gateway's id for the same model: a warning, nothing added (recorded traffic through a
    // gateway was accepted so).
    check(
        &body.replace("deepseek-v4-pro", "deepseek-v4-pro-0813"),
        &Options::default(),
        Expect {
            findings: &["DS-03:warning"],
            repaired: None,
        },
    );
    // deepseek-chat without any reasoning in the body is the non-thinking mode.
    let plain = r#"{"model":"deepseek-chat","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}"#;
    check(
        plain,
        &Options::default(),
        Expect {
            findings: &[],
            repaired: None,
        },
    );
}

#[test]
fn a_later_answer_moves_up_to_its_call() {
    let body = r#"{"model":"gpt-4.1","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"hurry"},{"role":"tool","tool_call_id":"c1","content":"ok"}]}"#;
    check(
        body,
        &Options::default(),
        Expect {
            findings: &["OA-01:error"],
            repaired: Some(
                r#"{"model":"gpt-4.1","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"},{"role":"user","content":"hurry"}]}"#,
            ),
        },
    );
}

#[test]
fn an_unanswered_call_goes_and_its_message_keeps_content_and_reasoning() {
    // Two calls, one answered: the other is removed; the reasoning stays byte for byte.
    let body = r#"{"model":"deepseek-reasoner","messages":[{"role":"user","content":"go"},{"role":"assistant","content":"doing","reasoning_content":"two calls","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}, {"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}"#;
    check(
        body,
        &Options::default(),
        Expect {
            findings: &["OA-01:error"],
            repaired: Some(
                r#"{"model":"deepseek-reasoner","messages":[{"role":"user","content":"go"},{"role":"assistant","content":"doing","reasoning_content":"two calls","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}"#,
            ),
        },
    );
    // The only call unanswered, and nothing else in the message: it goes whole.
    let last = r#"{"model":"kimi-k2-thinking","messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]}"#;
    check(
        last,
        &Options::default(),
        Expect {
            findings: &["OA-01:error"],
            repaired: Some(
                r#"{"model":"kimi-k2-thinking","messages":[{"role":"user","content":"go"}]}"#,
            ),
        },
    );
    // Content beside the only call: the `tool_calls` key goes, the rest stays.
    let with_text = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"go"},{"role":"assistant","content":"let me see","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"and?"}]}"#;
    check(
        with_text,
        &Options::default(),
        Expect {
            findings: &["OA-01:error"],
            repaired: Some(
                r#"{"model":"gpt-4o","messages":[{"role":"user","content":"go"},{"role":"assistant","content":"let me see"},{"role":"user","content":"and?"}]}"#,
            ),
        },
    );
}

#[test]
fn orphan_and_duplicate_tool_messages_go() {
    let body = r#"{"model":"qwen3-max","messages":[{"role":"user","content":"go"},{"role":"tool","tool_call_id":"zz","content":"?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"},{"role":"tool","tool_call_id":"c1","content":"again"}]}"#;
    check(
        body,
        &Options::default(),
        Expect {
            findings: &["OA-02:error", "OA-02:error"],
            repaired: Some(
                r#"{"model":"qwen3-max","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}"#,
            ),
        },
    );
}

#[test]
fn an_assistant_message_with_nothing_goes_whole() {
    let body = "{\"model\":\"kimi-k2.6\",\"messages\":[\n  {\"role\":\"user\",\"content\":\"hi\"},\n  {\"role\":\"assistant\",\"reasoning_content\":\"thinking only\"},\n  {\"role\":\"user\",\"content\":\"well?\"}\n]}";
    check(
        body,
        &Options::default(),
        Expect {
            findings: &["OA-03:error"],
            repaired: Some(
                "{\"model\":\"kimi-k2.6\",\"messages\":[\n  {\"role\":\"user\",\"content\":\"hi\"},\n  {\"role\":\"user\",\"content\":\"well?\"}\n]}",
            ),
        },
    );
}

#[test]
fn gemini_3_signs_the_first_call_of_a_current_step_with_the_dummy() {
    let body = r#"{"model":"gemini-3-pro-preview","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"a"},{"role":"tool","tool_call_id":"c2","content":"b"}]}"#;
    check(
        body,
        &Options::default(),
        Expect {
            findings: &["GM-18:error"],
            repaired: Some(
                r#"{"model":"gemini-3-pro-preview","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"skip_thought_signature_validator"}}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"a"},{"role":"tool","tool_call_id":"c2","content":"b"}]}"#,
            ),
        },
    );
    // Signed: nothing. Before the last user message: not the current turn. Through OpenRouter,
    // or Gemini 2.5: not this rule.
    let signed = body.replace(
        r#""arguments":"{}"}},{"id":"c2""#,
        r#""arguments":"{}"},"extra_content":{"google":{"thought_signature":"c2lnbmF0dXJl"}}},{"id":"c2""#,
    );
    for (b, model) in [
        (signed.as_str(), None),
        (body, Some("google/gemini-3-pro-preview")),
        (body, Some("gemini-2.5-pro")),
    ] {
        check(
            b,
            &opts(model, true),
            Expect {
                findings: &[],
                repaired: None,
            },
        );
    }
}

#[test]
fn a_body_of_two_families_is_refused_naming_both() {
    let body = r#"{"system":"s","messages":[{"role":"tool","tool_call_id":"a","content":"x"}]}"#;
    let err = turnkeeper_model::sniff(body).expect_err("ambiguous");
    assert_eq!(
        err.to_string(),
        "cannot tell the format: anthropic or chat (anthropic: a top-level `system`; chat: a message with role \"tool\"); pass one explicitly"
    );
}
