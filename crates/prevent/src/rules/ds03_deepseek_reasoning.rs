//! ## DS-03: DeepSeek thinking, reasoning_content missing in a tool-calling turn
//!
//! DS-03 / DS-04 (DeepSeek, thinking mode): between two user messages, if the model made a tool
//! call, every assistant message of that span must carry `reasoning_content` back, in every
//! later request. The key must be there; `""` is accepted.
//!
//! DeepSeek's errors (api-rules-reasoning-2026-11.md §4, DS-03/DS-04; V-Doc + V-Obs): V3.2
//! ``Missing `reasoning_content` field in the assistant message at message index N``; V4
//! ``The `reasoning_content` in the thinking mode must be passed back to the API.``
//! (continuedev/continue#10193, anomalyco/opencode#24175, and more). DS-07: with `tools`
//! declared, peers give every assistant message the key; whether DeepSeek enforces that outside
//! tool spans is not verified, so such a message is a warning, not repaired.
//!
//! When it applies: the target is DeepSeek's own API, told by its own model ids
//! (`deepseek-chat`, `deepseek-reasoner`, `deepseek-v4-pro`, `deepseek-v4-flash`,
//! `deepseek-v3.2`), and thinking is on: the body's or the options'
//! `thinking` says so, or the model thinks by default (`deepseek-reasoner`, V3.2, V4), or the
//! body replays `reasoning_content` on some assistant message. `deepseek-chat` without any of
//! these is the non-thinking mode, which needs nothing. A DeepSeek model under an id DeepSeek's
//! API does not use (`deepseek-v4-pro-0813`, `deepseek/deepseek-chat`) is served by a gateway
//! or router, which may translate: recorded real traffic through Charm Hyper shows such tool
//! turns accepted without the field (`real-traffic/openai-chat/crush--*deepseek-v4*`), so there
//! the finding is a warning and nothing is added.
//!
//! Repair: first, the `reasoning_content` DeepSeek sent for that turn, put back byte for byte
//! from the turn store (found by the message's tool call ids, else by its text), reported as
//! restored (api-rules-reasoning-2026-11.md §0.3 item 1: nothing is lost or made up). Only when
//! the store does not have it, the empty stand-in `reasoning_content: ""` (DS-04, verified 200
//! against the live API, earendil-works/pi PR #3659), only on a DeepSeek target, reported as
//! lossy; off by policy (`empty_stand_ins`).
//!
//! Scope: format `chat`; provider DeepSeek; fix: lossy stand-in.

use turnkeeper_model::wire::chat::ChatRole;

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::Provider;
use crate::wire::chat::ChatCx;

/// DeepSeek's own API model ids (api-docs.deepseek.com, api-rules-reasoning-2026-11.md §4.1).
const OFFICIAL: &[&str] = &[
    "deepseek-chat",
    "deepseek-reasoner",
    "deepseek-v4-pro",
    "deepseek-v4-flash",
    "deepseek-v3.2",
    "deepseek-v3.2-exp",
];

/// True when DeepSeek thinking is on for this body.
fn thinking_on(cx: &ChatCx<'_, '_>) -> bool {
    if let Some(on) = cx.thinking_setting() {
        return on;
    }
    if cx.replays_reasoning() {
        return true;
    }
    let m = cx.target.bare_model();
    m.contains("reasoner") || m.starts_with("deepseek-v4") || m.starts_with("deepseek-v3.2")
}

/// Runs DS-03.
pub fn run(cx: &mut ChatCx<'_, '_>) {
    if !cx.is(Provider::DeepSeek) || !thinking_on(cx) {
        return;
    }
    let official =
        cx.target.routed.is_none() && OFFICIAL.contains(&cx.target.bare_model().as_str());
    let msgs = cx.messages();
    let tools = cx.body.tool_count > 0;
    let mut start = 0;
    while start < msgs.len() {
        let mut end = start;
        while end < msgs.len() && (end == start || msgs[end].role != ChatRole::User) {
            end += 1;
        }
        let span = start..end;
        let tool_span = span.clone().any(|i| {
            cx.alive(i) && msgs[i].role == ChatRole::Assistant && !msgs[i].calls.is_empty()
        });
        for i in span {
            let m = &msgs[i];
            if m.role != ChatRole::Assistant || !cx.alive(i) || m.reasoning_content.is_some() {
                continue;
            }
            if tool_span && !official {
                cx.find(
                    RuleId::Ds03,
                    Severity::Warning,
                    i,
                    format!("messages[{i}]"),
                    format!(
                        "an assistant message of a tool-calling turn without reasoning_content: \
                         DeepSeek's own API rejects this in thinking mode (Missing \
                         `reasoning_content` field); {:?} is no model id of DeepSeek's API, so a \
                         gateway or router serves it and may accept it",
                        cx.target.model.as_deref().unwrap_or_default()
                    ),
                    None,
                );
            } else if tool_span {
                let stored = cx.stored_reasoning(i);
                let repair = if stored.is_some() {
                    Some("put back the reasoning_content DeepSeek sent (turn store)".to_owned())
                } else {
                    cx.policy
                        .empty_stand_ins
                        .then(|| "add reasoning_content: \"\" (lossy)".to_owned())
                };
                cx.find(
                    RuleId::Ds03,
                    Severity::Error,
                    i,
                    format!("messages[{i}]"),
                    format!(
                        "an assistant message of a tool-calling turn without reasoning_content; \
                         {} rejects this in thinking mode: Missing `reasoning_content` field in \
                         the assistant message at message index {i} (V4: The \
                         `reasoning_content` in the thinking mode must be passed back to the \
                         API.)",
                        cx.provider_name()
                    ),
                    repair,
                );
                match stored {
                    Some(json) => cx.restore_reasoning(RuleId::Ds03, i, &json),
                    None => cx.stand_in_reasoning(
                        RuleId::Ds03,
                        i,
                        "DS-04: the key must be present, and an empty one is accepted",
                    ),
                }
            } else if tools {
                cx.find(
                    RuleId::Ds03,
                    Severity::Warning,
                    i,
                    format!("messages[{i}]"),
                    "an assistant message without reasoning_content while tools are declared; \
                     DeepSeek's guide asks for every turn's reasoning back (DS-07), though a \
                     turn without a tool call is not known to be rejected"
                        .to_owned(),
                    None,
                );
            }
        }
        start = end;
    }
}
