//! ## BR-13: Converse, a blank text block (turnkeeper's number)
//!
//! **The API.** Bedrock Converse rejects a `{text}` content block that is empty or whitespace
//! only, whatever the model: ``The text field in the ContentBlock object at messages.N.content.M
//! is blank. Add text to the text field, and try again.`` Source: api-rules.md AN-05 (the
//! Converse wording) and research/errors-labelled-sets.json (a recorded case at
//! `messages.15.content.0`). The Anthropic counterpart is AN-05.
//!
//! **Repair.** The block goes, reported. A message left with nothing is BR-14's.
//!
//! **Why it is safe.** A blank text carries nothing the model reads; no reasoning is touched.

use crate::finding::Severity;
use crate::id::RuleId;
use crate::wire::converse::{ConverseCx, dotted};
use turnkeeper_model::wire::converse::BlockKind;

/// Finds and removes blank text blocks.
pub fn run(cx: &mut ConverseCx<'_, '_>) {
    for (i, m) in cx.messages().iter().enumerate() {
        for k in cx.alive_blocks(i) {
            let Some(b) = m.blocks.get(k) else { continue };
            if b.kind != BlockKind::Text || b.members != 1 || !b.text_blank {
                continue;
            }
            cx.find(
                RuleId::Br13,
                Severity::Error,
                Some(i),
                Some(k),
                format!(
                    "The text field in the ContentBlock object at {} is blank. Add text to the text field, and try again.",
                    dotted(i, Some(k))
                ),
                Some("remove the blank text block"),
            );
            cx.remove_block(
                RuleId::Br13,
                i,
                k,
                "a blank text block: Converse rejects it".into(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::converse::testing::{Expect, check};

    #[test]
    fn blank_text_goes_and_real_text_stays() {
        check(
            r#"{"messages":[{"role":"user","content":[{"text":" \n"},{"text":"hi"}]}]}"#,
            None,
            Expect {
                found: &[("BR-13", "messages[0].content[0]")],
                repaired: Some(r#"{"messages":[{"role":"user","content":[{"text":"hi"}]}]}"#),
                changes: &[("BR-13", "removed_block", "messages[0].content[0]")],
                left: &[],
            },
        );
        check(
            r#"{"messages":[{"role":"user","content":[{"text":"\u00a0x"}]}]}"#,
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
