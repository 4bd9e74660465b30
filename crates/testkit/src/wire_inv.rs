//! The invariants of the wire families (Chat Completions, Responses, Converse), checked through
//! `turnkeeper_prevent::wire::{check_wire, repair_wire}`.
//!
//! Each invariant reads input and output with `serde_json` (borrowed [`RawValue`]s, so every
//! value is compared by its exact bytes), not with turnkeeper's own readers: what is judged is
//! what a provider would receive.
//!
//! | function | what |
//! |---|---|
//! | [`inv_wire_valid`] | a valid body: no error finding, repaired to itself, byte for byte |
//! | [`inv_wire_lossless`] | bytes outside the item array unchanged; every item byte-identical to one of the input's unless a change was reported inside it |
//! | [`inv_wire_reasoning`] | every reasoning payload of the output is one of the input's, byte for byte, or a reported empty stand-in; a vanished one was reported |
//! | [`inv_wire_idempotent`] | a second repair changes nothing |
//! | [`inv_wire_agree`] | `findings_left` is what `check_wire` finds on the output |
//! | [`inv_wire_no_panic`] | sniff, check and repair survive any bytes under every family |
//! | [`inv_wire_sniffed`] | a generated body sniffs as its own family |
//! | [`inv_wire_reuse`] | read against an earlier body (itself, itself an item shorter), a Chat or Responses body reads as it reads alone |

use std::collections::{BTreeMap, HashMap};

use serde_json::value::RawValue;
use turnkeeper_guard::fingerprint;
use turnkeeper_model::{Format, sniff_detail};
use turnkeeper_prevent::wire::{check_wire, repair_wire};
use turnkeeper_prevent::{ChangeAction, Finding, Options, PreventError, Repaired, Severity};

use crate::inv::Outcome;

/// The three wire families.
pub const WIRE_FORMATS: [Format; 3] = [Format::Chat, Format::Responses, Format::Converse];

/// A wire invariant: input text, its family, the options.
pub type WireInvariant = fn(&str, Format, &Options<'_>) -> Outcome;

/// Google's documented dummy thought signature (GM-05), GM-18's stand-in.
pub const DUMMY_SIGNATURE: &str = "skip_thought_signature_validator";

/// Repairs `text` as `format`. `Ok(None)` when the body does not read as `format` (then
/// `check_wire` must refuse it too); `Err` when check and repair disagree on readability, or the
/// repair failed closed (a turnkeeper bug).
pub fn wire_run<'a>(
    text: &'a str,
    format: Format,
    opts: &Options<'_>,
) -> Result<Option<Repaired<'a>>, String> {
    let checked = check_wire(text, format, opts);
    match (checked, repair_wire(text, format, opts)) {
        (Err(_), Err(PreventError::Model(_))) => Ok(None),
        (Ok(_), Ok(r)) => Ok(Some(r)),
        (Err(e), Ok(_)) => Err(format!(
            "check_wire refuses the body ({e}) but repair_wire repaired it"
        )),
        (Ok(_), Err(e)) => Err(format!(
            "repair_wire failed on a body check_wire reads: {e}"
        )),
        (Err(_), Err(e)) => Err(format!("repair_wire failed closed: {e}")),
    }
}

