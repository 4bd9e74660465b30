//! ## AN-05: an empty or whitespace-only text block
//!
//! **The API.** A text block must hold non-whitespace text, and `cache_control` is not allowed
//! on an empty text block. Errors: `messages: text content blocks must be non-empty`;
//! `messages: text content blocks must contain non-whitespace text`;
//! `messages.N.content.M.text: cache_control cannot be set for empty text blocks`. Source:
//! api-rules.md AN-05 (error corpus; prompt-caching docs). Real adaptive responses begin with a
//! whitespace text block before their first thinking block and are accepted as they are
//! (real-traffic/), so that lead-in is left alone.
//!
//! **Repair.** The block is removed. A `cache_control` it carried moves to the nearest cacheable
//! block of the same message (before it, else after it), or is reported dropped when there is
//! none. If the removal leaves the message ending in thinking, that thinking goes too (the AN-19
//! repair, reported under AN-05), and the message when nothing is left.
//!
//! **Why it is safe.** The block carries no content; thinking is never a target of the moved
//! breakpoint, and a text block with a signature (a Gemini part, GM-06) is never removed.

use turnkeeper_guard::is_guarded;
use turnkeeper_model::edit::object;
use turnkeeper_model::{BlockKind, Draft, NewBlock, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::rules::common::remove_trailing_thinking;

/// True for the whitespace text a real adaptive-mode response puts before its first thinking
/// block (real-traffic: `text "\n\n"`, then `thinking`). The API accepts it as it is.
fn adaptive_lead_in(d: &Draft<'_, '_>, i: usize, j: usize) -> bool {
    d.role(i) == Role::Assistant
        && d.block(i, j)
            .and_then(|b| b.text())
            .is_some_and(|t| !t.is_empty())
        && d.blocks(i)
            .skip(j + 1)
            .find(|b| b.kind() != BlockKind::Text || !b.is_blank())
            .is_some_and(|b| b.kind().is_thinking())
}

/// Removes empty and whitespace-only text blocks.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let mut i = ctx.horizon;
    'messages: while i < f.len() {
        if !f.summary(i).maybe_blank_text {
            i += 1;
            continue;
        }
        let mut j = 0;
        while j < f.block_count(i) {
            let Some(b) = f.block(i, j) else { break };
            if b.kind() != BlockKind::Text
                || !b.is_blank()
                || b.block.signature.is_some()
                || adaptive_lead_in(f, i, j)
            {
                j += 1;
                continue;
            }
            let empty = b.text().is_none_or(|t| t.is_empty());
            let cache = b.block.cache_control.map(|c| c.get(b.src).to_owned());
            let what = if empty {
                "an empty text block"
            } else {
                "a whitespace-only text block"
            };
            f.find(
                RuleId::An05,
                Severity::Error,
                i,
                Some(j),
                format!("{what}: \"text content blocks must contain non-whitespace text\""),
                Some("remove the block"),
            );
            if !f.remove_block(RuleId::An05, i, j, format!("removed {what}")) {
                j += 1;
                continue;
            }
            // The breakpoint moves first: thinking is never a target, so the trailing-thinking
            // removal below cannot take it away again.
            if let Some(cache) = cache {
                move_cache_control(f, i, j, &cache);
            }
            // Removing it can leave the message ending in thinking, and the message can go with
            // that thinking: its successor is at `i` now, and is looked at whole.
            if remove_trailing_thinking(
                ctx,
                f,
                RuleId::An05,
                i,
                "removed a thinking block left last in its message by removing blank text after it (AN-19)",
            ) {
                continue 'messages;
            }
        }
        i += 1;
    }
}

