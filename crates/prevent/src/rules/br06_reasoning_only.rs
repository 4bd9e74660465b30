//! ## BR-06: newer Claude on Converse, an assistant turn holding only `reasoningContent`
//!
//! **The API.** Newer Claude models on Bedrock (Sonnet 5, Fable 5.1) reject an assistant
//! message whose blocks are all `reasoningContent`, even with a user message after it; Sonnet 4.6
//! accepts it: ``This model does not support assistant message prefill. The conversation must
//! end with a user message.`` Source: api-rules-reasoning-2026-11.md §8.2 BR-06 (V-Obs, HARD:
//! NousResearch/hermes-agent#105780). Which models exactly is not published (§13 item 7), so the
//! rule runs only for the two named families (`claude-sonnet-5*`, `claude-fable-5-1*`).
//!
//! **Repair.** None: adding text would invent content, and dropping the turn edits a signed
//! prefix. Reported.

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::converse::{ConverseCx, Family, dotted, is_assistant};

/// True for the models BR-06 names.
fn named(bare: &str) -> bool {
    let m = bare.trim_start_matches("anthropic.");
    m.starts_with("claude-sonnet-5") || m.starts_with("claude-fable-5-1")
}

/// Reports reasoning-only assistant messages.
pub fn run(cx: &mut ConverseCx<'_, '_>) {
    if !cx.is(Family::Claude) || !named(&cx.target.bare_model()) {
        return;
    }
    for (i, m) in cx.messages().iter().enumerate() {
        if !cx.alive(i) || !is_assistant(m) {
            continue;
        }
        let alive = cx.alive_blocks(i);
        if alive.is_empty()
            || !alive
                .iter()
                .all(|&k| m.blocks.get(k).is_some_and(|b| b.is_reasoning()))
        {
            continue;
        }
        cx.find(
            RuleId::Br06,
            Severity::Error,
            Some(i),
            None,
            format!(
                "{}: an assistant message of reasoningContent only. This model does not support assistant message prefill. The conversation must end with a user message.",
                dotted(i, None)
            ),
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::converse::testing::{Expect, check};

    const BODY: &str = r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"t","signature":"c2ln"}}}]},{"role":"user","content":[{"text":"q2"}]}]}"#;

    #[test]
    fn reported_for_the_named_models_only() {
        check(
            BODY,
            Some("global.anthropic.claude-sonnet-5-20260630-v1:0"),
            Expect {
                found: &[("BR-06", "messages[1]")],
                repaired: None,
                changes: &[],
                left: &[("BR-06", "messages[1]")],
            },
        );
        check(
            BODY,
            Some("us.anthropic.claude-sonnet-4-6"),
            Expect {
                found: &[],
                repaired: None,
                changes: &[],
                left: &[],
            },
        );
    }
}
