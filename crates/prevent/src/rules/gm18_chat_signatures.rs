//! ## GM-18: Gemini 3 via Chat, the first tool call of a step lacks its signature
//!
//! GM-18 (Gemini 3 through Google's OpenAI-compatible endpoint): the first tool call of each
//! step of the current turn must carry its thought signature, which rides on
//! `tool_calls[i].extra_content.google.thought_signature`.
//!
//! Google's error (api-rules-reasoning-2026-11.md §7, GM-18 = GM-01 on this endpoint; V-Doc +
//! V-Obs, manthanabc/paws#103): ``Function call is missing a thought_signature in functionCall
//! parts. This is required for tools to work correctly, and missing thought_signature may lead
//! to degraded model performance. Additional data, function call `default_api:<name>` ,
//! position N. ...``
//!
//! The current turn is every message after the last `user` message; each assistant message in
//! it is one step. Image models (GM-23) and Gemini through a router (OpenRouter carries the
//! signature in `reasoning_details`, ORT-05) are left alone.
//!
//! Repair: first, the call's own `extra_content` as Gemini sent it (with its signature), put
//! back from the turn store (found by the call's id), reported as restored. Only when the store
//! does not have it, Google's documented dummy `skip_thought_signature_validator` on the first call of
//! such a step only (GM-05; Continue's fix, continuedev/continue PR #8865), only on a Gemini
//! target, reported as lossy; off by policy (`empty_stand_ins`). A call with an
//! `extra_content` of another shape is reported, not edited.
//!
//! Scope: format `chat`; provider Gemini (3.x, direct); fix: lossy stand-in.

use turnkeeper_model::wire::Edit;
use turnkeeper_model::wire::chat::ChatRole;

use crate::finding::Severity;
use crate::id::{ChangeAction, RuleId};
use crate::wire::Provider;
use crate::wire::chat::{ChatCx, text};

/// Google's documented dummy signature.
const DUMMY: &str = "skip_thought_signature_validator";

/// Runs GM-18.
pub fn run(cx: &mut ChatCx<'_, '_>) {
    let m = cx.target.bare_model();
    if !cx.is(Provider::Gemini)
        || cx.target.routed.is_some()
        || !m.starts_with("gemini-3")
        || m.contains("image")
    {
        return;
    }
    let src = cx.src();
    let msgs = cx.messages();
    let turn = msgs
        .iter()
        .rposition(|m| m.role == ChatRole::User)
        .map_or(0, |u| u + 1);
    for (i, msg) in msgs.iter().enumerate().skip(turn) {
        if msg.role != ChatRole::Assistant || !cx.alive(i) {
            continue;
        }
        let Some(first) = msg.calls.first() else {
            continue;
        };
        if first.thought_signature.is_some() {
            continue;
        }
        let name = text(src, first.name).into_owned();
        let call_id = text(src, first.id).into_owned();
        let stored = cx
            .stored(i)
            .and_then(|r| r.calls.iter().find(|c| c.id == call_id))
            .filter(|c| c.thought_signature.is_some())
            .and_then(|c| c.extra_content.clone())
            .filter(|_| !first.has_extra_content);
        let can = !first.has_extra_content && (stored.is_some() || cx.policy.empty_stand_ins);
        cx.find(
            RuleId::Gm18,
            Severity::Error,
            i,
            format!("messages[{i}].tool_calls[0]"),
            format!(
                "the first tool call of this step has no thought signature; Gemini rejects this: \
                 Function call is missing a thought_signature in functionCall parts (function \
                 call `default_api:{name}`)"
            ),
            can.then(|| match stored {
                Some(_) => "put back the signature Gemini sent (turn store)".to_owned(),
                None => format!("sign it with Google's documented dummy {DUMMY:?} (lossy)"),
            }),
        );
        // A call edited by an earlier rule of this pass is signed in the next pass.
        if !can || !cx.repair || cx.out.plan.inner.contains_key(&i) {
            continue;
        }
        let members = cx.body.call_members(first);
        if let Some(extra) = stored {
            cx.edit(
                i,
                Edit::insert_member_like(src, first.span, members, "extra_content", &extra),
            );
            cx.out.change(
                RuleId::Gm18,
                ChangeAction::RestoredField,
                format!("messages[{i}].tool_calls[0].extra_content"),
                "put back the thought signature Gemini sent with this call (turn store), which \
                 the client dropped"
                    .to_owned(),
            );
            continue;
        }
        let json = format!("{{\"google\":{{\"thought_signature\":\"{DUMMY}\"}}}}");
        cx.edit(
            i,
            Edit::add_member(first.span, members, "extra_content", &json),
        );
        cx.out.change(
            RuleId::Gm18,
            ChangeAction::LossyStandIn,
            format!("messages[{i}].tool_calls[0].extra_content"),
            format!(
                "signed with Google's documented dummy {DUMMY:?}: Gemini accepts it on a call \
                 that lost its signature; lossy: the model's reasoning for this step is not \
                 carried"
            ),
        );
    }
}