/// Findings as comparable tuples.
fn keyed(fs: &[Finding]) -> Vec<(String, Severity, String, String)> {
    fs.iter()
        .map(|f| {
            (
                f.rule.as_str().to_owned(),
                f.severity,
                f.path.clone(),
                f.message.clone(),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Reading bodies with serde
// ---------------------------------------------------------------------------------------------

/// The name of the item array of `format`.
fn array_key(format: Format) -> &'static str {
    if format == Format::Responses {
        "input"
    } else {
        "messages"
    }
}

/// A body as serde reads it: the item array's place in the text and its elements.
struct Items<'a> {
    /// Offset of the array's `[` and one past its `]`.
    at: (usize, usize),
    /// The elements, as exact text.
    items: Vec<&'a str>,
}

/// Where `part` (a slice of `src`) starts in `src`.
fn offset_in(src: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(src.as_ptr() as usize)
}

/// The item array of `src`, or why it cannot be read.
fn items_of(src: &str, format: Format) -> Result<Items<'_>, String> {
    let top: BTreeMap<String, &RawValue> =
        serde_json::from_str(src).map_err(|e| format!("not a JSON object: {e}"))?;
    let key = array_key(format);
    let arr = top
        .get(key)
        .ok_or_else(|| format!("no `{key}` member"))?
        .get();
    let items: Vec<&RawValue> =
        serde_json::from_str(arr).map_err(|e| format!("`{key}` is no array: {e}"))?;
    let start = offset_in(src, arr);
    Ok(Items {
        at: (start, start + arr.len()),
        items: items.iter().map(|r| r.get()).collect(),
    })
}

/// A JSON object's members by key (the last of duplicates), exact text; empty for a non-object.
fn members(raw: &str) -> BTreeMap<String, &str> {
    serde_json::from_str::<BTreeMap<String, &RawValue>>(raw)
        .map(|m| m.into_iter().map(|(k, v)| (k, v.get())).collect())
        .unwrap_or_default()
}

/// An array's elements, exact text; empty for a non-array.
fn elements(raw: &str) -> Vec<&str> {
    serde_json::from_str::<Vec<&RawValue>>(raw)
        .map(|v| v.into_iter().map(RawValue::get).collect())
        .unwrap_or_default()
}

/// Counts of each value.
fn bag<'s>(
    xs: impl IntoIterator<Item = (&'static str, &'s str)>,
) -> HashMap<(&'static str, &'s str), usize> {
    let mut m = HashMap::new();
    for x in xs {
        *m.entry(x).or_insert(0) += 1;
    }
    m
}

