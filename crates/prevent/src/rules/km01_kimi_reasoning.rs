//! ## KM-01: Kimi thinking, reasoning_content missing on a tool-call message
//!
//! KM-01 / KM-06 / KM-07 (Moonshot Kimi, thinking on): every assistant message with
//! `tool_calls` must carry `reasoning_content`; under preserved thinking (`thinking.keep:
//! "all"`) every assistant message must. `""` is a real state and is accepted.
//!
//! Kimi's errors (api-rules-reasoning-2026-11.md §5; V-Obs): `thinking is enabled but
//! reasoning_content is missing in assistant tool call message at index N`
//! (MoonshotAI/kimi-agent-sdk#169 and more); `preserved thinking (thinking.keep=all) requires
//! reasoning_content on every assistant message, but assistant message at index N is missing
//! reasoning_content` (MoonshotAI/kimi-cli PR #2498).
//!
//! When it applies: the target is Kimi and thinking is on. Through a router or gateway
//! (`moonshotai/kimi-*` on OpenRouter, OpenCode Zen) the finding is a warning with no repair:
//! reasoning travels as `reasoning_details` there and the router translates (recorded real
//! traffic, `real-traffic/openai-chat/fantasy--TestOpenRouterCommon-kimi-*`, is accepted without
//! the field, and so were such turns of the real OpenCode Zen session in
//! `real-stores/opencode/aiand-*`): the body's or the options'
//! `thinking` says so, or the model thinks by default (`*-thinking`, K2.5 and later, K3), or
//! the body replays `reasoning_content` on some assistant message.
//!
//! Repair: first, the `reasoning_content` Kimi sent for that turn, put back byte for byte from
//! the turn store (by the message's tool call ids, else its text), reported as restored. Only
//! when the store does not have it, the empty stand-in `reasoning_content: ""` (KM-07:
//! Moonshot's own CLI replays `""`), only on a Kimi target, reported as lossy; off by policy
//! (`empty_stand_ins`).
//!
//! Scope: format `chat`; provider Kimi; fix: lossy stand-in.

use turnkeeper_model::wire::chat::ChatRole;

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::Provider;
use crate::wire::chat::ChatCx;

/// True when Kimi thinking is on for this body: the setting when the body or the options give
/// one; else the model's default (the thinking models: `*-thinking`, K2.5 and later, K3, Kimi
/// for Coding; off for the K2 instruct models and `moonshot-v1`); for an id of neither kind, the
/// body's own evidence (some assistant message replays `reasoning_content`).
fn thinking_on(cx: &ChatCx<'_, '_>) -> bool {
    if let Some(on) = cx.thinking_setting() {
        return on;
    }
    let m = cx.target.bare_model();
    if m.contains("thinking")
        || [
            "kimi-k2.5",
            "kimi-k2.6",
            "kimi-k2.7",
            "kimi-k3",
            "kimi-for-coding",
        ]
        .iter()
        .any(|p| m.starts_with(p))
    {
        return true;
    }
    if [
        "kimi-k2-0",
        "kimi-k2-turbo",
        "kimi-k2-instruct",
        "kimi-latest",
        "moonshot-v1",
    ]
    .iter()
    .any(|p| m.starts_with(p))
    {
        return false;
    }
    cx.replays_reasoning()
}

/// Runs KM-01 (and KM-06).
pub fn run(cx: &mut ChatCx<'_, '_>) {
    if !cx.is(Provider::Kimi) || !thinking_on(cx) {
        return;
    }
    let routed = cx.target.routed.is_some();
    let keep_all = cx
        .body
        .thinking_keep
        .is_some_and(|k| k.raw(cx.src()) == "all");
    let msgs = cx.messages();
    for (i, m) in msgs.iter().enumerate() {
        if m.role != ChatRole::Assistant || !cx.alive(i) || m.reasoning_content.is_some() {
            continue;
        }
        let text = if !m.calls.is_empty() {
            format!(
                "thinking is enabled but reasoning_content is missing in assistant tool call \
                 message at index {i}"
            )
        } else if keep_all {
            format!(
                "preserved thinking (thinking.keep=all) requires reasoning_content on every \
                 assistant message, but assistant message at index {i} is missing \
                 reasoning_content"
            )
        } else {
            continue;
        };
        if routed {
            cx.find(
                RuleId::Km01,
                Severity::Warning,
                i,
                format!("messages[{i}]"),
                format!(
                    "Kimi's own API rejects this ({text}); {} may translate it",
                    cx.provider_name()
                ),
                None,
            );
            continue;
        }
        let stored = cx.stored_reasoning(i);
        let repair = if stored.is_some() {
            Some("put back the reasoning_content Kimi sent (turn store)".to_owned())
        } else {
            cx.policy
                .empty_stand_ins
                .then(|| "add reasoning_content: \"\" (lossy)".to_owned())
        };
        cx.find(
            RuleId::Km01,
            Severity::Error,
            i,
            format!("messages[{i}]"),
            format!("{} rejects this: {text}", cx.provider_name()),
            repair,
        );
        match stored {
            Some(json) => cx.restore_reasoning(RuleId::Km01, i, &json),
            None => cx.stand_in_reasoning(
                RuleId::Km01,
                i,
                "KM-07: an empty reasoning_content is what Moonshot's own clients replay",
            ),
        }
    }
}
