//! ## CX-02: a system message on an endpoint that takes only user and assistant
//!
//! **The API.** Anthropic's Messages API takes `role: "system"` messages inside `messages` on
//! its newer models (mid-conversation system messages, api-rules.md AN-30; the SDK's
//! `MessageParam.role` became `"user" | "assistant" | "system"` on 2026-05-28), and Claude Code
//! sends them from 2.1.154 on. The Anthropic-compatible endpoints of DeepSeek
//! (`https://api.deepseek.com/anthropic`) and Qwen read `role` as `user` or `assistant` only and
//! refuse the whole request: `Failed to deserialize the JSON body into the target type:
//! messages[1].role: unknown variant `system`, expected `user` or `assistant` at line 1 column
//! 23495`. Sources: deepseek-ai/awesome-deepseek-integration#639, deepseek-ai/DeepSeek-V3#1370,
//! anthropics/claude-code#63569 (DeepSeek, 2026-05-28 and 29); QwenLM/Qwen#2244 (Qwen). DeepSeek's
//! compatibility table names `system` as a top-level field only (api-docs.deepseek.com, "Using
//! the Anthropic API"). turnkeeper's number, after the research's CX-01 (Anthropic-compatible
//! endpoints that lag behind the Messages API, api-rules-2026-11.md).
//!
//! **Scope.** Anthropic format. Targets whose model id names DeepSeek or Qwen with no router in
//! front (a gateway's own endpoint may take them; Kimi, GLM and MiniMax are not known to refuse
//! them). Any target when the policy says so (`fold_system_messages: true`, which recovery sets
//! once a provider has refused one: DeepSeek also answers to `claude-*` model names); none when
//! it says `false` (reported, not repaired).
//!
//! **Repair.** Each `system` message is folded into the user message right before it (its
//! blocks after that message's own) or, when none is, into the user message right after it
//! (before that message's own). A system message holding anything but text (`tool_addition`,
//! `tool_removal`), or with no user message beside it, is reported and left.
//!
//! **Why it is safe.** The request is refused as it stands. The fold keeps every block of the
//! instruction byte for byte and adds no text; the model now reads it as the user's words
//! rather than a system prompt's, which the change says. No thinking block is touched.

