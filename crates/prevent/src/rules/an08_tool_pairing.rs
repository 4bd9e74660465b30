//! ## AN-08: a tool_use without a tool_result right after it
//!
//! **The API.** Every `tool_use` in assistant message *i* must have a `tool_result` with the same
//! id in message *i+1*, a user message. Error: ``messages.N: `tool_use` ids were found without
//! `tool_result` blocks immediately after: <ids>. Each `tool_use` block must have a
//! corresponding `tool_result` block in the next message.`` (older: ``Did not find K
//! `tool_result` block(s) at the beginning of this message…``). Source: api-rules.md AN-08
//! (handle-tool-calls page; error corpus). Gemini's counterpart is GM-10.
//!
//! **Repair.** An error result (`is_error: true`, the policy's placeholder text) is added for
//! each unanswered call, at the front of the next user message, or in a new user message.
//!
//! ## AN-09: tool results not first in their message
//!
//! **The API.** In the user message after the calls, every `tool_result` comes before any other
//! block; the API gives the AN-08 errors. Source: api-rules.md AN-09 (handle-tool-calls page:
//! "the tool_result blocks must come FIRST"). Gemini's counterpart is GM-03.
//!
//! **Repair.** The results are moved to the front, in call order (each move reported).
//!
//! ## AN-10: a tool_result without its tool_use, or a duplicate
//!
//! **The API.** Every `tool_result.tool_use_id` must name a `tool_use` in the immediately
//! previous assistant message, once. Error: ``messages.N.content.M: unexpected `tool_use_id`
//! found in `tool_result` blocks: <id>. Each `tool_result` block must have a corresponding
//! `tool_use` block in the previous message.`` Source: api-rules.md AN-10 (error corpus).
//!
//! **Repair.** The orphan or duplicate result is removed; a message left empty goes too.
//!
//! ## AN-11: a message between a tool_use and its tool_result
//!
//! **The API.** Nothing may stand between a `tool_use` message and its results; the API gives
//! the AN-08 error. Source: api-rules.md AN-11 (handle-tool-calls page). Gemini's counterpart is
//! GM-09.
//!
//! **Repair.** Results that sit in a later user message of the run are moved to the front of the
//! message right after the calls; a message left empty goes.
//!
//! ## GM-03: Gemini, function responses not first
//!
//! **The API.** Each step is `model[functionCall…]` then `user[functionResponse…]`, with one
//! response per call, matched by `id`, else by order and `name`. Source: api-rules.md GM-03.
//! Repaired as AN-09.
//!
//! ## GM-09: Gemini, a function response in the wrong turn
//!
//! **The API.** A function response must directly follow the turn with its call. Source:
//! api-rules.md GM-09. Repaired as AN-11.
//!
//! ## GM-10: Gemini, function calls and responses do not pair up
//!
//! **The API.** One function response part per function call part of the call turn. Source:
//! api-rules.md GM-10. Repaired as AN-08 (an error `functionResponse` with
//! `response: {"error": …}`) and AN-10.
//!
//! **Why these repairs are safe.** Everything they do changes user messages only (or adds one),
//! so no thinking block is touched (api-rules.md §5.2, AN-08 row). One forward pass: each
//! assistant turn with calls claims the run of user messages that follows it. Consecutive
//! assistant messages count as one turn, as the API merges them (AN-02).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use turnkeeper_model::json::write_string;
use turnkeeper_model::{BlockKind, BlockRef, Draft, DraftBlock, Format, NewBlock, Role};

use crate::ctx::Ctx;
use crate::finding::Severity;
use crate::fix::Fixer;
use crate::id::RuleId;
use crate::rules::common::remove_trailing_thinking;

/// The key a call and its result are matched by: the id (`id` of a call, `tool_use_id` of a
/// result), or for Gemini calls without an id, the function name (GM-11: "match by `id` when
/// present, otherwise by order and `name`"). Borrowed from the text unless it must be built.
fn key<'d>(b: &BlockRef<'d>) -> Cow<'d, str> {
    let id = match b.kind() {
        BlockKind::ToolCall => b.id(),
        _ => b.tool_use_id(),
    };
    id.unwrap_or_else(|| Cow::Owned(format!("name:{}", b.str(b.block.name).unwrap_or_default())))
}

/// A call's or result's key ([`key`]) and name, owned, for block `j` of message `i`.
///
/// `None` for a call that cannot be answered ([`answerable`]: outside Gemini, with no `id`). It
/// takes no part in pairing (a result sent for it
/// is an orphan), and AN-12 reports the missing id, which it supplies where the turn may be
/// edited. Pairing it by a made-up key would add a result whose id no call carries.
fn call_key(d: &Draft<'_, '_>, i: usize, j: usize) -> Option<(String, String)> {
    let b = d.block(i, j)?;
    if !matches!(b.kind(), BlockKind::ToolCall | BlockKind::ToolResult) {
        return None;
    }
    if b.kind() == BlockKind::ToolCall && !answerable(&b, d.transcript().format) {
        return None;
    }
    let name = b
        .str(b.block.name)
        .map(|n| n.into_owned())
        .unwrap_or_default();
    Some((key(&b).into_owned(), name))
}

/// The calls of a turn paired by id: each key once, at its first call. A second call with the
/// same id (AN-46, which drops it where the turn may be edited) is answered by the first's
/// result; counting it apart reported a false "no `tool_result`" and added a second result for
/// an id that already had one. Gemini calls without an id, keyed by name ([`key`]), are paired
/// by order and name, so each counts.
fn by_id(calls: impl Iterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut seen: HashSet<String> = HashSet::new();
    calls
        .filter(|(k, _)| k.starts_with("name:") || seen.insert(k.clone()))
        .collect()
}

