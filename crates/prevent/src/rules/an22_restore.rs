//! ## AN-22: thinking differs from the provider's original
//!
//! **The API.** In the latest assistant message the run of `thinking` and `redacted_thinking`
//! blocks must be exactly what the model produced: same order, same count, byte-identical
//! `thinking`, `signature` and `data`. Error: ``messages.N.content.M: `thinking` or
//! `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks
//! must remain as they were in the original response.`` (older wording: "…the blocks must match
//! the parameters during the original request."). Source: api-rules.md AN-22 (thinking
//! overview, troubleshooting and preserved-thinking pages; anthropics/claude-code#2746 for the
//! older wording, api-rules-2026-11.md §1.6).
//!
//! **Repair.** When the turn store holds the provider's original of an assistant message that
//! still carries thinking and it differs in its thinking, the message is put back as the
//! provider returned it. A turn whose thinking was dropped whole is left alone: the API accepts
//! a turn without its thinking (real traffic: pydantic-ai's `agui_0_1_10_drops_prefix` replays
//! its latest turn so, and gets a 200), and where thinking is required (an open tool loop),
//! AN-16 restores it. Without a
//! stored original, a latest turn that looks edited (thinking not first, an unsigned thinking
//! block) is reported as unverifiable (a warning), never guessed at.
//!
//! **Why it is safe.** The restored bytes are the provider's own; the guard is told to accept
//! exactly them, and the replaced thinking blocks are counted as removed.

