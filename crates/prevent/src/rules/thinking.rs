//! Thinking rules: restore from the store (AN-22), signatures (AN-23, AN-06), trailing thinking
//! (AN-19), thinking order (AN-18), the open tool loop in manual mode (AN-16) and prefix binding
//! (AN-25). None of them edits a thinking block: they restore the provider's own bytes, remove
//! whole blocks (reported), or change the request's thinking setting.

use turnkeeper_guard::{Provenance, is_guarded, provenance, provenance_of_base64};
use turnkeeper_model::{
    BlockKind, BlockRef, Draft, DraftBlock, Format, FormatHint, NewBlock, Role, read,
};

use crate::ctx::{BINDING_BETA, Ctx, DraftExt, Sink};
use crate::finding::Severity;
use crate::id::{ChangeAction, RuleId};
use crate::policy::{MissingThinking, PrefixEdit};
use crate::profile::Mode;

/// The comparable shape of a message: non-blank block types in order, with the decoded
/// thinking, signature and data of guarded blocks.
fn shape_of(d: &Draft<'_, '_>, i: usize) -> Vec<(String, Option<String>, Option<String>)> {
    d.blocks(i)
        .filter(|b| !(b.kind() == BlockKind::Text && b.is_blank()))
        .map(|b| {
            if b.kind().is_thinking() {
                let text = b
                    .text()
                    .map(|t| t.into_owned())
                    .or_else(|| b.str(b.block.data).map(|x| x.into_owned()));
                (
                    b.type_name().into_owned(),
                    text,
                    b.signature().map(|x| x.into_owned()),
                )
            } else {
                (b.type_name().into_owned(), None, None)
            }
        })
        .collect()
}

/// Stored blocks of message `i`, if the store has an original that differs from the message in
/// its thinking. Returns the new blocks and the raw texts of their guarded blocks.
fn stored_original(
    ctx: &Ctx<'_>,
    d: &Draft<'_, '_>,
    i: usize,
) -> Option<(Vec<DraftBlock>, Vec<String>)> {
    let store = ctx.store?;
    if d.transcript().format != Format::Anthropic {
        return None;
    }
    let o = d.origin(i)?;
    let turn = store.find(d.transcript(), o)?;
    let body = format!(
        "{{\"type\":\"message\",\"role\":\"assistant\",\"content\":{}}}",
        turn.content
    );
    let st = read(&body, FormatHint::Exactly(Format::Anthropic)).ok()?;
    if !st.blocks.iter().any(|b| b.kind().is_thinking()) {
        return None;
    }
    let stored_draft = Draft::new(&st);
    if shape_of(&stored_draft, 0) == shape_of(d, i) {
        return None;
    }
    let mut blocks = Vec::new();
    let mut guarded = Vec::new();
    for b in st.blocks_of(0) {
        let raw = b.span.get(&body).to_owned();
        if is_guarded(b) {
            guarded.push(raw.clone());
        }
        blocks.push(DraftBlock::New(Box::new(
            NewBlock::new(Format::Anthropic, raw).ok()?,
        )));
    }
    Some((blocks, guarded))
}

fn restore(ctx: &Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink, i: usize, rule: RuleId) -> bool {
    match stored_original(ctx, d, i) {
        Some(original) => {
            put_back(d, s, i, rule, original);
            true
        }
        None => false,
    }
}

/// Replaces message `i`'s blocks with the stored original (from [`stored_original`]), counting
/// the replaced thinking blocks as removed and allowing the restored ones.
fn put_back(
    d: &mut Draft<'_, '_>,
    s: &mut Sink,
    i: usize,
    rule: RuleId,
    original: (Vec<DraftBlock>, Vec<String>),
) {
    let (blocks, guarded) = original;
    let replaced = d
        .blocks(i)
        .filter(|b| is_guarded(b.block) && b.orig.is_some())
        .count();
    d.set_blocks(i, blocks);
    s.removed_guarded += replaced;
    s.restored.extend(guarded);
    s.changed(
        d,
        rule,
        ChangeAction::RestoredMessage,
        i,
        None,
        "put back the assistant turn exactly as the provider returned it (turn store)",
    );
}

