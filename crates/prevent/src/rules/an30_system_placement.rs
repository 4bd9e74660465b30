//! ## AN-30: a mid-conversation system message out of place
//!
//! **The API.** A `role: "system"` message inside `messages` (Claude API; newer models) must
//! immediately follow a `user` message, or an `assistant` message that ends in a server tool use
//! (a `pause_turn` continuation), and must be followed by an `assistant` message or end the
//! array; two in a row are not allowed, and one is never first (AN-01). "Placing it elsewhere
//! returns a 400 error." Source: api-rules.md AN-30 (mid-conversation system messages page). The
//! API's exact wording is not in the research.
//!
//! **Scope.** Anthropic format, Claude targets (the model id names Claude). On DeepSeek's and
//! Qwen's endpoints no system message is taken at all (CX-02, which runs first); other vendors'
//! Anthropic-compatible endpoints are not known to take them, nor to place them by these rules.
//!
//! **Repair.** None: reported. Moving an instruction to another place in the conversation
//! changes what it applies to, and demoting it to user text changes its authority on a model
//! that takes it; which is meant is the agent's to say.

use turnkeeper_model::Role;

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::wire::Provider;

/// Reports `system` messages the API would refuse where they stand.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    if ctx.target.provider != Provider::Anthropic {
        return;
    }
    // Message 0 is AN-01's (a system message may never be first).
    for i in ctx.horizon.max(1)..f.len() {
        if f.role(i) != Role::System {
            continue;
        }
        let prev = f.role(i - 1);
        let after_ok = match prev {
            Role::User => true,
            Role::Assistant => f
                .blocks(i - 1)
                .last()
                .is_some_and(|b| b.type_name() == "server_tool_use"),
            _ => false,
        };
        let before_ok = i + 1 == f.len() || f.role(i + 1) == Role::Assistant;
        let why = match (after_ok, before_ok) {
            (true, true) => continue,
            (false, _) if prev == Role::System => "it follows another system message",
            (false, _) => {
                "it follows an assistant message that does not end in a server tool use (it must follow a user message)"
            }
            (true, false) => "the message after it is not an assistant message",
        };
        f.find(
            RuleId::An30,
            Severity::Error,
            i,
            None,
            format!(
                "a mid-conversation system message out of place: {why}; the API answers 400 (a system message must follow a user message and be followed by an assistant message or end the conversation)"
            ),
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::Options;
    use crate::rules::common::testing::{Expect, body_with_system as on, check_case, findings};

    const SYSTEM: &str = r#"{"role":"system","content":"Keep answers short."}"#;

    fn valid(messages: &str) {
        check_case(
            &on("claude-opus-4-8", messages),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    fn refused(messages: &str, why: &str) {
        let input = on("claude-opus-4-8", messages);
        check_case(
            &input,
            Expect {
                rules: &["AN-30"],
                after: None,
                left: &["AN-30"],
            },
        );
        let found = findings(&input, &Options::default());
        assert!(found[0].contains(why), "{found:?}");
    }

    #[test]
    fn after_a_user_turn_and_before_an_answer_or_the_end_is_its_place() {
        valid(&format!(
            r#"{{"role":"user","content":"hi"}},{SYSTEM},{{"role":"assistant","content":"ok"}},{{"role":"user","content":"go"}}"#
        ));
        valid(&format!(r#"{{"role":"user","content":"hi"}},{SYSTEM}"#));
        // After a tool's results, which are a user message.
        valid(&format!(
            r#"{{"role":"user","content":"hi"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_1","name":"f","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}},{SYSTEM}"#
        ));
        // After a `pause_turn` continuation that ends in a server tool use.
        valid(&format!(
            r#"{{"role":"user","content":"find it"}},{{"role":"assistant","content":[{{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{{"query":"q"}}}}]}},{SYSTEM}"#
        ));
    }

    #[test]
    fn elsewhere_it_is_reported_and_left() {
        refused(
            &format!(
                r#"{{"role":"user","content":"hi"}},{{"role":"assistant","content":"ok"}},{SYSTEM},{{"role":"assistant","content":"more"}},{{"role":"user","content":"go"}}"#
            ),
            "it follows an assistant message that does not end in a server tool use",
        );
        refused(
            &format!(
                r#"{{"role":"user","content":"hi"}},{SYSTEM},{{"role":"user","content":"go"}}"#
            ),
            "the message after it is not an assistant message",
        );
        // Two in a row: the first is not followed by an answer, the second follows a system
        // message; each is out of place.
        let input = on(
            "claude-opus-4-8",
            &format!(r#"{{"role":"user","content":"hi"}},{SYSTEM},{SYSTEM}"#),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-30", "AN-30"],
                after: None,
                left: &["AN-30", "AN-30"],
            },
        );
        let found = findings(&input, &Options::default());
        assert!(found[0].starts_with("AN-30 messages[1]: "), "{found:?}");
        assert!(found[0].contains("the message after it is not an assistant message"));
        assert!(found[1].starts_with("AN-30 messages[2]: "), "{found:?}");
        assert!(found[1].contains("it follows another system message"));
    }

    #[test]
    fn other_vendors_endpoints_are_not_judged_by_it() {
        for model in ["kimi-k2.6", "glm-4.6", "MiniMax-M2"] {
            check_case(
                &on(
                    model,
                    &format!(
                        r#"{{"role":"user","content":"hi"}},{SYSTEM},{{"role":"user","content":"go"}}"#
                    ),
                ),
                Expect {
                    rules: &[],
                    after: None,
                    left: &[],
                },
            );
        }
    }
}