use turnkeeper_model::{BlockKind, Format, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::rules::common::{first_kind, has_thinking, stored_original};

/// Restores assistant turns whose thinking differs from the stored original.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let last_assistant = (0..f.len()).rev().find(|&i| f.role(i) == Role::Assistant);
    for i in ctx.horizon..f.len() {
        if f.role(i) != Role::Assistant {
            continue;
        }
        if has_thinking(f, i)
            && let Some((blocks, guarded)) = stored_original(ctx, f, i)
        {
            f.find(RuleId::An22, Severity::Error, i, None,
                "`thinking` or `redacted_thinking` blocks differ from the original response: they must remain as they were",
                Some("restore the turn from the store"));
            f.restore_message(RuleId::An22, i, blocks, guarded);
        } else if Some(i) == last_assistant && f.transcript().format == Format::Anthropic {
            let edited_looking = has_thinking(f, i)
                && (first_kind(f, i).is_some_and(|k| {
                    !k.is_thinking() && k != BlockKind::Text && k != BlockKind::ServerToolCall
                }) || f.blocks(i).any(|b| {
                    b.kind() == BlockKind::Thinking && b.signature().is_none_or(|x| x.is_empty())
                }));
            if edited_looking {
                f.find(RuleId::An22, Severity::Warning, i, None,
                    "the latest assistant turn looks edited and no stored original is available: unverifiable",
                    None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, body, changes, check_with, store_of, thinking};
    use crate::{Options, Severity, check};

    #[test]
    fn a_turn_whose_thinking_was_dropped_whole_is_not_restored() {
        let th = thinking("t");
        let store = store_of(&format!(r#"{th},{{"type":"text","text":"289"}}"#));
        let opts = Options {
            store: Some(&store),
            ..Options::default()
        };
        let turn = |content: &str| {
            body(
                "claude-sonnet-4-5",
                r#"{"type":"enabled","budget_tokens":1024}"#,
                &format!(
                    r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{content}]}},{{"role":"user","content":"ok"}}"#
                ),
            )
        };
        // Dropped whole: the API accepts it as it is.
        let dropped = turn(r#"{"type":"text","text":"289"}"#);
        let t =
            turnkeeper_model::read(&dropped, turnkeeper_model::FormatHint::Auto).expect("reads");
        let r = crate::repair(&t, &opts).expect("repairs");
        assert!(r.report.changes.is_empty(), "{:?}", r.report.changes);
        assert_eq!(r.body, dropped);
        // Edited: put back.
        let edited = turn(&format!(r#"{{"type":"text","text":"289"}},{th}"#));
        let t = turnkeeper_model::read(&edited, turnkeeper_model::FormatHint::Auto).expect("reads");
        let r = crate::repair(&t, &opts).expect("repairs");
        let rules: Vec<String> = r
            .report
            .changes
            .iter()
            .map(|c| c.rule.to_string())
            .collect();
        assert_eq!(rules, ["AN-22"]);
        assert!(
            r.body.contains(&format!(
                r#""content":[{th},{{"type":"text","text":"289"}}]"#
            )),
            "{}",
            r.body
        );
    }

    #[test]
    fn an_edited_looking_latest_turn_without_a_store_is_only_a_warning() {
        let th = thinking("t");
        let input = body(
            "claude-opus-4-6",
            r#"{"type":"adaptive"}"#,
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_1","name":"f","input":{{}}}},{th},{{"type":"text","text":"a"}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}}"#
            ),
        );
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
        let found: Vec<(String, Severity)> = check(&t, &Options::default())
            .into_iter()
            .map(|f| (f.rule.to_string(), f.severity))
            .collect();
        assert_eq!(found, [("AN-22".to_owned(), Severity::Warning)]);
    }

    /// Without a store, only the latest assistant turn is looked at for signs of an edit: of two
    /// turns of the same shape (a call before its thinking), the latest draws the warning and
    /// the earlier one nothing. Kills `&&` turned into `||` in `run`'s test for the latest turn,
    /// under which every assistant turn of an Anthropic body was looked at and the earlier one
    /// drew a warning too.
    #[test]
    fn only_the_latest_turn_is_warned_of_looking_edited() {
        let th = thinking("t");
        let turn = |id: &str| {
            format!(
                r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"f","input":{{}}}},{th},{{"type":"text","text":"a"}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"x"}}]}}"#
            )
        };
        let input = body(
            "claude-opus-4-6",
            r#"{"type":"adaptive"}"#,
            &format!(
                r#"{{"role":"user","content":"q"}},{},{}"#,
                turn("toolu_1"),
                turn("toolu_2")
            ),
        );
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
        let found: Vec<String> = check(&t, &Options::default())
            .into_iter()
            .map(|f| format!("{} {:?} {}", f.rule, f.severity, f.path))
            .collect();
        assert_eq!(found, ["AN-22 Warning messages[3]"]);
    }

    /// The shape compared with the stored original leaves out blank text: a turn that lost only
    /// the adaptive lead-in ("\n\n") the provider put before its thinking is the stored turn, and
    /// is not restored (no change, the body as it came). Kills `b.kind() == BlockKind::Text`
    /// turned into `!=` in `common::shape`, under which the blank lead-in counted and the
    /// turn was put back with it.
    #[test]
    fn a_turn_that_lost_only_its_blank_lead_in_is_not_restored() {
        let th = thinking("t");
        let call = r#"{"type":"tool_use","id":"toolu_1","name":"f","input":{}}"#;
        let store = store_of(&format!(r#"{{"type":"text","text":"\n\n"}},{th},{call}"#));
        let opts = Options {
            store: Some(&store),
            ..Options::default()
        };
        let input = body(
            "claude-opus-4-6",
            r#"{"type":"adaptive"}"#,
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{th},{call}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}}]}}"#
            ),
        );
        assert_eq!(changes(&input, &opts), Vec::<String>::new());
        check_with(
            &input,
            &opts,
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// Regression: a stored turn holding a thinking block with an empty signature (as a gateway
    /// may return) was put back by AN-22 in the second pass over AN-23's removal of that block,
    /// and removed again, until the pass limit. A stored turn whose thinking cannot verify is no
    /// original to restore: the repair ends after AN-23's one removal.
    #[test]
    fn a_stored_turn_whose_thinking_cannot_verify_is_not_put_back() {
        let blocks = format!(
            r#"{{"type":"thinking","thinking":"a","signature":""}},{},{{"type":"text","text":"x"}}"#,
            thinking("b")
        );
        let store = store_of(&blocks);
        let opts = Options {
            store: Some(&store),
            ..Options::default()
        };
        let turn = |content: &str| {
            body(
                "claude-sonnet-4-5",
                r#"{"type":"enabled","budget_tokens":2048}"#,
                &format!(
                    r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{content}]}},{{"role":"user","content":"more"}}"#
                ),
            )
        };
        let input = turn(&blocks);
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
        let r = crate::repair(&t, &opts).expect("repairs");
        assert_eq!(
            r.body,
            turn(&format!(
                r#"{},{{"type":"text","text":"x"}}"#,
                thinking("b")
            ))
        );
        assert!(
            r.report.findings_left.is_empty(),
            "{:?}",
            r.report.findings_left
        );
        assert_eq!(
            changes(&input, &opts),
            ["AN-23 removed_block messages[1].content[0]"]
        );
    }
}
