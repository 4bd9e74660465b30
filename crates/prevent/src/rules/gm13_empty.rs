//! ## GM-13: Gemini, a content without parts, or an empty part
//!
//! **The API.** The SDK counts a content invalid if it has no parts or holds an empty `Part()`.
//! Source: api-rules.md GM-13 (python-genai `chats.py`, `_validate_content`). An empty *text*
//! part is accepted: real traffic replays `{"text": ""}` next to a signed call.
//!
//! **Repair.** Empty parts are removed, then contents left with no parts.
//!
//! **Why it is safe.** An empty part carries nothing; a part with a `thoughtSignature` is never
//! empty.

use turnkeeper_model::BlockKind;

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;

/// Removes empty parts and contents with no parts.
pub fn run(_ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let mut i = 0;
    while i < f.len() {
        let mut j = 0;
        while j < f.block_count(i) {
            let Some(b) = f.block(i, j) else { break };
            let empty_part = b.kind() == BlockKind::Other
                && b.raw()
                    .trim_start_matches('{')
                    .trim_start()
                    .starts_with('}');
            if empty_part {
                f.find(
                    RuleId::Gm13,
                    Severity::Error,
                    i,
                    Some(j),
                    "an empty part",
                    Some("remove it"),
                );
                if f.remove_block(RuleId::Gm13, i, j, "removed an empty part") {
                    continue;
                }
            }
            j += 1;
        }
        if f.block_count(i) == 0 {
            f.find(
                RuleId::Gm13,
                Severity::Error,
                i,
                None,
                "a content with no parts",
                Some("remove it"),
            );
            if f.remove_message(RuleId::Gm13, i, "removed a content with no parts") {
                continue;
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::Options;
    use crate::rules::common::testing::{Expect, check_with};

    fn gemini() -> Options<'static> {
        Options {
            model: Some("gemini-3-pro-preview".to_owned()),
            ..Options::default()
        }
    }

    #[test]
    fn an_empty_part_goes() {
        let input = r#"{"contents":[{"role":"user","parts":[{"text":"q"},{}]}]}"#;
        let after = r#"{"contents":[{"role":"user","parts":[{"text":"q"}]}]}"#;
        check_with(
            input,
            &gemini(),
            Expect {
                rules: &["GM-13"],
                after: Some(after),
                left: &[],
            },
        );
    }

    /// A part of a kind turnkeeper does not know is carried through, not taken for an empty
    /// part. Kills `&&` turned into `||` in `empty_part`, under which every unknown part went.
    #[test]
    fn an_unknown_part_with_content_stays() {
        let input =
            r#"{"contents":[{"role":"user","parts":[{"text":"q"},{"futurePart":{"a":1}}]}]}"#;
        check_with(
            input,
            &gemini(),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }
}
