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
//! - A `tool_use` with `"input": null` is treated as one without; one whose `input` is a string
//!   holding a JSON object (arguments kept as text by a translator) gets that object; any other
//!   non-object `input` is reported only (what the call took cannot be known).
//! - A `tool_result` in an assistant message or a `tool_use` in a user message is reported only:
//!   which turn it belonged to cannot be known.
//! - A `thinking` or `redacted_thinking` block in a user or system message (only assistant
//!   messages hold thinking, §1.1) is removed whole, reported, never edited.
//! - A block type the API does not define: another SDK's reasoning (`reasoning`,
//!   `reasoning_content`, `thought`, …) is removed whole, since no Anthropic signature can come
//!   with it; other APIs' types (`input_text`, `image_url`, `function_call`, AI SDK names such
//!   as `tool-call`) are reported only. A snake-case name turnkeeper does not know is carried
//!   through untouched: the API adds block types (api-rules-2026-11.md §1.5).
//! - Inside a `tool_result`'s `content` list (api-rules.md AN-14): a text block that is blank
//!   or has no `text` is removed ("text content blocks must be non-empty"; the whole `content`
//!   when nothing is left, since it may be omitted), and `signature` or another SDK's field on
//!   a nested block is removed.
//! - On a thinking block nothing can be removed without altering it, so `cache_control` or a
//!   foreign field there is reported only.
//!
//! **Why it is safe.** The removed fields are ones the API refuses; no thinking block is ever
//! edited, only removed whole (reported with its fingerprint), and never where the API requires
//! it to stay as it came.

use turnkeeper_model::edit::object;
use turnkeeper_model::{BlockKind, BlockRef, Kinds, NewBlock, Role};

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
    /// A `tool_use` without `input` (or with `"input": null`).
    NoInput,
    /// A `tool_use` whose `input` is not an object.
    InputNotObject,
    /// A block of this type is not allowed in this role.
    WrongRole(&'static str),
    /// A thinking or redacted thinking block in a message of this role (only assistant
    /// messages hold thinking).
    ThinkingOutOfPlace(&'static str),
    /// A block type the API does not define; `true` for another SDK's reasoning block.
    Undefined(bool),
}

/// Block types other SDKs write for their reasoning (the AI SDK's and OpenRouter's
/// `reasoning`, DeepSeek's `reasoning_content`, Gemini's `thought`, ...): never an Anthropic
/// block, and never signed for the Anthropic API.
const FOREIGN_REASONING: [&str; 6] = [
    "reasoning",
    "reasoning_content",
    "reasoning_text",
    "redacted_reasoning",
    "reasoning_summary",
    "thought",
];

/// Block types of other APIs (OpenAI Chat and Responses, the AI SDK) that turn up in Anthropic
/// requests written by translators; the Messages API defines none of them (api-rules.md §1.1).
const FOREIGN_TYPES: [&str; 11] = [
    "input_text",
    "output_text",
    "input_image",
    "input_file",
    "image_url",
    "file",
    "function_call",
    "function_call_output",
    "tool_call",
    "tool_calls",
    "refusal",
];

/// Whether wire type `t` is one the API does not define: a known foreign type, or a name no
/// Anthropic type has (the API's are lower snake case: anything with a capital, `-`, `.` or
/// a space is another SDK's). `Some(true)` for another SDK's reasoning. Unknown snake-case
/// names are carried through: the API adds types (api-rules-2026-11.md §1.5), and a finding on
/// a valid body is worse than a miss.
fn undefined_type(t: &str) -> Option<bool> {
    if FOREIGN_REASONING.contains(&t) || t.starts_with("reasoning.") {
        Some(true)
    } else if FOREIGN_TYPES.contains(&t)
        || t.is_empty()
        || t.bytes()
            .any(|c| c.is_ascii_uppercase() || matches!(c, b'-' | b'.' | b' '))
    {
        Some(false)
    } else {
        None
    }
}

/// The problem of block `b` in a message of `role`, if any.
fn problem(b: &BlockRef<'_>, role: Role) -> Option<Problem> {
    let out_of_place = match role {
        Role::User => Some("user"),
        Role::System => Some("system"),
        _ => None,
    };
    match (b.kind(), role) {
        (BlockKind::Thinking | BlockKind::RedactedThinking, _) if out_of_place.is_some() => {
            out_of_place.map(Problem::ThinkingOutOfPlace)
        }
        (BlockKind::Thinking, _) if !b.block.has_signature_key => Some(Problem::Unsigned),
        (BlockKind::Thinking, _) if b.block.text.is_none() => Some(Problem::NoThinkingText),
        (BlockKind::ToolCall, Role::User) => Some(Problem::WrongRole("user")),
        (BlockKind::ToolResult, Role::Assistant) => Some(Problem::WrongRole("assistant")),
        (BlockKind::ToolCall, _) => match input_of(b) {
            None | Some("null") => Some(Problem::NoInput),
            Some(v) if !v.starts_with('{') => Some(Problem::InputNotObject),
            Some(_) => None,
        },
        // A block without `type` is left alone: other formats read as this one (Bedrock
        // Converse's `{"text": …}`) are not this rule's to judge.
        (BlockKind::Other, _) if b.block.type_name.is_some() => {
            undefined_type(&b.type_name()).map(Problem::Undefined)
        }
        _ => None,
    }
}

/// The `input` value of a call, as written (trimmed), if it has one.
fn input_of<'b>(b: &BlockRef<'b>) -> Option<&'b str> {
    b.block.content.map(|c| c.get(b.src).trim())
}

