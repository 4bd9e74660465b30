//! ## BR-10: Claude on Converse, a forced tool choice with thinking on
//!
//! **The API.** Claude refuses thinking with a `toolChoice` that forces tool use (`any` or
//! `tool`): ``The model returned the following errors: Thinking may not be enabled when
//! tool_choice forces tool use.`` Source: api-rules-reasoning-2026-11.md §8.2 BR-10 (V-Obs:
//! pydantic/pydantic-ai#3092). Runs for a Claude target with thinking on (manual or adaptive).
//!
//! **Repair.** None: choosing between `auto` and turning thinking off is the caller's decision.
//! Reported.

use crate::finding::Severity;
use crate::id::RuleId;
use crate::profile::Mode;
use crate::wire::converse::{ConverseCx, Family};

/// Reports a forced tool choice under thinking.
pub fn run(cx: &mut ConverseCx<'_, '_>) {
    if !cx.is(Family::Claude) || !matches!(cx.target.mode, Some(Mode::Manual | Mode::Adaptive)) {
        return;
    }
    let Some(choice) = cx.body.tool_choice else {
        return;
    };
    let c = choice.decode(cx.src());
    if c != "any" && c != "tool" {
        return;
    }
    cx.find_top(
        RuleId::Br10,
        Severity::Error,
        "toolConfig.toolChoice",
        format!("toolChoice {c:?} with thinking on: Thinking may not be enabled when tool_choice forces tool use."),
    );
}

#[cfg(test)]
mod tests {
    use crate::wire::converse::testing::{Expect, check};

    fn body(choice: &str) -> String {
        format!(
            r#"{{"messages":[{{"role":"user","content":[{{"text":"go"}}]}}],"toolConfig":{{"tools":[],"toolChoice":{choice}}},"additionalModelRequestFields":{{"thinking":{{"type":"enabled","budget_tokens":2048}}}}}}"#
        )
    }

    #[test]
    fn forcing_a_tool_under_thinking_is_reported() {
        for choice in [r#"{"any":{}}"#, r#"{"tool":{"name":"f"}}"#] {
            check(
                &body(choice),
                Some("anthropic.claude-sonnet-4-5-20250929-v1:0"),
                Expect {
                    found: &[("BR-10", "toolConfig.toolChoice")],
                    repaired: None,
                    changes: &[],
                    left: &[("BR-10", "toolConfig.toolChoice")],
                },
            );
        }
        check(
            &body(r#"{"auto":{}}"#),
            Some("anthropic.claude-sonnet-4-5-20250929-v1:0"),
            Expect {
                found: &[],
                repaired: None,
                changes: &[],
                left: &[],
            },
        );
    }
}
