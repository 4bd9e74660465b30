//! ## AN-03: a trailing assistant message (prefill) where none is allowed
//!
//! **The API.** A trailing `assistant` message is a prefill. It is not allowed while thinking is
//! on, and never on Claude 4.6 and later. Error: `This model does not support assistant message
//! prefill. The conversation must end with a user message.` Exception: an assistant message
//! that ends in a server tool call or its result continues a `pause_turn` and is valid. Source:
//! api-rules.md AN-03 (thinking overview; migration guide; QwenLM/qwen-code#8039).
//!
//! **Repair.** The trailing assistant message is removed (its thinking whole, reported), and
//! again while the new last message is one.
//!
//! An assistant message holding a `compaction` block is not a prefill: it carries the summary
//! the API reads from (api-rules-2026-11.md AN-34, AN-36), and is never removed.
//!
//! **Why it is safe.** A prefill is the caller's start of an answer, not history the model
//! produced and must see again; a `pause_turn` continuation is never removed.

use turnkeeper_model::{BlockKind, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::rules::common::is_pause_turn;

/// Removes a trailing assistant message where prefill is not allowed.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    if !ctx.thinking_on() && ctx.profile.prefill_ok {
        return;
    }
    while let Some(i) = f.len().checked_sub(1) {
        // A message holding a `compaction` block is where the API reads from (AN-34, AN-36):
        // the summary of everything before, sent back as it came, never a prefill to drop.
        if f.role(i) != Role::Assistant
            || is_pause_turn(f, i)
            || i == 0
            || f.summary(i).kinds.contains(BlockKind::Meta)
        {
            return;
        }
        let why = if ctx.thinking_on() {
            "a trailing assistant message (prefill) is not allowed while thinking is on"
        } else {
            "This model does not support assistant message prefill. The conversation must end with a user message."
        };
        f.find(
            RuleId::An03,
            Severity::Error,
            i,
            None,
            why,
            Some("remove the trailing assistant message"),
        );
        if !f.remove_message(
            RuleId::An03,
            i,
            "removed a trailing assistant message (prefill)",
        ) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, body, check_case};

    #[test]
    fn a_prefill_on_a_4_6_model_goes_and_a_pause_turn_stays() {
        let input = body(
            "claude-opus-4-6",
            "",
            r#"{"role":"user","content":"q"},{"role":"assistant","content":"{"}"#,
        );
        let after = body("claude-opus-4-6", "", r#"{"role":"user","content":"q"}"#);
        check_case(
            &input,
            Expect {
                rules: &["AN-03"],
                after: Some(&after),
                left: &[],
            },
        );
        let paused = body(
            "claude-opus-4-6",
            "",
            r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}]}"#,
        );
        check_case(
            &paused,
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// A conversation whose last message holds a `compaction` block (the summary the API reads
    /// from, AN-34/AN-36) is not a prefill: nothing is removed, on a model that refuses prefill
    /// too.
    #[test]
    fn a_trailing_compaction_message_is_no_prefill() {
        check_case(
            &body(
                "claude-opus-4-7",
                "",
                r#"{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"compaction","content":"Summary.","signature":"EqQBCkYIBxgCKkDvZ9Q=="}]}"#,
            ),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }
}
