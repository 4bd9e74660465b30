//! ## AN-06: a field the block type does not define, or a required one missing
//!
//! **The API.** The schema is strict: unknown fields are rejected, required fields must be
//! present, and each role takes only its own block types. Errors:
//! `messages.N.content.M.thinking.signature: Field required`; `…signature: Extra inputs are not
//! permitted`. Source: api-rules.md AN-06 (lbjlaq/Antigravity-Manager#1650; proxy test
//! fixtures) and the block table of api-rules.md §1.1 (which role holds which block). Cases from
//! peers' test suites (peers.md: openclaw's `validateThinkingBlocks`, "missing required"): a
//! thinking block with a signature but no `thinking` field, a `tool_use` without `input`, a
//! `tool_result` in an assistant message, a `tool_use` in a user message.
//!
//! **Repair.**
//! - `signature` on a non-thinking block and fields other SDKs leave behind
//!   (`thoughtSignature`, `providerOptions`, …) are removed, the block's other members kept
//!   byte for byte.
//! - A thinking block without a `signature` field is removed whole: it can never verify.
//! - A signed thinking block without its `thinking` field is removed whole, except in the
//!   latest assistant message, where removing a thinking block is itself refused (AN-22): there
//!   it is reported only.
//! - A `tool_use` without `input` gets `"input": {}` (the call took no arguments the transcript
//!   kept; the block's other members are unchanged).
//! - A `tool_result` in an assistant message or a `tool_use` in a user message is reported only:
//!   which turn it belonged to cannot be known.
//! - On a thinking block nothing can be removed without altering it, so `cache_control` or a
//!   foreign field there is reported only.
//!
//! **Why it is safe.** The removed fields are ones the API refuses; no thinking block is ever
//! edited, only removed whole (reported with its fingerprint), and never where the API requires
//! it to stay as it came.

