//! The invariants. Each takes an input text (any format) and the prevent [`Options`] it is
//! repaired under, and returns `Err(explanation)` when the invariant does not hold. An input that
//! does not parse makes every repair invariant hold vacuously (invariant 10 covers it).
//!
//! | # | function | what |
//! |---|---|---|
//! | 1 | [`inv_thinking_first`] | manual mode: thinking leads; adaptive: the model's order kept |
//! | 2 | [`inv_untouched_thinking`] | thinking bytes identical, none invented, removals named |
//! | 3 | [`inv_idempotent`] | `repair(repair(x)) == repair(x)`, second report empty |
//! | 4 | [`inv_noop_on_valid`] | nothing found → output is the input, byte for byte |
//! | 5 | [`inv_convergence`] | nothing the policy can repair is left |
//! | 6 | [`inv_roundtrip`] | `Draft::new(&t).output() == input`, every format |
//! | 7 | [`inv_tool_pairing`] | every call answered once, first, in the next user message |
//! | 8 | [`inv_conservation`] | no text, tool input or output lost unless reported |
//! | 9 | [`inv_classifier_stable`] | a corpus error keeps its kind when wrapped |
//! | 10 | [`inv_no_panic`] | every entry point survives arbitrary bytes, output bounded |
//! | 11 | [`inv_repair_into`] | `repair_into` with a reused buffer gives `repair`'s body and report, told of its sweeps or not |

use std::borrow::Cow;
use std::collections::HashMap;

use turnkeeper_guard::{Provenance, fingerprint, is_guarded, provenance};
use turnkeeper_model::opencode::{
    AnthropicOptions, load_export, to_anthropic_request, to_model_messages,
};
use turnkeeper_model::{
    BlockKind, BodyKind, Content, Draft, Format, FormatHint, Role, Transcript, read, read_bytes,
    sniff,
};
use turnkeeper_prevent::{
    BodyAt, Mode, Options, PreventError, ReadBehind, Repaired, RequestChange, Severity, check,
    context, repair, repair_into,
};
use turnkeeper_recover::{Attempts, classify, classify_with_hint, plan};

use crate::corpus::ErrorItem;

/// What an invariant returns: `Err` explains the violation.
pub type Outcome = Result<(), String>;

/// A repair invariant: input text and options in, [`Outcome`] out.
pub type Invariant = fn(&str, &Options<'_>) -> Outcome;

/// Reads and repairs `input`. `Ok(None)` when it does not read; `Err` when the repair failed
/// closed (a guard violation is a turnkeeper bug, and every repair invariant reports it).
pub fn run<'a>(
    input: &'a str,
    opts: &Options<'_>,
) -> Result<Option<(Transcript<'a>, Repaired<'a>)>, String> {
    let Ok(t) = read(input, FormatHint::Auto) else {
        return Ok(None);
    };
    let r = repaired(&t, opts)?;
    Ok(Some((t, r)))
}

/// Repairs `t`; `Err` when the repair failed closed, as [`run`] reports it.
fn repaired<'a>(t: &Transcript<'a>, opts: &Options<'_>) -> Result<Repaired<'a>, String> {
    match repair(t, opts) {
        Ok(r) => Ok(r),
        Err(PreventError::Guard(g)) => Err(format!("repair failed closed: {g}")),
        Err(e) => Err(format!("repair failed on a readable input: {e}")),
    }
}

/// The options a second run gets: the first run's betas, and its thinking change already in
/// the body (so an explicit thinking override is dropped).
pub fn second_options<'s>(opts: &Options<'s>, r: &Repaired<'_>) -> Options<'s> {
    let mut again = opts.clone();
    for rc in &r.report.request_changes {
        match rc {
            RequestChange::AddBeta { value, .. } if !again.betas.contains(value) => {
                again.betas.push(value.clone());
            }
            RequestChange::SetParam { key, .. } if key == "thinking" => again.thinking = None,
            _ => {}
        }
    }
    again
}

/// The reading of a repaired body an invariant judges, or why it does not read.
type Output<'o, 'a> = Result<&'o Transcript<'a>, &'o String>;

fn read_out<'a>(body: &'a str, format: Format) -> Result<Transcript<'a>, String> {
    read(body, FormatHint::Exactly(format))
        .map_err(|e| format!("the repaired body does not read: {e}"))
}

/// The thinking mode the repaired request is sent with.
fn mode_after(t: &Transcript<'_>, opts: &Options<'_>, r: &Repaired<'_>) -> Mode {
    let mut mode = context(t, opts).mode;
    for rc in &r.report.request_changes {
        if let RequestChange::SetParam { key, value, .. } = rc
            && key == "thinking"
        {
            let ty = serde_json::from_str::<serde_json::Value>(value)
                .ok()
                .and_then(|v| v.get("type").and_then(|x| x.as_str()).map(str::to_owned));
            if let Some(m) = ty.as_deref().and_then(Mode::parse) {
                mode = m;
            }
        }
    }
    mode
}

fn blocks_of<'t>(t: &'t Transcript<'_>, i: usize) -> &'t [turnkeeper_model::Block] {
    t.blocks_of(i)
}

/// True when message `i` is made only of tool results (and has at least one block).
fn only_results(t: &Transcript<'_>, i: usize) -> bool {
    let b = blocks_of(t, i);
    !b.is_empty() && b.iter().all(|b| b.kind() == BlockKind::ToolResult)
}

// ---------------------------------------------------------------------------------------------
// 1. Thinking first
// ---------------------------------------------------------------------------------------------

/// Invariant 1. After repair of an Anthropic request in manual mode, every assistant message that
/// holds thinking starts with it, and the open tool loop's first assistant message starts with
/// thinking. A repair that disabled or switched thinking (a `thinking` request change) is judged
/// in the new mode. In adaptive mode the blocks of every assistant message keep the model's
/// order (blocks that came from the same input message appear in their input order).
///
/// # Errors
/// The first violation.
pub fn inv_thinking_first(input: &str, opts: &Options<'_>) -> Outcome {
    let Some((t, r)) = run(input, opts)? else {
        return Ok(());
    };
    thinking_first_on(&t, &r, read_out(&r.body, t.format).as_ref(), opts)
}

