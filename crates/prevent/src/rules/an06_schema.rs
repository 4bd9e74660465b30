//! ## AN-06: a field the block type does not define, or a required one missing
//!
//! **The API.** The schema is strict: unknown fields are rejected and required fields must be
//! present. Errors: `messages.N.content.M.thinking.signature: Field required`;
//! `…signature: Extra inputs are not permitted`. Source: api-rules.md AN-06
//! (lbjlaq/Antigravity-Manager#1650; proxy test fixtures).
//!
//! **Repair.** `signature` on a non-thinking block and fields other SDKs leave behind
//! (`thoughtSignature`, `providerOptions`, …) are removed from the block, its other members kept
//! byte for byte. A thinking block without a `signature` field is removed whole. On a thinking
//! block nothing can be removed without altering it, so `cache_control` or a foreign field there
//! is reported only.
//!
//! **Why it is safe.** The removed fields are ones the API refuses; no thinking block is edited
//! (a thinking block without a signature can never verify, so it goes whole, reported).

use turnkeeper_model::edit::object;
use turnkeeper_model::{BlockKind, NewBlock};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;

/// Removes undefined fields, and thinking blocks without a signature.
pub fn run(_ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_, '_>) {
    for i in 0..f.len() {
        let summary = f.summary(i);
        if !summary.extra_fields && !summary.unsigned_thinking {
            continue;
        }
        let mut j = 0;
        while j < f.block_count(i) {
            let Some(b) = f.block(i, j) else { break };
            if b.kind() == BlockKind::Thinking && !b.block.has_signature_key {
                let why = "a thinking block without `signature`: \"Field required\"";
                f.find(
                    RuleId::An06,
                    Severity::Error,
                    i,
                    Some(j),
                    why,
                    Some("remove the whole block (thinking is never edited)"),
                );
                if f.remove_block(RuleId::An06, i, j, format!("removed {why}")) {
                    continue;
                }
                j += 1;
                continue;
            }
            if !b.block.has_extra_fields() {
                j += 1;
                continue;
            }
            let foreign = b.str(b.block.foreign_key).map(|k| k.into_owned());
            if b.kind().is_thinking() {
                let field = foreign.unwrap_or_else(|| "cache_control".to_owned());
                f.find(RuleId::An06, Severity::Error, i, Some(j),
                    format!("`{field}` on a thinking block: the API rejects it, and turnkeeper never edits thinking blocks"),
                    None);
                j += 1;
                continue;
            }
            // The view records one foreign field; a block may carry several.
            let mut fields: Vec<String> = object::members(b.raw())
                .unwrap_or_default()
                .iter()
                .map(|(k, _, _)| k.decode(b.raw()).into_owned())
                .filter(|k| {
                    k == "signature" || turnkeeper_model::read::FOREIGN_FIELDS.contains(&k.as_str())
                })
                .collect();
            fields.dedup();
            let type_name = b.type_name().into_owned();
            let raw = b.raw().to_owned();
            for field in &fields {
                f.find(
                    RuleId::An06,
                    Severity::Error,
                    i,
                    Some(j),
                    format!(
                        "`{field}` on a `{type_name}` block: \"Extra inputs are not permitted\""
                    ),
                    Some(&format!("remove the `{field}` field")),
                );
            }
            if !fields.is_empty() {
                let mut json = raw;
                for field in &fields {
                    json = object::remove_key(&json, field).unwrap_or(json);
                }
                if let Ok(nb) = NewBlock::new(f.transcript().format, json) {
                    f.edit_block(
                        RuleId::An06,
                        i,
                        j,
                        nb,
                        format!(
                            "removed field(s) the block type does not define: {}",
                            fields.join(", ")
                        ),
                    );
                }
            }
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::common::testing::{Expect, SIG, body, check_case};

    #[test]
    fn a_signature_on_a_text_block_is_removed_and_the_rest_kept() {
        let msgs = |text: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{text}]}},{{"role":"user","content":"more"}}"#
            )
        };
        let input = body(
            "claude-sonnet-4-5",
            "",
            &msgs(&format!(
                r#"{{"type":"text","text":"a","signature":"{SIG}"}}"#
            )),
        );
        let after = body(
            "claude-sonnet-4-5",
            "",
            &msgs(r#"{"type":"text","text":"a"}"#),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-06"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    #[test]
    fn a_thinking_block_without_signature_goes_whole() {
        let msgs = |th: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{th}{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}"#
            )
        };
        let input = body(
            "claude-sonnet-4-5",
            "",
            &msgs(r#"{"type":"thinking","thinking":"made up"},"#),
        );
        let after = body("claude-sonnet-4-5", "", &msgs(""));
        check_case(
            &input,
            Expect {
                rules: &["AN-06"],
                after: Some(&after),
                left: &[],
            },
        );
    }
}
