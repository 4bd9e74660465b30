//! ## BR-04: Converse, `reasoningText.text` is null
//!
//! **The API.** `ReasoningTextBlock.text` is required; a null is rejected by the schema check,
//! whatever the model: ``Value at
//! 'messages.X.member.content.Y.member.reasoningContent.reasoningText.text' failed to satisfy
//! constraint: Member must not be null``. It appears when a Claude turn with `display:
//! "omitted"` was saved with a null text. Source: api-rules-reasoning-2026-11.md §8.2 BR-04
//! (V-Obs for the error: danny-avila/LibreChat PR #13888; the repair is Inferred).
//!
//! **Repair.** Without a signature the block goes whole, reported: nothing verifies it and
//! nothing is lost. With a signature, the research's repair (`text: ""`, the omitted-display
//! form, on the belief that the signature does not cover the text) is Inferred, never seen
//! accepted, and writes into a reasoning block: it is opt-in
//! ([`Policy::bedrock_empty_reasoning_text`](crate::Policy::bedrock_empty_reasoning_text), off by
//! default) and reported as a lossy stand-in. Off, the finding stands with no repair.
//!
//! **Why it is safe.** Removal drops a whole unsigned block; the opt-in edit changes only the
//! `null` to `""` and is reported as lossy.

use turnkeeper_model::wire::Edit;

use crate::finding::Severity;
use crate::id::{ChangeAction, RuleId};
use crate::wire::converse::{ConverseCx, dotted};

/// Finds null reasoning texts; drops unsigned ones, and on opt-in fills signed ones with `""`.
pub fn run(cx: &mut ConverseCx<'_, '_>) {
    for (i, m) in cx.messages().iter().enumerate() {
        for k in cx.alive_blocks(i) {
            let Some(r) = m.blocks.get(k).and_then(|b| b.reasoning) else {
                continue;
            };
            if !r.text_is_null() {
                continue;
            }
            let signed = r.is_signed();
            let fill = signed && cx.policy.bedrock_empty_reasoning_text;
            cx.find(
                RuleId::Br04,
                Severity::Error,
                Some(i),
                Some(k),
                format!(
                    "{}: reasoningText.text is null. Bedrock: Value at 'messages.{i}.member.content.{k}.member.reasoningContent.reasoningText.text' failed to satisfy constraint: Member must not be null",
                    dotted(i, Some(k))
                ),
                if !signed {
                    Some("remove the unsigned reasoningContent block whole")
                } else if fill {
                    Some("set text to \"\" (lossy, opt-in: the signature is kept)")
                } else {
                    None
                },
            );
            if !signed {
                cx.remove_block(
                    RuleId::Br04,
                    i,
                    k,
                    "reasoningContent with a null text and no signature".into(),
                );
            } else if fill && let Some(v) = r.text {
                cx.edit_block(
                    i,
                    k,
                    Edit {
                        span: v.span,
                        text: "\"\"".into(),
                    },
                );
                cx.record(
                    RuleId::Br04,
                    ChangeAction::LossyStandIn,
                    i,
                    k,
                    "reasoningText.text null set to \"\" (the omitted-display form; Inferred, opt-in): the model sees no reasoning for this block".into(),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Policy;
    use crate::wire::converse::testing::{Expect, check, check_with, opts};

    const BODY: &str = r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":null,"signature":"c2ln"}}},{"reasoningContent":{"reasoningText":{"text":null}}},{"text":"a"}]},{"role":"user","content":[{"text":"q2"}]}]}"#;

    #[test]
    fn unsigned_null_text_goes_and_signed_is_only_reported_by_default() {
        check(
            BODY,
            None,
            Expect {
                found: &[
                    ("BR-04", "messages[1].content[0]"),
                    ("BR-04", "messages[1].content[1]"),
                ],
                repaired: Some(
                    r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":null,"signature":"c2ln"}}},{"text":"a"}]},{"role":"user","content":[{"text":"q2"}]}]}"#,
                ),
                changes: &[("BR-04", "removed_block", "messages[1].content[1]")],
                left: &[("BR-04", "messages[1].content[0]")],
            },
        );
    }

    #[test]
    fn the_empty_stand_in_is_opt_in_and_lossy() {
        let mut o = opts(None);
        o.policy = Policy {
            bedrock_empty_reasoning_text: true,
            ..Policy::default()
        };
        check_with(
            BODY,
            &o,
            Expect {
                found: &[
                    ("BR-04", "messages[1].content[0]"),
                    ("BR-04", "messages[1].content[1]"),
                ],
                repaired: Some(
                    r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"","signature":"c2ln"}}},{"text":"a"}]},{"role":"user","content":[{"text":"q2"}]}]}"#,
                ),
                changes: &[
                    ("BR-04", "lossy_stand_in", "messages[1].content[0]"),
                    ("BR-04", "removed_block", "messages[1].content[1]"),
                ],
                left: &[],
            },
        );
    }
}