use turnkeeper_model::{BlockKind, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::{Fixer, Neighbour};
use crate::id::RuleId;
use crate::wire::Provider;

/// Folds `system` messages into the user message beside them where the target refuses them.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let refuses = matches!(ctx.target.provider, Provider::DeepSeek | Provider::Qwen)
        && ctx.target.routed.is_none();
    let forced = ctx.policy.fold_system_messages;
    let who = if refuses {
        format!(
            "{}'s Anthropic-compatible endpoint",
            ctx.target.provider.name()
        )
    } else if forced == Some(true) {
        "the endpoint this request goes to".to_owned()
    } else {
        return;
    };
    let mut i = ctx.horizon;
    while i < f.len() {
        if f.role(i) != Role::System {
            i += 1;
            continue;
        }
        let text_only = f.blocks(i).all(|b| b.kind() == BlockKind::Text);
        let user_at = |k: usize| k >= ctx.horizon && k < f.len() && f.role(k) == Role::User;
        let into = if !text_only {
            None
        } else if i > 0 && user_at(i - 1) {
            Some(Neighbour::Previous)
        } else if user_at(i + 1) {
            Some(Neighbour::Next)
        } else {
            None
        };
        let (hint, left) = match into {
            Some(Neighbour::Previous) => (Some("fold it into the user message before it"), ""),
            Some(Neighbour::Next) => (Some("fold it into the user message after it"), ""),
            None if !text_only => (None, " (left: it holds more than text)"),
            None => (None, " (left: no user message beside it)"),
        };
        let hint = hint.filter(|_| forced != Some(false));
        f.find(
            RuleId::Cx02,
            Severity::Error,
            i,
            None,
            format!(
                "a `system` message: {who} takes only `user` and `assistant` and refuses the request (`unknown variant `system`, expected `user` or `assistant``){left}"
            ),
            hint,
        );
        let folded = match (into, hint) {
            (Some(into), Some(_)) => {
                let from = match into {
                    Neighbour::Previous => "after",
                    Neighbour::Next => "before",
                };
                f.merge_into_neighbour(RuleId::Cx02, i, into, |n| {
                    format!(
                        "folded the system message {from} it ({n} block(s), unchanged) into this user message: {who} takes no `system` role, so the instruction is now the user's text"
                    )
                })
            }
            _ => false,
        };
        if !folded {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Options;
    use crate::rules::common::testing::{
        Expect, body_with_system as on, changes, check_case, check_with, findings,
    };

    const SYSTEM: &str = r#"{"role":"system","content":"Keep answers short."}"#;

    #[test]
    fn a_system_message_after_a_user_turn_joins_it_on_deepseek() {
        let input = on(
            "deepseek-v4-pro",
            &format!(
                r#"{{"role":"user","content":"hi"}},{SYSTEM},{{"role":"assistant","content":"ok"}},{{"role":"user","content":"go"}}"#
            ),
        );
        let after = on(
            "deepseek-v4-pro",
            r#"{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":"Keep answers short."}]},{"role":"assistant","content":"ok"},{"role":"user","content":"go"}"#,
        );
        check_case(
            &input,
            Expect {
                rules: &["CX-02"],
                after: Some(&after),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &Options::default()),
            ["CX-02 merged_message messages[0]"]
        );
    }

    #[test]
    fn a_system_message_after_an_assistant_turn_joins_the_user_message_after_it_on_qwen() {
        let input = on(
            "qwen3-max",
            r#"{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"system","content":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}]},{"role":"user","content":[{"type":"text","text":"go"}]}"#,
        );
        let after = on(
            "qwen3-max",
            r#"{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"go"}]}"#,
        );
        check_case(
            &input,
            Expect {
                rules: &["CX-02"],
                after: Some(&after),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &Options::default()),
            ["CX-02 merged_message messages[3]"]
        );
    }

    #[test]
    fn two_system_messages_in_a_row_both_join_the_user_turn_before_them() {
        let input = on(
            "deepseek-v4-flash",
            &format!(
                r#"{{"role":"user","content":"hi"}},{SYSTEM},{{"role":"system","content":"Answer in French."}}"#
            ),
        );
        let after = on(
            "deepseek-v4-flash",
            r#"{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":"Keep answers short."},{"type":"text","text":"Answer in French."}]}"#,
        );
        check_case(
            &input,
            Expect {
                rules: &["CX-02", "CX-02"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    /// The fold edits the conversation's prefix; DeepSeek's thinking is not bound to it (AN-25
    /// is Anthropic's scheme), so the thinking after it stays, as DeepSeek wants it back.
    #[test]
    fn the_thinking_after_a_fold_stays_on_deepseek() {
        let turn = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"let me think","signature":"EqQBCkYIBxgCKkA1b2Nk"},{"type":"text","text":"ok"}]},{"role":"user","content":"go"}"#;
        let input = on(
            "deepseek-v4-pro",
            &format!(r#"{{"role":"user","content":"hi"}},{SYSTEM},{turn}"#),
        );
        let after = on(
            "deepseek-v4-pro",
            &format!(
                r#"{{"role":"user","content":[{{"type":"text","text":"hi"}},{{"type":"text","text":"Keep answers short."}}]}},{turn}"#
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["CX-02"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    #[test]
    fn the_finding_quotes_the_endpoints_error() {
        let input = on(
            "deepseek-v4-pro",
            &format!(r#"{{"role":"user","content":"hi"}},{SYSTEM}"#),
        );
        assert_eq!(
            findings(&input, &Options::default()),
            [
                "CX-02 messages[1]: a `system` message: DeepSeek's Anthropic-compatible endpoint takes only `user` and `assistant` and refuses the request (`unknown variant `system`, expected `user` or `assistant``)"
            ]
        );
    }

    #[test]
    fn a_system_message_with_more_than_text_is_reported_and_left() {
        let input = on(
            "deepseek-v4-pro",
            r#"{"role":"user","content":"hi"},{"role":"system","content":[{"type":"tool_addition","tool":{"type":"tool_reference","name":"grep"}}]}"#,
        );
        check_case(
            &input,
            Expect {
                rules: &["CX-02"],
                after: None,
                left: &["CX-02"],
            },
        );
    }

    #[test]
    fn a_system_message_between_assistant_turns_is_reported_and_left() {
        let input = on(
            "qwen-max",
            &format!(
                r#"{{"role":"user","content":"hi"}},{{"role":"assistant","content":"ok"}},{SYSTEM},{{"role":"assistant","content":"more"}},{{"role":"user","content":"go"}}"#
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["CX-02"],
                after: None,
                left: &["CX-02"],
            },
        );
    }

    #[test]
    fn claude_kimi_and_a_routed_deepseek_keep_their_system_messages() {
        for model in [
            "claude-opus-4-8",
            "kimi-k2.6",
            "glm-4.6",
            "MiniMax-M2",
            "openrouter/deepseek/deepseek-v4-pro",
        ] {
            let input = on(
                model,
                &format!(
                    r#"{{"role":"user","content":"hi"}},{SYSTEM},{{"role":"assistant","content":"ok"}},{{"role":"user","content":"go"}}"#
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

    #[test]
    fn the_policy_folds_them_on_any_target_or_only_reports() {
        let input = on(
            "claude-opus-4-8",
            &format!(r#"{{"role":"user","content":"hi"}},{SYSTEM}"#),
        );
        let after = on(
            "claude-opus-4-8",
            r#"{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":"Keep answers short."}]}"#,
        );
        let mut forced = Options::default();
        forced.policy.fold_system_messages = Some(true);
        check_with(
            &input,
            &forced,
            Expect {
                rules: &["CX-02"],
                after: Some(&after),
                left: &[],
            },
        );
        let on_deepseek = on(
            "deepseek-v4-pro",
            &format!(r#"{{"role":"user","content":"hi"}},{SYSTEM}"#),
        );
        let mut never = Options::default();
        never.policy.fold_system_messages = Some(false);
        check_with(
            &on_deepseek,
            &never,
            Expect {
                rules: &["CX-02"],
                after: None,
                left: &["CX-02"],
            },
        );
    }
}
