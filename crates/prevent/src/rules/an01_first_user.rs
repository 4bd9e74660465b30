//! ## AN-01: the first message must use the user role
//!
//! **The API.** `messages[0].role` must be `user`; a mid-conversation `system` message may never
//! be first. Error: `messages: first message must use the "user" role`. Source: api-rules.md
//! AN-01 (CherryHQ/cherry-studio#39; mid-conversation system messages page).
//!
//! Exception: after on-demand compaction (beta `compact-2026-09-04`) the signed `compaction`
//! block is sent first, as an assistant message, in place of the summarised messages; that is
//! valid and left alone (api-rules-2026-11.md AN-36, compaction-on-demand page).
//!
//! **Repair.** Where no thinking block is bound to the prefix (the model does not bind
//! signatures to it, or no thinking follows), a minimal user message (`"Continue."`) is put
//! first, so the leading turn is kept. Otherwise leading non-user messages are removed (their
//! thinking goes whole, reported), and then a first user message made only of results for the
//! calls that went with them; when no message is a user message, nothing is done (reported, no
//! repair).
//!
//! **Why it is safe.** A user message is prepended only where no thinking block is bound to the
//! prefix it changes (api-rules.md §5.2, AN-01 row: "prepend a short user message only if no
//! thinking is bound after it"); thinking blocks are never touched by it.

use turnkeeper_model::Role;

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::rules::common::{has_thinking, only_tool_results, text_block};

/// Removes leading non-user messages.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    // Behind a compaction block the API reads from that block on (AN-34).
    if ctx.horizon > 0 || f.is_empty() || f.role(0) == Role::User {
        return;
    }
    // On-demand compaction: its block goes first, as an assistant message (the documented
    // exception to this rule, api-rules-2026-11.md AN-36).
    if f.role(0) == Role::Assistant && f.block(0, 0).is_some_and(|b| b.type_name() == "compaction")
    {
        return;
    }
    // Where no thinking is bound to the prefix (the model does not bind signatures to it, or no
    // thinking follows), a minimal user message in front keeps the turn instead of removing it
    // (api-rules.md §5.2, AN-01 row).
    let bound = ctx.profile.prefix_bound && (0..f.len()).any(|i| has_thinking(f, i));
    if !bound {
        f.find(
            RuleId::An01,
            Severity::Error,
            0,
            None,
            "messages: first message must use the \"user\" role",
            Some("add a minimal user message first (no thinking is bound to the prefix)"),
        );
        f.insert_message_with(
            RuleId::An01,
            0,
            Role::User,
            |d| text_block(d, "Continue.").into_iter().collect(),
            "added a minimal user message first: no thinking block is bound to the prefix it changes",
        );
        return;
    }
    if !(0..f.len()).any(|i| f.role(i) == Role::User) {
        f.find(
            RuleId::An01,
            Severity::Error,
            0,
            None,
            "the first message must use the \"user\" role, and no message does",
            None,
        );
        return;
    }
    f.find(
        RuleId::An01,
        Severity::Error,
        0,
        None,
        "messages: first message must use the \"user\" role",
        Some("remove the leading non-user messages"),
    );
    loop {
        while !f.is_empty() && f.role(0) != Role::User {
            if !f.remove_message(
                RuleId::An01,
                0,
                "removed a leading non-user message (the conversation must start with the user)",
            ) {
                return;
            }
        }
        // A first user message made only of results answers calls that are gone (AN-10).
        if f.len() > 1
            && only_tool_results(f, 0)
            && f.remove_message(
                RuleId::An01,
                0,
                "removed a first message holding only results for calls that were removed",
            )
        {
            continue;
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use crate::Options;
    use crate::rules::common::testing::{Expect, body, changes, check_case, thinking};

    const CALL: &str = r#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]},{"role":"user","content":"go on"}"#;

    #[test]
    fn without_thinking_a_minimal_user_message_goes_first() {
        let input = body("claude-sonnet-4-5", "", CALL);
        let after = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":[{{"type":"text","text":"Continue."}}]}},{CALL}"#
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-01"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    #[test]
    fn with_prefix_bound_thinking_the_leading_turn_and_its_results_go() {
        let th = thinking("t");
        let input = body(
            "claude-fable-5-1",
            "",
            &format!(
                r#"{{"role":"assistant","content":[{th},{{"type":"tool_use","id":"toolu_1","name":"f","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}},{{"role":"user","content":"go on"}}"#
            ),
        );
        let after = body(
            "claude-fable-5-1",
            "",
            r#"{"role":"user","content":"go on"}"#,
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-01"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    #[test]
    fn an_on_demand_compaction_block_may_come_first() {
        let input = body(
            "claude-opus-4-7",
            r#"{"type":"adaptive"}"#,
            r#"{"role":"assistant","content":[{"type":"compaction","content":"Summary.","encrypted_content":"EqQB"}]},{"role":"user","content":"go on"}"#,
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
    fn only_the_leading_turn_goes_and_the_conversation_after_it_stays() {
        let th = thinking("t");
        let rest = r#"{"role":"user","content":"go on"},{"role":"assistant","content":"ok"},{"role":"user","content":"next"}"#;
        let input = body(
            "claude-fable-5-1",
            "",
            &format!(
                r#"{{"role":"assistant","content":[{th},{{"type":"tool_use","id":"toolu_1","name":"f","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}},{rest}"#
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-01"],
                after: Some(&body("claude-fable-5-1", "", rest)),
                left: &[],
            },
        );
    }

    /// Behind a compaction block nothing is read, so a leading assistant message there is not
    /// this rule's (kills `ctx.horizon > 0` turned into `<`).
    #[test]
    fn a_leading_assistant_message_behind_a_compaction_block_is_left_alone() {
        let input = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"assistant","content":"x"},{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"compaction","content":"Summary."}]},{"role":"user","content":"go on"}"#,
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

    /// With thinking bound to the prefix and no user message anywhere, nothing is removed: the
    /// finding is left (only AN-03's trailing prefill goes). Kills `f.role(i) == Role::User`
    /// turned into `!=`, which removed the first assistant message instead.
    #[test]
    fn with_no_user_message_at_all_no_leading_message_is_removed() {
        let th = thinking("t");
        let first =
            format!(r#"{{"role":"assistant","content":[{th},{{"type":"text","text":"a"}}]}}"#);
        let input = body(
            "claude-fable-5-1",
            "",
            &format!(
                r#"{first},{{"role":"assistant","content":[{th},{{"type":"text","text":"b"}}]}}"#
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-01", "AN-03"],
                after: Some(&body("claude-fable-5-1", "", &first)),
                left: &["AN-01"],
            },
        );
    }

    /// The results that answered the removed leading turn go with it, as this rule's change, not
    /// left for AN-10 to find as orphans. Kills `f.len() > 1` turned into `<` or `==`.
    #[test]
    fn the_results_of_the_removed_turn_are_removed_under_this_rule() {
        let th = thinking("t");
        let input = body(
            "claude-fable-5-1",
            "",
            &format!(
                r#"{{"role":"assistant","content":[{th},{{"type":"tool_use","id":"toolu_1","name":"f","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}},{{"role":"user","content":"go on"}}"#
            ),
        );
        assert_eq!(
            changes(&input, &Options::default()),
            [
                "AN-01 removed_message messages[0]",
                "AN-01 removed_message messages[1]",
            ]
        );
    }
}