/// `a` minus `b`, as a multiset, listed.
fn minus<'s>(
    a: &HashMap<(&'static str, &'s str), usize>,
    b: &HashMap<(&'static str, &'s str), usize>,
) -> Vec<(&'static str, &'s str)> {
    let mut out = Vec::new();
    for (k, &n) in a {
        let m = b.get(k).copied().unwrap_or(0);
        for _ in m..n {
            out.push(*k);
        }
    }
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------------
// The invariants
// ---------------------------------------------------------------------------------------------

/// A valid body (generated for its provider) draws no error finding, and `repair_wire` returns
/// it unchanged, byte for byte, with no change reported and `findings_left` equal to `check`'s.
///
/// # Errors
/// The error findings, or how the repair differs.
pub fn inv_wire_valid(text: &str, format: Format, opts: &Options<'_>) -> Outcome {
    let found = check_wire(text, format, opts)
        .map_err(|e| format!("a valid {format} body does not read: {e}"))?;
    let errors: Vec<_> = found
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{} at {}: {}", f.rule.as_str(), f.path, f.message))
        .collect();
    if !errors.is_empty() {
        return Err(format!(
            "a valid {format} body draws error findings:\n{}",
            errors.join("\n")
        ));
    }
    let r = repair_wire(text, format, opts)
        .map_err(|e| format!("repair of a valid {format} body failed: {e}"))?;
    if !r.report.changes.is_empty() {
        return Err(format!(
            "repair changed a valid {format} body: {:?}",
            r.report.changes
        ));
    }
    if r.body != text {
        return Err(format!(
            "repair of a valid {format} body reported nothing but changed its bytes"
        ));
    }
    if keyed(&r.report.findings_left) != keyed(&found) {
        return Err("findings_left of an unchanged body differ from check's".to_owned());
    }
    Ok(())
}

/// How many reported changes edit inside an item, and how many remove a whole item.
fn change_counts(r: &Repaired<'_>, format: Format) -> (usize, usize) {
    let key = array_key(format);
    let (mut inside, mut whole) = (0, 0);
    for c in &r.report.changes {
        let rest = c
            .path
            .strip_prefix(key)
            .and_then(|p| p.strip_prefix('['))
            .and_then(|p| p.split_once(']'))
            .map(|(_, after)| after);
        match (c.action, rest) {
            (ChangeAction::MovedMessage, _) => {}
            // A merge edits the earlier message and takes the later one away.
            (ChangeAction::MergedMessage, _) => {
                inside += 1;
                whole += 1;
            }
            (ChangeAction::RemovedMessage, Some("")) | (ChangeAction::RemovedBlock, Some("")) => {
                whole += 1
            }
            (_, Some(r)) if !r.is_empty() => inside += 1,
            _ => inside += 1,
        }
    }
    (inside, whole)
}

/// Lossless: what repair did not change is byte-identical. The bytes before and after the item
/// array (`messages`, `input`) are the input's; every item of the output is byte-identical to an
/// item of the input (counted as a multiset) except at most one per change reported inside an
/// item; every input item missing from the output is accounted for by such a change or a
/// reported removal. Without any change the output is the input.
///
/// # Errors
/// The first difference not accounted for.
pub fn inv_wire_lossless(text: &str, format: Format, opts: &Options<'_>) -> Outcome {
    let Some(r) = wire_run(text, format, opts)? else {
        return Ok(());
    };
    lossless_on(text, format, &r, &both_items(text, format, &r))
}

/// The item arrays of the input and of the repaired body (`None` when the body is the input).
type BothItems<'t, 'r> = Option<(Result<Items<'t>, String>, Result<Items<'r>, String>)>;

/// Reads the item arrays of `text` and of `r`'s body, once for every invariant.
fn both_items<'t, 'r>(text: &'t str, format: Format, r: &'r Repaired<'_>) -> BothItems<'t, 'r> {
    (r.body != text).then(|| (items_of(text, format), items_of(&r.body, format)))
}

fn lossless_on(text: &str, format: Format, r: &Repaired<'_>, both: &BothItems<'_, '_>) -> Outcome {
    if r.report.changes.is_empty() {
        return if r.body == text {
            Ok(())
        } else {
            Err("no change reported, yet the body's bytes changed".to_owned())
        };
    }
    let Some((Ok(a), Ok(b))) = both else {
        return match serde_json::from_str::<serde::de::IgnoredAny>(&r.body) {
            Ok(_) => Ok(()),
            Err(e) => Err(format!("the repaired body is not JSON: {e}")),
        };
    };
    if text[..a.at.0] != r.body[..b.at.0] || text[a.at.1..] != r.body[b.at.1..] {
        return Err(format!(
            "bytes outside `{}` changed:\nbefore: {:?} … {:?}\nafter:  {:?} … {:?}",
            array_key(format),
            &text[..a.at.0],
            &text[a.at.1..],
            &r.body[..b.at.0],
            &r.body[b.at.1..]
        ));
    }
    let (inside, whole) = change_counts(r, format);
    let ia = bag(a.items.iter().map(|s| ("item", *s)));
    let ib = bag(b.items.iter().map(|s| ("item", *s)));
    let new = minus(&ib, &ia);
    let lost = minus(&ia, &ib);
    if new.len() > inside {
        return Err(format!(
            "{} output items are no input item's bytes, but only {inside} changes inside items were reported; first: {}",
            new.len(),
            new[0].1
        ));
    }
    if lost.len() > inside + whole {
        return Err(format!(
            "{} input items are gone or changed, but {inside} edits and {whole} removals were reported ({:?}); first: {}",
            lost.len(),
            r.report
                .changes
                .iter()
                .map(|c| (c.rule.as_str(), c.action, c.path.as_str()))
                .collect::<Vec<_>>(),
            lost[0].1
        ));
    }
    Ok(())
}

/// The reasoning payloads of a Chat body: each message's `reasoning_content`, `reasoning`,
/// `reasoning_details` and each tool call's `extra_content.google.thought_signature`.
fn chat_payloads(items: &[&str]) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for m in items {
        let mm = members(m);
        for key in ["reasoning_content", "reasoning", "reasoning_details"] {
            if let Some(v) = mm.get(key) {
                out.push((key, (*v).to_owned()));
            }
        }
        for call in mm
            .get("tool_calls")
            .map(|c| elements(c))
            .unwrap_or_default()
        {
            let sig = members(call)
                .get("extra_content")
                .map(|e| members(e))
                .and_then(|e| e.get("google").map(|g| members(g)))
                .and_then(|g| g.get("thought_signature").map(|s| (*s).to_owned()));
            if let Some(sig) = sig {
                out.push(("thought_signature", sig));
            }
        }
    }
    out
}

