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
//! **Repair.** Leading non-user messages are removed (their thinking goes whole, reported), and
//! then a first user message made only of results for the calls that went with them. When no
//! message is a user message, nothing is done (reported, no repair).
//!
//! **Why it is safe.** Nothing is invented: no user message is prepended, so no signed thinking
//! ends up behind a new prefix (api-rules.md §5.2, AN-01 row).

use turnkeeper_model::Role;

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::rules::common::only_tool_results;

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
    use crate::rules::common::testing::{Expect, body, check_case};

    #[test]
    fn a_leading_assistant_message_and_its_results_go() {
        let input = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]},{"role":"user","content":"go on"}"#,
        );
        let after = body(
            "claude-sonnet-4-5",
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
}