/// A `tool_use` whose `input` is a string holding a JSON object (a translator that kept the
/// arguments as text): that object, as the string held it. `None` for anything else.
fn object_in_string(b: &BlockRef<'_>) -> Option<String> {
    let s = b.str(b.block.content_str)?;
    let v: serde_json::Value = serde_json::from_str(&s).ok()?;
    v.is_object().then(|| s.trim().to_owned())
}

/// Whether message `i` needs a look at its blocks one by one (the common message does not).
fn worth_a_look(f: &Fixer<'_, '_>, i: usize, role: Role) -> bool {
    let summary = f.summary(i);
    let k = summary.kinds;
    summary.extra_fields
        || summary.missing_required
        || k.contains(BlockKind::Other)
        || k.contains(BlockKind::ToolCall)
        || match role {
            Role::User => k.intersects(Kinds::THINKING) || k.contains(BlockKind::ToolResult),
            Role::System => k.intersects(Kinds::THINKING),
            Role::Assistant => k.contains(BlockKind::ToolResult),
            Role::Other => false,
        }
}

/// What is wrong inside a `tool_result`'s `content` list: the elements to drop (blank or
/// text-less text blocks: "text content blocks must be non-empty") and the fields to remove
/// from the others (`signature` and fields other SDKs leave), as (element, field).
struct Nested {
    /// The element spans, relative to the content text.
    elements: Vec<turnkeeper_model::Span>,
    /// Elements to drop.
    drop: Vec<usize>,
    /// Fields to remove: (element, field).
    fields: Vec<(usize, String)>,
}

/// The problems inside the `content` list of tool result `b`, if it has any. One scan of the
/// list: each element's span and, for an object, its members' keys and values (the list used
/// to be scanned four times over, once for the elements and three times per element, which on
/// a session of list-content tool results cost more than reading the whole body; issue 24).
fn nested(b: &BlockRef<'_>) -> Option<(String, Nested)> {
    use turnkeeper_model::json::{Kind, Scanner};
    // The reader looked at the list while it read it: a clean one needs no second look.
    if b.block.facts.nested_clean == Some(true) {
        return None;
    }
    let content = b.block.content?.get(b.src);
    if !content.trim_start().starts_with('[') || !content.contains("\"type\"") {
        return None;
    }
    let mut n = Nested {
        elements: Vec::new(),
        drop: Vec::new(),
        fields: Vec::new(),
    };
    let mut s = Scanner::new(content).ok()?;
    if s.peek_kind().ok()? != Kind::Array {
        return None;
    }
    // Per member of the current element: its key, and its value's span (in `content`).
    let mut members: Vec<(turnkeeper_model::json::StrSpan, turnkeeper_model::Span)> = Vec::new();
    s.array(|s, k| -> turnkeeper_model::json::Result<()> {
        if s.peek_kind()? != Kind::Object {
            n.elements.push(s.skip_value()?);
            return Ok(());
        }
        members.clear();
        let sp = s.object(|s, key| -> turnkeeper_model::json::Result<()> {
            let v = s.skip_value()?;
            members.push((key, v));
            Ok(())
        })?;
        n.elements.push(sp);
        // A member's value by key: the last of a repeated key, as `object::get` has it.
        let value = |key: &str| {
            members
                .iter()
                .rev()
                .find(|(k, _)| k.decode(content) == key)
                .map(|(_, v)| v.get(content))
        };
        let ty = value("type").and_then(|t| serde_json::from_str::<String>(t).ok());
        if ty.as_deref() == Some("text") && value("text").is_none_or(blank_string) {
            n.drop.push(k);
            return Ok(());
        }
        for (key, _) in &members {
            let key = key.decode(content);
            if key == "signature" || turnkeeper_model::read::FOREIGN_FIELDS.contains(&&*key) {
                n.fields.push((k, key.into_owned()));
            }
        }
        Ok(())
    })
    .ok()?;
    (!n.drop.is_empty() || !n.fields.is_empty()).then(|| (content.to_owned(), n))
}