/// Every reasoning payload of the output equals one of the input (byte for byte, as a multiset)
/// or is a reported empty stand-in ([`ChangeAction::LossyStandIn`]: `reasoning_content: ""`,
/// `summary: []`, [`DUMMY_SIGNATURE`], Converse's opt-in `text: ""`), at most one per such
/// change; every input payload missing from the output was removed by a reported change (for
/// Responses items and Converse blocks: a change carrying its fingerprint).
///
/// # Errors
/// The first payload not accounted for.
pub fn inv_wire_reasoning(text: &str, format: Format, opts: &Options<'_>) -> Outcome {
    let Some(r) = wire_run(text, format, opts)? else {
        return Ok(());
    };
    reasoning_on(text, format, &r, &both_items(text, format, &r))
}

fn stand_ins(r: &Repaired<'_>, suffix: &str) -> usize {
    r.report
        .changes
        .iter()
        .filter(|c| c.action == ChangeAction::LossyStandIn && c.path.ends_with(suffix))
        .count()
}

fn reasoning_on(text: &str, format: Format, r: &Repaired<'_>, both: &BothItems<'_, '_>) -> Outcome {
    if r.body == text {
        return Ok(());
    }
    let Some((Ok(a), Ok(b))) = both else {
        return Ok(());
    };
    match format {
        Format::Chat => chat_reasoning(&a.items, &b.items, r),
        Format::Responses => {
            let pick = |items: &[&str]| -> Vec<String> {
                items
                    .iter()
                    .filter(|i| members(i).get("type").map(|t| *t == "\"reasoning\"") == Some(true))
                    .map(|i| (*i).to_owned())
                    .collect()
            };
            // The stand-in as OR-11 writes it: the member appended after the last one.
            let undo = |s: &str| s.replacen(",\"summary\":[]", "", 1);
            fingerprinted(
                &pick(&a.items),
                &pick(&b.items),
                r,
                stand_ins(r, ".summary"),
                undo,
            )
        }
        Format::Converse => {
            let pick = |items: &[&str]| -> Vec<String> {
                items
                    .iter()
                    .flat_map(|m| {
                        members(m)
                            .get("content")
                            .map(|c| elements(c))
                            .unwrap_or_default()
                    })
                    .filter(|blk| members(blk).contains_key("reasoningContent"))
                    .map(str::to_owned)
                    .collect()
            };
            // BR-04's opt-in stand-in: a null text written as "".
            let undo = |s: &str| null_text(s);
            fingerprinted(&pick(&a.items), &pick(&b.items), r, stand_ins(r, ""), undo)
        }
        _ => Ok(()),
    }
}

/// `block` with its first `"text": ""` written back as `"text": null` (whitespace kept): the
/// block BR-04's stand-in was made from.
fn null_text(block: &str) -> String {
    let mut from = 0;
    while let Some(k) = block[from..].find("\"text\"") {
        let key_end = from + k + "\"text\"".len();
        let rest = &block[key_end..];
        let after_colon = rest.trim_start().strip_prefix(':').map(str::trim_start);
        if let Some(v) = after_colon
            && v.starts_with("\"\"")
        {
            let at = block.len() - v.len();
            return format!("{}null{}", &block[..at], &block[at + 2..]);
        }
        from = key_end;
    }
    block.to_owned()
}

