//! From a real error to a body the API accepts: `classify` → `plan` → `recover` → `prevent::check`.
//!
//! Every case pairs a real error text from `corpus/errors` (by id) with a broken request from
//! `corpus/damaged` (or a valid one from `corpus/anthropic` where the damage is invisible to
//! turnkeeper, as with prefix binding). Where the real text names a different message index
//! than the damaged request (it came from a longer conversation), the index is renumbered and
//! everything else of the text, wrapping and escaping included, is kept.
//!
//! For every repairable kind the retried body must pass `prevent::check` with no error-level
//! finding, and every thinking block in it must be byte-identical to one of the request (or of
//! the stored response it was restored from).

mod common;

use std::path::{Path, PathBuf};

use turnkeeper_guard::{TurnStore, is_guarded};
use turnkeeper_model::{FormatHint, read};
use turnkeeper_prevent::{Options, Severity, check};
use turnkeeper_recover::{
    Action, Attempts, DROP_BLOCK_BETA, Diagnosis, ErrorKind, MAX_ATTEMPTS, MAX_RETRIES, Outcome,
    RECOVER_RULE, RecoverError, Recovered, classify, plan, recover,
};

#[path = "../../testkit/src/shared.rs"]
mod shared;

/// The real response `an16_tool_use_before_thinking` was built from, in `../shared` (`None`,
/// with one printed line, when it is absent).
fn real_response() -> Option<String> {
    let dir = shared::shared_dir("real-traffic")?;
    Some(file_at(&dir.join(
        "anthropic/fantasy--TestThinking-anthropic-claude-sonnet--5623663482__0.response.json",
    )))
}

