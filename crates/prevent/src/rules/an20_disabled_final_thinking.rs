//! ## AN-20: thinking off, thinking in the final assistant message
//!
//! **The API.** With thinking disabled (or omitted on a default-off model), a final-position
//! assistant message (a prefill) must not contain thinking blocks; earlier ones are accepted.
//! Error: ``messages.N.content.0: When thinking is disabled, an `assistant` message in the final
//! position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your
//! request.`` Source: api-rules.md AN-20 (extended-thinking page; forgecode#1853).
//!
//! **Repair.** On a model that allows prefill (AN-03 handles the others), the final assistant
//! message's thinking blocks are removed whole, then the whitespace that led into them, then the
//! message if nothing is left.
//!
//! **Why it is safe.** Thinking is removed whole and reported, never turned into text
//! (api-rules.md §5.2 AN-20 row).

use turnkeeper_model::Role;

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::profile::Mode;
use crate::rules::common::{drop_thinking, has_thinking, is_pause_turn};

/// Removes thinking from a final assistant message when thinking is off.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    if ctx.mode != Mode::Off || !ctx.profile.prefill_ok {
        return;
    }
    let Some(i) = f.len().checked_sub(1) else {
        return;
    };
    if i == 0 || f.role(i) != Role::Assistant || !has_thinking(f, i) {
        return;
    }
    if is_pause_turn(f, i) {
        return;
    }
    f.find(RuleId::An20, Severity::Error, i, Some(0),
        "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`",
        Some("remove the thinking blocks from the final assistant message"));
    drop_thinking(
        f,
        RuleId::An20,
        i,
        "removed thinking from the final assistant message: thinking is disabled",
    );
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, body, check_case, thinking};

    #[test]
    fn thinking_goes_from_a_final_prefill_when_thinking_is_off() {
        let th = thinking("t");
        let input = body(
            "claude-sonnet-4-5",
            r#"{"type":"disabled"}"#,
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{th},{{"type":"text","text":"The answer is"}}]}}"#
            ),
        );
        let after = body(
            "claude-sonnet-4-5",
            r#"{"type":"disabled"}"#,
            r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"The answer is"}]}"#,
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-20"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    #[test]
    fn the_whitespace_that_led_into_the_thinking_goes_with_it() {
        let th = thinking("t");
        let input = body(
            "claude-sonnet-4-5",
            r#"{"type":"disabled"}"#,
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"text","text":"\n\n"}},{th},{{"type":"text","text":" "}},{{"type":"text","text":"The answer is"}}]}}"#
            ),
        );
        let after = body(
            "claude-sonnet-4-5",
            r#"{"type":"disabled"}"#,
            r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"The answer is"}]}"#,
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-05", "AN-20"],
                after: Some(&after),
                left: &[],
            },
        );
        // Which rule removed what: the lead-in goes with the thinking it led into (AN-20).
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
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
                "AN-05 removed_block messages[1].content[2]",
                "AN-20 removed_block messages[1].content[1]",
                "AN-20 removed_block messages[1].content[0]",
            ]
        );
    }

    #[test]
    fn only_a_final_assistant_message_after_another_is_concerned() {
        let th = thinking("t");
        // A lone assistant message is AN-01's (the conversation must start with the user).
        let lone = body(
            "claude-sonnet-4-5",
            r#"{"type":"disabled"}"#,
            &format!(r#"{{"role":"assistant","content":[{th},{{"type":"text","text":"a"}}]}}"#),
        );
        let t = turnkeeper_model::read(&lone, turnkeeper_model::FormatHint::Auto).expect("reads");
        let rules: Vec<&str> = crate::check(&t, &crate::Options::default())
            .iter()
            .map(|f| f.rule.as_str())
            .collect();
        assert!(!rules.contains(&"AN-20"), "{rules:?}");
        for messages in [
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{th},{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            ),
            r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"The answer is"}]}"#.to_owned(),
        ] {
            check_case(
                &body("claude-sonnet-4-5", r#"{"type":"disabled"}"#, &messages),
                Expect {
                    rules: &[],
                    after: None,
                    left: &[],
                },
            );
        }
    }
}