fn chat_reasoning(a: &[&str], b: &[&str], r: &Repaired<'_>) -> Outcome {
    let pa = chat_payloads(a);
    let pb = chat_payloads(b);
    let ba = bag(pa.iter().map(|(k, v)| (*k, v.as_str())));
    let bb = bag(pb.iter().map(|(k, v)| (*k, v.as_str())));
    let mut empty_fields = 0;
    let mut dummies = 0;
    for (key, value) in minus(&bb, &ba) {
        match (key, value) {
            ("reasoning_content", "\"\"") => empty_fields += 1,
            ("thought_signature", v) if v == format!("\"{DUMMY_SIGNATURE}\"") => dummies += 1,
            _ => {
                return Err(format!(
                    "the output carries a `{key}` no input message had: {value}"
                ));
            }
        }
    }
    if empty_fields > stand_ins(r, ".reasoning_content") {
        return Err(format!(
            "{empty_fields} empty reasoning_content stand-ins, {} reported",
            stand_ins(r, ".reasoning_content")
        ));
    }
    if dummies > stand_ins(r, ".extra_content") {
        return Err(format!(
            "{dummies} dummy signatures, {} reported",
            stand_ins(r, ".extra_content")
        ));
    }
    let removed_messages = r
        .report
        .changes
        .iter()
        .filter(|c| c.action == ChangeAction::RemovedMessage)
        .count();
    let removed_calls = r
        .report
        .changes
        .iter()
        .filter(|c| c.action == ChangeAction::RemovedBlock)
        .count();
    let lost = minus(&ba, &bb);
    let lost_fields = lost
        .iter()
        .filter(|(k, _)| *k != "thought_signature")
        .count();
    let lost_sigs = lost.len() - lost_fields;
    // A message holds at most the three fields; a removed call or message takes its
    // signatures with it.
    let sigs_per_message = a
        .iter()
        .map(|m| {
            chat_payloads(&[m])
                .iter()
                .filter(|(k, _)| *k == "thought_signature")
                .count()
        })
        .max()
        .unwrap_or(0);
    if lost_fields > 3 * removed_messages {
        return Err(format!(
            "{lost_fields} reasoning fields vanished but only {removed_messages} messages were removed; first: {:?}",
            lost.iter().find(|(k, _)| *k != "thought_signature")
        ));
    }
    if lost_sigs > removed_calls + removed_messages * sigs_per_message {
        return Err(format!(
            "{lost_sigs} thought signatures vanished, {removed_calls} calls and {removed_messages} messages were removed"
        ));
    }
    Ok(())
}

/// Responses items and Converse blocks: every output payload is an input one (or `undo` of it
/// is: a reported stand-in, at most `allowed`); every input payload missing was removed under a
/// reported fingerprint.
fn fingerprinted(
    a: &[String],
    b: &[String],
    r: &Repaired<'_>,
    allowed: usize,
    undo: impl Fn(&str) -> String,
) -> Outcome {
    let ba = bag(a.iter().map(|s| ("r", s.as_str())));
    let bb = bag(b.iter().map(|s| ("r", s.as_str())));
    let mut standing = Vec::new();
    for (_, out) in minus(&bb, &ba) {
        let back = undo(out);
        if back != out && ba.contains_key(&("r", back.as_str())) {
            standing.push(back);
            continue;
        }
        return Err(format!(
            "a reasoning payload of the output is none of the input's, nor a stand-in on one: {out}"
        ));
    }
    if standing.len() > allowed {
        return Err(format!(
            "{} reasoning payloads got a stand-in, {allowed} reported",
            standing.len()
        ));
    }
    let reported: Vec<&str> = r
        .report
        .changes
        .iter()
        .filter_map(|c| c.fingerprint.as_deref())
        .collect();
    for (_, gone) in minus(&ba, &bb) {
        if standing.iter().any(|s| s == gone) {
            continue;
        }
        if !reported.contains(&fingerprint(gone).as_str()) {
            return Err(format!(
                "a reasoning payload vanished without a reported fingerprint: {gone}"
            ));
        }
    }
    Ok(())
}

