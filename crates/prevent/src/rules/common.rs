//! Helpers several rules share. Each records its changes under the id of the rule that calls
//! it, so a knock-on effect (removing a block leaves a thinking block last; removing thinking
//! leaves a whitespace lead-in or an empty message) is reported by the rule whose repair caused
//! it. No rule file imports another; they all import from here.

use turnkeeper_guard::{Provenance, is_guarded, provenance, provenance_of_base64};
use turnkeeper_model::{
    BlockKind, BlockRef, Draft, DraftBlock, Format, FormatHint, Kinds, NewBlock, Role, Transcript,
    read,
};

use crate::ctx::Ctx;
use crate::fix::Fixer;
use crate::id::RuleId;

/// The value of top-level key `key` as it will be sent: an edit made earlier in this pass, or
/// else the input's own bytes. `None` when the key is absent (or an edit removed it).
pub fn top_value(d: &Draft<'_, '_>, key: &str) -> Option<String> {
    if let Some(e) = d.top_edits().iter().find(|e| e.key == key) {
        return e.value.clone();
    }
    let t = d.transcript();
    t.meta
        .top_keys
        .iter()
        .find(|(k, _)| k.decode(t.src) == key)
        .map(|(_, v)| v.get(t.src).to_owned())
}

/// The spans of the elements of the JSON array `src` (relative to `src`); `None` when `src` is
/// not an array.
pub fn array_elements(src: &str) -> Option<Vec<turnkeeper_model::Span>> {
    let mut s = turnkeeper_model::json::Scanner::new(src).ok()?;
    if s.peek_kind().ok()? != turnkeeper_model::json::Kind::Array {
        return None;
    }
    let mut out = Vec::new();
    s.array(|s, _| -> turnkeeper_model::json::Result<()> {
        out.push(s.skip_value()?);
        Ok(())
    })
    .ok()?;
    Some(out)
}

/// `src` (a JSON array) with element `n` (of `elements`, its spans) replaced by `new`, every
/// other byte kept.
pub fn replace_element(
    src: &str,
    elements: &[turnkeeper_model::Span],
    n: usize,
    new: &str,
) -> Option<String> {
    let sp = elements.get(n)?;
    let mut out = String::with_capacity(src.len() + new.len());
    out.push_str(src.get(..sp.start as usize)?);
    out.push_str(new);
    out.push_str(src.get(sp.end as usize..)?);
    Some(out)
}

/// True when message `i` holds at least one block and only `tool_result` blocks.
pub fn only_tool_results(d: &Draft<'_, '_>, i: usize) -> bool {
    d.summary(i).kinds.is_only(BlockKind::ToolResult)
}

/// True when message `i` holds a thinking or redacted thinking block.
pub fn has_thinking(d: &Draft<'_, '_>, i: usize) -> bool {
    d.summary(i).kinds.intersects(Kinds::THINKING)
}

/// The kind of the first block of message `i`.
pub fn first_kind(d: &Draft<'_, '_>, i: usize) -> Option<BlockKind> {
    d.block(i, 0).map(|b| b.kind())
}

/// A new text block in the transcript's format.
pub fn text_block(d: &Draft<'_, '_>, text: &str) -> Option<DraftBlock> {
    let mut json = String::from("{\"type\":\"text\",\"text\":");
    turnkeeper_model::json::write_string(&mut json, text);
    json.push('}');
    NewBlock::new(d.transcript().format, json)
        .ok()
        .map(|b| DraftBlock::New(Box::new(b)))
}

/// True when an assistant message ends in a server tool call or its result: a `pause_turn`
/// continuation, valid as the last message (api-rules.md AN-03 exception, AN-15).
pub fn is_pause_turn(d: &Draft<'_, '_>, i: usize) -> bool {
    let n = d.block_count(i);
    n > 0
        && d.block(i, n - 1).is_some_and(|b| {
            matches!(
                b.kind(),
                BlockKind::ServerToolCall | BlockKind::ServerToolResult
            )
        })
}