/// [`inv_thinking_first`] on a repair already made, and the reading of its output.
fn thinking_first_on(
    t: &Transcript<'_>,
    r: &Repaired<'_>,
    out: Output<'_, '_>,
    opts: &Options<'_>,
) -> Outcome {
    if t.format != Format::Anthropic || t.body != BodyKind::Request {
        return Ok(());
    }
    let out = out.map_err(Clone::clone)?;
    let mode = mode_after(t, opts, r);
    match mode {
        Mode::Manual => {
            for (i, m) in out.messages.iter().enumerate() {
                if m.role != Role::Assistant {
                    continue;
                }
                let b = blocks_of(out, i);
                if b.iter().any(|b| b.kind().is_thinking()) && !b[0].kind().is_thinking() {
                    return Err(format!(
                        "manual mode: output messages[{i}] holds thinking but starts with `{}`",
                        b[0].type_name(out.src)
                    ));
                }
            }
            // A model that refuses manual mode outright rejects the request for that first
            // (CFG-02, left for the caller: the thinking configuration is the caller's choice),
            // and no strategy of AN-16's may apply to it (none disables thinking there). Found
            // by fuzzing: corpus/regressions/repair_invariants-6ac8dd43c63bc58a.
            let manual_refused = r
                .report
                .findings_left
                .iter()
                .any(|f| f.rule.as_str() == "CFG-02");
            if !manual_refused && let Some(i) = open_loop_start(out) {
                let first = blocks_of(out, i).first();
                if !first.is_some_and(|b| b.kind().is_thinking()) {
                    return Err(format!(
                        "manual mode: the open tool loop's first assistant message (output messages[{i}]) does not start with thinking, and the request's thinking was not changed (findings left: {:?})",
                        r.report
                            .findings_left
                            .iter()
                            .map(|f| f.rule)
                            .collect::<Vec<_>>()
                    ));
                }
            }
        }
        Mode::Adaptive => keeps_model_order(t, out)?,
        Mode::Off => {}
    }
    Ok(())
}

/// The open tool loop of a transcript: the first assistant message of the final turn when the
/// last message is a user message made only of tool results.
pub fn open_loop_start(t: &Transcript<'_>) -> Option<usize> {
    let last = t.messages.len().checked_sub(1)?;
    if t.messages[last].role != Role::User || !only_results(t, last) {
        return None;
    }
    let start = (0..last)
        .rev()
        .find(|&k| t.messages[k].role == Role::User && !only_results(t, k))
        .map_or(0, |k| k + 1);
    (start..last).find(|&k| t.messages[k].role == Role::Assistant)
}

/// A block's identity for [`keeps_model_order`]: a tag (0 bytes, 1 text, 2 call id) and the
/// text it is known by ([`order_key`]).
type OrderKey<'t> = (u8, Cow<'t, str>);

/// What identifies a block across a repair, for [`keeps_model_order`]: its bytes, except for a
/// text block (its text) and a call (its id), which a repair may edit in place (a field the type
/// does not define stripped, AN-06) and which are still the block the model wrote. Keyed by
/// bytes, an edited block could equal another message's copy of it written in the other order
/// (found by fuzzing: corpus/regressions/repair_invariants-8fb81177614efbe3, a text block after
/// a thinking block in one message, and the same two before each other in an earlier one, the
/// later text carrying a foreign field).
fn order_key<'t>(t: &'t Transcript<'_>, b: &turnkeeper_model::Block) -> OrderKey<'t> {
    match (b.kind(), b.text, b.id) {
        (BlockKind::Text, Some(text), _) => (1, text.decode(t.src)),
        (BlockKind::ToolCall, _, Some(id)) => (2, id.decode(t.src)),
        _ => (0, Cow::Borrowed(b.span.get(t.src))),
    }
}