/// Idempotence: repairing the repaired body changes nothing and reports no change.
///
/// # Errors
/// What the second repair changed.
pub fn inv_wire_idempotent(text: &str, format: Format, opts: &Options<'_>) -> Outcome {
    let Some(r) = wire_run(text, format, opts)? else {
        return Ok(());
    };
    idempotent_on(format, opts, &r)
}

fn idempotent_on(format: Format, opts: &Options<'_>, r: &Repaired<'_>) -> Outcome {
    let again = wire_run(&r.body, format, opts)?
        .ok_or_else(|| format!("the repaired body no longer reads as {format}"))?;
    if !again.report.changes.is_empty() || again.body != r.body {
        return Err(format!(
            "a second repair changed the body: {:?}",
            again.report.changes
        ));
    }
    Ok(())
}

/// Check and repair agree: what repair leaves (`findings_left`) is exactly what `check_wire`
/// finds on the output.
///
/// # Errors
/// The two lists when they differ.
pub fn inv_wire_agree(text: &str, format: Format, opts: &Options<'_>) -> Outcome {
    let Some(r) = wire_run(text, format, opts)? else {
        return Ok(());
    };
    agree_on(format, opts, &r)
}

fn agree_on(format: Format, opts: &Options<'_>, r: &Repaired<'_>) -> Outcome {
    let found = check_wire(&r.body, format, opts)
        .map_err(|e| format!("the repaired body does not read as {format}: {e}"))?;
    if keyed(&found) != keyed(&r.report.findings_left) {
        return Err(format!(
            "findings_left and check of the output differ:\nleft:  {:?}\ncheck: {:?}",
            keyed(&r.report.findings_left),
            keyed(&found)
        ));
    }
    Ok(())
}

/// Every wire invariant, from one repair (and, when `deep`, the second repair of idempotence).
///
/// # Errors
/// The first violation, named.
pub fn wire_invariants(text: &str, format: Format, opts: &Options<'_>, deep: bool) -> Outcome {
    let Some(r) = wire_run(text, format, opts)? else {
        return Ok(());
    };
    let both = both_items(text, format, &r);
    lossless_on(text, format, &r, &both).map_err(|e| format!("lossless: {e}"))?;
    reasoning_on(text, format, &r, &both).map_err(|e| format!("reasoning: {e}"))?;
    agree_on(format, opts, &r).map_err(|e| format!("agree: {e}"))?;
    inv_wire_reuse(text, format).map_err(|e| format!("reuse: {e}"))?;
    if deep {
        idempotent_on(format, opts, &r).map_err(|e| format!("idempotent: {e}"))?;
    }
    Ok(())
}

