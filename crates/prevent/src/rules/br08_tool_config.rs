//! ## BR-08: Converse, tool blocks in the history without `toolConfig`
//!
//! **The API.** When the messages hold `toolUse` or `toolResult` blocks, `toolConfig` must be
//! present, even when no tool is offered this turn: ``toolConfig field must be defined when
//! using toolUse and toolResult content blocks``. Source: api-rules-reasoning-2026-11.md §8.2
//! BR-08 (V-Obs) and api-rules-2026-11.md §7 BC-01 (patriceckhart/zot#18); every model.
//!
//! **Repair.** None: the tool list is the caller's, and a made-up one would be invented data
//! (converting old tool blocks to text would rewrite the conversation). Reported.

use turnkeeper_model::wire::converse::BlockKind;

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::converse::ConverseCx;

/// Reports tool blocks without `toolConfig`.
pub fn run(cx: &mut ConverseCx<'_, '_>) {
    if cx.body.tool_config {
        return;
    }
    let uses = (0..cx.messages().len()).any(|i| {
        cx.alive_blocks(i).into_iter().any(|k| {
            cx.block(i, k)
                .is_some_and(|b| matches!(b.kind, BlockKind::ToolUse | BlockKind::ToolResult))
        })
    });
    if uses {
        cx.find_top(
            RuleId::Br08,
            Severity::Error,
            "toolConfig",
            "the messages hold toolUse/toolResult blocks and the request has no toolConfig: toolConfig field must be defined when using toolUse and toolResult content blocks".into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::converse::testing::{Expect, check};

    #[test]
    fn tool_blocks_need_a_tool_config() {
        let body = r#"{"messages":[{"role":"user","content":[{"text":"go"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[{"text":"1"}]}}]}]}"#;
        check(
            body,
            None,
            Expect {
                found: &[("BR-08", "toolConfig")],
                repaired: None,
                changes: &[],
                left: &[("BR-08", "toolConfig")],
            },
        );
    }
}
