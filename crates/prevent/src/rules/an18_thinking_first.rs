//! ## AN-18: manual thinking, thinking is not the first block of its message
//!
//! **The API.** If an assistant message holds any thinking block, its first block must be
//! `thinking` or `redacted_thinking`. Error: ``messages.N.content.0: If an assistant message
//! contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`.
//! Found `text`.`` Source: api-rules.md AN-18 (anthropics/claude-code#20734;
//! lbjlaq/Antigravity-Manager#653). In adaptive mode real responses begin with whitespace text
//! or a server tool call and are accepted as they are (real-traffic/), so the rule applies in
//! manual mode only.
//!
//! **Repair.** The stored original of the turn is restored; without one, the message's thinking
//! blocks are removed whole (and the whitespace that led into them, and the message if nothing is
//! left). AN-16 then handles an open loop.
//!
//! **Why it is safe.** Moving a thinking block to the front would be an edit the API rejects
//! (AN-22 "rearrange"); removing it whole is allowed and reported.

use turnkeeper_model::Role;

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::profile::Mode;
use crate::rules::common::{drop_thinking, first_kind, has_thinking, restore};

/// Restores, or strips the thinking of, messages whose thinking is not first.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    if ctx.mode != Mode::Manual {
        return;
    }
    // From the end, so a message that ends up empty and goes leaves earlier indices valid.
    for i in (ctx.horizon..f.len()).rev() {
        if f.role(i) != Role::Assistant
            || !has_thinking(f, i)
            || first_kind(f, i).is_some_and(|k| k.is_thinking())
        {
            continue;
        }
        let found = f
            .block(i, 0)
            .map(|b| b.type_name().into_owned())
            .unwrap_or_default();
        f.find(RuleId::An18, Severity::Error, i, Some(0),
            format!("If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `{found}`."),
            Some("restore the original turn; otherwise remove this message's thinking blocks"));
        if restore(ctx, f, RuleId::An18, i) {
            continue;
        }
        drop_thinking(
            f,
            RuleId::An18,
            i,
            "removed a thinking block that did not lead its message (moving it would be an edit the API rejects)",
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{
        Expect, MANUAL, body, changes, check_case, store_of, thinking,
    };

    #[test]
    fn thinking_after_text_goes_whole_in_manual_mode_and_stays_in_adaptive() {
        let th = thinking("t");
        let msgs = |blocks: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{blocks}]}},{{"role":"user","content":"more"}}"#
            )
        };
        let input = body(
            "claude-sonnet-4-5",
            MANUAL,
            &msgs(&format!(
                r#"{{"type":"text","text":"a"}},{th},{{"type":"text","text":"b"}}"#
            )),
        );
        let after = body(
            "claude-sonnet-4-5",
            MANUAL,
            &msgs(r#"{"type":"text","text":"a"},{"type":"text","text":"b"}"#),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-18"],
                after: Some(&after),
                left: &[],
            },
        );
        let adaptive = body(
            "claude-opus-4-6",
            r#"{"type":"adaptive"}"#,
            &msgs(&format!(
                r#"{{"type":"text","text":"a"}},{th},{{"type":"text","text":"b"}}"#
            )),
        );
        check_case(
            &adaptive,
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// Regression (found while killing the mutant `restore -> false` in rules/common.rs): after
    /// AN-02 merged two assistant messages, the merged message's first input message has a
    /// stored turn; restoring that turn put back `[t0, "a"]` and dropped the merged-in thinking
    /// and text `"b"` with only "restored" in the report. A merged message is not restored: AN-18
    /// removes the misplaced thinking block, reported, and keeps the text.
    #[test]
    fn a_merged_message_is_not_restored_over_what_was_merged_in() {
        use crate::{Options, Policy};

        let store = store_of(&format!(
            r#"{},{{"type":"text","text":"a"}}"#,
            thinking("t0")
        ));
        let opts = Options {
            store: Some(&store),
            policy: Policy {
                merge_same_role: Some(true),
                ..Policy::default()
            },
            ..Options::default()
        };
        let input = body(
            "claude-sonnet-4-5",
            MANUAL,
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"text","text":"a"}}]}},{{"role":"assistant","content":[{},{{"type":"text","text":"b"}}]}},{{"role":"user","content":"next"}}"#,
                thinking("t1")
            ),
        );
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
        let r = crate::repair(&t, &opts).expect("repairs");
        assert_eq!(
            r.body,
            body(
                "claude-sonnet-4-5",
                MANUAL,
                r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"user","content":"next"}"#,
            )
        );
        assert_eq!(
            changes(&input, &opts),
            [
                "AN-02 merged_message messages[1]",
                "AN-18 removed_block messages[2].content[0]",
            ]
        );
    }

    /// Regression: AN-23 removed a stored turn's thinking block whose signature cannot verify,
    /// and AN-18 put the stored turn back over it, block included, in every pass up to the
    /// limit: the body came out as it went in, with eight changes reported and the AN-23
    /// finding left. The store restores what the client changed, not what this repair changed,
    /// so AN-18 removes the misplaced thinking block instead (found by helper analysis of the
    /// surviving mutant `restore -> false`).
    #[test]
    fn a_turn_stored_as_it_came_is_not_put_back_over_this_repairs_removal() {
        use crate::Options;

        let blocks = format!(
            r#"{{"type":"thinking","thinking":"a","signature":""}},{{"type":"text","text":"x"}},{},{{"type":"tool_use","id":"toolu_1","name":"f","input":{{}}}}"#,
            thinking("b")
        );
        let store = store_of(&blocks);
        let opts = Options {
            store: Some(&store),
            ..Options::default()
        };
        let msgs = |content: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{content}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}}]}},{{"role":"assistant","content":"ok"}},{{"role":"user","content":"more"}}"#
            )
        };
        let input = body("claude-sonnet-4-5", MANUAL, &msgs(&blocks));
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
        let r = crate::repair(&t, &opts).expect("repairs");
        assert_eq!(
            r.body,
            body(
                "claude-sonnet-4-5",
                MANUAL,
                &msgs(
                    r#"{"type":"text","text":"x"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}}"#
                )
            )
        );
        assert!(
            r.report.findings_left.is_empty(),
            "{:?}",
            r.report.findings_left
        );
        assert_eq!(
            changes(&input, &opts),
            [
                "AN-23 removed_block messages[1].content[0]",
                "AN-18 removed_block messages[1].content[2]",
            ]
        );
    }
}
