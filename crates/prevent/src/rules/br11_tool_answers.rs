//! ## BR-11: Converse, a `toolUse` without its `toolResult` in the next message (turnkeeper's number)
//!
//! **The API.** Every provider behind Converse pairs tool calls: a `toolUse` of an assistant
//! message must be answered by a `toolResult` with its `toolUseId` in the next message, a user
//! message. Converse's own wording for a missing result was not found in the research (the brief's
//! "Expected toolResult blocks at messages.N.content for the following Ids" is not in
//! api-rules*.md or the error corpora, so it is not quoted as Bedrock's). Claude behind Converse
//! returns Anthropic's AN-08 text wrapped (api-rules-reasoning-2026-11.md BR-02): ``messages.N:
//! `tool_use` ids were found without `tool_result` blocks immediately after: <ids>. Each
//! `tool_use` block must have a corresponding `tool_result` block in the next message.``
//! (api-rules.md AN-08). Only an assistant message that something follows is judged: a
//! trailing one is the model's own turn.
//!
//! **Repair.** The unanswered `toolUse` goes, reported, when its message holds no signed
//! reasoning; a message with signed reasoning is the provider's turn as signed, so it is reported
//! and left (no repair: removing a call there would change a turn the signature covers, and a
//! made-up result would be invented data). A result further down is then BR-12's.
//!
//! **Why it is safe.** A call nobody answered did not happen as far as the conversation goes; no
//! reasoning is touched.

use std::collections::HashSet;

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::converse::{ConverseCx, dotted, is_assistant, is_user, tool_id};
use turnkeeper_model::wire::converse::BlockKind;

/// Finds (and removes where safe) tool calls without a result right after.
pub fn run(cx: &mut ConverseCx<'_, '_>) {
    let src = cx.src();
    let msgs = cx.messages();
    for (i, m) in msgs.iter().enumerate() {
        if !cx.alive(i) || !is_assistant(m) {
            continue;
        }
        let Some(n) = cx.next_alive(i) else { continue };
        let answers: HashSet<String> = if is_user(&msgs[n]) {
            cx.alive_blocks(n)
                .into_iter()
                .filter_map(|k| msgs[n].blocks.get(k))
                .filter(|b| b.kind == BlockKind::ToolResult)
                .map(|b| tool_id(src, b).into_owned())
                .collect()
        } else {
            HashSet::new()
        };
        let signed = m.has_signed_reasoning();
        for k in cx.alive_blocks(i) {
            let Some(b) = m.blocks.get(k) else { continue };
            if b.kind != BlockKind::ToolUse {
                continue;
            }
            let id = tool_id(src, b);
            if answers.contains(id.as_ref()) {
                continue;
            }
            cx.find(
                RuleId::Br11,
                Severity::Error,
                Some(i),
                Some(k),
                format!(
                    "{}: toolUse {id:?} has no toolResult in the next message ({}); every provider behind Converse rejects an unanswered tool call",
                    dotted(i, Some(k)),
                    dotted(n, None)
                ),
                (!signed).then_some("remove the toolUse block"),
            );
            if !signed {
                cx.remove_block(
                    RuleId::Br11,
                    i,
                    k,
                    format!(
                        "toolUse {id:?} was never answered by a toolResult in the next message"
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::converse::testing::{Expect, check};

    #[test]
    fn an_unanswered_call_goes_unless_its_turn_is_signed() {
        check(
            r#"{"messages":[{"role":"user","content":[{"text":"go"}]},{"role":"assistant","content":[{"text":"ok"},{"toolUse":{"toolUseId":"a","name":"f","input":{}}},{"toolUse":{"toolUseId":"b","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[{"text":"1"}]}}]}],"toolConfig":{"tools":[]}}"#,
            None,
            Expect {
                found: &[("BR-11", "messages[1].content[2]")],
                repaired: Some(
                    r#"{"messages":[{"role":"user","content":[{"text":"go"}]},{"role":"assistant","content":[{"text":"ok"},{"toolUse":{"toolUseId":"a","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[{"text":"1"}]}}]}],"toolConfig":{"tools":[]}}"#,
                ),
                changes: &[("BR-11", "removed_block", "messages[1].content[2]")],
                left: &[],
            },
        );
        let signed = r#"{"messages":[{"role":"user","content":[{"text":"go"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"t","signature":"c2ln"}}},{"toolUse":{"toolUseId":"b","name":"f","input":{}}}]},{"role":"user","content":[{"text":"next"}]}],"toolConfig":{"tools":[]}}"#;
        check(
            signed,
            None,
            Expect {
                found: &[("BR-11", "messages[1].content[1]")],
                repaired: None,
                changes: &[],
                left: &[("BR-11", "messages[1].content[1]")],
            },
        );
    }

    #[test]
    fn a_trailing_call_is_the_models_own_turn() {
        check(
            r#"{"messages":[{"role":"user","content":[{"text":"go"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"f","input":{}}}]}],"toolConfig":{"tools":[]}}"#,
            None,
            Expect {
                found: &[],
                repaired: None,
                changes: &[],
                left: &[],
            },
        );
    }
}