use turnkeeper_model::edit::object;
use turnkeeper_model::{BlockKind, BlockRef, NewBlock, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;

/// What is wrong with block `b` beyond undefined fields: a missing required field, or a block in
/// the wrong role.
enum Problem {
    /// A thinking block without `signature`.
    Unsigned,
    /// A signed thinking block without `thinking`.
    NoThinkingText,
    /// A `tool_use` without `input`.
    NoInput,
    /// A block of this type is not allowed in this role.
    WrongRole(&'static str),
}

/// The problem of block `b` in a message of `role`, if any.
fn problem(b: &BlockRef<'_>, role: Role) -> Option<Problem> {
    match (b.kind(), role) {
        (BlockKind::Thinking, _) if !b.block.has_signature_key => Some(Problem::Unsigned),
        (BlockKind::Thinking, _) if b.block.text.is_none() => Some(Problem::NoThinkingText),
        (BlockKind::ToolCall, Role::User) => Some(Problem::WrongRole("user")),
        (BlockKind::ToolResult, Role::Assistant) => Some(Problem::WrongRole("assistant")),
        (BlockKind::ToolCall, _) if b.block.content.is_none() => Some(Problem::NoInput),
        _ => None,
    }
}

/// Finds undefined and missing fields and misplaced blocks, and repairs what can be.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let mut latest: Option<Option<usize>> = None;
    for i in ctx.horizon..f.len() {
        let summary = f.summary(i);
        let calls = summary.kinds.contains(BlockKind::ToolCall);
        let results = summary.kinds.contains(BlockKind::ToolResult);
        if !summary.extra_fields && !summary.missing_required && !calls && !results {
            continue;
        }
        let role = f.role(i);
        let misplaced = match role {
            Role::User => calls,
            Role::Assistant => results,
            _ => false,
        };
        if !summary.extra_fields && !summary.missing_required && !misplaced {
            continue;
        }
        let mut j = 0;
        while j < f.block_count(i) {
            let Some(b) = f.block(i, j) else { break };
            match problem(&b, role) {
                Some(Problem::Unsigned) => {
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
                Some(Problem::NoThinkingText) => {
                    let last = *latest.get_or_insert_with(|| {
                        (0..f.len()).rev().find(|&k| f.role(k) == Role::Assistant)
                    });
                    let why =
                        "a signed thinking block without its `thinking` field: \"Field required\"";
                    if last == Some(i) {
                        f.find(RuleId::An06, Severity::Error, i, Some(j),
                            format!("{why}; it is in the latest assistant message, where removing a thinking block is refused too (AN-22)"),
                            None);
                    } else {
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
                    }
                    j += 1;
                    continue;
                }
                Some(Problem::WrongRole(role_name)) => {
                    let t = b.type_name().into_owned();
                    f.find(
                        RuleId::An06,
                        Severity::Error,
                        i,
                        Some(j),
                        format!("a `{t}` block in a {role_name} message, which cannot hold one"),
                        None,
                    );
                    j += 1;
                    continue;
                }
                Some(Problem::NoInput) => {
                    let edited = object::set_key(b.raw(), "input", "{}")
                        .and_then(|json| NewBlock::new(f.transcript().format, json).ok());
                    f.find(
                        RuleId::An06,
                        Severity::Error,
                        i,
                        Some(j),
                        "a `tool_use` without `input`: \"Field required\"",
                        Some("add `\"input\": {}`"),
                    );
                    if let Some(nb) = edited {
                        f.edit_block(
                            RuleId::An06,
                            i,
                            j,
                            nb,
                            "added `\"input\": {}` to a `tool_use` that had none",
                        );
                    }
                    // The edited block may also carry undefined fields: look at it again.
                    if f.block(i, j).is_some_and(|b| b.block.content.is_some()) {
                        continue;
                    }
                    j += 1;
                    continue;
                }
                None => {}
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

    /// A user turn, an assistant turn holding `block` and a text, and a user follow-up (the
    /// assistant message is not the latest when `latest` is false).
    fn turn(block: &str, latest: bool) -> String {
        let tail = if latest {
            String::new()
        } else {
            r#",{"role":"assistant","content":"ok"},{"role":"user","content":"bye"}"#.to_owned()
        };
        body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{block}{{"type":"text","text":"a"}}]}},{{"role":"user","content":"more"}}{tail}"#
            ),
        )
    }

    #[test]
    fn signed_thinking_without_text_goes_whole_but_never_from_the_latest_turn() {
        let th = format!(r#"{{"type":"thinking","signature":"{SIG}"}},"#);
        check_case(
            &turn(&th, false),
            Expect {
                rules: &["AN-06"],
                after: Some(&turn("", false)),
                left: &[],
            },
        );
        check_case(
            &turn(&th, true),
            Expect {
                rules: &["AN-06"],
                after: None,
                left: &["AN-06"],
            },
        );
    }

    #[test]
    fn a_tool_use_without_input_gets_an_empty_one() {
        let msgs = |call: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{call}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}}"#
            )
        };
        check_case(
            &body(
                "claude-sonnet-4-5",
                "",
                &msgs(r#"{"type":"tool_use","id":"toolu_1","name":"ls"}"#),
            ),
            Expect {
                rules: &["AN-06"],
                after: Some(&body(
                    "claude-sonnet-4-5",
                    "",
                    &msgs(r#"{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}"#),
                )),
                left: &[],
            },
        );
    }

    #[test]
    fn blocks_in_the_wrong_role_are_reported() {
        let input = body(
            "claude-sonnet-4-5",
            "",
            r#"{"role":"user","content":[{"type":"text","text":"q"},{"type":"tool_use","id":"toolu_9","name":"ls","input":{}}]},{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_result","tool_use_id":"toolu_8","content":"x"}]},{"role":"user","content":"more"}"#,
        );
        let t = turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
        let found: Vec<(String, String)> = crate::check(&t, &crate::Options::default())
            .into_iter()
            .map(|f| (f.rule.to_string(), f.path))
            .collect();
        assert_eq!(
            found,
            [
                ("AN-06".to_owned(), "messages[0].content[1]".to_owned()),
                ("AN-06".to_owned(), "messages[1].content[1]".to_owned()),
            ]
        );
    }
}
