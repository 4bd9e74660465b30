//! ## AN-04: a message with empty content
//!
//! **The API.** Every message must have non-empty content, except an optional final assistant
//! message. Error: `messages.N: all messages must have non-empty content except for the optional
//! final assistant message`. Source: api-rules.md AN-04 (anthropics/claude-code#6774).
//!
//! **Repair.** The empty message (`""`, `[]`, whitespace-only string content) is removed, unless
//! it is the only message: the API rejects `"messages": []` as well, so then it is reported and
//! left (no repair; the CLI exits 3). No rule removes the last message (the `Fixer` refuses).
//!
//! **Why it is safe.** An empty message carries nothing; what its removal exposes (two same-role
//! neighbours, an orphan result) is found by the rules after it, in the same or the next pass.

use turnkeeper_model::{Draft, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;

/// True when message `i` has no content: `""`, `[]`, whitespace-only string content, or no
/// content at all.
fn is_empty_message(d: &Draft<'_, '_>, i: usize) -> bool {
    if let Some(st) = d.is_string_content(i) {
        return st.is_blank(d.transcript().src);
    }
    d.block_count(i) == 0
}

/// Removes empty messages.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let mut i = ctx.horizon;
    while i < f.len() {
        let last = i + 1 == f.len();
        if is_empty_message(f, i) && !(last && f.role(i) == Role::Assistant) {
            // The only message left is never removed: `"messages": []` is refused too.
            let repair = (f.len() > 1).then_some("remove the message");
            f.find(RuleId::An04, Severity::Error, i, None,
                "a message with empty content: \"all messages must have non-empty content except for the optional final assistant message\"",
                repair);
            if f.remove_message(RuleId::An04, i, "removed a message with no content") {
                continue;
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, body, check_case};

    #[test]
    fn an_empty_user_string_is_removed() {
        let input = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"user","content":""},{"role":"user","content":"again"}"#,
        );
        let after = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"user","content":"again"}"#,
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-04"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    #[test]
    fn the_last_message_left_is_kept_never_an_empty_list() {
        // The API rejects `"messages": []`: the finding stays, for the caller (exit 3).
        let input = body("claude-sonnet-4-5", "", r#"{"role":"user","content":" "}"#);
        check_case(
            &input,
            Expect {
                rules: &["AN-04"],
                after: None,
                left: &["AN-04"],
            },
        );
    }
}
