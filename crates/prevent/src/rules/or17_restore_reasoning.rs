//! ## OR-17: Responses reasoning altered or dropped, put back from the turn store
//!
//! OR-17 (OpenAI Responses): a reasoning item's `encrypted_content` is verified; an edited,
//! truncated or foreign one fails: ``The encrypted content gAAA...XX== could not be verified.``
//! (`code: invalid_encrypted_content`; api-rules-reasoning-2026-11.md §3.2, V-Obs, openai/codex
//! #8145 and more). The item a reasoning item produced, sent with its server id, needs that
//! reasoning item before it (OR-02: ``Item 'fc_<id>' of type 'function_call' was provided
//! without its required 'reasoning' item``); sent without an id it is accepted, but the model
//! loses its reasoning (OR-06/OR-07).
//!
//! With a turn store holding the responses (`turnkeeper store add`, the proxy), turnkeeper knows
//! what the provider sent, so it can put it back instead of dropping more (§0.3 item 1: "Keep
//! stored provider data verbatim, and restore it"):
//! - an input reasoning item whose `id` the store knows, but which lost the `encrypted_content`
//!   the provider sent, is replaced whole by the stored item, byte for byte as the provider sent
//!   it (an error: the server has nothing to verify). Another blob, or another `summary`, is no
//!   edit the server rejects: a stream carries each item's blob up to three times, each
//!   encrypted anew, any of them accepted back, and a real client replays an empty summary text
//!   for `summary: []`, accepted (see `same_state`);
//! - a function call, custom tool call or assistant message whose `call_id` (or `id`) the store
//!   knows, and that the provider's output had right after a reasoning item, but that the input
//!   has without one, gets that reasoning item put back right before it, byte for byte, when the
//!   item carries its server id (an error, OR-02). Without its id the item is accepted as it is
//!   (real traffic replays id-less calls without their reasoning): a warning that the model
//!   loses its reasoning there, and the valid request is left unchanged.
//!
//! When it applies (each condition is what §3.2 says the server requires of such an item): the
//! target is OpenAI and a reasoning model (not OR-13); no `previous_response_id` or
//! `conversation` (the server holds those items already, OR-14); the stored item's `id` is not
//! in the input already; the stored item has no `content` (OR-12) and has `summary` (OR-11); and
//! it carries `encrypted_content`, or has an `id` the server can resolve (`store` not `false`,
//! OR-03). Anything else is left to the other OR rules. Without a store nothing happens.
//!
//! Scope: format `responses`; provider OpenAI; fix: restore from the turn store (never lossy,
//! never invented).

use std::collections::HashSet;

use serde_json::Value;
use turnkeeper_guard::fingerprint;
use turnkeeper_guard::wire_turn::ResponsesItemsExt;
use turnkeeper_model::wire::responses::{ItemKind, Role};

use crate::finding::{Change, Severity};
use crate::id::{ChangeAction, RuleId};
use crate::wire::responses::{Judged, ResponsesCx, path, without_reasoning};