/// Puts `cache_control` on the nearest cacheable block of message `i` before position `j` (or
/// after it when none is before).
fn move_cache_control(f: &mut Fixer<'_, '_>, i: usize, j: usize, cache: &str) {
    let cacheable = |d: &Draft<'_, '_>, k: usize| {
        d.block(i, k).is_some_and(|b| {
            !is_guarded(b.block)
                && !b.is_blank()
                && b.block.cache_control.is_none()
                && b.kind() != BlockKind::Other
        })
    };
    let target = (0..j.min(f.block_count(i)))
        .rev()
        .find(|&k| cacheable(f, k))
        .or_else(|| (j..f.block_count(i)).find(|&k| cacheable(f, k)));
    let Some(k) = target else {
        f.dropped_field(
            RuleId::An05,
            i,
            "dropped a `cache_control` breakpoint: no cacheable block left in the message",
        );
        return;
    };
    let edited = f
        .block(i, k)
        .and_then(|b| object::set_key(b.raw(), "cache_control", cache))
        .and_then(|json| NewBlock::new(f.transcript().format, json).ok());
    if let Some(nb) = edited {
        f.edit_block(
            RuleId::An05,
            i,
            k,
            nb,
            "moved `cache_control` here from a removed empty text block",
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, body, check_case};

    #[test]
    fn a_whitespace_block_goes_and_its_breakpoint_moves_back() {
        let msgs = |blocks: &str| format!(r#"{{"role":"user","content":[{blocks}]}}"#);
        let input = body(
            "claude-sonnet-4-5",
            "",
            &msgs(
                r#"{"type":"text","text":"q"},{"type":"text","text":" ","cache_control":{"type":"ephemeral"}}"#,
            ),
        );
        let after = body(
            "claude-sonnet-4-5",
            "",
            &msgs(r#"{"type":"text","text":"q","cache_control":{"type":"ephemeral"}}"#),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-05"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    #[test]
    fn the_adaptive_lead_in_stays() {
        let th = crate::rules::common::testing::thinking("t");
        let input = body(
            "claude-opus-4-6",
            r#"{"type":"adaptive"}"#,
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"text","text":"\n\n"}},{th},{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// Removing a blank block can leave thinking last: it goes too (AN-19's repair, reported
    /// under AN-05), except where the model may end on thinking or the message is a final
    /// one-block prefill.
    #[test]
    fn thinking_left_last_by_a_removal_goes_only_where_it_must() {
        let th = crate::rules::common::testing::thinking("t");
        let msgs = |model_turn: &str, tail: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{model_turn}]}}{tail}"#
            )
        };
        let next = r#",{"role":"user","content":"more"}"#;
        let blank_after = format!(r#"{th},{{"type":"text","text":" "}}"#);
        check_case(
            &body("claude-sonnet-4-5", "", &msgs(&blank_after, next)),
            Expect {
                rules: &["AN-05"],
                after: Some(&body(
                    "claude-sonnet-4-5",
                    "",
                    &format!(r#"{{"role":"user","content":"q"}}{next}"#),
                )),
                left: &[],
            },
        );
        check_case(
            &body("claude-mythos-5-1", "", &msgs(&blank_after, next)),
            Expect {
                rules: &["AN-05"],
                after: Some(&body("claude-mythos-5-1", "", &msgs(&th, next))),
                left: &[],
            },
        );
        check_case(
            &body("claude-sonnet-4-5", "", &msgs(&blank_after, "")),
            Expect {
                rules: &["AN-05", "AN-20"],
                after: Some(&body(
                    "claude-sonnet-4-5",
                    "",
                    r#"{"role":"user","content":"q"},{"role":"assistant","content":[]}"#,
                )),
                left: &[],
            },
        );
        // There the thinking is AN-20's to remove (thinking is off), not AN-05's.
        let prefill = body("claude-sonnet-4-5", "", &msgs(&blank_after, ""));
        let t =
            turnkeeper_model::read(&prefill, turnkeeper_model::FormatHint::Auto).expect("reads");
        let r = crate::repair(&t, &crate::Options::default()).expect("repairs");
        let changes: Vec<String> = r
            .report
            .changes
            .iter()
            .map(|c| format!("{} {} {}", c.rule, c.action, c.path))
            .collect();
        assert_eq!(
            changes,
            [
                "AN-05 removed_block messages[1].content[1]",
                "AN-20 removed_block messages[1].content[0]",
            ]
        );
    }

    #[test]
    fn whitespace_before_text_is_no_lead_in_even_if_thinking_follows() {
        let th = crate::rules::common::testing::thinking("t");
        let msgs = |lead: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{lead}{{"type":"text","text":"hello"}},{th},{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            )
        };
        let adaptive = r#"{"type":"adaptive"}"#;
        check_case(
            &body(
                "claude-opus-4-6",
                adaptive,
                &msgs(r#"{"type":"text","text":"\n\n"},"#),
            ),
            Expect {
                rules: &["AN-05"],
                after: Some(&body("claude-opus-4-6", adaptive, &msgs(""))),
                left: &[],
            },
        );
    }

    /// A lead-in made of two whitespace text blocks before the first thinking block is still an
    /// adaptive lead-in: both stay (the body is unchanged). Kills `b.kind() != BlockKind::Text`
    /// turned into `==` in `adaptive_lead_in`, under which the look past block `j` stopped at the
    /// second blank text block and the first was removed as empty.
    #[test]
    fn a_lead_in_of_two_blank_text_blocks_before_thinking_stays() {
        let th = crate::rules::common::testing::thinking("t");
        let input = body(
            "claude-opus-4-6",
            r#"{"type":"adaptive"}"#,
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"text","text":"\n\n"}},{{"type":"text","text":" "}},{th},{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }
}