/// The open tool loop: `Some(first assistant message of the final turn)` when the last message is
/// a user message made only of tool results (api-rules.md AN-16).
pub fn open_loop_start(d: &Draft<'_, '_>) -> Option<usize> {
    let last = d.len().checked_sub(1)?;
    if d.role(last) != Role::User || !only_tool_results(d, last) {
        return None;
    }
    let start = (0..last)
        .rev()
        .find(|&k| d.role(k) == Role::User && !only_tool_results(d, k))
        .map_or(0, |k| k + 1);
    (start..last).find(|&k| d.role(k) == Role::Assistant)
}

/// True when the model may end an assistant message with a thinking block (progress updates,
/// api-rules-2026-11.md §1.4), so trailing thinking is never removed.
pub fn trailing_thinking_ok(ctx: &Ctx<'_>) -> bool {
    ctx.profile.trailing_thinking_ok
}

/// In repair: removes the unsigned-or-signed thinking blocks message `i` ends with (AN-19's
/// repair, reported under `rule`), and the message when nothing is left and it is not the
/// last. A message made of one thinking block in the last position is a prefill, left to
/// AN-03/AN-20. Returns true when message `i` itself was removed: its successor is at `i` now.
#[must_use = "a removed message moves its successor to `i`"]
pub fn remove_trailing_thinking(
    ctx: &Ctx<'_>,
    f: &mut Fixer<'_, '_>,
    rule: RuleId,
    i: usize,
    reason: &str,
) -> bool {
    if f.transcript().format != Format::Anthropic
        || trailing_thinking_ok(ctx)
        || f.role(i) != Role::Assistant
    {
        return false;
    }
    let mut removed_any = false;
    while let Some(n) = f.block_count(i).checked_sub(1) {
        let thinking_last = f
            .block(i, n)
            .is_some_and(|b| b.kind() == BlockKind::Thinking);
        let prefill = n == 0 && i + 1 == f.len();
        if !thinking_last || prefill || !f.remove_block(rule, i, n, reason) {
            break;
        }
        removed_any = true;
    }
    removed_any
        && f.block_count(i) == 0
        && i + 1 < f.len()
        && f.remove_message(
            rule,
            i,
            "removed a message left with no content once its trailing thinking went",
        )
}

/// Removes every thinking and redacted thinking block of message `i`, whole, each reported under
/// `rule` with `reason`, and nothing else.
pub fn remove_thinking(f: &mut Fixer<'_, '_>, rule: RuleId, i: usize, reason: &str) {
    let mut j = 0;
    while j < f.block_count(i) {
        let thinking = f.block(i, j).is_some_and(|b| b.kind().is_thinking());
        if thinking && f.remove_block(rule, i, j, reason) {
            continue;
        }
        j += 1;
    }
}

/// Removes every thinking block of message `i` ([`remove_thinking`]), then the whitespace text
/// that led into them (an adaptive lead-in is valid only before thinking), then the message
/// itself if nothing is left and it is not the last: all under `rule`. Callers walking messages
/// by index walk them from the end.
pub fn drop_thinking(f: &mut Fixer<'_, '_>, rule: RuleId, i: usize, reason: &str) {
    remove_thinking(f, rule, i, reason);
    let mut j = 0;
    while j < f.block_count(i) {
        let orphaned_lead_in = f.block(i, j).is_some_and(|b| {
            b.kind() == BlockKind::Text && b.is_blank() && b.block.signature.is_none()
        });
        if orphaned_lead_in
            && f.remove_block(
                rule,
                i,
                j,
                "removed whitespace text that led into thinking blocks that were removed",
            )
        {
            continue;
        }
        j += 1;
    }
    if f.block_count(i) == 0 && i + 1 < f.len() {
        f.remove_message(
            rule,
            i,
            "removed a message left with no content once its thinking went",
        );
    }
}

/// The comparable shape of a message: non-blank block types in order, with the decoded
/// thinking, signature and data of guarded blocks.
type Shape = Vec<(String, Option<String>, Option<String>)>;