/// Runs OR-17.
pub fn run(cx: &mut ResponsesCx<'_, '_>) {
    let Some(store) = cx.store else {
        return;
    };
    if cx.judged != Judged::OpenAi || without_reasoning(cx.target) {
        return;
    }
    let n = cx.items().len();
    let present: HashSet<String> = (0..n)
        .filter(|&i| cx.item(i).id.is_some())
        .map(|i| cx.id_text(i))
        .collect();
    for i in 0..n {
        let it = cx.item(i);
        if it.kind != ItemKind::Reasoning || it.id.is_none() {
            continue;
        }
        let id = cx.id_text(i);
        let Some(orig) = store
            .responses_output(&id)
            .and_then(|out| out.iter().find(|o| o.id.as_deref() == Some(id.as_str())))
            .filter(|o| o.kind == "reasoning")
        else {
            continue;
        };
        let raw = it.span.get(cx.src());
        if raw == orig.raw || same_state(raw, &orig.raw) {
            continue;
        }
        cx.find(
            RuleId::Or17,
            i,
            format!(
                "the reasoning item `{id}` differs from the one the provider sent (its \
                 encrypted_content or summary changed); the server rejects it: The encrypted \
                 content ... could not be verified."
            ),
            Some("put back the provider's original item (turn store)"),
        );
        if !cx.repairs(RuleId::Or17) {
            continue;
        }
        cx.st.replaced[i] = Some(orig.raw.clone());
        cx.acted = true;
        cx.out.restored.push(orig.raw.clone());
        cx.out.changes.push(Change {
            rule: RuleId::Or17,
            action: ChangeAction::RestoredField,
            path: path(i),
            reason: format!(
                "replaced the altered reasoning item `{id}` by the provider's original, byte for \
                 byte from the turn store"
            ),
            fingerprint: Some(fingerprint(raw)),
        });
    }
    if cx.body.has_server_history() {
        return;
    }
    for k in 0..n {
        let it = cx.item(k);
        let produced = matches!(it.kind, ItemKind::FunctionCall | ItemKind::CustomToolCall)
            || (it.kind == ItemKind::Message && it.role == Some(Role::Assistant));
        if !produced || (k > 0 && cx.item(k - 1).kind == ItemKind::Reasoning) {
            continue;
        }
        let Some(key) = it.call_id.or(it.id).map(|s| cx.text(s).into_owned()) else {
            continue;
        };
        let Some(r) = store
            .responses_output(&key)
            .and_then(|out| out.reasoning_before(&key))
        else {
            continue;
        };
        if r.id.as_ref().is_some_and(|rid| present.contains(rid))
            || !replayable(cx, &r.raw, r.id.is_some())
        {
            continue;
        }
        let rid = r.id.clone().unwrap_or_default();
        let with_id = it.id.is_some();
        let severity = if with_id {
            Severity::Error
        } else {
            Severity::Warning
        };
        let message = if with_id {
            format!(
                "`{}` is sent with its server id but without the reasoning item `{rid}` the \
                 provider sent before it; the server rejects it: Item ... was provided without \
                 its required 'reasoning' item",
                cx.id_text(k)
            )
        } else {
            format!(
                "the reasoning item `{rid}` the provider sent before `{key}` is missing; the \
                 model loses its reasoning for this step"
            )
        };
        // Sent without its server id the item is accepted as it is: a valid request passes
        // unchanged, so the reasoning is only reported missing (real traffic: fantasy's gpt-5
        // tool loop replays id-less calls without their reasoning, accepted).
        cx.out.find(
            RuleId::Or17,
            severity,
            path(k),
            Some(k),
            message,
            with_id.then(|| {
                "put back the provider's reasoning item before it (turn store)".to_owned()
            }),
        );
        if !cx.repair || !with_id {
            continue;
        }
        cx.st.insert_before[k] = Some(r.raw.clone());
        cx.acted = true;
        cx.out.restored.push(r.raw.clone());
        cx.out.changes.push(Change {
            rule: RuleId::Or17,
            action: ChangeAction::RestoredField,
            path: path(k),
            reason: format!(
                "put back the reasoning item `{rid}` the provider sent right before `{key}`, \
                 byte for byte from the turn store; the client had dropped it"
            ),
            fingerprint: None,
        });
    }
}

/// True when the two items carry the same reasoning state (`encrypted_content` and `summary`
/// equal as JSON values): a difference in form only (key order, spacing, escapes) is not an
/// alteration the server can see.
///
/// Two encrypted blobs that differ are no sign of an edit: a streamed response carries one
/// reasoning item's `encrypted_content` up to three times, each encrypted anew
/// (`response.output_item.added`, `.done`, `response.completed`), and OpenAI accepts any of them
/// back (real traffic: fantasy's gpt-5 streaming exchange replays the `added` copy while the
/// store keeps the `completed` one). Nor is a different `summary`: the server reads the blob,
/// and fantasy's real o4-mini exchange replays `summary: [{"type":"summary_text","text":""}]`
/// for an item sent with `summary: []`, accepted. So the item counts as altered only when its
/// `encrypted_content` is gone (absent, `null` or empty) where the provider sent one.
fn same_state(a: &str, b: &str) -> bool {
    let (Ok(a), Ok(b)) = (
        serde_json::from_str::<Value>(a),
        serde_json::from_str::<Value>(b),
    ) else {
        return false;
    };
    let blob = |v: &Value| {
        v.get("encrypted_content")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    blob(&a) || !blob(&b)
}

/// True when the stored reasoning item can go back into this request as it is: `summary`
/// present (OR-11), no `content` (OR-12), and `encrypted_content`, or an id the server can
/// resolve (OR-03).
fn replayable(cx: &ResponsesCx<'_, '_>, raw: &str, has_id: bool) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(raw) else {
        return false;
    };
    let encrypted = v
        .get("encrypted_content")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty());
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    v.get("summary").is_some_and(Value::is_array)
        && !content
        && (encrypted || (has_id && cx.body.store != Some(false)))
}