/// How many calls of a turn carry each id more than once ([`by_id`] keeps the first): a turn
/// whose duplicate ids cannot be mended (a signed turn, AN-46 left) may hold one result per
/// call, and a second result for such an id is no duplicate. Removing it lost the output of the
/// second call (found by fuzzing: corpus/regressions/repair_invariants-36033365a70330ea).
fn repeats(calls: impl Iterator<Item = (String, String)>) -> Vec<(String, usize)> {
    let mut all: Vec<(String, usize)> = Vec::new();
    for (k, _) in calls.filter(|(k, _)| !k.starts_with("name:")) {
        match all.iter_mut().find(|(x, _)| *x == k) {
            Some((_, n)) => *n += 1,
            None => all.push((k, 0)),
        }
    }
    all.retain(|(_, n)| *n > 0);
    all
}

/// The extra results `repeats` allows for `key`.
fn extra(repeats: &[(String, usize)], key: &str) -> usize {
    repeats
        .iter()
        .find(|(k, _)| k == key)
        .map_or(0, |(_, n)| *n)
}

struct Analysis {
    /// Calls with no result anywhere in the run: (key, name).
    missing: Vec<(String, String)>,
    /// A result in the first message stands after a non-result block.
    not_first: bool,
    /// Results for these calls sit in a later message of the run.
    late: usize,
    /// Results that answer no call: (message, block).
    orphans: Vec<(usize, usize)>,
    /// Second results for the same call.
    dups: Vec<(usize, usize)>,
}

impl Analysis {
    fn ok(&self) -> bool {
        self.missing.is_empty()
            && !self.not_first
            && self.late == 0
            && self.orphans.is_empty()
            && self.dups.is_empty()
    }
}

fn analyse(
    d: &Draft<'_, '_>,
    first: usize,
    end: usize,
    calls: &[(String, String)],
    repeats: &[(String, usize)],
) -> Analysis {
    // Turns have a handful of calls: linear scans over a small vector beat hashing. Per key: the
    // results still wanted, and how many calls ask for one (a repeated id counts once here).
    let mut want: Vec<(&str, usize)> = Vec::with_capacity(calls.len());
    let mut asked: Vec<(&str, usize)> = Vec::with_capacity(calls.len());
    for (k, _) in calls {
        match asked.iter_mut().find(|(w, _)| *w == k.as_str()) {
            Some((_, n)) => *n += 1,
            None => asked.push((k.as_str(), 1)),
        }
    }
    for &(k, n) in &asked {
        want.push((k, n + extra(repeats, k)));
    }
    let mut a = Analysis {
        missing: Vec::new(),
        not_first: false,
        late: 0,
        orphans: Vec::new(),
        dups: Vec::new(),
    };
    for k in first..end {
        let mut seen_other = false;
        for j in 0..d.block_count(k) {
            let Some(b) = d.block(k, j) else { continue };
            if b.kind() != BlockKind::ToolResult {
                seen_other = true;
                continue;
            }
            let key = key(&b);
            match want.iter_mut().find(|(w, _)| *w == key.as_ref()) {
                Some((_, n)) if *n > 0 => {
                    *n -= 1;
                    if k != first {
                        a.late += 1;
                    } else if seen_other {
                        a.not_first = true;
                    }
                }
                Some(_) => a.dups.push((k, j)),
                None => a.orphans.push((k, j)),
            }
        }
    }
    // A key is missing as many results as its calls ask for beyond those found.
    let mut short: Vec<(&str, usize)> = asked
        .iter()
        .map(|&(k, n)| {
            let left = want.iter().find(|(w, _)| *w == k).map_or(0, |(_, m)| *m);
            let got = (n + extra(repeats, k)).saturating_sub(left);
            (k, n.saturating_sub(got))
        })
        .collect();
    for (k, name) in calls {
        if let Some((_, n)) = short.iter_mut().find(|(w, n)| *w == k.as_str() && *n > 0) {
            *n -= 1;
            a.missing.push((k.clone(), name.clone()));
        }
    }
    a
}

fn synthetic_result(
    d: &Draft<'_, '_>,
    key: &str,
    name: &str,
    placeholder: &str,
) -> Option<DraftBlock> {
    let format = d.transcript().format;
    let mut json = String::new();
    match format {
        Format::Gemini => {
            json.push_str("{\"functionResponse\":{");
            if !key.starts_with("name:") {
                json.push_str("\"id\":");
                write_string(&mut json, key);
                json.push(',');
            }
            json.push_str("\"name\":");
            write_string(&mut json, name);
            json.push_str(",\"response\":{\"error\":");
            write_string(&mut json, placeholder);
            json.push_str("}}}");
        }
        _ => {
            json.push_str("{\"type\":\"tool_result\",\"tool_use_id\":");
            write_string(&mut json, key);
            json.push_str(",\"is_error\":true,\"content\":");
            write_string(&mut json, placeholder);
            json.push('}');
        }
    }
    NewBlock::new(format, json)
        .ok()
        .map(|b| DraftBlock::New(Box::new(b)))
}

fn ids(format: Format) -> (RuleId, RuleId, RuleId, RuleId) {
    // (missing, order, late/placement, orphan)
    match format {
        Format::Gemini => (RuleId::Gm10, RuleId::Gm03, RuleId::Gm09, RuleId::Gm10),
        _ => (RuleId::An08, RuleId::An09, RuleId::An11, RuleId::An10),
    }
}

/// Whether a call can be answered at all: only Gemini matches a response to its call by name,
/// so a call elsewhere with no `id` cannot be.
fn answerable(call: &BlockRef<'_>, format: Format) -> bool {
    call.id().is_some() || format == Format::Gemini
}

/// Whether `result` answers `call`: the same key ([`key`]), for a call that can be answered
/// ([`answerable`]). Keyed by name, an id-less call used to match an id-less result here while
/// [`analyse`] called that result an orphan (`corpus/regressions/repair_invariants-2de48a77c441e0bc`).
fn answers(call: &BlockRef<'_>, result: &BlockRef<'_>, format: Format) -> bool {
    answerable(call, format) && key(call) == key(result)
}