/// AN-22: assistant turns whose thinking differs from the stored original are restored from the
/// turn store. Without a stored original, a latest turn that looks edited is reported as
/// unverifiable, never guessed at.
pub fn an22_restore(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    let last_assistant = (0..d.len()).rev().find(|&i| d.role(i) == Role::Assistant);
    for i in 0..d.len() {
        if d.role(i) != Role::Assistant {
            continue;
        }
        if let Some(original) = stored_original(ctx, d, i) {
            s.find(d, RuleId::An22, Severity::Error, i, None,
                "`thinking` or `redacted_thinking` blocks differ from the original response: they must remain as they were",
                Some("restore the turn from the store"));
            if s.apply {
                put_back(d, s, i, RuleId::An22, original);
            }
        } else if Some(i) == last_assistant && d.transcript().format == Format::Anthropic {
            let edited_looking = d.has_thinking(i)
                && (d.first_kind(i).is_some_and(|k| {
                    !k.is_thinking() && k != BlockKind::Text && k != BlockKind::ServerToolCall
                }) || d.blocks(i).any(|b| {
                    b.kind() == BlockKind::Thinking && b.signature().is_none_or(|x| x.is_empty())
                }));
            if edited_looking {
                s.find(d, RuleId::An22, Severity::Warning, i, None,
                    "the latest assistant turn looks edited and no stored original is available: unverifiable",
                    None);
            }
        }
    }
}

/// AN-23 (and AN-06 "Field required"): thinking blocks whose signature can never verify (missing,
/// empty, a Gemini sentinel, not base64) and redacted blocks without `data` are removed whole.
/// AN-16 then decides what the open turn needs.
pub fn an23_signatures(_ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    for i in 0..d.len() {
        if d.role(i) != Role::Assistant || !d.has_thinking(i) {
            continue;
        }
        let mut j = 0;
        while j < d.block_count(i) {
            let Some(b) = d.block(i, j) else { break };
            let problem = match b.kind() {
                BlockKind::Thinking => match signature_provenance(&b) {
                    Provenance::Plausible => None,
                    Provenance::Empty if !b.block.has_signature_key => {
                        Some("a thinking block without `signature`: \"Field required\"")
                    }
                    Provenance::Empty => Some(
                        "a thinking block with an empty signature: \"Invalid `signature` in `thinking` block\"",
                    ),
                    Provenance::Sentinel => Some(
                        "a thinking block carrying a Gemini dummy signature, which the Anthropic API rejects",
                    ),
                    Provenance::Malformed => {
                        Some("a thinking block whose signature is not a provider signature")
                    }
                },
                BlockKind::RedactedThinking => match signature_provenance(&b) {
                    Provenance::Plausible => None,
                    _ => Some(
                        "a redacted_thinking block without valid `data`: \"Invalid `data` in `redacted_thinking` block\"",
                    ),
                },
                _ => None,
            };
            if let Some(why) = problem {
                let rule = if b.kind() == BlockKind::Thinking && !b.block.has_signature_key {
                    RuleId::An06
                } else {
                    RuleId::An23
                };
                s.find(
                    d,
                    rule,
                    Severity::Error,
                    i,
                    Some(j),
                    why,
                    Some("remove the whole block (thinking is never edited)"),
                );
                if s.apply {
                    s.remove_block(d, rule, i, j, format!("removed {why}"));
                    continue;
                }
            }
            j += 1;
        }
    }
}

/// The provenance of a thinking block's signature (`signature`, or `data` of redacted thinking),
/// without reading it again when the reader already found it to be base64.
fn signature_provenance(b: &BlockRef<'_>) -> Provenance {
    match b.block.signature_field() {
        Some(s) if b.block.signature_is_base64(b.src) => provenance_of_base64(s.raw(b.src)),
        field => provenance(b.str(field).as_deref()),
    }
}

/// AN-19: an assistant message must not end with a thinking block (an interrupted stream).
/// Signed trailing blocks are progress updates on models that allow them and stay.
pub fn an19_trailing(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    let mut i = 0;
    while i < d.len() {
        // A removed message leaves its successor at `i`, to be looked at next.
        if !trailing_thinking(ctx, d, s, i) {
            i += 1;
        }
    }
}

