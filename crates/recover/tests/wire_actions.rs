//! `recover` applying `drop_items`, `strip_item_ids` and `drop_unsigned_reasoning` to the body
//! that failed, one case per action and family, each with the exact body to retry with.
//!
//! Every error text is real: from `corpus/errors` by id (its `source` names the thread), or quoted
//! from api-rules-reasoning-2026-11.md with the rule and the public thread it was seen in. The
//! requests are small hand-written bodies of each family.

mod common;

use turnkeeper_model::wire::responses::{self, ItemKind};
use turnkeeper_recover::{Action, Attempts, Outcome, Recovered, classify, recover};

/// Where the error text comes from.
#[derive(Clone, Copy)]
enum Error {
    /// `corpus/errors`, by id.
    Corpus(&'static str),
    /// Quoted from the research note: (rule and source thread, text).
    Research(&'static str, &'static str),
}

impl Error {
    fn text(self) -> (Option<u16>, String) {
        match self {
            Error::Corpus(id) => {
                let item = common::corpus()
                    .into_iter()
                    .find(|i| i.id == id)
                    .unwrap_or_else(|| panic!("corpus/errors has no item {id}"));
                (item.status, item.body)
            }
            Error::Research(_, text) => (Some(400), text.to_owned()),
        }
    }

    /// Where the text was seen.
    fn source(self) -> String {
        match self {
            Error::Corpus(id) => format!("corpus/errors {id}"),
            Error::Research(rule, _) => format!("api-rules-reasoning-2026-11.md {rule}"),
        }
    }
}

/// One case: the error, the request, and what `recover` must do with it.
struct Case {
    error: Error,
    request: &'static str,
    /// The action taken (its serde name).
    action: &'static str,
    /// The body to retry with, exactly; `None`: nothing is sent (the request comes back as it
    /// was).
    send: Option<&'static str>,
    /// `(rule, action, path)` of every change, in order.
    changes: &'static [(&'static str, &'static str, &'static str)],
}

/// The one helper every case goes through; returns the result for further checks.
fn check(name: &str, c: &Case, attempts: &mut Attempts) -> Recovered {
    let name = &format!("{name} ({})", c.error.source());
    let (status, text) = c.error.text();
    let d = classify(status, &text);
    let r = recover(c.request, &d, attempts, None).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        r.action.name(),
        c.action,
        "{name}: {:?} {:?}",
        r.action,
        r.report
    );
    match c.send {
        Some(body) => {
            assert_eq!(r.outcome, Outcome::Send, "{name}");
            assert_eq!(r.body, body, "{name}");
            assert_ne!(
                r.body, c.request,
                "{name}: an unchanged body is never retried"
            );
        }
        None => {
            assert_eq!(r.outcome, Outcome::HandBack, "{name}");
            assert_eq!(r.body, c.request, "{name}");
        }
    }
    let got: Vec<(String, String, String)> = r
        .report
        .changes
        .iter()
        .map(|ch| (ch.rule.to_string(), ch.action.to_string(), ch.path.clone()))
        .collect();
    let want: Vec<(String, String, String)> = c
        .changes
        .iter()
        .map(|(a, b, p)| ((*a).to_owned(), (*b).to_owned(), (*p).to_owned()))
        .collect();
    assert_eq!(got, want, "{name}: {:#?}", r.report);
    for ch in &r.report.changes {
        assert!(!ch.reason.is_empty(), "{name}: a change without a reason");
        assert_eq!(
            ch.fingerprint.is_some(),
            removes_reasoning(c.request, &ch.path),
            "{name}: a removed reasoning unit, and only that, carries its fingerprint: {ch:?}"
        );
    }
    if r.outcome == Outcome::Send {
        assert!(
            r.report
                .addressing
                .iter()
                .all(|&n| n < r.report.changes.len()),
            "{name}"
        );
        assert!(
            !r.report.addressing.is_empty(),
            "{name}: nothing addresses the error"
        );
    }
    r
}

