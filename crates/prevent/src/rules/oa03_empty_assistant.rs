//! ## OA-03: Chat, an assistant message with neither content nor tool calls
//!
//! OA-03 (OpenAI Chat Completions; Kimi's KM-04): an assistant message needs `content` or
//! `tool_calls`.
//!
//! Kimi's error: `Invalid assistant message: content or tool_calls must be set`
//! (api-rules-reasoning-2026-11.md §2 OA-03, §5 KM-04; V-Doc: openai-python's types make
//! `content` optional only with `tool_calls`; V-Obs: MoonshotAI/kimi-code#2819). It typically
//! appears once a client stripped what a reasoning-only turn held.
//!
//! Only a message whose `content` is absent or `null`, with no `tool_calls`, `function_call`,
//! `refusal` or `audio`, is reported: an empty string is a content, and whether a provider
//! takes it is not documented, so it is left alone.
//!
//! Repair (safe): the message goes whole, with its reasoning field if it has one, reported.
//!
//! Scope: format `chat`; every provider; fix: safe.

use turnkeeper_model::wire::chat::ChatRole;

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::chat::ChatCx;

/// Runs OA-03.
pub fn run(cx: &mut ChatCx<'_, '_>) {
    let msgs = cx.messages();
    for (i, m) in msgs.iter().enumerate() {
        if m.role != ChatRole::Assistant
            || !cx.alive(i)
            || m.content.is_set()
            || !m.calls.is_empty()
            || m.tool_calls.is_some()
            || m.function_call
            || m.other_output
        {
            continue;
        }
        let reasoning = if m.has_reasoning_field() {
            " (it holds only a reasoning field)"
        } else {
            ""
        };
        cx.find(
            RuleId::Oa03,
            Severity::Error,
            i,
            format!("messages[{i}]"),
            format!(
                "an assistant message with neither content nor tool calls{reasoning}; {} \
                 rejects this: Invalid assistant message: content or tool_calls must be set",
                cx.provider_name()
            ),
            Some("remove the message".to_owned()),
        );
        if cx.repair {
            cx.remove_message(
                RuleId::Oa03,
                i,
                format!("it has neither content nor tool calls{reasoning}; it goes whole"),
            );
        }
    }
}