/// AN-19 on message `i`: finds (and with `Sink::apply`, removes) the thinking blocks it ends
/// with, and the message when nothing is left and it is not the last (AN-04). A message made of
/// one thinking block in the last position is the prefill case, left to AN-03/AN-20. Also called
/// by rules whose removals can expose a trailing thinking block.
///
/// Returns true when message `i` itself was removed: the message after it is at `i` now, and a
/// caller walking the messages must look at `i` again rather than go on to `i + 1`.
#[must_use = "a removed message moves its successor to `i`"]
pub(crate) fn trailing_thinking(
    ctx: &Ctx<'_>,
    d: &mut Draft<'_, '_>,
    s: &mut Sink,
    i: usize,
) -> bool {
    if d.transcript().format != Format::Anthropic
        || ctx.profile.trailing_thinking_ok
        || d.role(i) != Role::Assistant
    {
        return false;
    }
    let mut removed_any = false;
    while let Some(n) = d.block_count(i).checked_sub(1) {
        let thinking_last = d
            .block(i, n)
            .is_some_and(|b| b.kind() == BlockKind::Thinking);
        let prefill = n == 0 && i + 1 == d.len();
        if !thinking_last || prefill {
            break;
        }
        s.find(
            d,
            RuleId::An19,
            Severity::Error,
            i,
            Some(n),
            "The final block in an assistant message cannot be `thinking`",
            Some("remove the trailing thinking block"),
        );
        if !s.apply {
            break;
        }
        s.remove_block(
            d,
            RuleId::An19,
            i,
            n,
            "removed a trailing thinking block (an interrupted stream)",
        );
        removed_any = true;
    }
    if removed_any && d.block_count(i) == 0 && i + 1 < d.len() {
        s.remove_message(
            d,
            RuleId::An04,
            i,
            "removed a message left with no content once its trailing thinking went",
        );
        return true;
    }
    false
}

/// AN-18 (manual mode only): an assistant message that holds thinking must start with it. In
/// adaptive mode real responses begin with whitespace text or a server tool call and are accepted
/// as they are (real-traffic/), so nothing is done there. The repair restores the stored original;
/// without one, the message's thinking is removed (reported), and AN-16 then handles an open loop.
pub fn an18_thinking_first(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    if ctx.mode != Mode::Manual {
        return;
    }
    // From the end, so a message that ends up empty and goes leaves earlier indices valid.
    for i in (0..d.len()).rev() {
        if d.role(i) != Role::Assistant
            || !d.has_thinking(i)
            || d.first_kind(i).is_some_and(|k| k.is_thinking())
        {
            continue;
        }
        let found = d
            .block(i, 0)
            .map(|b| b.type_name().into_owned())
            .unwrap_or_default();
        s.find(d, RuleId::An18, Severity::Error, i, Some(0),
            format!("If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `{found}`."),
            Some("restore the original turn; otherwise remove this message's thinking blocks"));
        if !s.apply || restore(ctx, d, s, i, RuleId::An18) {
            continue;
        }
        drop_thinking(
            d,
            s,
            RuleId::An18,
            i,
            "removed a thinking block that did not lead its message (moving it would be an edit the API rejects)",
        );
    }
}

/// Removes every thinking block of message `i` (reported under `rule`), then the whitespace
/// text that led into them (an adaptive lead-in is valid only before thinking, AN-05), then the
/// message itself if nothing is left and it is not the last (AN-04). Callers walking messages by
/// index walk them from the end.
pub(crate) fn drop_thinking(
    d: &mut Draft<'_, '_>,
    s: &mut Sink,
    rule: RuleId,
    i: usize,
    reason: &str,
) {
    remove_thinking(d, s, rule, i, reason);
    let mut j = 0;
    while j < d.block_count(i) {
        let orphaned_lead_in = d.block(i, j).is_some_and(|b| {
            b.kind() == BlockKind::Text && b.is_blank() && b.block.signature.is_none()
        });
        if orphaned_lead_in {
            s.remove_block(
                d,
                RuleId::An05,
                i,
                j,
                "removed whitespace text that led into thinking blocks that were removed",
            );
        } else {
            j += 1;
        }
    }
    if d.block_count(i) == 0 && i + 1 < d.len() {
        s.remove_message(
            d,
            RuleId::An04,
            i,
            "removed a message left with no content once its thinking went",
        );
    }
}

/// Removes every thinking and redacted thinking block of message `i`, whole, each reported under
/// `rule` with `reason`, and nothing else: tidying what that leaves (whitespace that led into
/// them, an emptied message) is the caller's.
pub fn remove_thinking(d: &mut Draft<'_, '_>, s: &mut Sink, rule: RuleId, i: usize, reason: &str) {
    let mut j = 0;
    while j < d.block_count(i) {
        if d.block(i, j).is_some_and(|b| b.kind().is_thinking()) {
            s.remove_block(d, rule, i, j, reason);
        } else {
            j += 1;
        }
    }
}

/// The open tool loop: `Some(first assistant message of the final turn)` when the last message is
/// a user message made only of tool results (api-rules.md AN-16).
pub fn open_loop_start(d: &Draft<'_, '_>) -> Option<usize> {
    let last = d.len().checked_sub(1)?;
    if d.role(last) != Role::User || !d.only_tool_results(last) {
        return None;
    }
    let start = (0..last)
        .rev()
        .find(|&k| d.role(k) == Role::User && !d.only_tool_results(k))
        .map_or(0, |k| k + 1);
    (start..last).find(|&k| d.role(k) == Role::Assistant)
}