/// True when the change at `path` takes reasoning out of `request`: a reasoning or compaction
/// item (`input[N]`), a Converse block (`messages[N].content[M]`, only reasoning goes in these
/// cases), a `reasoning_content` field.
fn removes_reasoning(request: &str, path: &str) -> bool {
    if path.ends_with(".id") {
        return false;
    }
    if path.ends_with(".reasoning_content") || path.contains(".content[") {
        return true;
    }
    let Some(n) = path
        .strip_prefix("input[")
        .and_then(|r| r.strip_suffix(']'))
        .and_then(|n| n.parse::<usize>().ok())
    else {
        return false;
    };
    let body = responses::read(request).expect("a Responses body");
    matches!(
        body.items[n].kind,
        ItemKind::Reasoning | ItemKind::Compaction
    )
}

/// A Responses body: one call answered, then a reply, each after its reasoning item.
const RESPONSES: &str = r#"{"model":"gpt-5","input":[{"role":"user","content":"list files"},{"type":"reasoning","id":"rs_0a18166210d72b5e0069fd938e69a08193a992a58d690a224b","summary":[],"encrypted_content":"gAAAAABpAAAA"},{"type":"function_call","id":"fc_01","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a.txt"},{"type":"reasoning","id":"rs_02","summary":[],"encrypted_content":"gAAAAABpBBDQ=="},{"type":"message","id":"msg_02","role":"assistant","content":[{"type":"output_text","text":"a.txt"}]},{"role":"user","content":"thanks"}]}"#;

#[test]
fn or04_drops_the_item_the_error_names_and_strips_what_it_produced() {
    check(
        "OR-04 for item rs_…",
        &Case {
            // smallmain/vscode-unify-chat-provider#178.
            error: Error::Corpus("ucp-178-encrypted-rs-item"),
            request: RESPONSES,
            action: "drop_items",
            send: Some(
                r#"{"model":"gpt-5","input":[{"role":"user","content":"list files"},{"type":"function_call","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a.txt"},{"type":"reasoning","id":"rs_02","summary":[],"encrypted_content":"gAAAAABpBBDQ=="},{"type":"message","id":"msg_02","role":"assistant","content":[{"type":"output_text","text":"a.txt"}]},{"role":"user","content":"thanks"}]}"#,
            ),
            changes: &[
                ("OR-04", "removed_block", "input[1]"),
                ("OR-02", "removed_field", "input[2].id"),
            ],
        },
        &mut Attempts::new(),
    );
}

#[test]
fn or04_drops_the_item_whose_blob_the_error_quotes() {
    // openai/codex#8145: `The encrypted content gAAA...DQ== could not be verified.`
    let r = check(
        "OR-04 blob",
        &Case {
            error: Error::Corpus("codex-8145-encrypted-content-unverified"),
            request: RESPONSES,
            action: "drop_items",
            send: Some(
                r#"{"model":"gpt-5","input":[{"role":"user","content":"list files"},{"type":"reasoning","id":"rs_0a18166210d72b5e0069fd938e69a08193a992a58d690a224b","summary":[],"encrypted_content":"gAAAAABpAAAA"},{"type":"function_call","id":"fc_01","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a.txt"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a.txt"}]},{"role":"user","content":"thanks"}]}"#,
            ),
            changes: &[
                ("OR-04", "removed_block", "input[4]"),
                ("OR-02", "removed_field", "input[5].id"),
            ],
        },
        &mut Attempts::new(),
    );
    assert!(
        r.report
            .notes
            .iter()
            .any(|n| n.contains("send this body once")),
        "{:?}",
        r.report.notes
    );
}