fn file_at(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn file(rel: &str) -> String {
    let path = root().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn damaged(name: &str) -> String {
    file(&format!("corpus/damaged/{name}.json"))
}

/// The real error `id` from corpus/errors, its first `messages.N` renumbered to `message`.
fn real_error(id: &str, message: Option<u32>) -> (Option<u16>, String) {
    let item = common::corpus()
        .into_iter()
        .find(|i| i.id == id)
        .unwrap_or_else(|| panic!("corpus/errors has no item {id}"));
    let mut body = item.body.clone();
    if let Some(m) = message {
        let at = body
            .find("messages.")
            .unwrap_or_else(|| panic!("{id} names no message"));
        let digits = at + "messages.".len();
        let end = body[digits..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(body.len(), |n| digits + n);
        assert!(end > digits, "{id}: no index after messages.");
        body.replace_range(digits..end, &m.to_string());
    }
    (item.status, body)
}

/// classify + plan (zero attempts) + recover, checking that recover took the planned action (or
/// a later rung, when the planned one was skipped).
fn run(
    id: &str,
    renumber: Option<u32>,
    request: &str,
    attempts: &mut Attempts,
    store: Option<&TurnStore>,
) -> (Diagnosis, Recovered) {
    let (status, text) = real_error(id, renumber);
    let d = classify(status, &text);
    let planned = plan(&d, attempts);
    let r = recover(request, &d, attempts, store).unwrap_or_else(|e| panic!("{id}: {e}"));
    if r.report.skipped.is_empty() {
        assert_eq!(r.action, planned, "{id}: recover took another action");
    } else {
        assert_eq!(r.report.skipped[0].action, planned, "{id}");
    }
    (d, r)
}

/// The body passes `prevent::check` (with the headers it must be sent with) with no error, and
/// every thinking block in it is byte-identical to one in `originals`.
fn assert_valid(r: &Recovered, originals: &[&str]) {
    assert_eq!(r.outcome, Outcome::Send, "{:?}", r.action);
    let t = read(&r.body, FormatHint::Auto).expect("the retried body reads");
    let opts = Options {
        betas: r.headers.iter().map(|(_, v)| v.clone()).collect(),
        ..Options::default()
    };
    let errors: Vec<String> = check(&t, &opts)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{} {} {}", f.rule, f.path, f.message))
        .collect();
    assert!(
        errors.is_empty(),
        "{:?}: errors left: {errors:?}\n{}",
        r.action,
        r.body
    );
    assert!(!r.report.has_errors(), "{:?}", r.report.findings_left);
    for b in t.blocks.iter().filter(|b| is_guarded(b)) {
        let raw = b.span.get(&r.body);
        assert!(
            originals.iter().any(|o| o.contains(raw)),
            "a thinking block was altered or invented: {raw}"
        );
    }
}

fn thinking_count(body: &str) -> usize {
    read(body, FormatHint::Auto)
        .map(|t| t.blocks.iter().filter(|b| b.kind().is_thinking()).count())
        .unwrap_or(0)
}

fn repair_rules(a: &Action) -> Vec<&'static str> {
    match a {
        Action::Repair { rules, .. } => rules.iter().map(|r| r.as_str()).collect(),
        other => panic!("expected a repair, got {other:?}"),
    }
}

fn the_store(response: &str) -> TurnStore {
    let mut store = TurnStore::in_memory();
    store.add_response(response).expect("a Messages response");
    store
}

// ---- one test per kind -------------------------------------------------------------------

#[test]
fn tool_result_missing_is_repaired_with_a_result_for_the_aborted_call() {
    let req = damaged("an08_aborted_turn");
    let mut attempts = Attempts::new();
    let (d, r) = run(
        "cc-5989-tool-result-missing-wrapped",
        Some(1),
        &req,
        &mut attempts,
        None,
    );
    assert_eq!(d.kind, ErrorKind::ToolResultMissing);
    assert!(repair_rules(&r.action).contains(&"AN-08"));
    assert!(
        r.body
            .contains(r#""tool_use_id":"toolu_014azqsWLU8Djh6RhmBGRC2u""#)
    );
    assert!(!r.report.addressing.is_empty(), "{:?}", r.report);
    assert_valid(&r, &[&req]);
    assert_eq!(attempts.len(), 1);
}

#[test]
fn tool_use_id_mismatch_drops_the_orphan_result() {
    let req = damaged("an10_orphan_tool_result");
    let (d, r) = run(
        "decocms-1803-unexpected-tool-use-id",
        Some(1),
        &req,
        &mut Attempts::new(),
        None,
    );
    assert_eq!(d.kind, ErrorKind::ToolUseIdMismatch);
    assert_eq!(repair_rules(&r.action), ["AN-10"]);
    assert!(!r.body.contains("tool_result"), "{}", r.body);
    assert_valid(&r, &[&req]);
}

#[test]
fn tool_use_id_format_rewrites_the_ids() {
    for name in ["an12_kimi_tool_id", "an12_empty_tool_id"] {
        let req = damaged(name);
        let (d, r) = run(
            "commandcode-323-tool-use-id-pattern",
            None,
            &req,
            &mut Attempts::new(),
            None,
        );
        assert_eq!(d.kind, ErrorKind::ToolUseIdFormat);
        assert_eq!(d.location.message, Some(1));
        assert_eq!(repair_rules(&r.action), ["AN-12"]);
        assert!(r.report.changes.iter().any(|c| c.rule == "AN-12"), "{name}");
        assert_valid(&r, &[&req]);
    }
}

#[test]
fn a_system_message_the_endpoint_refused_is_folded_into_the_user_turn() {
    // DeepSeek's endpoint answers to `claude-*` model names too: the request's model says
    // Claude, so only the error tells that the endpoint takes no `system` message (CX-02).
    let deepseek = damaged("cx02_system_message_deepseek");
    let req = deepseek.replacen(
        r#""model":"deepseek-v4-pro""#,
        r#""model":"claude-opus-4-8""#,
        1,
    );
    assert_ne!(req, deepseek);
    let folded = damaged("cx02_system_message_deepseek.after").replacen(
        r#""model":"deepseek-v4-pro""#,
        r#""model":"claude-opus-4-8""#,
        1,
    );
    for id in [
        "deepseek-agent-167-system-role",
        "cc-63569-deepseek-system-role",
    ] {
        let (d, r) = run(id, None, &req, &mut Attempts::new(), None);
        assert_eq!(d.kind, ErrorKind::RoleOrder, "{id}");
        assert_eq!(d.location.message, Some(1), "{id}");
        assert_eq!(repair_rules(&r.action), ["CX-02"], "{id}");
        assert_eq!(r.body, folded, "{id}");
        assert_eq!(
            r.report
                .changes
                .iter()
                .map(|c| format!("{} {} {}", c.rule, c.action, c.path))
                .collect::<Vec<_>>(),
            ["CX-02 merged_message messages[0]"],
            "{id}"
        );
        assert_valid(&r, &[&req]);
    }
}

/// A transcript repair planned for a Chat body (the legacy deepseek-reasoner's "successive user
/// or assistant messages") is judged by Chat's own rules, not read as a block transcript (which
/// failed the whole recovery): they change nothing here, so the rung is skipped and the request
/// handed back as it came.
#[test]
fn a_repair_planned_for_a_chat_body_is_judged_by_chat_rules() {
    let req = r#"{"model":"deepseek-reasoner","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}"#;
    let (d, r) = run(
        "dsr1-21-successive-messages-json",
        None,
        req,
        &mut Attempts::new(),
        None,
    );
    assert_eq!(d.kind, ErrorKind::RoleOrder);
    assert_eq!(d.location.message, Some(1));
    assert_eq!(r.outcome, Outcome::HandBack, "{:?}", r.action);
    assert_eq!(r.body, req);
    assert_eq!(
        r.report
            .skipped
            .iter()
            .map(|s| s.reason.as_str())
            .collect::<Vec<_>>(),
        ["the chat rules found nothing to change (rules AN-02 diagnosed at messages[1])"]
    );
}

/// Every tool-call id and every tool-result id of an Anthropic request body, in order.
fn tool_ids(body: &str) -> (Vec<String>, Vec<String>) {
    let v: serde_json::Value = serde_json::from_str(body).expect("the body is JSON");
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for m in v["messages"].as_array().into_iter().flatten() {
        for b in m["content"].as_array().into_iter().flatten() {
            match b["type"].as_str() {
                Some("tool_use") => calls.push(b["id"].as_str().unwrap_or("").to_owned()),
                Some("tool_result") => {
                    results.push(b["tool_use_id"].as_str().unwrap_or("").to_owned());
                }
                _ => {}
            }
        }
    }
    (calls, results)
}

fn anthropic_pattern(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[test]
fn tool_id_format_maps_ids_to_the_form_the_provider_names() {
    let kimi = damaged("an12_kimi_tool_id");
    // A Responses `ws_` id replayed into Chat Completions (vercel/ai#8132): 51 characters.
    let long = kimi.replace(
        "functions.Bash:0",
        "ws_689e2d4880a0819d98acca37694989b00b15d90494fc6b87",
    );
    type Fits = fn(&str) -> bool;
    let cases: [(&str, &str, Fits); 3] = [
        // Mistral, served as HTTP 500 (jundot/omlx#1995): exactly 9 alphanumerics.
        ("omlx-1995-mistral-id-http500", &kimi, |id| {
            id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric())
        }),
        // OpenAI's 40-character cap, through Portkey (Portkey-AI/gateway#1062).
        ("portkey-1062-azure-id-too-long", &long, |id| {
            anthropic_pattern(id) && id.len() <= 40
        }),
        // Anthropic's pattern (AN-12).
        (
            "commandcode-323-tool-use-id-pattern",
            &kimi,
            anthropic_pattern,
        ),
    ];
    for (error, req, fits) in cases {
        let (d, r) = run(error, None, req, &mut Attempts::new(), None);
        assert_eq!(d.kind, ErrorKind::ToolUseIdFormat, "{error}");
        assert!(!d.retryable, "{error}");
        assert_eq!(repair_rules(&r.action), ["AN-12"], "{error}");
        let (calls, results) = tool_ids(&r.body);
        assert!(!calls.is_empty(), "{error}");
        assert!(
            calls.iter().chain(&results).all(|id| fits(id)),
            "{error}: {calls:?}"
        );
        // Both sides of each pair carry the same new id.
        assert_eq!(calls, results, "{error}");
        assert_ne!(tool_ids(req).0, calls, "{error}: nothing was rewritten");
        // Deterministic: the same request and error give the same bytes.
        let (_, again) = run(error, None, req, &mut Attempts::new(), None);
        assert_eq!(again.body, r.body, "{error}");
    }
}

#[test]
fn tool_ids_inside_a_signed_turn_are_never_rewritten() {
    // A real accepted request whose open tool loop sits in a signed turn: Mistral's id form
    // would need every id rewritten, but not inside a turn bound by a signature.
    let req = file("corpus/anthropic/haiku_display_summarized_tool_loop.json");
    let (d, r) = run(
        "omlx-1995-mistral-id-http500",
        None,
        &req,
        &mut Attempts::new(),
        None,
    );
    assert_eq!(d.kind, ErrorKind::ToolUseIdFormat);
    assert_eq!(r.body, req);
    assert_eq!(r.outcome, Outcome::HandBack);
    assert!(matches!(r.action, Action::GiveUp { .. }), "{:?}", r.action);
}

#[test]
fn responses_item_prefix_errors_on_an_anthropic_body_are_handed_back() {
    // OR-08 answering an Anthropic body: there is no Responses item to strip an id from, so the
    // caller decides (a Responses body is edited: tests/wire_actions.rs).
    let req = damaged("an08_aborted_turn");
    let (d, r) = run(
        "sub2api-1505-fc-prefix-call",
        None,
        &req,
        &mut Attempts::new(),
        None,
    );
    assert_eq!(d.kind, ErrorKind::ToolUseIdFormat);
    assert!(
        matches!(r.action, Action::StripItemIds { .. }),
        "{:?}",
        r.action
    );
    assert_eq!(r.outcome, Outcome::HandBack);
    assert_eq!(r.body, req);
}

#[test]
fn request_config_errors_name_the_parameter_to_change() {
    let req = damaged("an08_aborted_turn");
    let cases = [
        ("cliproxy-1725-codex-defer-loading-unknown", "defer_loading"),
        ("pipecat-4043-effort-tools-gpt54", "reasoning_effort"),
        ("cc-14135-context-management-quoted", "context_management"),
        ("pentagi-196-bedrock-toolconfig", "tool_config"),
        ("lobehub-1398-glm-max-tokens", "max_tokens"),
        ("cliproxy-1871-codex-defer-loading-json", "defer_loading"),
        (
            "chatarena-124-anthropic-version-header",
            "anthropic-version",
        ),
        ("zed-31289-bedrock-model-identifier", "model"),
        ("9router-3848-missing-session-json", "x-opencode-session"),
    ];
    for (id, what) in cases {
        let (d, r) = run(id, None, &req, &mut Attempts::new(), None);
        assert_eq!(d.kind, ErrorKind::RequestConfigInvalid, "{id}");
        assert_eq!(r.action, Action::FixConfig { what: what.into() }, "{id}");
        assert_eq!(r.outcome, Outcome::HandBack);
        assert_eq!(r.body, req);
    }
}

#[test]
fn empty_content_is_removed() {
    let cases = [
        (
            "cc-empty-content-messages0",
            Some(5),
            "an04_empty_assistant_array",
        ),
        (
            "bolt-7426-text-blocks-non-empty",
            None,
            "an05_empty_text_block",
        ),
    ];
    for (id, renumber, name) in cases {
        let req = damaged(name);
        let (d, r) = run(id, renumber, &req, &mut Attempts::new(), None);
        assert_eq!(d.kind, ErrorKind::EmptyContent, "{id}");
        assert_eq!(repair_rules(&r.action), ["AN-04", "AN-05"]);
        assert!(
            r.report
                .changes
                .iter()
                .any(|c| c.rule == "AN-04" || c.rule == "AN-05"),
            "{name}: {:?}",
            r.report.changes
        );
        assert_valid(&r, &[&req]);
    }
}

#[test]
fn role_order_merges_consecutive_user_messages() {
    let req = damaged("an11_user_text_between_tool_use_and_result");
    let (d, r) = run(
        "coai-209-roles-alternate-multiple-user",
        None,
        &req,
        &mut Attempts::new(),
        None,
    );
    assert_eq!(d.kind, ErrorKind::RoleOrder);
    assert_eq!(repair_rules(&r.action), ["AN-02"]);
    assert_valid(&r, &[&req]);
}

#[test]
fn thinking_block_order_is_repaired_then_escalates() {
    let req = damaged("an16_tool_use_before_thinking");
    let mut attempts = Attempts::new();
    let (d, r) = run(
        "kilo-5219-vertex-order-tool-use",
        None,
        &req,
        &mut attempts,
        None,
    );
    assert_eq!(d.kind, ErrorKind::ThinkingBlockOrder);
    assert_eq!(repair_rules(&r.action), ["AN-16", "AN-18"]);
    assert_valid(&r, &[&req]);

    // The provider rejected the repaired body the same way: restore (no store: skipped), then
    // disable thinking, a different and stronger action, on the same message.
    let again = recover(&req, &d, &mut attempts, None).expect("recovers");
    assert_eq!(again.action, Action::DisableThinking);
    assert_eq!(again.report.skipped[0].action, Action::RestoreFromStore);
    assert!(again.body.contains(r#""thinking":{"type":"disabled"}"#));
    assert_valid(&again, &[&req]);

    let last = recover(&req, &d, &mut attempts, None).expect("recovers");
    assert!(matches!(last.action, Action::GiveUp { .. }));
    assert_eq!(last.outcome, Outcome::HandBack);
    assert_eq!(last.body, req);
}

#[test]
fn thinking_block_modified_with_a_store_restores_the_original_turn() {
    let Some(response) = real_response() else {
        return;
    };
    let req = damaged("an16_tool_use_before_thinking");
    let store = the_store(&response);
    let mut attempts = Attempts::new();
    let (d, r) = run(
        "cc-25361-modified-wrapped",
        None,
        &req,
        &mut attempts,
        Some(&store),
    );
    assert_eq!(d.kind, ErrorKind::ThinkingBlockModified);
    assert_eq!(r.action, Action::RestoreFromStore);
    assert!(r.report.skipped.is_empty());
    let restored = r.report.addressing.iter().map(|&n| &r.report.changes[n]);
    assert!(restored.into_iter().any(|c| c.action == "restored_message"));
    // The turn is back as the provider sent it: thinking first, then the tool call.
    let t = read(&r.body, FormatHint::Auto).expect("reads");
    let kinds: Vec<_> = t
        .blocks_of(1)
        .iter()
        .map(|b| b.type_name(&r.body))
        .collect();
    assert_eq!(kinds, ["thinking", "tool_use"]);
    assert_valid(&r, &[&req, &response]);
    assert_eq!(thinking_count(&r.body), 1);

    // Restored and still rejected: the next rung strips, never edits.
    let again = recover(&req, &d, &mut attempts, Some(&store)).expect("recovers");
    assert_eq!(again.action, Action::StripThinking { from: Some(1) });
    assert_valid(&again, &[&req]);
}

#[test]
fn thinking_block_modified_without_a_store_strips_whole_blocks() {
    let req = damaged("an16_tool_use_before_thinking");
    let mut attempts = Attempts::new();
    let (d, r) = run("cc-25361-modified-wrapped", None, &req, &mut attempts, None);
    assert_eq!(d.kind, ErrorKind::ThinkingBlockModified);
    assert_eq!(r.report.skipped[0].action, Action::RestoreFromStore);
    assert_eq!(r.action, Action::StripThinking { from: Some(1) });
    assert_eq!(thinking_count(&r.body), 0);
    let removal = &r.report.changes[r.report.addressing[0]];
    assert_eq!(
        (removal.rule, removal.action.as_str()),
        (RECOVER_RULE, "removed_block")
    );
    assert!(removal.fingerprint.is_some(), "a removal names the block");
    assert_valid(&r, &[&req]);
    // The skipped rung is in the attempts, so the ladder moves on across calls.
    assert_eq!(attempts.len(), 2);
    assert!(attempts.entries[0].skipped.is_some());
    let again = recover(&req, &d, &mut attempts, None).expect("recovers");
    assert_eq!(again.action, Action::DisableThinking);
    assert_valid(&again, &[&req]);
}

#[test]
fn thinking_signature_invalid_removes_the_unverifiable_block() {
    for name in ["an23_empty_signature", "an23_skip_validator_sentinel"] {
        let req = damaged(name);
        let (d, r) = run(
            "agm-498-sig-invalid-vertex-padded",
            None,
            &req,
            &mut Attempts::new(),
            None,
        );
        assert_eq!(d.kind, ErrorKind::ThinkingSignatureInvalid);
        assert!(!d.prefix_binding);
        assert_eq!(repair_rules(&r.action), ["AN-23"]);
        assert!(
            r.report
                .changes
                .iter()
                .any(|c| c.rule == "AN-23" && c.action == "removed_block"),
            "{name}"
        );
        assert_valid(&r, &[&req]);
    }
}

#[test]
fn prefix_bound_signature_asks_for_drop_block_then_strips_then_disables() {
    // The signatures are real; only the API knows the prefix they were bound to changed.
    let req = file("corpus/anthropic/adaptive_tool_loop.json");
    let mut attempts = Attempts::new();
    let (d, r) = run(
        "opencode-48637-sig-bound-different-conversation",
        None,
        &req,
        &mut attempts,
        None,
    );
    assert!(d.prefix_binding);
    assert_eq!(r.action, Action::RequestDropBlock);
    assert_eq!(
        r.headers,
        [("anthropic-beta".to_owned(), DROP_BLOCK_BETA.to_owned())]
    );
    // Byte-identical except for the thinking parameter.
    let t = read(&req, FormatHint::Auto).expect("reads");
    let old = t.meta.thinking.span.expect("has thinking").get(&req);
    let new = old.replacen(
        '}',
        r#","block_binding":{"prefix_mismatch_behavior":"drop_block"}}"#,
        1,
    );
    assert_eq!(r.body, req.replacen(old, &new, 1));
    assert_valid(&r, &[&req]);

    let second = recover(&req, &d, &mut attempts, None).expect("recovers");
    assert_eq!(second.action, Action::StripThinking { from: Some(1) });
    assert_eq!(thinking_count(&second.body), 0);
    assert_valid(&second, &[&req]);

    let third = recover(&req, &d, &mut attempts, None).expect("recovers");
    assert_eq!(third.action, Action::DisableThinking);
    assert_valid(&third, &[&req]);

    let fourth = recover(&req, &d, &mut attempts, None).expect("recovers");
    assert!(matches!(fourth.action, Action::GiveUp { .. }));
}

#[test]
fn thinking_block_trailing_drops_the_cut_block() {
    let req = damaged("an19_trailing_unsigned_thinking");
    let (d, r) = run(
        "cc-final-block-thinking-after-resume",
        Some(5),
        &req,
        &mut Attempts::new(),
        None,
    );
    assert_eq!(d.kind, ErrorKind::ThinkingBlockTrailing);
    assert_eq!(repair_rules(&r.action), ["AN-19"]);
    assert_eq!(thinking_count(&r.body), thinking_count(&req) - 1);
    assert_valid(&r, &[&req]);
}

#[test]
fn thinking_disabled_violation_removes_thinking_from_the_final_message() {
    let req = damaged("an20_disabled_final_assistant_thinking");
    let mut attempts = Attempts::new();
    let (d, r) = run(
        "forge-disabled-anthropic-direct",
        None,
        &req,
        &mut attempts,
        None,
    );
    assert_eq!(d.kind, ErrorKind::ThinkingDisabledViolation);
    assert_eq!(repair_rules(&r.action), ["AN-20"]);
    assert_eq!(thinking_count(&r.body), 0);
    assert_valid(&r, &[&req]);
    let again = recover(&req, &d, &mut attempts, None).expect("recovers");
    assert_eq!(again.action, Action::StripThinking { from: Some(1) });
    assert_valid(&again, &[&req]);
}

#[test]
fn request_config_invalid_is_handed_back_unchanged() {
    let req = damaged("cfg_temperature_with_thinking");
    let (d, r) = run(
        "onehub-529-temperature-thinking-provider-prefix",
        None,
        &req,
        &mut Attempts::new(),
        None,
    );
    assert_eq!(d.kind, ErrorKind::RequestConfigInvalid);
    assert_eq!(
        r.action,
        Action::FixConfig {
            what: "temperature".into()
        }
    );
    assert_eq!(r.outcome, Outcome::HandBack);
    assert_eq!(r.body, req);
    assert!(r.headers.is_empty() && r.report.changes.is_empty());
}

#[test]
fn retryable_errors_retry_the_same_bytes_then_give_up() {
    let req = damaged("an08_aborted_turn");
    for (id, kind) in [
        ("cc-3558-529-retrying-tui", ErrorKind::RetryableOverloaded),
        (
            "mycoder-62-rate-limit-robot-prefix",
            ErrorKind::RetryableRateLimit,
        ),
        ("cc-22796-500-api-error-wrapped", ErrorKind::RetryableServer),
    ] {
        let mut attempts = Attempts::new();
        let (d, r) = run(id, None, &req, &mut attempts, None);
        assert_eq!(d.kind, kind, "{id}");
        assert!(r.wait().is_some_and(|w| w.as_millis() > 0), "{id}");
        assert_eq!(r.outcome, Outcome::Send);
        assert_eq!(r.body, req, "{id}: a retry sends the same bytes");
        for _ in 1..MAX_RETRIES {
            let again = recover(&req, &d, &mut attempts, None).expect("recovers");
            assert!(matches!(again.action, Action::Retry { .. }), "{id}");
        }
        let end = recover(&req, &d, &mut attempts, None).expect("recovers");
        assert!(matches!(end.action, Action::GiveUp { .. }), "{id}");
        assert_eq!(end.outcome, Outcome::HandBack);
    }
}

#[test]
fn context_length_exceeded_asks_the_caller_to_compact() {
    let req = damaged("an08_aborted_turn");
    let (d, r) = run(
        "pi-102-prompt-too-long-json",
        None,
        &req,
        &mut Attempts::new(),
        None,
    );
    assert_eq!(d.kind, ErrorKind::ContextLengthExceeded);
    assert_eq!(r.action, Action::Compact);
    assert_eq!(r.outcome, Outcome::HandBack);
    assert_eq!(r.body, req);
}

#[test]
fn reasoning_item_orphan_is_handed_back_and_unknown_gives_up() {
    let req = damaged("an08_aborted_turn");
    for (id, kind, action) in [
        (
            "continue-8933-responses-reasoning-orphan",
            ErrorKind::ReasoningItemOrphan,
            "drop_items",
        ),
        (
            "cc-request-body-invalid-json-low-surrogate",
            ErrorKind::Unknown,
            "give_up",
        ),
    ] {
        let (d, r) = run(id, None, &req, &mut Attempts::new(), None);
        assert_eq!(d.kind, kind);
        assert_eq!(r.action.name(), action, "{id}");
        assert_eq!(r.outcome, Outcome::HandBack);
        assert_eq!(r.body, req);
    }
}

// ---- across kinds ------------------------------------------------------------------------

/// One end-to-end case per kind: a real error (corpus id, renumbered message), the request it
/// answers (`corpus/damaged`), and the action `recover` must take first. The tests above go
/// further for each kind; this table is what proves every kind has one.
struct EndToEnd {
    kind: ErrorKind,
    id: &'static str,
    renumber: Option<u32>,
    request: &'static str,
    action: &'static str,
}

const END_TO_END: &[EndToEnd] = &[
    EndToEnd {
        kind: ErrorKind::ThinkingBlockOrder,
        id: "kilo-5219-vertex-order-tool-use",
        renumber: None,
        request: "an16_tool_use_before_thinking",
        action: "repair",
    },
    EndToEnd {
        kind: ErrorKind::ThinkingDisabledViolation,
        id: "forge-disabled-anthropic-direct",
        renumber: None,
        request: "an20_disabled_final_assistant_thinking",
        action: "repair",
    },
    EndToEnd {
        kind: ErrorKind::ThinkingBlockModified,
        id: "cc-25361-modified-wrapped",
        renumber: None,
        request: "an16_tool_use_before_thinking",
        action: "strip_thinking",
    },
    EndToEnd {
        kind: ErrorKind::ThinkingSignatureInvalid,
        id: "agm-498-sig-invalid-vertex-padded",
        renumber: None,
        request: "an23_empty_signature",
        action: "repair",
    },
    EndToEnd {
        kind: ErrorKind::ThinkingBlockTrailing,
        id: "cc-final-block-thinking-after-resume",
        renumber: Some(5),
        request: "an19_trailing_unsigned_thinking",
        action: "repair",
    },
    EndToEnd {
        kind: ErrorKind::ToolResultMissing,
        id: "cc-5989-tool-result-missing-wrapped",
        renumber: Some(1),
        request: "an08_aborted_turn",
        action: "repair",
    },
    EndToEnd {
        kind: ErrorKind::ToolUseIdMismatch,
        id: "decocms-1803-unexpected-tool-use-id",
        renumber: Some(1),
        request: "an10_orphan_tool_result",
        action: "repair",
    },
    EndToEnd {
        kind: ErrorKind::ToolUseIdFormat,
        id: "commandcode-323-tool-use-id-pattern",
        renumber: None,
        request: "an12_kimi_tool_id",
        action: "repair",
    },
    EndToEnd {
        kind: ErrorKind::EmptyContent,
        id: "bolt-7426-text-blocks-non-empty",
        renumber: None,
        request: "an05_empty_text_block",
        action: "repair",
    },
    EndToEnd {
        kind: ErrorKind::RoleOrder,
        id: "coai-209-roles-alternate-multiple-user",
        renumber: None,
        request: "an11_user_text_between_tool_use_and_result",
        action: "repair",
    },
    EndToEnd {
        kind: ErrorKind::ReasoningItemOrphan,
        id: "continue-8933-responses-reasoning-orphan",
        renumber: None,
        request: "an08_aborted_turn",
        action: "drop_items",
    },
    EndToEnd {
        kind: ErrorKind::ContextLengthExceeded,
        id: "pi-102-prompt-too-long-json",
        renumber: None,
        request: "an08_aborted_turn",
        action: "compact",
    },
    EndToEnd {
        kind: ErrorKind::RequestConfigInvalid,
        id: "onehub-529-temperature-thinking-provider-prefix",
        renumber: None,
        request: "cfg_temperature_with_thinking",
        action: "fix_config",
    },
    EndToEnd {
        kind: ErrorKind::RetryableOverloaded,
        id: "cc-3558-529-retrying-tui",
        renumber: None,
        request: "an08_aborted_turn",
        action: "retry",
    },
    EndToEnd {
        kind: ErrorKind::RetryableRateLimit,
        id: "mycoder-62-rate-limit-robot-prefix",
        renumber: None,
        request: "an08_aborted_turn",
        action: "retry",
    },
    EndToEnd {
        kind: ErrorKind::RetryableServer,
        id: "cc-22796-500-api-error-wrapped",
        renumber: None,
        request: "an08_aborted_turn",
        action: "retry",
    },
    EndToEnd {
        kind: ErrorKind::Unknown,
        id: "cc-request-body-invalid-json-low-surrogate",
        renumber: None,
        request: "an08_aborted_turn",
        action: "give_up",
    },
];

#[test]
fn every_kind_has_an_end_to_end_test() {
    // Walks the kinds of the enum itself (`ErrorKind::ALL` is generated with it): a kind added
    // without a case here fails this test.
    for kind in ErrorKind::ALL {
        let cases: Vec<&EndToEnd> = END_TO_END.iter().filter(|c| c.kind == kind).collect();
        assert!(!cases.is_empty(), "{kind} has no end-to-end case");
        for case in cases {
            let req = damaged(case.request);
            let (d, r) = run(case.id, case.renumber, &req, &mut Attempts::new(), None);
            assert_eq!(d.kind, kind, "{}", case.id);
            assert_eq!(r.action.name(), case.action, "{}: {:?}", case.id, r.action);
            if r.outcome == Outcome::Send && !matches!(r.action, Action::Retry { .. }) {
                assert_valid(&r, &[&req]);
            }
        }
    }
}

#[test]
fn every_ladder_ends_in_give_up_within_bounds() {
    // Whatever the error, repeated recovery terminates in a hand-back.
    let req = damaged("an16_tool_use_before_thinking");
    for item in common::corpus() {
        let d = classify(item.status, &item.body);
        let mut attempts = Attempts::new();
        let mut calls = 0;
        loop {
            calls += 1;
            assert!(calls <= MAX_ATTEMPTS + 1, "{}: no end", item.id);
            let r = recover(&req, &d, &mut attempts, None).expect("recovers");
            if r.outcome == Outcome::HandBack {
                break;
            }
        }
    }
}

#[test]
fn attempts_are_bounded_across_different_errors() {
    // Eight different errors (different messages), each answered once: the ninth gives up.
    let req = damaged("an08_aborted_turn");
    let mut attempts = Attempts::new();
    for m in 0..MAX_ATTEMPTS as u32 {
        let (status, text) = real_error("cc-5989-tool-result-missing-wrapped", Some(m + 40));
        let d = classify(status, &text);
        let r = recover(&req, &d, &mut attempts, None).expect("recovers");
        assert!(r.sends(), "attempt {m}: {:?}", r.action);
    }
    let (status, text) = real_error("cc-5989-tool-result-missing-wrapped", Some(1));
    let d = classify(status, &text);
    let r = recover(&req, &d, &mut attempts, None).expect("recovers");
    assert!(matches!(r.action, Action::GiveUp { .. }), "{:?}", r.action);
}

#[test]
fn an_unreadable_request_is_an_error_and_records_nothing() {
    let (status, text) = real_error("cc-5989-tool-result-missing-wrapped", None);
    let d = classify(status, &text);
    let mut attempts = Attempts::new();
    let err = recover("{\"messages\": [", &d, &mut attempts, None);
    assert!(matches!(err, Err(RecoverError::Request(_))), "{err:?}");
    assert!(attempts.is_empty());
}

#[test]
fn attempts_survive_a_json_round_trip() {
    let req = damaged("an16_tool_use_before_thinking");
    let (status, text) = real_error("cc-25361-modified-wrapped", None);
    let d = classify(status, &text);
    let mut attempts = Attempts::new();
    recover(&req, &d, &mut attempts, None).expect("recovers");
    let json = attempts.to_json().expect("encodes");
    let mut back = Attempts::from_json(&json).expect("decodes");
    assert_eq!(back, attempts);
    let r = recover(&req, &d, &mut back, None).expect("recovers");
    assert_eq!(r.action, Action::DisableThinking);
}

// ---- request settings turnkeeper can change ----------------------------------------------

/// `request` with its `model` value replaced.
fn with_model(request: &str, model: &str) -> String {
    let t = read(request, FormatHint::Auto).expect("reads");
    let span = t.meta.model.expect("has a model").span;
    let mut out = request.to_owned();
    // The span holds the string's contents, quotes excluded.
    out.replace_range(span.start as usize..span.end as usize, model);
    out
}

/// `request` with its `thinking` value replaced by `value`.
fn with_thinking(request: &str, value: &str) -> String {
    let t = read(request, FormatHint::Auto).expect("reads");
    let span = t.meta.thinking.span.expect("has thinking");
    let mut out = request.to_owned();
    out.replace_range(span.start as usize..span.end as usize, value);
    out
}

#[test]
fn a_model_without_thinking_gets_thinking_disabled_and_nothing_else() {
    // The real Vertex error names claude-3-5-haiku; the request is a valid manual-thinking loop
    // sent to that model.
    let req = with_model(
        &file("corpus/anthropic/tool_loop_manual.json"),
        "claude-3-5-haiku-20241022",
    );
    let (d, r) = run(
        "cc-haiku-does-not-support-thinking-vertex",
        None,
        &req,
        &mut Attempts::new(),
        None,
    );
    assert_eq!(d.kind, ErrorKind::RequestConfigInvalid);
    assert_eq!(r.action, Action::DisableThinking);
    // Byte-identical except for the thinking parameter (history thinking may stay: AN-20 only
    // concerns a final assistant message).
    assert_eq!(r.body, with_thinking(&req, r#"{"type":"disabled"}"#));
    assert_valid(&r, &[&req]);
}

#[test]
fn manual_thinking_unsupported_switches_to_adaptive_where_the_model_allows_it() {
    // api-rules.md §1.2 quotes this error for Opus 4.7 and later (no public report in the corpus).
    let err = r#"{"type":"error","error":{"type":"invalid_request_error","message":"\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior."}}"#;
    let d = classify(Some(400), err);
    assert_eq!(d.kind, ErrorKind::RequestConfigInvalid);
    let base = file("corpus/anthropic/tool_loop_manual.json");

    let req = with_model(&base, "claude-opus-4-7");
    let r = recover(&req, &d, &mut Attempts::new(), None).expect("recovers");
    assert_eq!(r.action, Action::UseAdaptive);
    assert_eq!(r.body, with_thinking(&req, r#"{"type":"adaptive"}"#));
    assert_valid(&r, &[&req]);

    // A model without adaptive thinking: the rung is skipped, the ladder ends.
    let req = with_model(&base, "claude-sonnet-4-5");
    let r = recover(&req, &d, &mut Attempts::new(), None).expect("recovers");
    assert_eq!(r.report.skipped[0].action, Action::UseAdaptive);
    assert!(r.report.skipped[0].reason.contains("adaptive"));
    assert!(matches!(r.action, Action::GiveUp { .. }));
    assert_eq!(r.outcome, Outcome::HandBack);
}

/// A DeepSeek Chat body that lost its `reasoning_content`: `restore_reasoning` puts the stored
/// value back when the store has it; without a store the rung is skipped and `empty_reasoning`
/// adds the provider's empty value, reported lossy.
#[test]
fn a_chat_body_gets_its_reasoning_restored_else_the_empty_value() {
    let resp = r#"{"id":"c1","model":"deepseek-v4-pro","choices":[{"index":0,"message":{"role":"assistant","content":"","reasoning_content":"Look it up.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#;
    let req = r#"{"model":"deepseek-v4-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"x"}]}"#;
    let err = "Missing `reasoning_content` field in the assistant message at message index 1";
    let d = turnkeeper_recover::classify(Some(400), err);
    let mut store = TurnStore::in_memory();
    store.add_any_response(resp).expect("a Chat response");
    let mut attempts = turnkeeper_recover::Attempts::new();
    let r = turnkeeper_recover::recover(req, &d, &mut attempts, Some(&store)).expect("recovers");
    let changes: Vec<String> = r
        .report
        .changes
        .iter()
        .map(|c| format!("{} {} {}", c.rule, c.action, c.path))
        .collect();
    assert_eq!(
        (r.action.name(), r.body.as_str(), changes.as_slice()),
        (
            "restore_reasoning",
            r#"{"model":"deepseek-v4-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}],"reasoning_content":"Look it up."},{"role":"tool","tool_call_id":"call_1","content":"x"}]}"#,
            &["DS-03 restored_field messages[1].reasoning_content".to_owned()][..],
        )
    );
    assert_eq!(r.report.addressing, vec![0]);
    let mut attempts = turnkeeper_recover::Attempts::new();
    let r = turnkeeper_recover::recover(req, &d, &mut attempts, None).expect("recovers");
    let skipped: Vec<&str> = r.report.skipped.iter().map(|s| s.action.name()).collect();
    assert_eq!(
        (r.action.name(), skipped.as_slice(), r.body.as_str()),
        (
            "empty_reasoning",
            &["restore_reasoning"][..],
            r#"{"model":"deepseek-v4-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}],"reasoning_content":""},{"role":"tool","tool_call_id":"call_1","content":"x"}]}"#,
        )
    );
}
