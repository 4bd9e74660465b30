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
//! Converse would reject the pair. The last message is left (reported, no repair) when it is a
//! user message: without it the request would end on the assistant's turn, a different request
//! (a prefill, which Claude with thinking refuses), so the caller must decide.
//!
//! **Why it is safe.** An empty message holds nothing; a merge keeps every block's bytes and
//! order.

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::converse::{ConverseCx, dotted, is_user};
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
        let last_user = is_user(m) && cx.next_alive(i).is_none();
        cx.find(
            RuleId::Br14,
            Severity::Error,
            Some(i),
            None,
            format!("{}: the message has no content block", dotted(i, None)),
            (!last_user)
                .then_some("remove the message (and merge its neighbours when they share a role)"),
        );
        if last_user {
            continue;
        }
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
    fn an_emptied_message_goes_in_the_same_pass_but_never_the_last_user_one() {
        check(
            r#"{"messages":[{"role":"user","content":[{"text":"a"}]},{"role":"assistant","content":[{"text":" "}]},{"role":"user","content":[{"text":"b"}]}]}"#,
            None,
            Expect {
                found: &[("BR-13", "messages[1].content[0]")],
                repaired: Some(
                    r#"{"messages":[{"role":"user","content":[{"text":"a"},{"text":"b"}]}]}"#,
                ),
                changes: &[
                    ("BR-13", "removed_block", "messages[1].content[0]"),
                    ("BR-14", "removed_message", "messages[1]"),
                    ("BR-14", "merged_message", "messages[0]"),
                ],
                left: &[],
            },
        );
        check(
            r#"{"messages":[{"role":"user","content":[{"text":"a"}]},{"role":"assistant","content":[{"text":"x"}]},{"role":"user","content":[{"text":""}]}]}"#,
            None,
            Expect {
                found: &[("BR-13", "messages[2].content[0]")],
                repaired: Some(
                    r#"{"messages":[{"role":"user","content":[{"text":"a"}]},{"role":"assistant","content":[{"text":"x"}]},{"role":"user","content":[]}]}"#,
                ),
                changes: &[("BR-13", "removed_block", "messages[2].content[0]")],
                left: &[("BR-14", "messages[2]")],
            },
        );
    }
}
