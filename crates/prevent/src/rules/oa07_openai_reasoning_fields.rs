//! ## OA-07: Chat to OpenAI, a vendor reasoning field OpenAI does not define
//!
//! OA-07 / OA-04 (OpenAI's own Chat Completions): the request has no reasoning field on
//! messages, and OpenAI validates message keys strictly.
//!
//! OpenAI rejects unknown message keys with `unknown_parameter` (seen for other keys:
//! `Unknown parameter: 'messages[2].tool_calls[0].index'.`, labring/FastGPT#1253); that a
//! vendor's `reasoning_content`, `reasoning` or `reasoning_details` is rejected the same way is
//! the research's inference (api-rules-reasoning-2026-11.md §2 OA-04, OA-07; §13 gap 6), not an
//! observed error. So this is a warning, and nothing is removed: reasoning leaves as it came.
//!
//! Scope: format `chat`; provider OpenAI (direct, not through a router); fix: none.

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::Provider;
use crate::wire::chat::ChatCx;

/// Runs OA-07.
pub fn run(cx: &mut ChatCx<'_, '_>) {
    if !cx.is(Provider::OpenAi) || cx.target.routed.is_some() {
        return;
    }
    let msgs = cx.messages();
    for (i, m) in msgs.iter().enumerate() {
        if !cx.alive(i) || !m.has_reasoning_field() {
            continue;
        }
        let field = if m.reasoning_content.is_some() {
            "reasoning_content"
        } else if m.reasoning.is_some() {
            "reasoning"
        } else {
            "reasoning_details"
        };
        cx.find(
            RuleId::Oa07,
            Severity::Warning,
            i,
            format!("messages[{i}].{field}"),
            format!(
                "OpenAI's Chat Completions defines no `{field}` and may reject it as an unknown \
                 parameter; OpenAI does not carry reasoning between Chat calls anyway (OA-08)"
            ),
            None,
        );
    }
}