/// Whether the JSON value `v` (as written) is not a string holding non-whitespace text. Only a
/// value made of whitespace and escapes is decoded, so a long text costs one look at its bytes.
fn blank_string(v: &str) -> bool {
    let Some(inner) = v.strip_prefix('"').and_then(|x| x.strip_suffix('"')) else {
        return true;
    };
    turnkeeper_model::json::may_be_blank(inner)
        && serde_json::from_str::<String>(v)
            .map(|t| t.trim().is_empty())
            .unwrap_or(true)
}

/// The content list `content` rebuilt without the dropped elements and fields (separators and
/// the other elements' bytes kept); `None` when no element is left.
fn rebuilt(content: &str, n: &Nested) -> Option<String> {
    let kept: Vec<String> = n
        .elements
        .iter()
        .enumerate()
        .filter(|(k, _)| !n.drop.contains(k))
        .map(|(k, sp)| {
            let mut el = sp.get(content).to_owned();
            for (_, field) in n.fields.iter().filter(|(e, _)| *e == k) {
                el = object::remove_key(&el, field).unwrap_or(el);
            }
            el
        })
        .collect();
    if kept.is_empty() {
        return None;
    }
    let first = n.elements.first()?;
    let last = n.elements.last()?;
    let open = content.find('[')?;
    let close = content.rfind(']')?;
    let sep = n
        .elements
        .get(1)
        .and_then(|second| content.get(first.end as usize..second.start as usize))
        .unwrap_or(",");
    let mut out = String::with_capacity(content.len());
    out.push_str(content.get(..open + 1)?);
    out.push_str(content.get(open + 1..first.start as usize)?);
    out.push_str(&kept.join(sep));
    out.push_str(content.get(last.end as usize..close)?);
    out.push_str(content.get(close..)?);
    Some(out)
}

/// Reports and repairs the inside of tool result `j` of message `i`.
fn fix_nested(f: &mut Fixer<'_, '_>, i: usize, j: usize) {
    let Some(b) = f.block(i, j) else { return };
    let Some((content, n)) = nested(&b) else {
        return;
    };
    let raw = b.raw().to_owned();
    for &k in &n.drop {
        f.find(
            RuleId::An06,
            Severity::Error,
            i,
            Some(j),
            format!("`content[{k}]` of a `tool_result` is a text block without text: \"text content blocks must be non-empty\""),
            Some("remove the blank text block from the result's content"),
        );
    }
    for (k, field) in &n.fields {
        f.find(
            RuleId::An06,
            Severity::Error,
            i,
            Some(j),
            format!(
                "`{field}` on `content[{k}]` of a `tool_result`: \"Extra inputs are not permitted\""
            ),
            Some(&format!("remove the `{field}` field")),
        );
    }
    let json = match rebuilt(&content, &n) {
        Some(list) => object::set_key(&raw, "content", &list),
        // Nothing left: `content` may be omitted (api-rules.md AN-14).
        None => object::remove_key(&raw, "content"),
    };
    if let Some(nb) = json.and_then(|json| NewBlock::new(f.transcript().format, json).ok()) {
        let what = if n.drop.is_empty() {
            "removed fields the nested blocks do not define from a `tool_result`'s content"
        } else {
            "removed blank text blocks (and fields nested blocks do not define) from a `tool_result`'s content"
        };
        f.edit_block(RuleId::An06, i, j, nb, what);
    }
}