fn shape<'d>(blocks: impl Iterator<Item = BlockRef<'d>>) -> Shape {
    blocks
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

/// The blocks of message `i` of a transcript as it was read (no draft over it).
fn read_blocks<'d>(t: &'d Transcript<'_>, i: usize) -> impl Iterator<Item = BlockRef<'d>> {
    t.blocks_of(i).iter().map(|block| BlockRef {
        src: t.src,
        block,
        orig: None,
    })
}

/// The provenance of a thinking block's signature (`signature`, or `data` of redacted thinking),
/// without reading it again when the reader already found it to be base64.
pub fn signature_provenance(b: &BlockRef<'_>) -> Provenance {
    match b.block.signature_field() {
        Some(s) if b.block.signature_is_base64(b.src) => provenance_of_base64(s.raw(b.src)),
        field => provenance(b.str(field).as_deref()),
    }
}

/// A stored original of assistant message `i`: its blocks and the raw texts of its guarded
/// blocks.
pub type Original = (Vec<DraftBlock>, Vec<String>);

/// The turn store's original of message `i`, if it has one that differs from the message in its
/// thinking.
pub fn stored_original(ctx: &Ctx<'_>, d: &Draft<'_, '_>, i: usize) -> Option<Original> {
    let store = ctx.store?;
    if d.transcript().format != Format::Anthropic {
        return None;
    }
    let o = d.origin(i)?;
    // A message that holds blocks of another input message (AN-02 merged them in) is no longer
    // the turn the store kept: putting that turn back would drop what was merged in, with only
    // a "restored" to show for it. The rule's own repair (reported block by block) goes instead.
    let t = d.transcript();
    if d.blocks(i).any(|b| {
        b.orig
            .and_then(|n| t.locate_block(n as usize))
            .is_some_and(|(m, _)| m != o)
    }) {
        return None;
    }
    let turn = store.find(d.transcript(), o)?;
    let body = format!(
        "{{\"type\":\"message\",\"role\":\"assistant\",\"content\":{}}}",
        turn.content
    );
    let st = read(&body, FormatHint::Exactly(Format::Anthropic)).ok()?;
    if !st.blocks.iter().any(|b| b.kind().is_thinking()) {
        return None;
    }
    // A stored turn with a thinking block whose signature can never verify (a gateway's empty
    // or dummy signature) is no original to put back: AN-23 would remove that block again, and
    // the next pass would restore it, until the pass limit.
    if read_blocks(&st, 0).any(|b| {
        b.kind().is_thinking()
            && (b.kind() == BlockKind::Thinking && !b.block.has_signature_key
                || signature_provenance(&b) != Provenance::Plausible)
    }) {
        return None;
    }
    let stored = shape(read_blocks(&st, 0));
    if stored == shape(d.blocks(i)) {
        return None;
    }
    // The store restores what the client changed, never what this repair changed: when the
    // message came in as the store has it, a rule of this run made the difference (AN-23 removed
    // a block whose signature cannot verify), and putting the turn back would undo that repair,
    // pass after pass. The rule then repairs its own way.
    if stored == shape(read_blocks(t, o)) {
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

/// Restores message `i` from the turn store, under `rule`. True when it did.
pub fn restore(ctx: &Ctx<'_>, f: &mut Fixer<'_, '_>, rule: RuleId, i: usize) -> bool {
    match stored_original(ctx, f, i) {
        Some((blocks, guarded)) => f.restore_message(rule, i, blocks, guarded),
        None => false,
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! The one helper every rule's tests go through: the exact findings, the exact repaired
    //! bytes, what is left, and idempotence.

    use turnkeeper_model::{FormatHint, read};

    use crate::{Options, RequestChange, Severity, check, repair};

    /// A signature that looks like a real one (base64).
    pub const SIG: &str = "EqQBCkYIBxgCKkDv\\u002bZ9Q==";

    /// Manual thinking.
    pub const MANUAL: &str = r#"{"type":"enabled","budget_tokens":2048}"#;

    /// A signed thinking block.
    pub fn thinking(text: &str) -> String {
        format!(r#"{{"type":"thinking","thinking":"{text}","signature":"{SIG}"}}"#)
    }

    /// A request body.
    pub fn body(model: &str, thinking_param: &str, messages: &str) -> String {
        let th = if thinking_param.is_empty() {
            String::new()
        } else {
            format!(r#""thinking":{thinking_param},"#)
        };
        format!(r#"{{"model":"{model}","max_tokens":8000,{th}"messages":[{messages}]}}"#)
    }

    /// A request body with a top-level system prompt, as Claude Code sends it (which also makes
    /// a body of plain-text messages with a `system` message among them an Anthropic one, not a
    /// Chat Completions one, to the sniffer).
    pub fn body_with_system(model: &str, messages: &str) -> String {
        format!(
            r#"{{"model":"{model}","max_tokens":8000,"system":"You are a coding agent.","messages":[{messages}]}}"#
        )
    }

    /// What a case must give.
    pub struct Expect<'a> {
        /// The rule ids `check` reports at error level, in order.
        pub rules: &'a [&'a str],
        /// The repaired body; `None`: the input itself, byte for byte.
        pub after: Option<&'a str>,
        /// Error-level rule ids left after repair.
        pub left: &'a [&'a str],
    }

    /// Runs one case under default options.
    pub fn check_case(input: &str, expect: Expect<'_>) {
        check_with(input, &Options::default(), expect);
    }

    /// Runs one case under `opts`.
    pub fn check_with(input: &str, opts: &Options<'_>, expect: Expect<'_>) {
        let t = read(input, FormatHint::Auto).expect("test input reads");
        let found: Vec<&str> = check(&t, opts)
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.rule.as_str())
            .collect();
        assert_eq!(found, expect.rules, "findings of {input}");
        let r = repair(&t, opts).expect("repair passes the guard");
        match expect.after {
            None => {
                assert_eq!(r.body, input, "a valid body comes back unchanged");
                assert!(
                    matches!(r.body, std::borrow::Cow::Borrowed(_)),
                    "and borrowed"
                );
            }
            Some(after) => assert_eq!(r.body, after, "report: {:#?}", r.report.changes),
        }
        let left: Vec<&str> = r
            .report
            .findings_left
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.rule.as_str())
            .collect();
        assert_eq!(left, expect.left, "left: {:#?}", r.report.findings_left);
        let t2 = read(&r.body, FormatHint::Auto).expect("output reads");
        let mut again = opts.clone();
        for rc in &r.report.request_changes {
            if let RequestChange::AddBeta { value, .. } = rc {
                again.betas.push(value.clone());
            }
        }
        let r2 = repair(&t2, &again).expect("second repair");
        assert_eq!(r2.body, r.body, "repair is idempotent");
    }

    /// A turn store holding one assistant response whose content is the blocks `content` (JSON
    /// array elements, without the brackets).
    pub fn store_of(content: &str) -> turnkeeper_guard::TurnStore {
        let mut store = turnkeeper_guard::TurnStore::in_memory();
        store
            .add_response(&format!(
                r#"{{"type":"message","role":"assistant","content":[{content}]}}"#
            ))
            .expect("stored");
        store
    }

    /// The changes `repair` reports for `input` under `opts`, each as `RULE action path`: which
    /// rule made which change, for cases where that (not only the bytes) is what is pinned.
    pub fn changes(input: &str, opts: &Options<'_>) -> Vec<String> {
        let t = read(input, FormatHint::Auto).expect("test input reads");
        let r = repair(&t, opts).expect("repair passes the guard");
        r.report
            .changes
            .iter()
            .map(|c| format!("{} {} {}", c.rule, c.action, c.path))
            .collect()
    }

    /// The error-level findings `check` reports for `input` under `opts`, each as
    /// `RULE path: message`: for cases where what a finding says (not only its rule) is pinned.
    pub fn findings(input: &str, opts: &Options<'_>) -> Vec<String> {
        let t = read(input, FormatHint::Auto).expect("test input reads");
        check(&t, opts)
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| format!("{} {}: {}", f.rule, f.path, f.message))
            .collect()
    }
}
