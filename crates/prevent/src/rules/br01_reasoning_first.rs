//! ## BR-01: Claude on Converse, `reasoningContent` not first in its assistant message
//!
//! **The API.** With Claude, an assistant message that holds `reasoningContent` must start with
//! it. Converters that append reasoning after `text` and `toolUse` break this: ``If an assistant
//! message contains any thinking blocks, the first block must be thinking. Found text``. Source:
//! api-rules-reasoning-2026-11.md §8.2 BR-01 (V-Doc + V-Obs, HARD:
//! aws/bedrock-agentcore-sdk-python#416, PR #419; strands-agents/sdk-python#1698). Runs only for
//! a Claude target in manual thinking (`thinking.type: "enabled"`, or `--thinking manual`), as
//! AN-18 does: adaptive responses are accepted as they come (DEVELOPERS.md, principle 6).
//!
//! **Repair.** The message's reasoning blocks move to its front, keeping their relative order;
//! the other blocks follow in theirs. Each moved block is reported, and its bytes do not change.
//! BR-13 runs first, so a blank text lead-in is already gone.
//!
//! **Why it is safe.** Claude emits reasoning first in manual mode, so a message with text before
//! it was reordered by a converter; putting the blocks back first is the research's repair. The
//! research adds "only safe when the blocks were originally first": without a stored turn that
//! cannot be checked, which is said in the finding.

use turnkeeper_model::wire::converse::BlockKind;

use crate::finding::Severity;
use crate::id::RuleId;
use crate::profile::Mode;
use crate::wire::converse::{ConverseCx, Family, dotted, is_assistant};

/// Anthropic's name for a Converse block kind, as Claude's error says it.
fn anthropic_name(k: BlockKind) -> &'static str {
    match k {
        BlockKind::Text => "text",
        BlockKind::ToolUse => "tool_use",
        BlockKind::ToolResult => "tool_result",
        BlockKind::Image => "image",
        BlockKind::Document => "document",
        BlockKind::Reasoning => "thinking",
        _ => "other",
    }
}

/// Moves reasoning blocks to the front of their message.
pub fn run(cx: &mut ConverseCx<'_, '_>) {
    if !cx.is(Family::Claude) || cx.target.mode != Some(Mode::Manual) {
        return;
    }
    for (i, m) in cx.messages().iter().enumerate() {
        if !cx.alive(i) || !is_assistant(m) {
            continue;
        }
        let alive = cx.alive_blocks(i);
        let reasoning: Vec<usize> = alive
            .iter()
            .copied()
            .filter(|&k| m.blocks.get(k).is_some_and(|b| b.is_reasoning()))
            .collect();
        let Some(&first) = alive.first() else {
            continue;
        };
        if reasoning.is_empty() || reasoning.contains(&first) {
            continue;
        }
        let found = m
            .blocks
            .get(first)
            .map_or("other", |b| anthropic_name(b.kind));
        cx.find(
            RuleId::Br01,
            Severity::Error,
            Some(i),
            Some(first),
            format!(
                "{}: If an assistant message contains any thinking blocks, the first block must be thinking. Found {found}",
                dotted(i, Some(0))
            ),
            Some("move the reasoningContent blocks to the front, in their order (bytes unchanged; the stored order cannot be checked without the original turn)"),
        );
        cx.move_to_front(
            RuleId::Br01,
            i,
            &reasoning,
            "reasoningContent moved to the front of its message, as Claude requires",
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::converse::testing::{Expect, check};

    const CLAUDE: Option<&str> = Some("us.anthropic.claude-sonnet-4-20250514-v1:0");

    fn body(content: &str, thinking: &str) -> String {
        format!(
            r#"{{"messages":[{{"role":"user","content":[{{"text":"q"}}]}},{{"role":"assistant","content":{content}}},{{"role":"user","content":[{{"text":"q2"}}]}}],"additionalModelRequestFields":{{"thinking":{thinking}}}}}"#
        )
    }

    const R1: &str = r#"{"reasoningContent":{"reasoningText":{"text":"one","signature":"c2ln"}}}"#;
    const R2: &str = r#"{"reasoningContent":{"redactedContent":"ZW5j"}}"#;

    #[test]
    fn reasoning_moves_to_the_front_in_its_order() {
        let content = format!(r#"[{{"text":"a"}}, {R1}, {{"text":"b"}}, {R2}]"#);
        let fixed = format!(r#"[{R1}, {R2}, {{"text":"a"}}, {{"text":"b"}}]"#);
        let manual = r#"{"type":"enabled","budget_tokens":1024}"#;
        check(
            &body(&content, manual),
            CLAUDE,
            Expect {
                found: &[("BR-01", "messages[1].content[0]")],
                repaired: Some(&body(&fixed, manual)),
                changes: &[
                    ("BR-01", "moved_block", "messages[1].content[1]"),
                    ("BR-01", "moved_block", "messages[1].content[3]"),
                ],
                left: &[],
            },
        );
    }

    #[test]
    fn only_claude_in_manual_mode_is_judged() {
        let content = format!(r#"[{{"text":"a"}}, {R1}]"#);
        for (model, thinking) in [
            (CLAUDE, r#"{"type":"adaptive"}"#),
            (None, r#"{"type":"enabled","budget_tokens":1024}"#),
            (
                Some("us.deepseek.r1-v1:0"),
                r#"{"type":"enabled","budget_tokens":1024}"#,
            ),
        ] {
            check(
                &body(&content, thinking),
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

    #[test]
    fn reasoning_already_first_is_left_alone() {
        let content = format!(r#"[{R1}, {R2}, {{"text":"a"}}]"#);
        check(
            &body(&content, r#"{"type":"enabled","budget_tokens":1024}"#),
            CLAUDE,
            Expect {
                found: &[],
                repaired: None,
                changes: &[],
                left: &[],
            },
        );
    }
}