/// The proxy reads a Chat or Responses body against its kept reading of the conversation's last
/// request (`read_reusing`): against the body itself and against the body without its last
/// message or item, the reading is the body's own, and every message or item of the earlier
/// body is moved over.
///
/// # Errors
/// The first reading that differs from the body's own, or a count that is not the earlier
/// body's.
pub fn inv_wire_reuse(text: &str, format: Format) -> Outcome {
    use crate::kept::{chat_reads_as_own, responses_reads_as_own, without_last};
    use turnkeeper_model::wire::{chat, responses};
    match format {
        Format::Chat => {
            let Ok(own) = chat::read(text) else {
                return Ok(());
            };
            let shorter = without_last(text, &own.messages_at);
            let short = shorter.as_deref().and_then(|t| chat::read(t).ok());
            for prev in std::iter::once(&own).chain(short.as_ref()) {
                let n = chat_reads_as_own(text, &own, prev)?;
                if n != prev.messages.len() {
                    return Err(format!(
                        "{n} of the earlier body's {} messages moved over",
                        prev.messages.len()
                    ));
                }
            }
        }
        Format::Responses => {
            let Ok(own) = responses::read(text) else {
                return Ok(());
            };
            let shorter = without_last(text, &own.input_at);
            let short = shorter.as_deref().and_then(|t| responses::read(t).ok());
            for prev in std::iter::once(&own).chain(short.as_ref()) {
                let n = responses_reads_as_own(text, &own, prev)?;
                if n != prev.items.len() {
                    return Err(format!(
                        "{n} of the earlier body's {} items moved over",
                        prev.items.len()
                    ));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// A generated body sniffs as its own family.
///
/// # Errors
/// What the sniffer said instead.
pub fn inv_wire_sniffed(text: &str, format: Format) -> Outcome {
    match sniff_detail(text) {
        Ok(s) if s.format == format => Ok(()),
        Ok(s) => Err(format!(
            "a {format} body sniffs as {} ({})",
            s.format, s.why
        )),
        Err(e) => Err(format!("a {format} body does not sniff: {e}")),
    }
}

/// Models the no-panic invariant runs every family under (and none).
pub const PROBE_MODELS: &[Option<&str>] = &[
    None,
    Some("deepseek-v4-pro"),
    Some("kimi-k2-thinking"),
    Some("gemini-3-pro-preview"),
    Some("gpt-5"),
    Some("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    Some("us.deepseek.r1-v1:0"),
];

/// No panic on any input: the sniffer, then `check_wire` and `repair_wire` as each family under
/// the model `pick` chooses of [`PROBE_MODELS`]; where both read the bytes, they agree that they
/// do.
///
/// # Errors
/// When check and repair disagree on whether the bytes read, or a repair fails closed.
pub fn inv_wire_no_panic(bytes: &[u8], pick: usize) -> Outcome {
    let text = String::from_utf8_lossy(bytes);
    let _ = sniff_detail(&text);
    let opts = Options {
        model: PROBE_MODELS[pick % PROBE_MODELS.len()].map(str::to_owned),
        ..Options::default()
    };
    for format in WIRE_FORMATS {
        wire_run(&text, format, &opts)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use turnkeeper_prevent::{Change, Report, RuleId};

    use super::*;

    /// A repair that returns `body` and reports `changes`, as a broken pipeline might.
    fn fake<'a>(body: &'a str, changes: Vec<Change>) -> Repaired<'a> {
        Repaired {
            body: Cow::Borrowed(body),
            report: Report {
                changes,
                ..Report::default()
            },
        }
    }

    fn change(action: ChangeAction, path: &str, fp: Option<String>) -> Change {
        Change {
            rule: RuleId::Oa01,
            action,
            path: path.to_owned(),
            reason: String::new(),
            fingerprint: fp,
        }
    }

    fn lossless(text: &str, format: Format, r: &Repaired<'_>) -> Outcome {
        lossless_on(text, format, r, &both_items(text, format, r))
    }

    fn reasoning(text: &str, format: Format, r: &Repaired<'_>) -> Outcome {
        reasoning_on(text, format, r, &both_items(text, format, r))
    }

    const CHAT: &str = r#"{"model":"kimi-k2-thinking","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","reasoning_content":"think","tool_calls":[{"id":"functions.f:0","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"functions.f:0","content":"ok"}]}"#;

    #[test]
    fn an_altered_or_invented_chat_reasoning_field_is_caught() {
        let edited = CHAT.replace("\"think\"", "\"thought\"");
        let e = reasoning(CHAT, Format::Chat, &fake(&edited, Vec::new()))
            .expect_err("an edited reasoning_content");
        assert!(e.contains("no input message had"), "{e}");
        // An empty stand-in passes only when reported.
        let blank = CHAT.replace("\"think\"", "\"\"");
        let gone = change(ChangeAction::RemovedMessage, "messages[1]", None);
        assert!(reasoning(CHAT, Format::Chat, &fake(&blank, vec![gone.clone()])).is_err());
        let standin = change(
            ChangeAction::LossyStandIn,
            "messages[1].reasoning_content",
            None,
        );
        assert_eq!(
            reasoning(CHAT, Format::Chat, &fake(&blank, vec![standin, gone])),
            Ok(())
        );
    }

    #[test]
    fn a_silent_change_and_bytes_outside_the_array_are_caught() {
        let spaced = CHAT.replace("\"content\":\"ok\"", "\"content\": \"ok\"");
        let e =
            lossless(CHAT, Format::Chat, &fake(&spaced, Vec::new())).expect_err("a silent change");
        assert!(e.contains("no change reported"), "{e}");
        let moved = CHAT.replace("\"model\":\"kimi-k2-thinking\"", "\"model\":\"kimi-k2\"");
        let c = change(ChangeAction::RemovedMessage, "messages[2]", None);
        let e = lossless(CHAT, Format::Chat, &fake(&moved, vec![c.clone()]))
            .expect_err("the model changed");
        assert!(e.contains("outside `messages`"), "{e}");
        // One reported removal accounts for one missing message, not for an edited one too.
        let cut = CHAT.replace(
            r#",{"role":"tool","tool_call_id":"functions.f:0","content":"ok"}"#,
            "",
        );
        assert_eq!(
            lossless(CHAT, Format::Chat, &fake(&cut, vec![c.clone()])),
            Ok(())
        );
        let cut_and_edited = cut.replace("\"hi\"", "\"hello\"");
        assert!(lossless(CHAT, Format::Chat, &fake(&cut_and_edited, vec![c])).is_err());
    }

    const RESPONSES: &str = r#"{"model":"gpt-5","input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"hello"}]}]}"#;

    #[test]
    fn a_responses_reasoning_item_gone_without_its_fingerprint_is_caught() {
        let item = r#"{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"}"#;
        let without = RESPONSES.replace(&format!("{item},"), "");
        let unreported = change(ChangeAction::RemovedBlock, "input[1]", None);
        let e = reasoning(
            RESPONSES,
            Format::Responses,
            &fake(&without, vec![unreported]),
        )
        .expect_err("no fingerprint");
        assert!(e.contains("vanished"), "{e}");
        let reported = change(
            ChangeAction::RemovedBlock,
            "input[1]",
            Some(fingerprint(item)),
        );
        assert_eq!(
            reasoning(
                RESPONSES,
                Format::Responses,
                &fake(&without, vec![reported])
            ),
            Ok(())
        );
        // A summary written into the item is not the documented empty stand-in.
        let summarised = RESPONSES.replace(
            "\"summary\":[]",
            "\"summary\":[{\"type\":\"summary_text\",\"text\":\"x\"}]",
        );
        assert!(reasoning(RESPONSES, Format::Responses, &fake(&summarised, Vec::new())).is_err());
    }

    #[test]
    fn a_converse_stand_in_must_be_reported_and_made_from_a_null() {
        let src = r#"{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text": null,"signature":"Eq"}}},{"text":"a"}]}]}"#;
        let filled = src.replace("\"text\": null", "\"text\": \"\"");
        assert!(reasoning(src, Format::Converse, &fake(&filled, Vec::new())).is_err());
        let c = change(
            ChangeAction::LossyStandIn,
            "messages[1].content[0].reasoningContent.reasoningText.text",
            None,
        );
        assert_eq!(
            reasoning(src, Format::Converse, &fake(&filled, vec![c.clone()])),
            Ok(())
        );
        let rewritten = src.replace("\"text\": null", "\"text\": \"made up\"");
        assert!(reasoning(src, Format::Converse, &fake(&rewritten, vec![c])).is_err());
    }

    #[test]
    fn findings_left_must_be_what_check_finds() {
        // An unanswered Kimi call left in place: check finds OA-01, and a report claiming
        // nothing is left disagrees.
        let open = CHAT.replace(
            r#",{"role":"tool","tool_call_id":"functions.f:0","content":"ok"}"#,
            r#",{"role":"user","content":"and?"}"#,
        );
        let opts = Options::default();
        let e = agree_on(Format::Chat, &opts, &fake(&open, Vec::new())).expect_err("disagree");
        assert!(e.contains("OA-01"), "{e}");
        assert_eq!(inv_wire_agree(&open, Format::Chat, &opts), Ok(()));
        assert_eq!(inv_wire_idempotent(&open, Format::Chat, &opts), Ok(()));
    }
}