/// The common case, decided without allocating: the turn `[start, a_end)` makes calls, the user
/// message at `a_end` starts with exactly one result for each, and no later message of the run
/// `(a_end, end)` holds a result. `pending` is scratch space kept across turns. `false` means
/// "look closer" ([`analyse`]), not necessarily a finding.
fn turn_is_answered(
    d: &Draft<'_, '_>,
    start: usize,
    a_end: usize,
    end: usize,
    pending: &mut Vec<(usize, usize)>,
) -> bool {
    if end <= a_end {
        return false;
    }
    pending.clear();
    let format = d.transcript().format;
    for k in start..a_end {
        if d.summary(k).kinds.contains(BlockKind::ToolCall) {
            pending.extend(
                d.blocks(k)
                    .enumerate()
                    .filter(|(_, b)| b.kind() == BlockKind::ToolCall)
                    .map(|(j, _)| (k, j)),
            );
        }
    }
    let mut results_done = false;
    for r in d.blocks(a_end) {
        if r.kind() != BlockKind::ToolResult {
            results_done = true;
            continue;
        }
        if results_done {
            return false;
        }
        let matched = pending
            .iter()
            .position(|&(k, j)| d.block(k, j).is_some_and(|c| answers(&c, &r, format)));
        match matched {
            Some(p) => {
                pending.swap_remove(p);
            }
            None => return false,
        }
    }
    pending.is_empty()
        && (a_end + 1..end).all(|k| !d.summary(k).kinds.contains(BlockKind::ToolResult))
}

