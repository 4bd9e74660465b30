//! ## AN-19: an assistant message ends with a thinking block
//!
//! **The API.** An assistant message must not end with a thinking block (typically an
//! interrupted stream). Error: ``messages.N: The final block in an assistant message cannot be
//! `thinking`.`` Source: api-rules.md AN-19 (anthropics/claude-code#10199,
//! router-for-me/CLIProxyAPI#5321). Models that return progress-update thinking blocks between
//! tool calls (Fable 5.1, Opus 5.5, Sonnet 5.5: api-rules-2026-11.md §1.4) may end a message
//! with one, and it must go back unchanged: the profile's `trailing_thinking_ok` turns the rule
//! off for them.
//!
//! **Repair.** The trailing thinking blocks are removed whole (reported with their
//! fingerprints), and the message with them when nothing is left and it is not the last. A
//! message made of one thinking block in the last position is a prefill, left to AN-03/AN-20.
//!
//! **Why it is safe.** Thinking is never edited, only removed whole; a message the API accepts
//! on the target model is never touched.

use turnkeeper_model::{BlockKind, Format, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::rules::common::{remove_trailing_thinking, trailing_thinking_ok};

/// Finds and removes trailing thinking blocks.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    if f.transcript().format != Format::Anthropic || trailing_thinking_ok(ctx) {
        return;
    }
    let mut i = ctx.horizon;
    while i < f.len() {
        if f.role(i) != Role::Assistant || !f.summary(i).kinds.contains(BlockKind::Thinking) {
            i += 1;
            continue;
        }
        let Some(n) = f.block_count(i).checked_sub(1) else {
            i += 1;
            continue;
        };
        let thinking_last = f
            .block(i, n)
            .is_some_and(|b| b.kind() == BlockKind::Thinking);
        let prefill = n == 0 && i + 1 == f.len();
        if !thinking_last || prefill {
            i += 1;
            continue;
        }
        f.find(
            RuleId::An19,
            Severity::Error,
            i,
            Some(n),
            "The final block in an assistant message cannot be `thinking`",
            Some("remove the trailing thinking block"),
        );
        // A call before the trailing thinking: the model writes its thinking before the calls
        // it makes, so the blocks were put in another order on the way (a client or gateway
        // that sorts blocks) or the stream was cut after a new thinking block; a message that
        // ends on thinking with no call before it was cut off. Without the turn as the
        // provider sent it (AN-22 restores it from the store first), which cannot be told.
        let after_call = (0..n).any(|j| {
            f.block(i, j)
                .is_some_and(|b| b.kind() == BlockKind::ToolCall)
        });
        let reason = if after_call {
            "removed a thinking block that stands after the message's tool call (the turn's blocks were reordered on the way, or its stream cut off after the call); the model writes thinking before its calls"
        } else {
            "removed a trailing thinking block (an interrupted stream)"
        };
        // A removed message leaves its successor at `i`, to be looked at next.
        if !remove_trailing_thinking(ctx, f, RuleId::An19, i, reason) {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, body, check_case, thinking};

    #[test]
    fn a_trailing_thinking_block_is_removed() {
        let th = thinking("cut off");
        let msgs = |tail: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"text","text":"a"}}{tail}]}},{{"role":"user","content":"more"}}"#
            )
        };
        let input = body("claude-sonnet-4-5", "", &msgs(&format!(",{th}")));
        let after = body("claude-sonnet-4-5", "", &msgs(""));
        check_case(
            &input,
            Expect {
                rules: &["AN-19"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    /// `[tool_use, thinking]`: a turn whose blocks were reordered on the way (the model writes
    /// thinking first) is reported as that, not as an interrupted stream.
    #[test]
    fn thinking_after_the_call_is_reported_as_a_reorder() {
        let th = thinking("t");
        let call = r#"{"type":"tool_use","id":"toolu_1","name":"f","input":{}}"#;
        let msgs = |turn: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{turn}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}},{{"type":"text","text":"go on"}}]}}"#
            )
        };
        let input = body("claude-sonnet-4-5", "", &msgs(&format!("{call},{th}")));
        check_case(
            &input,
            Expect {
                rules: &["AN-19"],
                after: Some(&body("claude-sonnet-4-5", "", &msgs(call))),
                left: &[],
            },
        );
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
        let r = crate::repair(&t, &crate::Options::default()).expect("repairs");
        let reasons: Vec<&str> = r.report.changes.iter().map(|c| c.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "removed a thinking block that stands after the message's tool call (the turn's blocks were reordered on the way, or its stream cut off after the call); the model writes thinking before its calls"
            ]
        );
    }

    #[test]
    fn progress_update_thinking_on_the_5_5_models_passes_unchanged() {
        let th = thinking("");
        let input = body(
            "claude-opus-5-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{th},{{"type":"tool_use","id":"toolu_1","name":"a","input":{{}}}},{th},{{"type":"tool_use","id":"toolu_2","name":"b","input":{{}}}},{th}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}},{{"type":"tool_result","tool_use_id":"toolu_2","content":"y"}}]}}"#
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

    #[test]
    fn a_model_that_may_end_on_thinking_keeps_it() {
        let th = thinking("progress");
        let input = body(
            "claude-fable-5-1",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"text","text":"a"}},{th}]}},{{"role":"user","content":"more"}}"#
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

    #[test]
    fn a_turn_of_thinking_only_goes_whole_unless_it_is_the_last_message() {
        let th = thinking("cut");
        let input = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{th},{th}]}},{{"role":"user","content":"more"}}"#
            ),
        );
        let after = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":"q"},{"role":"user","content":"more"}"#,
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-19"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    #[test]
    fn one_thinking_block_goes_unless_it_is_the_final_prefill() {
        let th = thinking("cut");
        let msgs = |last: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{th}]}}{last}"#
            )
        };
        let input = body(
            "claude-sonnet-4-5",
            "",
            &msgs(r#",{"role":"user","content":"more"}"#),
        );
        let after = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":"q"},{"role":"user","content":"more"}"#,
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-19"],
                after: Some(&after),
                left: &[],
            },
        );
        // As the final message it is a prefill: not AN-19's (AN-03 removes a prefill).
        let prefill = body("claude-sonnet-4-5", "", &msgs(""));
        let t =
            turnkeeper_model::read(&prefill, turnkeeper_model::FormatHint::Auto).expect("reads");
        let rules: Vec<&str> = crate::check(&t, &crate::Options::default())
            .iter()
            .map(|f| f.rule.as_str())
            .collect();
        assert!(!rules.contains(&"AN-19"), "{rules:?}");
    }

    /// The rule is about assistant messages: a user message that ends with a thinking block is
    /// not its to report or repair; AN-06 removes the block (only assistant messages hold
    /// thinking). Kills `||` turned into `&&` in `run`'s skip of other messages, under which the
    /// user message's thinking was reported as trailing thinking too.
    #[test]
    fn a_user_message_ending_in_thinking_is_not_this_rules() {
        let th = thinking("t");
        let msgs = |extra: &str| {
            format!(
                r#"{{"role":"user","content":[{{"type":"text","text":"q"}}{extra}]}},{{"role":"assistant","content":"a"}},{{"role":"user","content":"more"}}"#
            )
        };
        check_case(
            &body("claude-sonnet-4-5", "", &msgs(&format!(",{th}"))),
            Expect {
                rules: &["AN-06"],
                after: Some(&body("claude-sonnet-4-5", "", &msgs(""))),
                left: &[],
            },
        );
    }
}