#[test]
fn or04_drops_an_elided_compaction_item() {
    // openai/codex#35334: `The encrypted content for item cmp_34....7bd could not be verified.`
    check(
        "OR-04 cmp",
        &Case {
            error: Error::Corpus("codex-35334-encrypted-cmp-item"),
            request: r#"{"model":"gpt-5","input":[{"type":"compaction","id":"cmp_34f00d7bd","encrypted_content":"gAAAAABpCCCC"},{"role":"user","content":"go on"}]}"#,
            action: "drop_items",
            send: Some(r#"{"model":"gpt-5","input":[{"role":"user","content":"go on"}]}"#),
            changes: &[("OR-04", "removed_block", "input[0]")],
        },
        &mut Attempts::new(),
    );
}

#[test]
fn or04_naming_nothing_here_drops_every_reasoning_item() {
    // Wei-Shaw/sub2api#2863: a relay mangled the quoted blob, so nothing narrower is known.
    let r = check(
        "OR-04 unnamed",
        &Case {
            error: Error::Corpus("sub2api-2863-encrypted-content-reason"),
            request: RESPONSES,
            action: "drop_items",
            send: Some(
                r#"{"model":"gpt-5","input":[{"role":"user","content":"list files"},{"type":"function_call","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a.txt"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a.txt"}]},{"role":"user","content":"thanks"}]}"#,
            ),
            changes: &[
                ("OR-04", "removed_block", "input[1]"),
                ("OR-04", "removed_block", "input[4]"),
                ("OR-02", "removed_field", "input[2].id"),
                ("OR-02", "removed_field", "input[5].id"),
            ],
        },
        &mut Attempts::new(),
    );
    assert!(
        r.report.notes.iter().any(|n| n.contains("does not hold")),
        "{:?}",
        r.report.notes
    );
}

#[test]
fn or04_from_another_organization_drops_every_encrypted_item() {
    check(
        "OR-04 organization",
        &Case {
            // api-rules-reasoning-2026-11.md §3.2 OR-04 and §6.1 ORT-06 (Kilo-Org/kilo PR #88).
            error: Error::Research(
                "OR-04/ORT-06, Kilo-Org/kilo PR #88",
                "The encrypted content for item rs_02 could not be verified. Reason: Encrypted content organization_id did not match the target organization.",
            ),
            request: RESPONSES,
            action: "drop_items",
            send: Some(
                r#"{"model":"gpt-5","input":[{"role":"user","content":"list files"},{"type":"function_call","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a.txt"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a.txt"}]},{"role":"user","content":"thanks"}]}"#,
            ),
            changes: &[
                ("OR-04", "removed_block", "input[1]"),
                ("OR-04", "removed_block", "input[4]"),
                ("OR-02", "removed_field", "input[2].id"),
                ("OR-02", "removed_field", "input[5].id"),
            ],
        },
        &mut Attempts::new(),
    );
}

#[test]
fn or04_is_sent_once_and_the_same_failure_again_gives_up() {
    let case = Case {
        error: Error::Corpus("ucp-178-encrypted-rs-item"),
        request: RESPONSES,
        action: "drop_items",
        send: Some(
            r#"{"model":"gpt-5","input":[{"role":"user","content":"list files"},{"type":"function_call","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a.txt"},{"type":"reasoning","id":"rs_02","summary":[],"encrypted_content":"gAAAAABpBBDQ=="},{"type":"message","id":"msg_02","role":"assistant","content":[{"type":"output_text","text":"a.txt"}]},{"role":"user","content":"thanks"}]}"#,
        ),
        changes: &[
            ("OR-04", "removed_block", "input[1]"),
            ("OR-02", "removed_field", "input[2].id"),
        ],
    };
    let mut attempts = Attempts::new();
    let first = check("OR-04 first", &case, &mut attempts);
    // The retried body fails the same way: turnkeeper gives up, nothing is sent.
    let second = Case {
        request: case.send.unwrap_or_default(),
        action: "give_up",
        send: None,
        changes: &[],
        ..case
    };
    let r = check("OR-04 second", &second, &mut attempts);
    assert!(matches!(r.action, Action::GiveUp { .. }));
    assert_eq!(attempts.len(), 2);
    assert_eq!(first.outcome, Outcome::Send);
}

#[test]
fn or03_under_store_false_strips_every_server_id() {
    // can1357/oh-my-pi#41: `Item with id 'rs_…' not found. Items are not persisted when `store`
    // is set to false.` The id-only reasoning item and the item_reference go whole; the other
    // items lose their ids; the reasoning item with encrypted_content keeps all but its id.
    check(
        "OR-03",
        &Case {
            error: Error::Corpus("ohmypi-responses-item-not-found-store-false"),
            request: r#"{"model":"gpt-5","store":false,"input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_04962823ecde01b901698e138042688193a657e07614b238c3","summary":[]},{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"hello"}]},{"type":"item_reference","id":"rs_9"},{"type":"reasoning","id":"rs_5","summary":[],"encrypted_content":"gAAAAABpEEEE"},{"type":"function_call","id":"fc_5","call_id":"call_5","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_5","output":"x"},{"role":"user","content":"more"}]}"#,
            action: "strip_item_ids",
            send: Some(
                r#"{"model":"gpt-5","store":false,"input":[{"role":"user","content":"hi"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]},{"type":"reasoning","summary":[],"encrypted_content":"gAAAAABpEEEE"},{"type":"function_call","call_id":"call_5","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_5","output":"x"},{"role":"user","content":"more"}]}"#,
            ),
            changes: &[
                ("OR-03", "removed_block", "input[1]"),
                ("OR-03", "removed_field", "input[2].id"),
                ("OR-03", "removed_block", "input[3]"),
                ("OR-03", "removed_field", "input[4].id"),
                ("OR-03", "removed_field", "input[5].id"),
            ],
        },
        &mut Attempts::new(),
    );
}

#[test]
fn or08_strips_the_id_the_error_names() {
    // Wei-Shaw/sub2api#1505: `Invalid 'input[3].id': 'call_U7Zp…'. Expected an ID that begins
    // with 'fc'.` The call keeps its call_id.
    check(
        "OR-08",
        &Case {
            error: Error::Corpus("sub2api-1505-fc-prefix-call"),
            request: r#"{"model":"gpt-5","input":[{"role":"user","content":"run it"},{"type":"reasoning","summary":[],"encrypted_content":"gAAAAABpFFFF"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]},{"type":"function_call","id":"call_U7ZpbozYfIAQ0tyiqZ97HB65","call_id":"call_U7ZpbozYfIAQ0tyiqZ97HB65","name":"run","arguments":"{}"},{"type":"function_call_output","call_id":"call_U7ZpbozYfIAQ0tyiqZ97HB65","output":"done"}]}"#,
            action: "strip_item_ids",
            send: Some(
                r#"{"model":"gpt-5","input":[{"role":"user","content":"run it"},{"type":"reasoning","summary":[],"encrypted_content":"gAAAAABpFFFF"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]},{"type":"function_call","call_id":"call_U7ZpbozYfIAQ0tyiqZ97HB65","name":"run","arguments":"{}"},{"type":"function_call_output","call_id":"call_U7ZpbozYfIAQ0tyiqZ97HB65","output":"done"}]}"#,
            ),
            changes: &[("recover", "removed_field", "input[3].id")],
        },
        &mut Attempts::new(),
    );
}

#[test]
fn or08_with_an_elided_id_strips_the_ids_without_their_prefix() {
    // nodetool-ai/nodetool#4252: `Invalid 'input[N].id': 'call_...'. Expected an ID that begins
    // with 'fc'.`
    check(
        "OR-08 elided",
        &Case {
            error: Error::Corpus("nodetool-4252-fc-prefix-call"),
            request: r#"{"model":"gpt-5","input":[{"role":"user","content":"run it"},{"type":"function_call","id":"call_9","call_id":"call_9","name":"run","arguments":"{}"},{"type":"function_call_output","call_id":"call_9","output":"done"},{"type":"function_call","id":"fc_10","call_id":"call_10","name":"run","arguments":"{}"},{"type":"function_call_output","call_id":"call_10","output":"done"}]}"#,
            action: "strip_item_ids",
            send: Some(
                r#"{"model":"gpt-5","input":[{"role":"user","content":"run it"},{"type":"function_call","call_id":"call_9","name":"run","arguments":"{}"},{"type":"function_call_output","call_id":"call_9","output":"done"},{"type":"function_call","id":"fc_10","call_id":"call_10","name":"run","arguments":"{}"},{"type":"function_call_output","call_id":"call_10","output":"done"}]}"#,
            ),
            changes: &[("recover", "removed_field", "input[1].id")],
        },
        &mut Attempts::new(),
    );
}

#[test]
fn or08_on_a_reasoning_item_strips_its_id_and_keeps_the_rest_byte_for_byte() {
    // jlcodes99/cockpit-tools#2090: `Invalid 'input[66].id': 'item_df7e…'. Expected an ID that
    // begins with 'rs'.` The item keeps its encrypted_content, so only the id goes; a reasoning
    // item with nothing but that id would go whole.
    check(
        "OR-08 rs",
        &Case {
            error: Error::Corpus("cockpit-2090-rs-prefix"),
            request: r#"{"model":"gpt-5","input":[{"role":"user","content":"go"},{"type":"reasoning","id":"item_df7e40c3f04fc8ade5c3800e","summary":[{"type":"summary_text","text":"Thinking"}],"encrypted_content":"gAAAAABpHHHH"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]},{"role":"user","content":"next"}]}"#,
            action: "strip_item_ids",
            send: Some(
                r#"{"model":"gpt-5","input":[{"role":"user","content":"go"},{"type":"reasoning","summary":[{"type":"summary_text","text":"Thinking"}],"encrypted_content":"gAAAAABpHHHH"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]},{"role":"user","content":"next"}]}"#,
            ),
            changes: &[("recover", "removed_field", "input[1].id")],
        },
        &mut Attempts::new(),
    );
}

#[test]
fn or02_strips_the_id_of_the_item_that_lost_its_reasoning() {
    check(
        "OR-02",
        &Case {
            // api-rules-reasoning-2026-11.md §3.2 OR-02 (openai/openai-agents-python#722).
            error: Error::Research(
                "OR-02, openai/openai-agents-python#722",
                "Item 'fc_68a1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_68a0'.",
            ),
            request: r#"{"model":"gpt-5","input":[{"role":"user","content":"go"},{"type":"function_call","id":"fc_68a1","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a"}]}"#,
            action: "strip_item_ids",
            send: Some(
                r#"{"model":"gpt-5","input":[{"role":"user","content":"go"},{"type":"function_call","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a"}]}"#,
            ),
            changes: &[("OR-02", "removed_field", "input[1].id")],
        },
        &mut Attempts::new(),
    );
}

#[test]
fn or01_drops_the_orphan_reasoning_item() {
    // continuedev/continue#10428: `Item 'rs_02a0…' of type 'reasoning' was provided without its
    // required following item.`
    check(
        "OR-01",
        &Case {
            error: Error::Corpus("continue-10428-codex-reasoning-orphan"),
            request: r#"{"model":"gpt-5","input":[{"role":"user","content":"go"},{"type":"reasoning","id":"rs_02a086f499d743db00698c76e01c288193801101eba700a126","summary":[],"encrypted_content":"gAAAAABpGGGG"},{"role":"user","content":"again"}]}"#,
            action: "drop_items",
            send: Some(
                r#"{"model":"gpt-5","input":[{"role":"user","content":"go"},{"role":"user","content":"again"}]}"#,
            ),
            changes: &[("OR-01", "removed_block", "input[1]")],
        },
        &mut Attempts::new(),
    );
}

#[test]
fn or13_drops_every_reasoning_item_for_a_model_without_reasoning() {
    check(
        "OR-13",
        &Case {
            // api-rules-reasoning-2026-11.md §3.2 OR-13 (openai/openai-python#2364).
            error: Error::Research(
                "OR-13, openai/openai-python#2364",
                "Reasoning input items can only be provided to a reasoning or computer use model. Remove reasoning items from your input and try again.",
            ),
            request: r#"{"model":"gpt-4.1","input":[{"role":"user","content":"list files"},{"type":"reasoning","id":"rs_0a18166210d72b5e0069fd938e69a08193a992a58d690a224b","summary":[],"encrypted_content":"gAAAAABpAAAA"},{"type":"function_call","id":"fc_01","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a.txt"},{"role":"user","content":"thanks"}]}"#,
            action: "drop_items",
            send: Some(
                r#"{"model":"gpt-4.1","input":[{"role":"user","content":"list files"},{"type":"function_call","call_id":"call_1","name":"ls","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a.txt"},{"role":"user","content":"thanks"}]}"#,
            ),
            changes: &[
                ("OR-13", "removed_block", "input[1]"),
                ("OR-02", "removed_field", "input[2].id"),
            ],
        },
        &mut Attempts::new(),
    );
}

/// BR-05's error (api-rules-reasoning-2026-11.md §8.2; langchain-ai/langchain-aws#401).
const BR05: Error = Error::Research(
    "BR-05, langchain-ai/langchain-aws#401",
    "ValidationException: User messages cannot contain reasoning content. Please remove the reasoning content and try again.",
);

/// DS-01's error (api-rules-reasoning-2026-11.md §4.2; Euyug/Mirai-Gpt-Plugin#4).
const DS01: Error = Error::Research(
    "DS-01, Euyug/Mirai-Gpt-Plugin#4",
    "The reasoning_content is an intermediate result for display purposes only and will not be included in the context for inference. Please remove the reasoning_content from your message to reduce network traffic.",
);

#[test]
fn br05_drops_unsigned_reasoning_blocks_on_converse() {
    check(
        "BR-05",
        &Case {
            error: BR05,
            request: r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"think"}}},{"text":"a"}]},{"role":"user","content":[{"text":"q2"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"more"}}},{"text":"b"}]},{"role":"user","content":[{"text":"q3"}]}]}"#,
            action: "drop_unsigned_reasoning",
            send: Some(
                r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"text":"a"}]},{"role":"user","content":[{"text":"q2"}]},{"role":"assistant","content":[{"text":"b"}]},{"role":"user","content":[{"text":"q3"}]}]}"#,
            ),
            changes: &[
                ("BR-05", "removed_block", "messages[1].content[0]"),
                ("BR-05", "removed_block", "messages[3].content[0]"),
            ],
        },
        &mut Attempts::new(),
    );
}

