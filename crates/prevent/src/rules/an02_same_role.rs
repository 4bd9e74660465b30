//! ## AN-02: consecutive messages with the same role
//!
//! **The API.** Consecutive same-role messages are merged into one turn; the Messages API does
//! not reject them, but old relays and Bedrock Converse do: `messages: roles must alternate
//! between "user" and "assistant", but found multiple "user" roles in a row`; Converse: `A
//! conversation must alternate between user and assistant roles…`. Source: api-rules.md AN-02
//! (SDK `message_create_params.py` docstring; error corpus).
//!
//! **Repair.** Only when the profile or the policy asks for alternation: the second message's
//! blocks are appended to the first, in order, and the second message removed (one change).
//!
//! **Why it is safe.** Blocks keep their order and bytes; it is what the API itself does.
//! It is off by default, so an input the API accepts is left untouched.

use turnkeeper_model::Role;

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;

/// Merges same-role neighbours where the target requires alternation.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let wanted = ctx
        .policy
        .merge_same_role
        .unwrap_or(ctx.profile.merge_same_role);
    if !wanted {
        return;
    }
    let mut i = ctx.horizon + 1;
    while i < f.len() {
        if f.role(i) == f.role(i - 1) && matches!(f.role(i), Role::User | Role::Assistant) {
            f.find(
                RuleId::An02,
                Severity::Error,
                i,
                None,
                "consecutive messages with the same role: this target requires alternation",
                Some("merge into the previous message"),
            );
            if f.merge_into_previous(RuleId::An02, i) {
                continue;
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::Options;
    use crate::rules::common::testing::{Expect, body, check_with};

    #[test]
    fn same_role_neighbours_merge_when_the_policy_asks() {
        let mut opts = Options::default();
        opts.policy.merge_same_role = Some(true);
        let input = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"text","text":"b"}]}"#,
        );
        let after = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#,
        );
        check_with(
            &input,
            &opts,
            Expect {
                rules: &["AN-02"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    #[test]
    fn alternating_messages_and_the_compacted_past_are_left_alone() {
        let mut opts = Options::default();
        opts.policy.merge_same_role = Some(true);
        let input = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"assistant","content":"d"}"#,
        );
        check_with(
            &input,
            &opts,
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
        // Two user messages before the latest compaction are not read.
        let compacted = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"assistant","content":[{"type":"compaction","content":"summary"}]},{"role":"user","content":"c"}"#,
        );
        check_with(
            &compacted,
            &opts,
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
        // Without the policy (and a target that does not ask), nothing merges.
        let twice = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":"a"},{"role":"user","content":"b"}"#,
        );
        check_with(
            &twice,
            &Options::default(),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }
}
