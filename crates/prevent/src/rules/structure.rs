//! Structure: schema extras (AN-06), empty text (AN-05), empty messages (AN-04), the first
//! message (AN-01), same-role neighbours (AN-02), prefill (AN-03) and thinking in a final
//! assistant message when thinking is off (AN-20).

use turnkeeper_guard::is_guarded;
use turnkeeper_model::edit::object;
use turnkeeper_model::{BlockKind, Draft, DraftBlock, NewBlock, Role};

use crate::ctx::{Ctx, DraftExt, Sink};
use crate::finding::Severity;
use crate::id::{ChangeAction, RuleId};
use crate::profile::Mode;

/// AN-06: fields a block's type does not define. `signature` on a non-thinking block, and fields
/// other SDKs leave behind (`thoughtSignature`, `providerOptions`, ...), are removed (the schema
/// rejects them: "Extra inputs are not permitted"). On a thinking block nothing can be removed
/// without altering the block, so `cache_control` or a foreign field there is reported only.
pub fn an06_schema(_ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    for i in 0..d.len() {
        if !d.summary(i).extra_fields {
            continue;
        }
        let mut j = 0;
        while j < d.block_count(i) {
            let Some(b) = d.block(i, j) else { break };
            if !b.block.has_extra_fields() {
                j += 1;
                continue;
            }
            let foreign = b.str(b.block.foreign_key).map(|k| k.into_owned());
            if b.kind().is_thinking() {
                let field = foreign.unwrap_or_else(|| "cache_control".to_owned());
                s.find(d, RuleId::An06, Severity::Error, i, Some(j),
                    format!("`{field}` on a thinking block: the API rejects it, and turnkeeper never edits thinking blocks"),
                    None);
            } else {
                // The view records one foreign field; a block may carry several.
                let mut fields: Vec<String> = object::members(b.raw())
                    .unwrap_or_default()
                    .iter()
                    .map(|(k, _, _)| k.decode(b.raw()).into_owned())
                    .filter(|k| {
                        k == "signature"
                            || turnkeeper_model::read::FOREIGN_FIELDS.contains(&k.as_str())
                    })
                    .collect();
                fields.dedup();
                let type_name = b.type_name().into_owned();
                for field in &fields {
                    s.find(
                        d,
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
                if s.apply && !fields.is_empty() {
                    let mut json = b.raw().to_owned();
                    for field in &fields {
                        json = object::remove_key(&json, field).unwrap_or(json);
                    }
                    if let Ok(nb) = NewBlock::new(d.transcript().format, json) {
                        s.edit_block(
                            d,
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
            }
            j += 1;
        }
    }
}

/// True for the whitespace text a real adaptive-mode response puts before its first thinking
/// block (real-traffic: `text "\n\n"`, then `thinking`). The API accepts it as it is.
fn adaptive_lead_in(d: &Draft<'_, '_>, i: usize, j: usize) -> bool {
    d.role(i) == Role::Assistant
        && d.block(i, j)
            .and_then(|b| b.text())
            .is_some_and(|t| !t.is_empty())
        && d.blocks(i)
            .skip(j + 1)
            .find(|b| b.kind() != BlockKind::Text || !b.is_blank())
            .is_some_and(|b| b.kind().is_thinking())
}

/// AN-05: empty or whitespace-only text blocks. They are removed; a `cache_control` they carried
/// moves to the nearest cacheable block of the same message. Text blocks with a signature (Gemini
/// parts, GM-06) and the whitespace lead-in of adaptive responses are left alone.
pub fn an05_empty_text(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    let mut i = 0;
    'messages: while i < d.len() {
        if !d.summary(i).kinds.contains(BlockKind::Text) {
            i += 1;
            continue;
        }
        let mut j = 0;
        while j < d.block_count(i) {
            let Some(b) = d.block(i, j) else { break };
            if b.kind() != BlockKind::Text
                || !b.is_blank()
                || b.block.signature.is_some()
                || adaptive_lead_in(d, i, j)
            {
                j += 1;
                continue;
            }
            let empty = b.text().is_none_or(|t| t.is_empty());
            let cache = b.block.cache_control.map(|c| c.get(b.src).to_owned());
            let what = if empty {
                "an empty text block"
            } else {
                "a whitespace-only text block"
            };
            s.find(
                d,
                RuleId::An05,
                Severity::Error,
                i,
                Some(j),
                format!("{what}: \"text content blocks must contain non-whitespace text\""),
                Some("remove the block"),
            );
            if !s.apply {
                j += 1;
                continue;
            }
            s.remove_block(d, RuleId::An05, i, j, format!("removed {what}"));
            // The breakpoint moves first: thinking is never a target, so the AN-19 removal
            // below cannot take it away again, and while the message is still at `i` a
            // breakpoint with nowhere to go is reported there.
            if let Some(cache) = cache {
                move_cache_control(d, s, i, j, &cache);
            }
            // Removing it can leave the message ending in thinking (AN-19), and the message
            // can go with that thinking: its successor is at `i` now, and is looked at whole.
            if crate::rules::thinking::trailing_thinking(ctx, d, s, i) {
                continue 'messages;
            }
        }
        i += 1;
    }
}

/// Puts `cache_control` on the nearest cacheable block of message `i` before position `j` (or
/// after it when none is before).
fn move_cache_control(d: &mut Draft<'_, '_>, s: &mut Sink, i: usize, j: usize, cache: &str) {
    let cacheable = |d: &Draft<'_, '_>, k: usize| {
        d.block(i, k).is_some_and(|b| {
            !is_guarded(b.block)
                && !b.is_blank()
                && b.block.cache_control.is_none()
                && b.kind() != BlockKind::Other
        })
    };
    let target = (0..j.min(d.block_count(i)))
        .rev()
        .find(|&k| cacheable(d, k))
        .or_else(|| (j..d.block_count(i)).find(|&k| cacheable(d, k)));
    let Some(k) = target else {
        s.changed(
            d,
            RuleId::An05,
            ChangeAction::RemovedField,
            i,
            None,
            "dropped a `cache_control` breakpoint: no cacheable block left in the message",
        );
        return;
    };
    let edited = d
        .block(i, k)
        .and_then(|b| object::set_key(b.raw(), "cache_control", cache))
        .and_then(|json| NewBlock::new(d.transcript().format, json).ok());
    if let Some(nb) = edited {
        s.edit_block(
            d,
            RuleId::An05,
            i,
            k,
            nb,
            "moved `cache_control` here from a removed empty text block",
        );
    }
}

/// True when message `i` has no content: `""`, `[]`, whitespace-only string content, or no
/// content at all.
fn is_empty_message(d: &Draft<'_, '_>, i: usize) -> bool {
    if let Some(st) = d.is_string_content(i) {
        return st.is_blank(d.transcript().src);
    }
    d.block_count(i) == 0
}

/// AN-04: every message but an optional final assistant message needs non-empty content. Empty
/// messages are removed.
pub fn an04_empty_messages(_ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    let mut i = 0;
    while i < d.len() {
        let last = i + 1 == d.len();
        if is_empty_message(d, i) && !(last && d.role(i) == Role::Assistant) {
            s.find(d, RuleId::An04, Severity::Error, i, None,
                "a message with empty content: \"all messages must have non-empty content except for the optional final assistant message\"",
                Some("remove the message"));
            if s.apply {
                s.remove_message(d, RuleId::An04, i, "removed a message with no content");
                continue;
            }
        }
        i += 1;
    }
}

/// AN-01: the first message must be a user message. Leading assistant messages are removed (their
/// tool results then become orphans for AN-10). Mid-conversation `system` messages may never be
/// first either (AN-30).
pub fn an01_first_user(_ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    if d.is_empty() || d.role(0) == Role::User || !(0..d.len()).any(|i| d.role(i) == Role::User) {
        if !d.is_empty() && d.role(0) != Role::User {
            s.find(
                d,
                RuleId::An01,
                Severity::Error,
                0,
                None,
                "the first message must use the \"user\" role, and no message does",
                None,
            );
        }
        return;
    }
    s.find(
        d,
        RuleId::An01,
        Severity::Error,
        0,
        None,
        "messages: first message must use the \"user\" role",
        Some("remove the leading non-user messages"),
    );
    if s.apply {
        loop {
            while !d.is_empty() && d.role(0) != Role::User {
                s.remove_message(d, RuleId::An01, 0, "removed a leading non-user message (the conversation must start with the user)");
            }
            // A first user message made only of results answers calls that are gone (AN-10).
            if d.len() > 1 && d.only_tool_results(0) {
                s.remove_message(
                    d,
                    RuleId::An10,
                    0,
                    "removed a first message holding only results for calls that were removed",
                );
                continue;
            }
            break;
        }
    }
}

/// AN-01 again, in `repair` only: removing orphan results can empty the first user message
/// (pairing runs after AN-01), which makes an assistant message first.
pub fn an01_after_pairing(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    if s.apply && !d.is_empty() && d.role(0) != Role::User {
        an01_first_user(ctx, d, s);
        // The removed turn's results are orphans now (AN-10).
        crate::rules::pairing::an08_pairing(ctx, d, s);
    }
}

/// AN-02: consecutive same-role messages are merged by the API; some targets (relays, Bedrock
/// Converse) reject them. Merged only when the profile or policy asks for it.
pub fn an02_same_role(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    let wanted = ctx
        .policy
        .merge_same_role
        .unwrap_or(ctx.profile.merge_same_role);
    if !wanted {
        return;
    }
    let mut i = 1;
    while i < d.len() {
        if d.role(i) == d.role(i - 1) && matches!(d.role(i), Role::User | Role::Assistant) {
            s.find(
                d,
                RuleId::An02,
                Severity::Error,
                i,
                None,
                "consecutive messages with the same role: this target requires alternation",
                Some("merge into the previous message"),
            );
            if s.apply {
                let moved = d.take_blocks(i);
                let n = moved.len();
                let at = d.block_count(i - 1);
                let mut list = d.take_blocks(i - 1);
                list.extend(moved);
                d.set_blocks(i - 1, list);
                s.changed(
                    d,
                    RuleId::An02,
                    ChangeAction::MergedMessage,
                    i - 1,
                    None,
                    format!("merged the next message's {n} block(s) after block {at}"),
                );
                d.remove_message(i);
                continue;
            }
        }
        i += 1;
    }
}

/// True when an assistant message ends in a server tool call or its result: a `pause_turn`
/// continuation, valid as the last message (api-rules.md AN-03 exception, AN-15).
fn is_pause_turn(d: &Draft<'_, '_>, i: usize) -> bool {
    let n = d.block_count(i);
    n > 0
        && d.block(i, n - 1).is_some_and(|b| {
            matches!(
                b.kind(),
                BlockKind::ServerToolCall | BlockKind::ServerToolResult
            )
        })
}

/// AN-03 and AN-20: a trailing assistant message. With thinking on, or on models that never allow
/// prefill (4.6 and later), it is removed, unless it is a `pause_turn` continuation. With
/// thinking off on a model that allows prefill, only its thinking blocks are removed (AN-20).
pub fn an03_prefill(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    while let Some(i) = d.len().checked_sub(1) {
        if d.role(i) != Role::Assistant || is_pause_turn(d, i) || i == 0 {
            return;
        }
        if ctx.thinking_on() || !ctx.profile.prefill_ok {
            let why = if ctx.thinking_on() {
                "a trailing assistant message (prefill) is not allowed while thinking is on"
            } else {
                "This model does not support assistant message prefill. The conversation must end with a user message."
            };
            s.find(
                d,
                RuleId::An03,
                Severity::Error,
                i,
                None,
                why,
                Some("remove the trailing assistant message"),
            );
            if !s.apply {
                return;
            }
            s.remove_message(
                d,
                RuleId::An03,
                i,
                "removed a trailing assistant message (prefill)",
            );
            continue;
        }
        // Thinking off, prefill allowed: no thinking in the final position (AN-20).
        if ctx.mode == Mode::Off && d.has_thinking(i) {
            s.find(d, RuleId::An20, Severity::Error, i, Some(0),
                "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`",
                Some("remove the thinking blocks from the final assistant message"));
            if s.apply {
                crate::rules::thinking::drop_thinking(
                    d,
                    s,
                    RuleId::An20,
                    i,
                    "removed thinking from the final assistant message: thinking is disabled",
                );
            }
        }
        return;
    }
}

/// A new Anthropic text block.
pub fn text_block(d: &Draft<'_, '_>, text: &str) -> Option<DraftBlock> {
    let mut json = String::from("{\"type\":\"text\",\"text\":");
    turnkeeper_model::json::write_string(&mut json, text);
    json.push('}');
    NewBlock::new(d.transcript().format, json)
        .ok()
        .map(|b| DraftBlock::New(Box::new(b)))
}