#[test]
fn br05_keeps_signed_reasoning_byte_for_byte() {
    check(
        "BR-05 signed",
        &Case {
            error: BR05,
            request: r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"think","signature":"c2ln"}}},{"text":"a"}]},{"role":"user","content":[{"text":"q2"}]}]}"#,
            action: "give_up",
            send: None,
            changes: &[],
        },
        &mut Attempts::new(),
    );
}

#[test]
fn ds01_removes_reasoning_content_per_message_on_chat() {
    let r = check(
        "DS-01",
        &Case {
            error: DS01,
            request: r#"{"model":"deepseek-reasoner","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a","reasoning_content":"think"},{"role":"user","content":"q2"},{"role":"assistant","reasoning_content":"more", "content":"b"},{"role":"user","content":"q3"}]}"#,
            action: "drop_unsigned_reasoning",
            send: Some(
                r#"{"model":"deepseek-reasoner","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"user","content":"q2"},{"role":"assistant", "content":"b"},{"role":"user","content":"q3"}]}"#,
            ),
            changes: &[
                ("recover", "removed_field", "messages[1].reasoning_content"),
                ("recover", "removed_field", "messages[3].reasoning_content"),
            ],
        },
        &mut Attempts::new(),
    );
    assert!(r.report.changes.iter().all(|c| c.fingerprint.is_some()));
}

#[test]
fn an_action_for_another_family_is_skipped_and_gives_up() {
    // DS-01 on a Responses body, OR-04 on a Chat body: nothing to apply, nothing sent.
    check(
        "DS-01 on Responses",
        &Case {
            error: DS01,
            request: RESPONSES,
            action: "give_up",
            send: None,
            changes: &[],
        },
        &mut Attempts::new(),
    );
    check(
        "OR-04 on Chat",
        &Case {
            error: Error::Corpus("ucp-178-encrypted-rs-item"),
            request: r#"{"model":"deepseek-reasoner","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a","reasoning_content":"think"},{"role":"user","content":"q2"}]}"#,
            action: "give_up",
            send: None,
            changes: &[],
        },
        &mut Attempts::new(),
    );
}