fn keeps_model_order(t: &Transcript<'_>, out: &Transcript<'_>) -> Outcome {
    // Every place each block occurs in the input's assistant messages (generated and real
    // transcripts repeat identical blocks, so one block may sit in several messages).
    let mut at: HashMap<OrderKey<'_>, Vec<(usize, usize)>> = HashMap::new();
    for (i, m) in t.messages.iter().enumerate() {
        if m.role == Role::Assistant {
            for (j, b) in blocks_of(t, i).iter().enumerate() {
                at.entry(order_key(t, b)).or_default().push((i, j));
            }
        }
    }
    for (i, m) in out.messages.iter().enumerate() {
        if m.role != Role::Assistant {
            continue;
        }
        // Each known block's key, and its bytes for the message.
        let known: Vec<(OrderKey<'_>, &str)> = blocks_of(out, i)
            .iter()
            .map(|b| (order_key(out, b), b.span.get(out.src)))
            .filter(|(k, _)| at.contains_key(k))
            .collect();
        for pair in known.windows(2) {
            let (a, b) = (&at[&pair[0].0], &at[&pair[1].0]);
            let together = a.iter().any(|x| b.iter().any(|y| x.0 == y.0));
            let in_order = a.iter().any(|x| b.iter().any(|y| x.0 == y.0 && x.1 < y.1));
            if together && !in_order {
                return Err(format!(
                    "adaptive mode: output messages[{i}] puts {} before {}, which the model wrote the other way round",
                    clip(pair[0].1),
                    clip(pair[1].1)
                ));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 2. Untouched thinking
// ---------------------------------------------------------------------------------------------

/// Invariant 2. Every thinking / redacted thinking block (and every other guarded block: signed
/// Gemini parts, OpenCode reasoning) in the output is byte-identical to one in the input; none is
/// created; every input one missing from the output is named in the report by its fingerprint
/// (a `removed_block`, or a `removed_message` listing it).
///
/// # Errors
/// The first violation.
pub fn inv_untouched_thinking(input: &str, opts: &Options<'_>) -> Outcome {
    let Some((t, r)) = run(input, opts)? else {
        return Ok(());
    };
    untouched_thinking_on(&t, &r, read_out(&r.body, t.format).as_ref(), opts)
}

/// [`inv_untouched_thinking`] on a repair already made, and the reading of its output.
fn untouched_thinking_on(
    t: &Transcript<'_>,
    r: &Repaired<'_>,
    out: Output<'_, '_>,
    _opts: &Options<'_>,
) -> Outcome {
    let out = out.map_err(Clone::clone)?;
    let mut left: HashMap<&str, usize> = HashMap::new();
    for b in t.blocks.iter().filter(|b| guarded(t.src, b)) {
        *left.entry(b.span.get(t.src)).or_insert(0) += 1;
    }
    for b in out.blocks.iter().filter(|b| guarded(out.src, b)) {
        let raw = b.span.get(out.src);
        match left.get_mut(raw) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                return Err(format!(
                    "output {} is a thinking block that is not byte-identical to any input block (fingerprint {}): {}",
                    out.block_path(b.msg as usize, b.pos as usize),
                    fingerprint(raw),
                    clip(raw)
                ));
            }
        }
    }
    let mut named: HashMap<String, usize> = HashMap::new();
    for c in &r.report.changes {
        if let Some(fp) = &c.fingerprint {
            for f in fp.split(',') {
                *named.entry(f.trim().to_owned()).or_insert(0) += 1;
            }
        }
    }
    for b in t.blocks.iter().filter(|b| guarded(t.src, b)) {
        let raw = b.span.get(t.src);
        if let Some(n) = left.get_mut(raw).filter(|n| **n > 0) {
            *n -= 1;
            let fp = fingerprint(raw);
            match named.get_mut(&fp) {
                Some(k) if *k > 0 => *k -= 1,
                _ => {
                    return Err(format!(
                        "input {} (fingerprint {fp}) is missing from the output and no change names it; changes: {:?}",
                        t.block_path(b.msg as usize, b.pos as usize),
                        change_list(&r.report)
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The report's changes as (rule, action, path), for failure messages.
fn change_list(
    report: &turnkeeper_prevent::Report,
) -> Vec<(
    turnkeeper_prevent::RuleId,
    turnkeeper_prevent::ChangeAction,
    &str,
)> {
    report
        .changes
        .iter()
        .map(|c| (c.rule, c.action, c.path.as_str()))
        .collect()
}

/// Guarded blocks, except Gemini call parts carrying the documented dummy signature: GM-05 makes
/// that the one signature a repair may write, on a call that never had one, and it is not
/// thinking content.
fn guarded(src: &str, b: &turnkeeper_model::Block) -> bool {
    is_guarded(b)
        && (b.kind().is_thinking()
            || provenance(b.signature.map(|s| s.decode(src)).as_deref()) != Provenance::Sentinel)
}

fn clip(s: &str) -> String {
    if s.len() <= 200 {
        return s.to_owned();
    }
    let mut end = 200;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

// ---------------------------------------------------------------------------------------------
// 3. Idempotence
// ---------------------------------------------------------------------------------------------

/// Invariant 3. `repair(repair(x)) == repair(x)` byte for byte, and the second report is empty.
/// The second run is given the first's request changes (its betas; its thinking change is
/// already in the body).
///
/// # Errors
/// The first difference.
pub fn inv_idempotent(input: &str, opts: &Options<'_>) -> Outcome {
    let Some((t, r)) = run(input, opts)? else {
        return Ok(());
    };
    idempotent_on(&t, &r, read_out(&r.body, t.format).as_ref(), opts)
}

/// [`inv_idempotent`] on a repair already made, and the reading of its output.
fn idempotent_on(
    _t: &Transcript<'_>,
    r1: &Repaired<'_>,
    out: Output<'_, '_>,
    opts: &Options<'_>,
) -> Outcome {
    let again = second_options(opts, r1);
    let t2 = out.map_err(Clone::clone)?;
    let r2 = repair(t2, &again).map_err(|e| format!("second repair failed: {e}"))?;
    if r2.body != r1.body {
        return Err(format!(
            "second repair changed the body: {:?}\nfirst output: {}\nsecond output: {}",
            r2.report.changes, r1.body, r2.body
        ));
    }
    if !r2.report.is_empty() {
        return Err(format!(
            "second repair reported changes on an unchanged body: {:?} {:?}",
            r2.report.changes, r2.report.request_changes
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 4. No-op on valid input
// ---------------------------------------------------------------------------------------------

/// Invariant 4. When `check` finds nothing, `repair` returns the input byte for byte with an
/// empty report.
///
/// # Errors
/// When it does not.
pub fn inv_noop_on_valid(input: &str, opts: &Options<'_>) -> Outcome {
    noop_on_valid_counted(input, opts).map(|_| ())
}

/// [`inv_noop_on_valid`], saying whether the input was clean, that is whether the invariant's
/// assertion ran (`Ok(true)`) or the input was passed over (`Ok(false)`: unreadable, or `check`
/// found something). Properties count the `true`s, so a generator that stops making clean
/// inputs cannot let the invariant pass without testing anything.
///
/// # Errors
/// What repair changed or reported on a clean input.
pub fn noop_on_valid_counted(input: &str, opts: &Options<'_>) -> Result<bool, String> {
    let Ok(t) = read(input, FormatHint::Auto) else {
        return Ok(false);
    };
    if !check(&t, opts).is_empty() {
        return Ok(false);
    }
    let r = repair(&t, opts).map_err(|e| format!("repair of a clean input failed: {e}"))?;
    noop_verdict(input, &r).map(|()| true)
}

/// [`inv_noop_on_valid`] on the repair of an input `check` found nothing in.
fn noop_verdict(input: &str, r: &Repaired<'_>) -> Outcome {
    if r.body != input {
        return Err(format!(
            "check found nothing, yet repair changed the body: {:?}",
            r.report.changes
        ));
    }
    if !r.report.is_empty() {
        return Err(format!(
            "check found nothing, yet repair reported {:?}",
            r.report
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 5. Convergence
// ---------------------------------------------------------------------------------------------

/// Invariant 5. `check(repair(x))` (under the second-run options) has no error-level finding the
/// policy says it can repair (`repair` is `Some`), apart from rule `config`, whose findings are
/// reported, not applied.
///
/// # Errors
/// The findings left.
pub fn inv_convergence(input: &str, opts: &Options<'_>) -> Outcome {
    let Some((t, r)) = run(input, opts)? else {
        return Ok(());
    };
    convergence_on(&t, &r, read_out(&r.body, t.format).as_ref(), opts)
}

/// [`inv_convergence`] on a repair already made, and the reading of its output.
fn convergence_on(
    _t: &Transcript<'_>,
    r: &Repaired<'_>,
    out: Output<'_, '_>,
    opts: &Options<'_>,
) -> Outcome {
    let out = out.map_err(Clone::clone)?;
    let again = second_options(opts, r);
    let left: Vec<String> = check(out, &again)
        .into_iter()
        .filter(|f| f.severity == Severity::Error && f.repair.is_some() && !f.rule.is_config())
        .map(|f| format!("{} at {}: {}", f.rule, f.path, f.message))
        .collect();
    if left.is_empty() {
        Ok(())
    } else {
        Err(format!("repairable errors left after repair: {left:#?}"))
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Lossless round trip
// ---------------------------------------------------------------------------------------------

/// Invariant 6. For every format the input reads as (sniffed, and each format forced), an
/// untouched draft writes the input back byte for byte.
///
/// # Errors
/// The first format whose output differs.
pub fn inv_roundtrip(input: &str) -> Outcome {
    for hint in HINTS {
        if let Ok(t) = read(input, hint) {
            roundtrip_on(&t, hint)?;
        }
    }
    Ok(())
}

/// Every way a text is read: the sniffed format, then each format forced. `read` with
/// [`FormatHint::Auto`] is by definition `read` with the sniffed format forced.
pub const HINTS: [FormatHint; 4] = [
    FormatHint::Auto,
    FormatHint::Exactly(Format::Anthropic),
    FormatHint::Exactly(Format::Gemini),
    FormatHint::Exactly(Format::Opencode),
];

/// [`inv_roundtrip`] on one reading `t` of its source (`hint` names the reading in the error).
///
/// # Errors
/// When the untouched draft's output differs from `t.src`.
pub fn roundtrip_on(t: &Transcript<'_>, hint: FormatHint) -> Outcome {
    let out = Draft::new(t).output();
    if out != t.src {
        return Err(format!(
            "{hint:?}: Draft::new(&t).output() differs from the input: {}",
            clip(&out)
        ));
    }
    reuse_on(t, hint)
}

/// The proxy's reading of a request against the kept reading of the request before it
/// (`read_reusing_copies` with every earlier message offered at its own place, the earlier
/// reading without root, messages span or settings): against the body a message shorter, and
/// against the body itself, the reading is `t`'s own, and only byte-identical messages are moved
/// over.
///
/// # Errors
/// When a reading made against an earlier body differs from the body's own.
pub fn reuse_on(t: &Transcript<'_>, hint: FormatHint) -> Outcome {
    if t.body != BodyKind::Request || t.messages.is_empty() {
        return Ok(());
    }
    let mut d = Draft::new(t);
    d.remove_message(t.messages.len() - 1);
    let shorter = d.output();
    let Ok(s) = read(&shorter, FormatHint::Exactly(t.format)) else {
        return Err(format!(
            "{hint:?}: the body without its last message does not read: {}",
            clip(&shorter)
        ));
    };
    for prev in [&s, t] {
        crate::kept::blocks_read_as_own(t, prev).map_err(|e| format!("{hint:?}: {e}"))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 7. Tool pairing
// ---------------------------------------------------------------------------------------------

/// Invariant 7 (Anthropic requests). After repair, consecutive same-role messages taken as one
/// (the API merges them): every assistant run's `tool_use` ids are answered by exactly one
/// `tool_result` each, all at the front of the next user run, and no `tool_result` appears
/// anywhere else. A call with no `id` at all, which no result can name, that the repair leaves
/// reported (an AN-12 finding at that block: a signed turn, which must not be edited) takes no
/// part in the pairing. Calls that repeat one id (left reported by AN-46 in a signed turn) may
/// share one result or have one each (corpus/regressions/repair_invariants-a56b0eb54e6fabd1 and
/// -36033365a70330ea).
///
/// # Errors
/// The first violation.
pub fn inv_tool_pairing(input: &str, opts: &Options<'_>) -> Outcome {
    let Some((t, r)) = run(input, opts)? else {
        return Ok(());
    };
    tool_pairing_on(&t, &r, read_out(&r.body, t.format).as_ref(), opts)
}

/// [`inv_tool_pairing`] on a repair already made, and the reading of its output.
fn tool_pairing_on(
    t: &Transcript<'_>,
    _r: &Repaired<'_>,
    out: Output<'_, '_>,
    _opts: &Options<'_>,
) -> Outcome {
    if t.format != Format::Anthropic || t.body != BodyKind::Request {
        return Ok(());
    }
    let out = out.map_err(Clone::clone)?;
    let n = out.messages.len();
    // The only message is never emptied (the API refuses an empty list as well): when its
    // pairing could not be mended, the repair says so in what it leaves.
    let left_pairing = _r
        .report
        .findings_left
        .iter()
        .any(|f| matches!(f.rule.as_str(), "AN-08" | "AN-09" | "AN-10" | "AN-11"));
    if n == 1 && left_pairing {
        return Ok(());
    }
    let left_an12 = |k: usize, j: usize| {
        _r.report.findings_left.iter().any(|f| {
            f.rule.as_str() == "AN-12" && f.message_index == Some(k) && f.block_index == Some(j)
        })
    };
    let mut i = 0;
    let mut pending: Option<(usize, Vec<String>)> = None;
    while i < n {
        let role = out.messages[i].role;
        let end = (i..n).find(|&k| out.messages[k].role != role).unwrap_or(n);
        // The run's blocks in order (a string content counts as one text block).
        let mut kinds: Vec<(BlockKind, Option<String>)> = Vec::new();
        for k in i..end {
            match out.messages[k].content {
                Content::String(_) => kinds.push((BlockKind::Text, None)),
                _ => {
                    for (j, b) in blocks_of(out, k).iter().enumerate() {
                        if b.kind() == BlockKind::ToolCall && b.id.is_none() && left_an12(k, j) {
                            continue;
                        }
                        let id = match b.kind() {
                            BlockKind::ToolCall => b.id.map(|s| s.decode(out.src).into_owned()),
                            BlockKind::ToolResult => {
                                b.tool_use_id.map(|s| s.decode(out.src).into_owned())
                            }
                            _ => None,
                        };
                        kinds.push((b.kind(), id));
                    }
                }
            }
        }
        match role {
            Role::Assistant => {
                if let Some((at, calls)) = pending.take() {
                    return Err(format!(
                        "output messages[{at}]: calls {calls:?} are followed by another assistant run"
                    ));
                }
                let calls: Vec<String> = kinds
                    .iter()
                    .filter(|(k, _)| *k == BlockKind::ToolCall)
                    .map(|(_, id)| id.clone().unwrap_or_default())
                    .collect();
                if !calls.is_empty() {
                    pending = Some((i, calls));
                }
            }
            Role::User => {
                let calls = pending.take().map(|(_, c)| c).unwrap_or_default();
                let front: Vec<String> = kinds
                    .iter()
                    .take_while(|(k, _)| *k == BlockKind::ToolResult)
                    .map(|(_, id)| id.clone().unwrap_or_default())
                    .collect();
                let total = kinds
                    .iter()
                    .filter(|(k, _)| *k == BlockKind::ToolResult)
                    .count();
                if total != front.len() {
                    return Err(format!(
                        "output messages[{i}..{end}]: a tool_result stands after another block"
                    ));
                }
                if !answers_calls(&calls, &front) {
                    return Err(format!(
                        "output messages[{i}..{end}]: results {front:?} do not answer the previous calls {calls:?} exactly once"
                    ));
                }
            }
            _ => {
                if let Some((at, calls)) = pending.take() {
                    return Err(format!(
                        "output messages[{at}]: calls {calls:?} are followed by a {role:?} message"
                    ));
                }
            }
        }
        i = end;
    }
    if let Some((at, calls)) = pending {
        return Err(format!(
            "output messages[{at}]: calls {calls:?} end the transcript with no result"
        ));
    }
    Ok(())
}

/// Whether the results `front` answer `calls` (ids, in order): each call id has a result and no
/// more results than calls, so exactly once where ids are unique. Calls that repeat an id
/// (AN-46, left in a signed turn) may share the first's result or have one each.
fn answers_calls(calls: &[String], front: &[String]) -> bool {
    let count = |v: &[String], id: &String| v.iter().filter(|x| *x == id).count();
    calls.iter().chain(front).all(|id| {
        let (c, r) = (count(calls, id), count(front, id));
        r >= 1 && r <= c
    })
}

// ---------------------------------------------------------------------------------------------
// 8. Conservation
// ---------------------------------------------------------------------------------------------

/// What a block carries that must not be lost.
fn payloads(t: &Transcript<'_>) -> Vec<(String, String, String)> {
    let norm = |raw: &str| {
        serde_json::from_str::<serde_json::Value>(raw)
            .map(|v| v.to_string())
            .unwrap_or_else(|_| raw.to_owned())
    };
    let mut out = Vec::new();
    for (i, m) in t.messages.iter().enumerate() {
        if let Content::String(s) = m.content {
            if !s.is_blank(t.src) {
                out.push((
                    t.message_path(i),
                    "text".to_owned(),
                    s.decode(t.src).into_owned(),
                ));
            }
            continue;
        }
        for (j, b) in blocks_of(t, i).iter().enumerate() {
            let path = t.block_path(i, j);
            match b.kind() {
                BlockKind::Text if !b.is_blank(t.src) => {
                    if let Some(s) = b.text {
                        out.push((path, "text".to_owned(), s.decode(t.src).into_owned()));
                    }
                }
                BlockKind::ToolCall => {
                    if let Some(c) = b.content {
                        out.push((path, "tool input".to_owned(), norm(c.get(t.src))));
                    }
                }
                BlockKind::ToolResult => {
                    if let Some(c) = b.content {
                        out.push((path, "tool output".to_owned(), norm(c.get(t.src))));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// True when `path` is `prefix` or lies inside it (`messages[3]` covers `messages[3].content[1]`
/// but not `messages[31]`).
fn within(path: &str, prefix: &str) -> bool {
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with(' '))
}

/// Invariant 8. Every non-blank text, tool input and tool output of the input is still in the
/// output (as a multiset of decoded values) unless a change that removes, edits or restores
/// names its block or message.
///
/// # Errors
/// The first value lost without a report.
pub fn inv_conservation(input: &str, opts: &Options<'_>) -> Outcome {
    let Some((t, r)) = run(input, opts)? else {
        return Ok(());
    };
    conservation_on(&t, &r, read_out(&r.body, t.format).as_ref(), opts)
}

/// [`inv_conservation`] on a repair already made, and the reading of its output.
fn conservation_on(
    t: &Transcript<'_>,
    r: &Repaired<'_>,
    out: Output<'_, '_>,
    _opts: &Options<'_>,
) -> Outcome {
    if t.body != BodyKind::Request {
        return Ok(());
    }
    let out = out.map_err(Clone::clone)?;
    let mut have: HashMap<(String, String), usize> = HashMap::new();
    for (_, k, v) in payloads(out) {
        *have.entry((k, v)).or_insert(0) += 1;
    }
    use turnkeeper_prevent::ChangeAction;
    const NAMING: &[ChangeAction] = &[
        ChangeAction::RemovedBlock,
        ChangeAction::RemovedMessage,
        ChangeAction::EditedBlock,
        ChangeAction::RestoredMessage,
        ChangeAction::MergedMessage,
    ];
    // Per value: input occurrences, and the paths of those no change names. A value is lost
    // when the input had more of it than the output; the loss is explained only when at least
    // that many of its input occurrences are named by a change.
    let mut inputs: HashMap<(String, String), (usize, Vec<String>)> = HashMap::new();
    for (path, kind, value) in payloads(t) {
        let named = r.report.changes.iter().any(|c| {
            // A later pass's change says so after its path (`messages[3] (pass 2)`); its path is
            // in the input's terms when it could be told, and begins `pass N:` when not.
            let cp = c.path.split(" (pass ").next().unwrap_or(&c.path);
            NAMING.contains(&c.action) && (within(&path, cp) || within(cp, &path))
        });
        let e = inputs.entry((kind, value)).or_default();
        e.0 += 1;
        if !named {
            e.1.push(path);
        }
    }
    for (key, (count, unnamed)) in &inputs {
        let kept = have.get(key).copied().unwrap_or(0);
        let lost = count.saturating_sub(kept);
        let named = count - unnamed.len();
        if lost > named {
            return Err(format!(
                "{lost} of {count} input occurrence(s) of a {} are not in the output, and changes name only {named} (unnamed: {unnamed:?}): {}\nchanges: {:?}",
                key.0,
                clip(&key.1),
                change_list(&r.report)
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 9. Classifier stability
// ---------------------------------------------------------------------------------------------

/// How real errors get wrapped on their way to a user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    /// The text becomes a JSON string inside a gateway's error object.
    JsonString,
    /// A Python SDK repr: `Error code: 400 - {'error': {'message': '…'}}`.
    PythonRepr,
    /// An agent's or gateway's prefix, by index into a small table.
    Prefix(u8),
    /// A terminal hard-wrap every `width` characters with `indent` spaces.
    Hard {
        /// Characters per line.
        width: u8,
        /// Spaces after each break.
        indent: u8,
    },
}

const PREFIXES: &[(&str, &str)] = &[
    ("APIError: ", ""),
    ("litellm.BadRequestError: AnthropicException - ", ""),
    ("Error: ", ""),
    ("[API Error: ", "]"),
    ("  ⎿  API Error: 400 ", ""),
    ("请求失败: ", ""),
    ("AI_APICallError: ", " (retryable: false)"),
];

impl Wrap {
    /// Wraps `text`.
    pub fn apply(self, text: &str) -> String {
        match self {
            Wrap::JsonString => {
                let inner = serde_json::to_string(text).unwrap_or_default();
                format!(
                    "{{\"error\":{{\"message\":{inner},\"code\":400,\"status\":\"INVALID_ARGUMENT\"}}}}"
                )
            }
            Wrap::PythonRepr => {
                let inner = text.replace('\\', "\\\\").replace('\'', "\\'");
                format!(
                    "Error code: 400 - {{'error': {{'message': '{inner}', 'type': 'invalid_request_error'}}}}"
                )
            }
            Wrap::Prefix(i) => {
                let (a, b) = PREFIXES[i as usize % PREFIXES.len()];
                format!("{a}{text}{b}")
            }
            Wrap::Hard { width, indent } => {
                let width = (width as usize).clamp(40, 120);
                let mut out = String::with_capacity(text.len() + text.len() / width * 9);
                for (i, c) in text.chars().enumerate() {
                    if i > 0 && i % width == 0 {
                        out.push('\n');
                        out.extend(std::iter::repeat_n(' ', indent as usize % 9));
                    }
                    out.push(c);
                }
                out
            }
        }
    }
}

/// Invariant 9. `item`, wrapped by each of `wraps` in turn, still classifies as its labelled
/// kind.
///
/// # Errors
/// The kind it got instead.
pub fn inv_classifier_stable(item: &ErrorItem, wraps: &[Wrap]) -> Outcome {
    let mut text = item.body.clone();
    for w in wraps {
        text = w.apply(&text);
    }
    let d = classify(item.status, &text);
    if d.kind == item.kind {
        Ok(())
    } else {
        Err(format!(
            "{}: {:?} wrapped by {wraps:?} classified as {:?}:\n{text}",
            item.id, item.kind, d.kind
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// 10. No panic, bounded work
// ---------------------------------------------------------------------------------------------

/// Invariant 10. Every entry point takes `bytes` without panicking: `read_bytes` and `sniff`
/// for each format, `check` and `repair`, `classify` (+ `plan`), `load_export` and the OpenCode
/// conversion. "Bounded work" is checked through what each step produces: a repaired body is at
/// most linear in the input (8 bytes out per byte in, plus 4 KiB) and findings are at most a
/// few per block.
///
/// # Errors
/// When an output exceeds its bound or a repair of a readable input fails.
pub fn inv_no_panic(bytes: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(bytes);
    let _ = sniff(&text);
    for hint in HINTS {
        let Ok(t) = read_bytes(bytes, hint) else {
            continue;
        };
        no_panic_on(&t, hint)?;
    }
    for probe in CLASSIFY_PROBES {
        no_panic_classify(&text, probe);
    }
    no_panic_opencode(&text);
    Ok(())
}

/// [`inv_no_panic`] on one reading `t` of the input (`hint` names it in the error): `check`
/// and `repair` under the default options, their outputs within bounds.
///
/// # Errors
/// When an output exceeds its bound or the repair fails.
pub fn no_panic_on(t: &Transcript<'_>, hint: FormatHint) -> Outcome {
    let opts = Options::default();
    let findings = check(t, &opts);
    let bound = 8 * (t.blocks.len() + t.messages.len()) + 64;
    if findings.len() > bound {
        return Err(format!(
            "{hint:?}: {} findings for {} blocks",
            findings.len(),
            t.blocks.len()
        ));
    }
    match repair(t, &opts) {
        Ok(r) => {
            if r.body.len() > 8 * t.src.len() + 4096 {
                return Err(format!(
                    "{hint:?}: repair grew {} bytes into {}",
                    t.src.len(),
                    r.body.len()
                ));
            }
            Ok(())
        }
        Err(PreventError::Guard(g)) => Err(format!("{hint:?}: repair failed closed: {g}")),
        Err(e) => Err(format!("{hint:?}: repair of a readable input failed: {e}")),
    }
}

/// How [`inv_no_panic`] asks the classifier about a text: with a status (or none), or with a
/// provider hint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassifyProbe {
    /// `classify(status, text)` and a first `plan`.
    Status(Option<u16>),
    /// `classify_with_hint(None, text, Provider::Gemini)`.
    Gemini,
}

/// Every way [`inv_no_panic`] classifies a text.
pub const CLASSIFY_PROBES: [ClassifyProbe; 4] = [
    ClassifyProbe::Status(None),
    ClassifyProbe::Status(Some(400)),
    ClassifyProbe::Status(Some(529)),
    ClassifyProbe::Gemini,
];

/// One probe of [`inv_no_panic`]'s classifier step (it can only fail by panicking).
pub fn no_panic_classify(text: &str, probe: ClassifyProbe) {
    match probe {
        ClassifyProbe::Status(status) => {
            let d = classify(status, text);
            let _ = plan(&d, &Attempts::new());
        }
        ClassifyProbe::Gemini => {
            let _ = classify_with_hint(None, text, turnkeeper_recover::Provider::Gemini);
        }
    }
}

/// [`inv_no_panic`]'s OpenCode step: `load_export`, and when it loads, the conversions, a check
/// of the converted request and the export written back (it can only fail by panicking).
pub fn no_panic_opencode(text: &str) {
    if let Ok(session) = load_export(text, "fuzz") {
        let _ = to_model_messages(&session);
        let req = to_anthropic_request(&session, None, &AnthropicOptions::default());
        if let Ok(t) = read(&req.body, FormatHint::Exactly(Format::Anthropic)) {
            let _ = check(&t, &Options::default());
        }
        let _ = session.to_export_array();
    }
}

/// Invariants 1 to 8 on one input, stopping at the first violation, which is prefixed with the
/// invariant's name.
///
/// # Errors
/// `"<name>: <explanation>"`.
pub fn all_repair_invariants(input: &str, opts: &Options<'_>) -> Outcome {
    repair_invariants_where(input, opts, &|_| true)
}

/// The names [`all_repair_invariants`] gives invariants 1 to 8 (and prefixes their violations
/// with), in the order it runs them.
pub const REPAIR_INVARIANTS: [&str; 8] = [
    "roundtrip",
    "untouched_thinking",
    "thinking_first",
    "tool_pairing",
    "conservation",
    "convergence",
    "idempotent",
    "noop_on_valid",
];

/// [`all_repair_invariants`] restricted to the invariants `pick` accepts (by their names in
/// [`REPAIR_INVARIANTS`]): each one it runs is checked exactly as there. The repair they share
/// is always made, and a repair that fails closed is always reported (as `untouched_thinking`,
/// like there).
///
/// # Errors
/// `"<name>: <explanation>"`.
pub fn repair_invariants_where(
    input: &str,
    opts: &Options<'_>,
    pick: &dyn Fn(&str) -> bool,
) -> Outcome {
    match read(input, FormatHint::Auto) {
        Ok(t) => repair_invariants_read(&t, opts, pick),
        Err(_) if pick("roundtrip") => inv_roundtrip(input).map_err(|e| format!("roundtrip: {e}")),
        Err(_) => Ok(()),
    }
}

/// [`repair_invariants_where`] on `t`, the caller's reading of the input (`read` with
/// [`FormatHint::Auto`]), for a caller that has read it already.
///
/// # Errors
/// `"<name>: <explanation>"`.
pub fn repair_invariants_read(
    t: &Transcript<'_>,
    opts: &Options<'_>,
    pick: &dyn Fn(&str) -> bool,
) -> Outcome {
    type OnRun = fn(&Transcript<'_>, &Repaired<'_>, Output<'_, '_>, &Options<'_>) -> Outcome;
    let checks: [(&str, OnRun); 6] = [
        ("untouched_thinking", untouched_thinking_on),
        ("thinking_first", thinking_first_on),
        ("tool_pairing", tool_pairing_on),
        ("conservation", conservation_on),
        ("convergence", convergence_on),
        ("idempotent", idempotent_on),
    ];
    let input = t.src;
    if pick("roundtrip") {
        inv_roundtrip(input).map_err(|e| format!("roundtrip: {e}"))?;
    }
    // One repair, and one reading of its output, serve every invariant (as if each had made its
    // own: a failed repair is the first invariant's finding).
    let r = repaired(t, opts).map_err(|e| format!("{}: {e}", checks[0].0))?;
    // An unchanged body is the input: its reading is the input's (`read` with the sniffed
    // format forced is `read` with `Auto`), so it is not read again.
    let read_again;
    let out = match &r.body {
        Cow::Borrowed(_) => Ok(t),
        Cow::Owned(body) => {
            read_again = read_out(body, t.format);
            read_again.as_ref()
        }
    };
    for (name, f) in checks {
        if pick(name) {
            f(t, &r, out, opts).map_err(|e| format!("{name}: {e}"))?;
        }
    }
    if pick("noop_on_valid") && check(t, opts).is_empty() {
        noop_verdict(input, &r).map_err(|e| format!("noop_on_valid: {e}"))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 11. Repair into a reused buffer
// ---------------------------------------------------------------------------------------------

/// Invariant 11. [`repair_into`] with `buf`, a buffer that still holds whatever the caller's
/// last request left in it, gives exactly what [`repair`] gives: the same body, byte for byte
/// ([`BodyAt::Input`] exactly when `repair` borrows the input, and `buf` then empty), the same
/// report, or the same error with `buf` left empty. A second call into the now-filled buffer
/// gives the same again, told of its sweeps over the input ([`Options::input_pages`]): being
/// told changes nothing, and what it is told is sweeps that start, rise and stay inside the
/// input. Callers that reuse one buffer over many inputs (the corpus test, the property) check
/// that nothing of an earlier body leaks into a later one.
///
/// # Errors
/// The first difference.
pub fn inv_repair_into(input: &str, opts: &Options<'_>, buf: &mut String) -> Outcome {
    let Ok(t) = read(input, FormatHint::Auto) else {
        return Ok(());
    };
    let want = repair(&t, opts);
    let told = Sweeps::default();
    let mut listened = opts.clone();
    listened.input_pages = Some(&told);
    for (round, opts) in [
        ("into a reused buffer", opts),
        ("again into the same buffer, told of its sweeps", &listened),
    ] {
        let got = repair_into(&t, opts, buf);
        match (&want, got) {
            (Ok(w), Ok(g)) => {
                let borrowed = matches!(w.body, std::borrow::Cow::Borrowed(_));
                match g.body {
                    BodyAt::Input if !borrowed => {
                        return Err(format!(
                            "{round}: the body is said to be the input, but repair changed it"
                        ));
                    }
                    BodyAt::Input if !buf.is_empty() => {
                        return Err(format!(
                            "{round}: the body is the input, but the buffer holds {} bytes",
                            buf.len()
                        ));
                    }
                    BodyAt::Buffer if borrowed => {
                        return Err(format!(
                            "{round}: a new body was written, but repair left the input as it was"
                        ));
                    }
                    _ => {}
                }
                if g.body(input, buf) != w.body {
                    return Err(format!(
                        "{round}: the body differs from repair's ({} bytes against {})",
                        g.body(input, buf).len(),
                        w.body.len()
                    ));
                }
                if g.report != w.report {
                    return Err(format!(
                        "{round}: the report differs: {:?} against repair's {:?}",
                        g.report, w.report
                    ));
                }
            }
            (Err(w), Err(g)) => {
                if w.to_string() != g.to_string() {
                    return Err(format!("{round}: failed with {g}, repair with {w}"));
                }
                if !buf.is_empty() {
                    return Err(format!(
                        "{round}: the repair failed but the buffer holds {} bytes",
                        buf.len()
                    ));
                }
            }
            (Ok(_), Err(g)) => return Err(format!("{round}: failed ({g}), repair did not")),
            (Err(w), Ok(_)) => return Err(format!("{round}: succeeded, repair failed ({w})")),
        }
    }
    told.check(input.len())
}

/// What a repair told its [`ReadBehind`]: `None` for a sweep's start, `Some(offset)` for a step.
#[derive(Debug, Default)]
struct Sweeps(std::sync::Mutex<Vec<Option<usize>>>);

impl ReadBehind for Sweeps {
    fn start(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(None);
    }
    fn past(&self, offset: usize) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Some(offset));
    }
}

impl Sweeps {
    /// Every step inside a sweep that started, rising, and none past `len`.
    fn check(&self, len: usize) -> Outcome {
        let calls = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut last: Option<usize> = None;
        let mut started = false;
        for c in calls.iter() {
            match *c {
                None => {
                    started = true;
                    last = None;
                }
                Some(o) if !started => return Err(format!("past({o}) before any start")),
                Some(o) if o > len => {
                    return Err(format!("past({o}) beyond the input's {len} bytes"));
                }
                Some(o) if last.is_some_and(|l| o <= l) => {
                    return Err(format!("past({o}) after past({:?}) in one sweep", last));
                }
                Some(o) => last = Some(o),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(messages: &str) -> String {
        format!(
            r#"{{"model":"claude-opus-4-7","max_tokens":8000,"thinking":{{"type":"adaptive"}},"messages":[{messages}]}}"#
        )
    }

    const T: &str = r#"{"type":"thinking","thinking":"t","signature":"EqQBCkYIBxgCKkBv"}"#;
    const P: &str = r#"{"type":"text","text":"p"}"#;
    const P_FOREIGN: &str = r#"{"type":"text","text":"p","thoughtSignature":"x"}"#;

    fn order(input: &str, output: &str) -> Outcome {
        let t = read(input, FormatHint::Auto).map_err(|e| e.to_string())?;
        let out = read(output, FormatHint::Auto).map_err(|e| e.to_string())?;
        keeps_model_order(&t, &out)
    }

    /// Two blocks the model wrote thinking first, put the other way round: caught.
    #[test]
    fn a_reordered_turn_is_caught() {
        let q = r#"{"role":"user","content":"q"}"#;
        let input = body(&format!(
            r#"{q},{{"role":"assistant","content":[{T},{P}]}},{q}"#
        ));
        let output = body(&format!(
            r#"{q},{{"role":"assistant","content":[{P},{T}]}},{q}"#
        ));
        assert!(order(&input, &output).is_err());
        assert_eq!(order(&input, &input), Ok(()));
    }

    /// Results answer calls once each; a repeated call id may share one result or have one
    /// each, never more results than calls, never a result for no call.
    #[test]
    fn results_answer_calls() {
        let v = |ids: &[&str]| ids.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(answers_calls(&v(&["a", "b"]), &v(&["b", "a"])));
        assert!(!answers_calls(&v(&["a", "b"]), &v(&["a"])));
        assert!(!answers_calls(&v(&["a"]), &v(&["a", "a"])));
        assert!(!answers_calls(&v(&["a"]), &v(&["a", "c"])));
        assert!(answers_calls(&v(&["a", "a"]), &v(&["a"])));
        assert!(answers_calls(&v(&["a", "a"]), &v(&["a", "a"])));
        assert!(!answers_calls(&v(&["a", "a"]), &v(&["a", "a", "a"])));
    }

    /// A text block edited in place (a foreign field stripped) is the block the model wrote,
    /// even where its new bytes equal a copy written the other way round in an earlier message.
    #[test]
    fn an_edited_block_keeps_its_place() {
        let q = r#"{"role":"user","content":"q"}"#;
        let input = body(&format!(
            r#"{q},{{"role":"assistant","content":[{P},{T}]}},{q},{{"role":"assistant","content":[{T},{P_FOREIGN}]}},{q}"#
        ));
        let output = body(&format!(
            r#"{q},{{"role":"assistant","content":[{P}]}},{q},{{"role":"assistant","content":[{T},{P}]}},{q}"#
        ));
        assert_eq!(order(&input, &output), Ok(()));
    }
}
