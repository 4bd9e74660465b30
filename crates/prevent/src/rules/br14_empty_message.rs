//! ## BR-14: Converse, a message with no content (turnkeeper's number)
//!
//! **The API.** A Converse message needs at least one content block. The exact Converse wording
//! for an empty `content` array was not found in the research (api-rules*.md,
//! errors-labelled-sets.json); Claude behind Converse applies Anthropic's AN-04 (BR-02: "all
//! Anthropic thinking rules apply on Claude/Converse, wrapped"), and Converse requires strict
//! role alternation: ``A conversation must alternate between user and assistant roles. Make sure
//! the conversation alternates between user and assistant roles and try again.`` (api-rules.md
//! AN-02, AN-32; errors-labelled-sets.json).
//!
//! **Repair.** The message goes, reported. When that leaves two messages of one role side by
//! side, the later one's blocks are appended to the earlier one (reported as a merge), since
//! Converse would reject the pair.
//!
//! **Why it is safe.** An empty message holds nothing; a merge keeps every block's bytes and
//! order.

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::converse::{ConverseCx, dotted};
use turnkeeper_model::wire::converse::ConverseContent;

/// Finds and removes messages without content.
pub fn run(cx: &mut ConverseCx<'_, '_>) {
    for (i, m) in cx.messages().iter().enumerate() {
        if !cx.alive(i)
            || matches!(m.content, ConverseContent::Other(_))
            || !cx.alive_blocks(i).is_empty()
        {
            continue;
        }
        cx.find(
            RuleId::Br14,
            Severity::Error,
            Some(i),
            None,
            format!("{}: the message has no content block", dotted(i, None)),
            Some("remove the message (and merge its neighbours when they share a role)"),
        );
        cx.remove_message(RuleId::Br14, i, "a message with no content block".into());
        if !cx.repair {
            continue;
        }
        let (Some(p), Some(n)) = (cx.prev_alive(i), cx.next_alive(i)) else {
            continue;
        };
        let msgs = cx.messages();
        if msgs[p].role == msgs[n].role {
            cx.merge_into(
                RuleId::Br14,
                p,
                n,
                format!("appended messages[{n}], which followed with the same role once messages[{i}] went"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::converse::testing::{Expect, check};

    #[test]
    fn an_empty_message_goes_and_its_same_role_neighbours_merge() {
        check(
            r#"{"messages":[{"role":"user","content":[{"text":"a"}]},{"role":"assistant","content":[]},{"role":"user","content":[{"text":"b"}, {"cachePoint":{"type":"default"}}]}]}"#,
            None,
            Expect {
                found: &[("BR-14", "messages[1]")],
                repaired: Some(
                    r#"{"messages":[{"role":"user","content":[{"text":"a"},{"text":"b"},{"cachePoint":{"type":"default"}}]}]}"#,
                ),
                changes: &[
                    ("BR-14", "removed_message", "messages[1]"),
                    ("BR-14", "merged_message", "messages[0]"),
                ],
                left: &[],
            },
        );
    }

    #[test]
    fn a_message_emptied_by_blank_text_goes_in_the_same_pass() {
        check(
            r#"{"messages":[{"role":"user","content":[{"text":"a"}]},{"role":"assistant","content":[{"text":"x"}]},{"role":"user","content":[{"text":""}]}]}"#,
            None,
            Expect {
                found: &[("BR-13", "messages[2].content[0]")],
                repaired: Some(
                    r#"{"messages":[{"role":"user","content":[{"text":"a"}]},{"role":"assistant","content":[{"text":"x"}]}]}"#,
                ),
                changes: &[
                    ("BR-13", "removed_block", "messages[2].content[0]"),
                    ("BR-14", "removed_message", "messages[2]"),
                ],
                left: &[],
            },
        );
    }
}