/// AN-16: in manual mode, with a tool loop open, the loop's first assistant message must start
/// with thinking. The policy's strategies, in order: restore from the store; disable thinking for
/// this request; switch to adaptive; close the loop with a user message.
pub fn an16_open_loop(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    if ctx.mode != Mode::Manual {
        return;
    }
    let Some(i) = open_loop_start(d) else { return };
    let Some(first) = d.block(i, 0) else { return };
    if first.kind().is_thinking() {
        return;
    }
    let found = first.type_name().into_owned();
    s.find(d, RuleId::An16, Severity::Error, i, Some(0),
        format!("Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block."),
        Some(&describe(&ctx.policy.on_missing_thinking)));
    if !s.apply {
        return;
    }
    for strategy in ctx.policy.on_missing_thinking.clone() {
        match strategy {
            MissingThinking::Restore if restore(ctx, d, s, i, RuleId::An16) => return,
            MissingThinking::DisableThinking if ctx.profile.disabled_ok => {
                s.set_param(d, RuleId::An16, "thinking", "{\"type\":\"disabled\"}",
                    "disabled thinking for this request: the open tool loop's first assistant message has no thinking to send back (it resumes on the next turn)");
                ctx.mode = Mode::Off;
                return;
            }
            MissingThinking::Adaptive if ctx.profile.adaptive_ok => {
                s.set_param(d, RuleId::An16, "thinking", "{\"type\":\"adaptive\"}",
                    "switched to adaptive thinking, which does not require the turn to start with thinking (AN-17)");
                ctx.mode = Mode::Adaptive;
                return;
            }
            MissingThinking::CloseLoop => {
                let last = d.len() - 1;
                if let Some(b) = crate::rules::structure::text_block(d, "Continue.") {
                    let at = d.block_count(last);
                    s.insert_block(
                        d,
                        RuleId::An16,
                        last,
                        at,
                        b,
                        "closed the tool loop with a user text block, so a new turn starts",
                    );
                    return;
                }
            }
            _ => {}
        }
    }
}

fn describe(ladder: &[MissingThinking]) -> String {
    if ladder.is_empty() {
        return "none (policy: fail)".to_owned();
    }
    let names: Vec<&str> = ladder
        .iter()
        .map(|m| match m {
            MissingThinking::Restore => "restore the turn from the store",
            MissingThinking::DisableThinking => "disable thinking for this request",
            MissingThinking::Adaptive => "switch to adaptive thinking",
            MissingThinking::CloseLoop => "close the tool loop",
        })
        .collect();
    names.join(", else ")
}

/// AN-25: on prefix-bound models a thinking block is valid only while everything before it is
/// unchanged. When a repair edited an earlier message, every thinking block from the edit point
/// on is stripped (or, by policy, the API is asked to drop them: `drop_block` and its beta).
pub fn an25_prefix(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    if !ctx.profile.prefix_bound || !s.apply || ctx.drop_block {
        return;
    }
    let Some(edit) = s.first_edit else { return };
    let from = (0..d.len())
        .find(|&i| d.origin(i).is_none_or(|o| o >= edit))
        .unwrap_or(d.len());
    let later: Vec<usize> = (from..d.len()).filter(|&i| d.has_thinking(i)).collect();
    if later.is_empty() {
        return;
    }
    match ctx.policy.on_prefix_edit {
        PrefixEdit::Fail => {
            s.find(d, RuleId::An25, Severity::Error, later[0], None,
                "a repair edited the prefix of prefix-bound thinking blocks: \"The block is bound to a different conversation\"", None);
        }
        PrefixEdit::DropBlock => {
            s.set_param(d, RuleId::An25, "thinking", &drop_block_param(ctx),
                "asked the API to drop thinking blocks whose prefix a repair changed (prefix_mismatch_behavior: drop_block)");
            s.add_beta(RuleId::An25, BINDING_BETA);
            ctx.drop_block = true;
        }
        PrefixEdit::StripAfterEdit => {
            // From the end, so a message that ends up empty and goes leaves earlier indices valid.
            for i in later.into_iter().rev() {
                drop_thinking(
                    d,
                    s,
                    RuleId::An25,
                    i,
                    "removed a prefix-bound thinking block after an earlier repair (its prefix changed, so it can no longer verify)",
                );
            }
        }
    }
}

fn drop_block_param(ctx: &Ctx<'_>) -> String {
    let mode = match ctx.mode {
        Mode::Off => "adaptive",
        m => m.wire(),
    };
    format!(
        "{{\"type\":\"{mode}\",\"block_binding\":{{\"prefix_mismatch_behavior\":\"drop_block\"}}}}"
    )
}