/// Pairs calls and results: AN-08 to AN-11 (GM-03, GM-09, GM-10 for Gemini).
pub fn run(ctx: &mut Ctx<'_>, f: &mut Fixer<'_, '_>) {
    let format = f.transcript().format;
    let (r_missing, r_order, r_late, r_orphan) = ids(format);
    let mut pending = Vec::new();
    let mut i = ctx.horizon;
    while i < f.len() {
        match f.role(i) {
            Role::Assistant => {
                // Consecutive assistant messages are one turn (the API merges them, AN-02); their
                // calls are answered by the run of user messages that follows.
                let a_end = (i..f.len())
                    .find(|&k| f.role(k) != Role::Assistant)
                    .unwrap_or(f.len());
                if !(i..a_end).any(|k| f.summary(k).kinds.contains(BlockKind::ToolCall)) {
                    i = a_end;
                    continue;
                }
                let end = (a_end..f.len())
                    .find(|&k| f.role(k) != Role::User)
                    .unwrap_or(f.len());
                if turn_is_answered(f, i, a_end, end, &mut pending) {
                    i = end;
                    continue;
                }
                let all_calls = || {
                    (i..a_end)
                        .flat_map(|k| (0..f.block_count(k)).map(move |j| (k, j)))
                        .filter_map(|(k, j)| {
                            f.block(k, j)
                                .filter(|b| b.kind() == BlockKind::ToolCall)
                                .and_then(|_| call_key(f, k, j))
                        })
                };
                let calls: Vec<(String, String)> = by_id(all_calls());
                let repeats = repeats(all_calls());
                let last_asst = a_end - 1;
                if calls.is_empty() {
                    i = a_end;
                    continue;
                }
                if end == a_end {
                    let names: Vec<&str> = calls.iter().map(|(k, _)| k.as_str()).collect();
                    f.find(
                        r_missing,
                        Severity::Error,
                        last_asst,
                        None,
                        format!(
                            "tool call ids were found without results immediately after: {}",
                            names.join(", ")
                        ),
                        Some("add a user message with an error result for each call"),
                    );
                    if split_turn(ctx, f, (i, a_end, end), (r_missing, r_late)) {
                        continue;
                    }
                    let placeholder = &ctx.policy.tool_result_placeholder;
                    let build = |d: &Draft<'_, '_>| -> Vec<DraftBlock> {
                        calls
                            .iter()
                            .filter_map(|(k, n)| synthetic_result(d, k, n, placeholder))
                            .collect()
                    };
                    let reason = format!(
                        "added error results for {} call(s) that never got one: {}",
                        calls.len(),
                        names.join(", ")
                    );
                    if f.insert_message_with(r_missing, a_end, Role::User, build, reason) {
                        // The assistant turn is no longer last: a thinking block it ends with
                        // (left alone as a prefill) is now a trailing thinking block.
                        let gone = remove_trailing_thinking(
                            ctx,
                            f,
                            r_missing,
                            a_end - 1,
                            "removed a thinking block left last once the turn was no longer the final message (AN-19)",
                        );
                        i = if gone { a_end } else { a_end + 1 };
                    } else {
                        i = a_end;
                    }
                    continue;
                }
                let a = analyse(f, a_end, end, &calls, &repeats);
                if a.ok() {
                    i = end;
                    continue;
                }
                report(f, last_asst, &a, (r_missing, r_order, r_late, r_orphan));
                if split_turn(ctx, f, (i, a_end, end), (r_missing, r_late)) {
                    continue;
                }
                let run = Run {
                    first: last_asst + 1,
                    end,
                    calls: &calls,
                    repeats: &repeats,
                };
                i = f
                    .fix_with(|f| rebuild(ctx, f, run, (r_missing, r_order, r_late, r_orphan)))
                    .unwrap_or(end);
            }
            Role::User => {
                // A user message no assistant call claimed: any result in it is an orphan.
                if !f.summary(i).kinds.contains(BlockKind::ToolResult) {
                    i += 1;
                    continue;
                }
                let mut j = 0;
                let mut removed = false;
                while j < f.block_count(i) {
                    if f.block(i, j)
                        .is_some_and(|b| b.kind() == BlockKind::ToolResult)
                    {
                        let id = call_key(f, i, j).map(|(k, _)| k).unwrap_or_default();
                        f.find(r_orphan, Severity::Error, i, Some(j),
                            format!("unexpected `tool_use_id` found in `tool_result` blocks: {id}. The previous message has no matching call"),
                            Some("remove the orphan result"));
                        if f.remove_block(r_orphan, i, j, format!("removed a result for `{id}`, which no call in the previous message made")) {
                            removed = true;
                            continue;
                        }
                    }
                    j += 1;
                }
                if removed
                    && f.block_count(i) == 0
                    && f.is_string_content(i).is_none()
                    && f.remove_message(
                        r_orphan,
                        i,
                        "removed a message left empty by removing orphan results",
                    )
                {
                    continue;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
}

fn report(f: &mut Fixer<'_, '_>, i: usize, a: &Analysis, rules: (RuleId, RuleId, RuleId, RuleId)) {
    let (r_missing, r_order, r_late, r_orphan) = rules;
    if !a.missing.is_empty() {
        let ids: Vec<&str> = a.missing.iter().map(|(k, _)| k.as_str()).collect();
        f.find(
            r_missing,
            Severity::Error,
            i + 1,
            None,
            format!(
                "`tool_use` ids were found without `tool_result` blocks immediately after: {}",
                ids.join(", ")
            ),
            Some("insert an error result for each unanswered call"),
        );
    }
    if a.not_first {
        f.find(
            r_order,
            Severity::Error,
            i + 1,
            None,
            "tool results must come first in the message, before any other block",
            Some("move the results to the front"),
        );
    }
    if a.late > 0 {
        f.find(r_late, Severity::Error, i + 1, None,
            format!("{} result(s) sit in a later message; nothing may stand between a call and its results", a.late),
            Some("move them to the front of the message right after the call"));
    }
    for &(k, j) in a.orphans.iter() {
        f.find(
            r_orphan,
            Severity::Error,
            k,
            Some(j),
            "a result whose id matches no call in the previous assistant message",
            Some("remove it"),
        );
    }
    for &(k, j) in a.dups.iter() {
        f.find(
            r_orphan,
            Severity::Error,
            k,
            Some(j),
            "a second result for the same call",
            Some("remove the duplicate"),
        );
    }
}

/// Whether the API merges consecutive assistant messages (AN-02) before it pairs calls with
/// results (AN-08) is disputed (peers.md). An input whose turn is answered under the merging
/// reading is left as it is; but when a turn spanning several assistant messages must be edited
/// and an earlier one of them makes calls, its calls are answered in a new user message right
/// after it, which is valid under both readings: the results found later in the run move there,
/// error results stand in for the others. Returns true when it split the turn (in repair only);
/// the caller then looks at the turn again. `span` is (turn start, end of the assistant run, end
/// of the user run after it).
fn split_turn(
    ctx: &Ctx<'_>,
    f: &mut Fixer<'_, '_>,
    span: (usize, usize, usize),
    rules: (RuleId, RuleId),
) -> bool {
    let (i, a_end, end) = span;
    let (r_missing, r_late) = rules;
    let Some(k) =
        (i..a_end.saturating_sub(1)).find(|&k| f.summary(k).kinds.contains(BlockKind::ToolCall))
    else {
        return false;
    };
    let calls: Vec<(String, String)> = by_id((0..f.block_count(k)).filter_map(|j| {
        f.block(k, j)
            .filter(|b| b.kind() == BlockKind::ToolCall)
            .and_then(|_| call_key(f, k, j))
    }));
    let origin = f
        .origin(k)
        .map_or_else(|| "a new message".to_owned(), |o| format!("messages[{o}]"));
    if !f.insert_message(
        r_late,
        k + 1,
        Role::User,
        Vec::new(),
        format!("added a user message right after the calls of {origin}, so they are answered whether or not the API merges consecutive assistant messages"),
    ) {
        return false;
    }
    // The run after the assistant messages moved one down.
    let (a_end, end) = (a_end + 1, end + 1);
    let placeholder = &ctx.policy.tool_result_placeholder;
    for (p, (key, name)) in calls.iter().enumerate() {
        match find_result(f, a_end, end, 0, key) {
            Some(at) => {
                f.move_block(
                    r_late,
                    at,
                    (k + 1, p),
                    format!("moved the result for `{key}` right after its call"),
                );
            }
            None => {
                f.insert_block_with(
                    r_missing,
                    k + 1,
                    p,
                    |d| synthetic_result(d, key, name, placeholder),
                    format!("added an error result for `{key}`, a call that never got one"),
                );
            }
        }
    }
    true
}

/// Where a result is (message, block) and whether it is an error result.
type Place = (usize, usize, bool);

/// The run of user messages `[first, end)` that answers `calls`.
struct Run<'c> {
    first: usize,
    end: usize,
    calls: &'c [(String, String)],
    /// Extra results allowed for ids the turn repeats ([`repeats`]).
    repeats: &'c [(String, usize)],
}

/// Where a result for `key` is in the run: at or after position `from` of the first message,
/// else in a later message.
fn find_result(
    d: &Draft<'_, '_>,
    first: usize,
    end: usize,
    from: usize,
    key: &str,
) -> Option<(usize, usize)> {
    (first..end).find_map(|k| {
        let start = if k == first { from } else { 0 };
        (start..d.block_count(k)).find_map(|j| {
            let b = d.block(k, j)?;
            (b.kind() == BlockKind::ToolResult && self::key(&b) == key).then_some((k, j))
        })
    })
}

/// The first result of the run at or after position `from` of its first message, else in a
/// later message.
fn find_any_result(
    d: &Draft<'_, '_>,
    first: usize,
    end: usize,
    from: usize,
) -> Option<(usize, usize)> {
    (first..end).find_map(|k| {
        let start = if k == first { from } else { 0 };
        (start..d.block_count(k))
            .find(|&j| {
                d.block(k, j)
                    .is_some_and(|b| b.kind() == BlockKind::ToolResult)
            })
            .map(|j| (k, j))
    })
}

/// Rebuilds a run so its first message starts with one result per call, in call order: drops
/// duplicates and orphans, moves results up, adds error results for calls that have none, and
/// removes later messages left empty. Returns the index after the run.
fn rebuild(
    ctx: &Ctx<'_>,
    f: &mut Fixer<'_, '_>,
    run: Run<'_>,
    rules: (RuleId, RuleId, RuleId, RuleId),
) -> usize {
    let (r_missing, r_order, r_late, r_orphan) = rules;
    let Run {
        first,
        end,
        calls,
        repeats,
    } = run;
    let mut want: HashMap<&str, usize> = HashMap::new();
    for (k, _) in calls {
        *want.entry(k.as_str()).or_insert(0) += 1;
    }
    for (k, n) in repeats {
        if let Some(w) = want.get_mut(k.as_str()) {
            *w += n;
        }
    }
    let want = want;
    // Duplicates and orphans out. Of several results for one call, those that are not errors
    // are kept first: a synthetic error result followed by the real output keeps the output.
    let mut found: Vec<(String, Vec<Place>)> = Vec::new();
    for k in first..end {
        for j in 0..f.block_count(k) {
            let Some(b) = f.block(k, j).filter(|b| b.kind() == BlockKind::ToolResult) else {
                continue;
            };
            let error = b.block.is_error == Some(true);
            let key = self::key(&b).into_owned();
            match found.iter_mut().find(|(x, _)| *x == key) {
                Some((_, at)) => at.push((k, j, error)),
                None => found.push((key, vec![(k, j, error)])),
            }
        }
    }
    let mut drop: Vec<(usize, usize, String)> = Vec::new();
    for (key, at) in &found {
        let n = want.get(key.as_str()).copied().unwrap_or(0);
        if n == 0 {
            drop.extend(at.iter().map(|&(k, j, _)| {
                (k, j, format!("removed a result for `{key}`, which the previous assistant message did not call"))
            }));
            continue;
        }
        if at.len() <= n {
            continue;
        }
        let mut order: Vec<&(usize, usize, bool)> = at.iter().filter(|x| !x.2).collect();
        order.extend(at.iter().filter(|x| x.2));
        for &&(k, j, error) in order.iter().skip(n) {
            let why = if error && at.iter().any(|x| !x.2) {
                format!("removed an error result for `{key}`: the call's real result is kept")
            } else {
                format!("removed a duplicate result for `{key}`")
            };
            drop.push((k, j, why));
        }
    }
    // From the end, so the positions of those still to go stay valid.
    drop.sort_by_key(|&(k, j, _)| std::cmp::Reverse((k, j)));
    for (k, j, why) in drop {
        f.remove_block(r_orphan, k, j, why);
    }
    // Results up front, in call order; error results for calls without one.
    for (p, (key, name)) in calls.iter().enumerate() {
        match find_result(f, first, end, p, key) {
            Some(at) if at == (first, p) => {}
            Some((k, j)) => {
                let rule = if k == first { r_order } else { r_late };
                f.move_block(
                    rule,
                    (k, j),
                    (first, p),
                    format!(
                        "moved the result for `{key}` to the front of the message after its call"
                    ),
                );
            }
            None => {
                let placeholder = &ctx.policy.tool_result_placeholder;
                f.insert_block_with(
                    r_missing,
                    first,
                    p,
                    |d| synthetic_result(d, key, name, placeholder),
                    format!("added an error result for `{key}`, a call that never got one"),
                );
            }
        }
    }
    // The results left are those of repeated ids ([`repeats`]): after the others, in order.
    let mut p = calls.len();
    while let Some((k, j)) = find_any_result(f, first, end, p) {
        if (k, j) != (first, p) {
            let rule = if k == first { r_order } else { r_late };
            f.move_block(
                rule,
                (k, j),
                (first, p),
                "moved a result for a repeated call id to the front of the message after its call",
            );
        }
        p += 1;
    }
    // Later messages left empty go.
    let mut end = end;
    let mut k = first + 1;
    while k < end {
        if f.block_count(k) == 0
            && f.is_string_content(k).is_none()
            && f.remove_message(
                r_late,
                k,
                "removed a message left empty once its results moved up",
            )
        {
            end -= 1;
            continue;
        }
        k += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use crate::Options;
    use crate::rules::common::testing::{
        Expect, MANUAL, body, changes, check_case, check_with, thinking,
    };

    const CALL: &str = r#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]}"#;

    /// The call of [`CALL`], as a block.
    const USE: &str = r#"{"type":"tool_use","id":"toolu_1","name":"f","input":{}}"#;

    /// The error result AN-08 adds for an unanswered call (the default placeholder).
    const NO_RESULT: &str = "The tool call did not complete: no result was recorded.";

    fn result(content: &str, error: bool) -> String {
        let e = if error { r#","is_error":true"# } else { "" };
        format!(r#"{{"type":"tool_result","tool_use_id":"toolu_1"{e},"content":"{content}"}}"#)
    }

    #[test]
    fn of_an_error_result_and_the_real_output_the_output_stays() {
        let input = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"user","content":[{},{}]}}"#,
                result("interrupted", true),
                result("the listing", false)
            ),
        );
        let after = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"user","content":[{}]}}"#,
                result("the listing", false)
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-10"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    /// Found by fuzzing `repair_invariants` (corpus/regressions/repair_invariants-36033365a70330ea):
    /// a signed turn calls twice with one id (AN-46, left: the turn may not be edited) and each
    /// call's result came in its own user message. AN-10 removed the second result as a
    /// duplicate, losing the second call's output. Each call may have its result: the second
    /// moves up beside the first (AN-11) and nothing is removed.
    #[test]
    fn a_repeated_call_id_in_a_signed_turn_keeps_both_results() {
        let call = |input: &str| {
            format!(r#"{{"type":"tool_use","id":"toolu_1","name":"f","input":{{"n":{input}}}}}"#)
        };
        let turn = format!(
            r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{},{},{}]}}"#,
            thinking("t"),
            call("1"),
            call("2")
        );
        let input = body(
            "claude-sonnet-4-5",
            MANUAL,
            &format!(
                r#"{turn},{{"role":"user","content":[{}]}},{{"role":"user","content":[{}]}},{{"role":"assistant","content":"done"}},{{"role":"user","content":"thanks"}}"#,
                result("one", false),
                result("two", false)
            ),
        );
        let after = body(
            "claude-sonnet-4-5",
            MANUAL,
            &format!(
                r#"{turn},{{"role":"user","content":[{},{}]}},{{"role":"assistant","content":"done"}},{{"role":"user","content":"thanks"}}"#,
                result("one", false),
                result("two", false)
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-11", "AN-46"],
                after: Some(&after),
                left: &["AN-46"],
            },
        );
    }

    /// Found by fuzzing `repair_invariants` (`corpus/regressions/repair_invariants-*`, a call
    /// whose `id` was misspelt `jd`): a call with no `id` was keyed by its name, so AN-08 added a
    /// result with `tool_use_id: "name:bash"`, AN-12 rewrote that id, AN-10 removed the result
    /// as answering nothing, and so on for every pass, leaving a made-up result behind. Outside
    /// Gemini nothing can answer a call without an id: it takes no part in pairing, its stray
    /// result is an orphan, and AN-12 reports the id (left, here, as the turn is signed).
    #[test]
    fn a_call_without_an_id_gets_no_made_up_result() {
        let thinking = r#"{"type":"thinking","thinking":"List","signature":"EqQBCkYIBxgCKkBvXz0wQ8rT2vX9wY4bN6cD1eF5gH7jKLk3mZ0pQ8rT2vX9wY4bN6cD=="}"#;
        let call = r#"{"type":"tool_use","name":"bash","input":{"command":"ls"}}"#;
        let tail = r#"{"role":"assistant","content":"done"},{"role":"user","content":"thanks"}"#;
        let manual = r#"{"type":"enabled","budget_tokens":1024}"#;
        let input = body(
            "claude-sonnet-4-5",
            manual,
            &format!(
                r#"{{"role":"user","content":"ls"}},{{"role":"assistant","content":[{thinking},{call}]}},{{"role":"user","content":[{},{{"type":"text","text":"go on"}}]}},{tail}"#,
                result("a.txt", false)
            ),
        );
        let after = body(
            "claude-sonnet-4-5",
            manual,
            &format!(
                r#"{{"role":"user","content":"ls"}},{{"role":"assistant","content":[{thinking},{call}]}},{{"role":"user","content":[{{"type":"text","text":"go on"}}]}},{tail}"#
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-10", "AN-12"],
                after: Some(&after),
                left: &["AN-12"],
            },
        );
    }

    /// Found by fuzzing `repair_invariants` (`corpus/regressions/repair_invariants-2de48a77c441e0bc`):
    /// a call with no `id` and a result with no `tool_use_id`, a blank text block before the
    /// result. `check` called the result an orphan (AN-10); `repair`, once AN-05 had removed the
    /// blank block, took the result as the call's answer (both keyed by the call's name) and
    /// left it. Both now say orphan, and the repaired request pairs every result with a call.
    #[test]
    fn a_result_without_an_id_answers_no_call_without_one() {
        let thinking = crate::rules::common::testing::thinking("List");
        // Neither an id nor a name (the fuzzer's `jd` and `na-e`): both keyed `name:`.
        let call = r#"{"type":"tool_use","input":{"command":"ls"}}"#;
        let orphan = r#"{"type":"tool_result","content":"a.txt"}"#;
        let tail = r#"{"role":"assistant","content":"done"},{"role":"user","content":"thanks"}"#;
        let manual = r#"{"type":"enabled","budget_tokens":1024}"#;
        let msgs = |user: &str| {
            format!(
                r#"{{"role":"user","content":"ls"}},{{"role":"assistant","content":[{thinking},{call}]}},{{"role":"user","content":[{user}]}},{tail}"#
            )
        };
        let go_on = r#"{"type":"text","text":"go on"}"#;
        check_case(
            &body(
                "claude-sonnet-4-5",
                manual,
                &msgs(&format!(r#"{{"type":"text","text":" "}},{orphan},{go_on}"#)),
            ),
            Expect {
                rules: &["AN-05", "AN-10", "AN-12", "AN-12"],
                after: Some(&body("claude-sonnet-4-5", manual, &msgs(go_on))),
                left: &["AN-12"],
            },
        );
    }

    #[test]
    fn calls_answered_after_a_second_assistant_message_are_left_as_they_are() {
        // The API merges consecutive assistant messages (AN-02); whether it does so before
        // pairing is disputed, and the input may be accepted: it is not touched.
        let input = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"assistant","content":"and"}},{{"role":"user","content":[{}]}}"#,
                result("x", false)
            ),
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

    #[test]
    fn an_edit_of_such_a_turn_answers_the_calls_right_after_them() {
        // Valid whether or not the API merges the two assistant messages.
        let input = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"assistant","content":"and"}},{{"role":"user","content":[{{"type":"text","text":"go"}},{}]}}"#,
                result("x", false)
            ),
        );
        let after = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"user","content":[{}]}},{{"role":"assistant","content":"and"}},{{"role":"user","content":[{{"type":"text","text":"go"}}]}}"#,
                result("x", false)
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-09"],
                after: Some(&after),
                left: &[],
            },
        );
    }

    /// A `tool_use` block echoed into the user message (AN-06) carries the call's id but is no
    /// result: the call is still unanswered (AN-08) and gets its error result; the echo, a
    /// repeated id in no signed turn, goes (AN-46). Kills
    /// `r.kind() != BlockKind::ToolResult` turned into `==` in `turn_is_answered`, under which the
    /// echo counted as the answer.
    #[test]
    fn a_call_echoed_in_the_user_message_is_not_its_answer() {
        let msgs = |error: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{USE}]}},{{"role":"user","content":[{error}{USE}]}}"#
            )
        };
        check_case(
            &body("claude-sonnet-4-5", "", &msgs("")),
            Expect {
                rules: &["AN-06", "AN-08", "AN-46"],
                after: Some(&body(
                    "claude-sonnet-4-5",
                    "",
                    &format!(
                        r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{USE}]}},{{"role":"user","content":[{}]}}"#,
                        result(NO_RESULT, true)
                    ),
                )),
                left: &[],
            },
        );
    }

    /// When a turn of two assistant messages is split, the result that moves up is the one in
    /// the user message after the turn; a `tool_result` misplaced inside the second assistant
    /// message (AN-06) stays where it is, as this repair changes user messages only. Kills
    /// `a_end + 1` turned into `a_end - 1` in `split_turn`, which searched the assistant message
    /// too.
    #[test]
    fn a_split_turn_takes_its_results_from_the_user_run_only() {
        let and = format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"and"}},{}]}}"#,
            result("early", false)
        );
        let input = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{CALL},{and},{{"role":"user","content":[{{"type":"text","text":"go"}},{}]}}"#,
                result("x", false)
            ),
        );
        let after = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"user","content":[{}]}},{and},{{"role":"user","content":[{{"type":"text","text":"go"}}]}}"#,
                result("x", false)
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-06", "AN-09"],
                after: Some(&after),
                left: &["AN-06"],
            },
        );
    }

    /// A thinking block left last in the turn (here by merging a thinking-only message into the
    /// calls, AN-02) may stay while the turn is the final message; once AN-08 adds the results
    /// after it, AN-08 removes it in the same pass and reports it. Kills `a_end - 1` turned into
    /// `a_end + 1` in `run`, which left it for AN-19 in a second pass.
    #[test]
    fn thinking_left_last_goes_with_the_results_added_after_it() {
        let th = thinking("t");
        let mut opts = Options::default();
        opts.policy.merge_same_role = Some(true);
        let input = body(
            "claude-sonnet-4-5",
            MANUAL,
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{th},{USE}]}},{{"role":"assistant","content":[{th}]}}"#
            ),
        );
        let after = body(
            "claude-sonnet-4-5",
            MANUAL,
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{th},{USE}]}},{{"role":"user","content":[{}]}}"#,
                result(NO_RESULT, true)
            ),
        );
        check_with(
            &input,
            &opts,
            Expect {
                rules: &["AN-02", "AN-08", "AN-03"],
                after: Some(&after),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &opts),
            [
                "AN-02 merged_message messages[1]",
                "AN-08 inserted_message output messages[2] (new message)",
                "AN-08 removed_block messages[2].content[0]",
            ]
        );
    }

    /// A result right after the call but for another id answers nothing: the call gets an
    /// error result (AN-08) and the stray result goes (AN-10). Kills `key(call) == key(result)`
    /// turned into `!=` in `answers`, under which the quick check took the stray result for the
    /// answer and nothing was reported.
    #[test]
    fn a_result_for_another_id_is_no_answer() {
        let msgs = |results: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"user","content":[{results}]}}"#
            )
        };
        let stray = r#"{"type":"tool_result","tool_use_id":"toolu_2","content":"x"}"#;
        check_case(
            &body("claude-sonnet-4-5", "", &msgs(stray)),
            Expect {
                rules: &["AN-08", "AN-10"],
                after: Some(&body(
                    "claude-sonnet-4-5",
                    "",
                    &msgs(&result(NO_RESULT, true)),
                )),
                left: &[],
            },
        );
    }

    /// After a run is rebuilt and a message of it left empty goes, pairing goes on with the next
    /// turn in the same pass: its unanswered call gets its error result in the first pass. Kills
    /// `end -= 1` turned into `end += 1` in `rebuild`, which returned an index past that turn and
    /// left it to a second pass.
    #[test]
    fn the_turn_after_a_rebuilt_run_is_paired_in_the_same_pass() {
        let call2 = r#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"f","input":{}}]}"#;
        let input = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"user","content":[{{"type":"text","text":"go"}}]}},{{"role":"user","content":[{}]}},{call2},{{"role":"user","content":[{{"type":"text","text":"next"}}]}}"#,
                result("x", false)
            ),
        );
        let after = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"user","content":[{},{{"type":"text","text":"go"}}]}},{call2},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":"{NO_RESULT}"}},{{"type":"text","text":"next"}}]}}"#,
                result("x", false)
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-11", "AN-08"],
                after: Some(&after),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &Options::default()),
            [
                "AN-11 moved_block messages[3].content[0]",
                "AN-11 removed_message messages[3]",
                "AN-08 inserted_block messages[5].content[0] (new block)",
            ]
        );
    }

    /// A second result for the call in a later user message of the run is a duplicate, even
    /// though the message right after the call answers it: the quick check hands such a run to
    /// the closer look. The duplicate goes (AN-10), and the message it leaves empty with it.
    /// Kills the deletion of `!` in `turn_is_answered`'s look at the later messages, under which
    /// a run whose later messages all hold results passed as answered and nothing was reported.
    #[test]
    fn a_second_result_in_a_later_message_is_a_duplicate() {
        let msgs = |later: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"user","content":[{}]}}{later}"#,
                result("x", false)
            )
        };
        let input = body(
            "claude-sonnet-4-5",
            "",
            &msgs(&format!(
                r#",{{"role":"user","content":[{}]}}"#,
                result("again", false)
            )),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-10"],
                after: Some(&body("claude-sonnet-4-5", "", &msgs(""))),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &Options::default()),
            [
                "AN-10 removed_block messages[3].content[0]",
                "AN-11 removed_message messages[3]",
            ]
        );
    }

    /// Of several results for one call that are all error results, the extra ones go as
    /// duplicates: the removal does not claim a real result is kept when there is none (it does
    /// when there is one). Kills the deletion of `!` in `rebuild`'s test for a non-error result
    /// beside the one removed, under which every removed error result was said to make way for
    /// the call's real result.
    #[test]
    fn of_error_results_alone_the_extra_one_goes_as_a_duplicate() {
        let removals = |first: &str, second: &str| -> Vec<String> {
            let input = body(
                "claude-sonnet-4-5",
                "",
                &format!(
                    r#"{{"role":"user","content":"q"}},{CALL},{{"role":"user","content":[{first},{second}]}}"#
                ),
            );
            let t =
                turnkeeper_model::read(&input, turnkeeper_model::FormatHint::Auto).expect("reads");
            crate::repair(&t, &Options::default())
                .expect("repairs")
                .report
                .changes
                .iter()
                .map(|c| format!("{} {} {}: {}", c.rule, c.action, c.path, c.reason))
                .collect()
        };
        assert_eq!(
            removals(&result("a", true), &result("b", true)),
            [
                "AN-10 removed_block messages[2].content[1]: removed a duplicate result for `toolu_1`"
            ]
        );
        assert_eq!(
            removals(&result("interrupted", true), &result("the listing", false)),
            [
                "AN-10 removed_block messages[2].content[0]: removed an error result for `toolu_1`: the call's real result is kept"
            ]
        );
    }

    /// Only a user message answers a call: a result in a message of another role right after
    /// the call (here a `system` message) is no answer, so the call is reported unanswered and
    /// an error result goes in a user message before it. Kills `end <= a_end` turned into
    /// `end > a_end` in `turn_is_answered`, under which a turn with no user message after it
    /// was taken as answered by whatever message came next, and nothing was reported.
    #[test]
    fn a_result_in_a_message_of_another_role_is_no_answer() {
        let input = body(
            "claude-sonnet-4-5",
            "",
            &format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"system","content":[{}]}}"#,
                result("x", false)
            ),
        );
        // The system message is out of place too (AN-30: not after a user message); the
        // user message AN-08 adds before it puts it in place.
        assert_eq!(
            crate::rules::common::testing::findings(&input, &Options::default()),
            [
                "AN-30 messages[2]: a mid-conversation system message out of place: it follows an assistant message that does not end in a server tool use (it must follow a user message); the API answers 400 (a system message must follow a user message and be followed by an assistant message or end the conversation)",
                "AN-08 messages[1]: tool call ids were found without results immediately after: toolu_1"
            ]
        );
        let added = format!(
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"{NO_RESULT}"}}]}}"#
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-30", "AN-08"],
                after: Some(&body(
                    "claude-sonnet-4-5",
                    "",
                    &format!(
                        r#"{{"role":"user","content":"q"}},{CALL},{added},{{"role":"system","content":[{}]}}"#,
                        result("x", false)
                    ),
                )),
                left: &[],
            },
        );
    }

    /// A result after the user's text moves to the front of its message, and the empty
    /// assistant message that ends the request (a valid empty prefill, which AN-04 leaves) is
    /// no message of the run: it stays, and so does the real result. Kills `k < end` turned
    /// into `k <= end` in `rebuild`, under which the loop over the run's later messages went
    /// one past the run, removed the empty prefill as "left empty once its results moved up",
    /// and the pass after it traded the real result for an error result.
    #[test]
    fn the_empty_prefill_after_a_rebuilt_run_stays() {
        let msgs = |content: &str| {
            format!(
                r#"{{"role":"user","content":"q"}},{CALL},{{"role":"user","content":{content}}},{{"role":"assistant","content":[]}}"#
            )
        };
        let x = result("x", false);
        let input = body(
            "claude-sonnet-4-5",
            "",
            &msgs(&format!(r#"[{{"type":"text","text":"a"}},{x}]"#)),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-09"],
                after: Some(&body(
                    "claude-sonnet-4-5",
                    "",
                    &msgs(&format!(r#"[{x},{{"type":"text","text":"a"}}]"#)),
                )),
                left: &[],
            },
        );
        assert_eq!(
            changes(&input, &Options::default()),
            ["AN-09 moved_block messages[2].content[1]"]
        );
    }

    /// A turn of two assistant messages whose one answerable call is answered right after it is
    /// left as it is, even though the quick path looks closer (the second message's call has no
    /// id, so no result can answer it: AN-12 reports it, frozen in a signed message). Kills
    /// `Analysis::ok` replaced with `false`, under which the closer look that found nothing
    /// wrong still split the turn (AN-11 put the result between the two messages).
    #[test]
    fn an_answered_turn_the_quick_path_does_not_recognise_is_left_alone() {
        let th = thinking("t");
        let input = body(
            "claude-sonnet-4-5",
            MANUAL,
            &format!(
                r#"{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_1","name":"f","input":{{}}}}]}},{{"role":"assistant","content":[{th},{{"type":"tool_use","name":"g","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}}]}},{{"role":"assistant","content":"ok"}},{{"role":"user","content":"more"}}"#
            ),
        );
        check_case(
            &input,
            Expect {
                rules: &["AN-12"],
                after: None,
                left: &["AN-12"],
            },
        );
    }
}
