//! ## BR-12: Converse, a `toolResult` that answers no `toolUse` of the turn before (turnkeeper's number)
//!
//! **The API.** A `toolResult` must answer a `toolUse` of the assistant message right before its
//! message, once. Bedrock's text: ``The number of toolResult blocks at messages.N.content
//! exceeds the number of toolUse blocks of previous turn.`` Source: api-rules.md AN-10 (the
//! Converse wording) and research/errors-labelled-sets.json (a ConverseStream case at
//! `messages.14.content`). The Anthropic counterpart is AN-10.
//!
//! **Repair.** The orphan (or second) `toolResult` goes, reported. A message left with nothing
//! is BR-14's.
//!
//! **Why it is safe.** A result of a call the model never made is read by nothing; no reasoning
//! is touched.

use std::collections::HashSet;

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::converse::{ConverseCx, dotted, is_assistant, tool_id};
use turnkeeper_model::wire::converse::BlockKind;

/// Finds and removes tool results that answer nothing.
pub fn run(cx: &mut ConverseCx<'_, '_>) {
    let src = cx.src();
    let msgs = cx.messages();
    for (j, m) in msgs.iter().enumerate() {
        if !cx.alive(j) {
            continue;
        }
        let calls: HashSet<String> = match cx.prev_alive(j) {
            Some(p) if is_assistant(&msgs[p]) => cx
                .alive_blocks(p)
                .into_iter()
                .filter_map(|k| msgs[p].blocks.get(k))
                .filter(|b| b.kind == BlockKind::ToolUse)
                .map(|b| tool_id(src, b).into_owned())
                .collect(),
            _ => HashSet::new(),
        };
        let mut seen: HashSet<String> = HashSet::new();
        for k in cx.alive_blocks(j) {
            let Some(b) = m.blocks.get(k) else { continue };
            if b.kind != BlockKind::ToolResult {
                continue;
            }
            let id = tool_id(src, b).into_owned();
            let answers = calls.contains(&id);
            if answers && seen.insert(id.clone()) {
                continue;
            }
            let what = if answers {
                format!("a second toolResult for {id:?}")
            } else {
                format!("toolResult {id:?} answers no toolUse of the message before")
            };
            cx.find(
                RuleId::Br12,
                Severity::Error,
                Some(j),
                Some(k),
                format!(
                    "{what}. Bedrock: The number of toolResult blocks at {}.content exceeds the number of toolUse blocks of previous turn.",
                    dotted(j, None)
                ),
                Some("remove the toolResult block"),
            );
            cx.remove_block(RuleId::Br12, j, k, format!("{what}: it answers nothing"));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::converse::testing::{Expect, check};

    #[test]
    fn orphan_and_second_results_go() {
        check(
            r#"{"messages":[{"role":"user","content":[{"text":"go"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[]}}, {"toolResult":{"toolUseId":"a","content":[]}}, {"toolResult":{"toolUseId":"zz","content":[]}}]}],"toolConfig":{"tools":[]}}"#,
            None,
            Expect {
                found: &[
                    ("BR-12", "messages[2].content[1]"),
                    ("BR-12", "messages[2].content[2]"),
                ],
                repaired: Some(
                    r#"{"messages":[{"role":"user","content":[{"text":"go"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[]}}]}],"toolConfig":{"tools":[]}}"#,
                ),
                changes: &[
                    ("BR-12", "removed_block", "messages[2].content[1]"),
                    ("BR-12", "removed_block", "messages[2].content[2]"),
                ],
                left: &[],
            },
        );
    }

    #[test]
    fn a_result_in_the_first_message_answers_nothing() {
        check(
            r#"{"messages":[{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[]}},{"text":"hi"}]}],"toolConfig":{"tools":[]}}"#,
            None,
            Expect {
                found: &[("BR-12", "messages[0].content[0]")],
                repaired: Some(
                    r#"{"messages":[{"role":"user","content":[{"text":"hi"}]}],"toolConfig":{"tools":[]}}"#,
                ),
                changes: &[("BR-12", "removed_block", "messages[0].content[0]")],
                left: &[],
            },
        );
    }
}