/// Finds undefined and missing fields and misplaced blocks, and repairs what can be.
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let mut latest: Option<Option<usize>> = None;
    for i in ctx.horizon..f.len() {
        let role = f.role(i);
        if !worth_a_look(f, i, role) {
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
                    let done = edited.is_some_and(|nb| {
                        f.edit_block(
                            RuleId::An06,
                            i,
                            j,
                            nb,
                            "added `\"input\": {}` to a `tool_use` that had none",
                        )
                    });
                    // The edited block may also carry undefined fields: look at it again.
                    if done {
                        continue;
                    }
                    j += 1;
                    continue;
                }
                Some(Problem::InputNotObject) => {
                    let inner = object_in_string(&b);
                    let edited = inner
                        .as_ref()
                        .and_then(|obj| object::set_key(b.raw(), "input", obj))
                        .and_then(|json| NewBlock::new(f.transcript().format, json).ok());
                    f.find(
                        RuleId::An06,
                        Severity::Error,
                        i,
                        Some(j),
                        "a `tool_use` whose `input` is not an object: \"Input should be a valid dictionary\"",
                        inner.as_ref().map(|_| "put the object the string holds in its place"),
                    );
                    let done = edited.is_some_and(|nb| {
                        f.edit_block(
                            RuleId::An06,
                            i,
                            j,
                            nb,
                            "replaced a `tool_use`'s `input` string with the JSON object it held",
                        )
                    });
                    if done {
                        continue;
                    }
                    j += 1;
                    continue;
                }
                Some(Problem::ThinkingOutOfPlace(role_name)) => {
                    let t = b.type_name().into_owned();
                    let why = format!(
                        "a `{t}` block in a {role_name} message: only assistant messages hold thinking"
                    );
                    f.find(
                        RuleId::An06,
                        Severity::Error,
                        i,
                        Some(j),
                        why.clone(),
                        Some("remove the whole block (thinking is never edited)"),
                    );
                    if f.remove_block(RuleId::An06, i, j, format!("removed {why}")) {
                        continue;
                    }
                    j += 1;
                    continue;
                }
                Some(Problem::Undefined(reasoning)) => {
                    let t = b.type_name().into_owned();
                    if reasoning {
                        let why = format!(
                            "a `{t}` block, another SDK's reasoning: the API defines no such block type"
                        );
                        f.find(
                            RuleId::An06,
                            Severity::Error,
                            i,
                            Some(j),
                            why.clone(),
                            Some(
                                "remove the whole block (no Anthropic signature can come with it)",
                            ),
                        );
                        if f.remove_block(RuleId::An06, i, j, format!("removed {why}")) {
                            continue;
                        }
                    } else {
                        f.find(
                            RuleId::An06,
                            Severity::Error,
                            i,
                            Some(j),
                            format!("a `{t}` block: the API defines no such block type (\"Input tag '{t}' found using 'type' does not match any of the expected tags\")"),
                            None,
                        );
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
                    // A signed `compaction` block keeps its signature (AN-36).
                    (k == "signature" && b.kind() != BlockKind::Meta)
                        || turnkeeper_model::read::FOREIGN_FIELDS.contains(&k.as_str())
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
        if role == Role::User && f.summary(i).kinds.contains(BlockKind::ToolResult) {
            for j in 0..f.block_count(i) {
                if f.block(i, j)
                    .is_some_and(|b| b.kind() == BlockKind::ToolResult)
                {
                    fix_nested(f, i, j);
                }
            }
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

    /// Three messages: a user question, an assistant turn of `asst` blocks, and a user message of
    /// `user` blocks.
    fn three(asst: &str, user: &str) -> String {
        body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{asst}]}},{{"role":"user","content":[{user}]}}"#
            ),
        )
    }

    /// A thinking block (signed or not) in a user message goes whole, reported, never edited.
    #[test]
    fn thinking_in_a_user_message_goes_whole() {
        let th = format!(r#"{{"type":"thinking","thinking":"t","signature":"{SIG}"}},"#);
        let red = r#"{"type":"redacted_thinking","data":"EqQBCkYIBxgCKkDv"},"#;
        for block in [th.as_str(), red] {
            check_case(
                &three(
                    r#"{"type":"text","text":"a"}"#,
                    &format!(r#"{block}{{"type":"text","text":"more"}}"#),
                ),
                Expect {
                    rules: &["AN-06"],
                    after: Some(&three(
                        r#"{"type":"text","text":"a"}"#,
                        r#"{"type":"text","text":"more"}"#,
                    )),
                    left: &[],
                },
            );
        }
    }

    /// `input` as a string holding an object gets that object; `null` gets `{}`; a string that
    /// holds no object is reported and left (what the call took cannot be known).
    #[test]
    fn a_tool_use_input_that_is_not_an_object() {
        let call = |input: &str| {
            three(
                &format!(r#"{{"type":"tool_use","id":"toolu_1","name":"ls","input":{input}}}"#),
                r#"{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}"#,
            )
        };
        check_case(
            &call(r#""{\"path\": \"/tmp\"}""#),
            Expect {
                rules: &["AN-06"],
                after: Some(&call(r#"{"path": "/tmp"}"#)),
                left: &[],
            },
        );
        check_case(
            &call("null"),
            Expect {
                rules: &["AN-06"],
                after: Some(&call("{}")),
                left: &[],
            },
        );
        check_case(
            &call(r#""ls -la""#),
            Expect {
                rules: &["AN-06"],
                after: None,
                left: &["AN-06"],
            },
        );
        check_case(
            &call("[1]"),
            Expect {
                rules: &["AN-06"],
                after: None,
                left: &["AN-06"],
            },
        );
    }

    /// Another SDK's reasoning block goes whole; another API's block type is reported and left;
    /// a snake-case type turnkeeper does not know (the API adds types) passes untouched.
    #[test]
    fn block_types_the_api_does_not_define() {
        let text = r#"{"type":"text","text":"a"}"#;
        let more = r#"{"type":"text","text":"more"}"#;
        check_case(
            &three(
                &format!(r#"{{"type":"reasoning","text":"hmm"}},{text}"#),
                more,
            ),
            Expect {
                rules: &["AN-06"],
                after: Some(&three(text, more)),
                left: &[],
            },
        );
        check_case(
            &three(
                text,
                &format!(r#"{{"type":"input_text","text":"hi"}},{more}"#),
            ),
            Expect {
                rules: &["AN-06"],
                after: None,
                left: &["AN-06"],
            },
        );
        check_case(
            &three(text, &format!(r#"{{"type":"tool-result","x":1}},{more}"#)),
            Expect {
                rules: &["AN-06"],
                after: None,
                left: &["AN-06"],
            },
        );
        check_case(
            &three(
                &format!(
                    r#"{text},{{"type":"mcp_tool_listing","mcp_server_name":"m","tools":[]}}"#
                ),
                more,
            ),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// Inside a `tool_result`'s `content`: a blank text block goes (and the whole `content`
    /// when nothing is left), a field the nested block does not define goes, and a valid list
    /// passes byte for byte.
    #[test]
    fn text_blocks_nested_in_a_tool_result() {
        let call = r#"{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}"#;
        let result = |content: &str| {
            three(
                call,
                &format!(
                    r#"{{"type":"tool_result","tool_use_id":"toolu_1"{content}}},{{"type":"text","text":"go"}}"#
                ),
            )
        };
        check_case(
            &result(
                r#","content":[{"type":"text","text":"a"}, {"type":"text","text":" \n"}, {"type":"text","text":"b"}]"#,
            ),
            Expect {
                rules: &["AN-06"],
                after: Some(&result(
                    r#","content":[{"type":"text","text":"a"}, {"type":"text","text":"b"}]"#,
                )),
                left: &[],
            },
        );
        check_case(
            &result(r#","content":[{"type":"text","text":""}],"is_error":true"#),
            Expect {
                rules: &["AN-06"],
                after: Some(&result(r#","is_error":true"#)),
                left: &[],
            },
        );
        check_case(
            &result(r#","content":[{"type":"text","text":"a","providerOptions":{}}]"#),
            Expect {
                rules: &["AN-06"],
                after: Some(&result(r#","content":[{"type":"text","text":"a"}]"#)),
                left: &[],
            },
        );
        check_case(
            &result(
                r#","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]"#,
            ),
            Expect {
                rules: &[],
                after: None,
                left: &[],
            },
        );
    }

    /// On-demand compaction (api-rules-2026-11.md AN-36): the response's signed `compaction`
    /// block stands first, as an assistant message, in place of the summarised messages, with
    /// the kept tail (thinking included) after it. Valid as documented: its `signature` is no
    /// undefined field, and nothing is reported or changed, on a prefix-bound model too.
    #[test]
    fn an_on_demand_compaction_request_passes_untouched() {
        let c = format!(
            r#"{{"type":"compaction","content":"Summary of the earlier conversation.","signature":"{SIG}"}}"#
        );
        let th = crate::rules::common::testing::thinking("t");
        let tails = [
            r#"{"role":"user","content":"go on"}"#.to_owned(),
            format!(
                r#"{{"role":"user","content":"go on"}},{{"role":"assistant","content":[{th},{{"type":"text","text":"ok"}}]}},{{"role":"user","content":"more"}}"#
            ),
        ];
        for (model, param) in [
            ("claude-opus-5-5", ""),
            ("claude-opus-4-7", ""),
            ("claude-sonnet-4-5", crate::rules::common::testing::MANUAL),
        ] {
            for tail in &tails {
                let input = body(
                    model,
                    param,
                    &format!(r#"{{"role":"assistant","content":[{c}]}},{tail}"#),
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
    }
}
