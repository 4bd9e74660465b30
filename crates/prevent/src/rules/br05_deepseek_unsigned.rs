//! ## BR-05: DeepSeek R1 on Converse, unsigned `reasoningContent` in the history
//!
//! **The API.** DeepSeek R1 on Bedrock emits `reasoningContent` without a signature and rejects
//! it when it is sent back; the message wrongly speaks of user messages: ``User messages cannot
//! contain reasoning content. Please remove the reasoning content and try again.`` Source:
//! api-rules-reasoning-2026-11.md §8.2 BR-05 (V-Obs, HARD: langchain-ai/langchain-aws#401;
//! aws-samples/bedrock-chat#845, PR #851; zed-industries/zed#32341). Runs only when the target
//! model is known to be `deepseek.r1*` (with or without a region prefix).
//!
//! **Repair.** Each unsigned `reasoningContent` block goes whole, reported with its fingerprint.
//!
//! **Why it is safe.** It is the documented-by-practice fix; the server reads nothing of those
//! blocks, and none is altered.

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::converse::{ConverseCx, Family, dotted};

/// Drops unsigned reasoning for DeepSeek R1.
pub fn run(cx: &mut ConverseCx<'_, '_>) {
    if !cx.is(Family::DeepSeekR1) {
        return;
    }
    for (i, m) in cx.messages().iter().enumerate() {
        for k in cx.alive_blocks(i) {
            let Some(r) = m.blocks.get(k).and_then(|b| b.reasoning) else {
                continue;
            };
            if r.is_signed() {
                continue;
            }
            cx.find(
                RuleId::Br05,
                Severity::Error,
                Some(i),
                Some(k),
                format!(
                    "{}: unsigned reasoningContent sent back to DeepSeek R1, which rejects it: User messages cannot contain reasoning content. Please remove the reasoning content and try again.",
                    dotted(i, Some(k))
                ),
                Some("remove the reasoningContent block whole"),
            );
            cx.remove_block(
                RuleId::Br05,
                i,
                k,
                "unsigned reasoningContent: DeepSeek R1 rejects it on replay".into(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::converse::testing::{Expect, check};

    const BODY: &str = r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"think"}}},{"text":"a"}]},{"role":"user","content":[{"text":"q2"}]}]}"#;

    #[test]
    fn unsigned_reasoning_goes_for_deepseek_r1_only() {
        check(
            BODY,
            Some("us.deepseek.r1-v1:0"),
            Expect {
                found: &[("BR-05", "messages[1].content[0]")],
                repaired: Some(
                    r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"text":"a"}]},{"role":"user","content":[{"text":"q2"}]}]}"#,
                ),
                changes: &[("BR-05", "removed_block", "messages[1].content[0]")],
                left: &[],
            },
        );
        for model in [None, Some("us.amazon.nova-2-lite-v1:0")] {
            check(
                BODY,
                model,
                Expect {
                    found: &[],
                    repaired: None,
                    changes: &[],
                    left: &[],
                },
            );
        }
    }
}
