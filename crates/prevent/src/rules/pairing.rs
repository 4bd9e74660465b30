//! Tool pairing: every client tool call gets exactly one result, at the front of the next user
//! message, and no result lacks its call (api-rules.md AN-08, AN-09, AN-10, AN-11, AN-13; Gemini
//! GM-03, GM-09, GM-10, GM-11). Tool ids are made valid on both sides (AN-12). Server tool
//! results must follow their call in the same message (AN-15).
//!
//! One forward pass: each assistant message with calls claims the run of user messages that
//! follows it. Everything a repair does here changes user messages only (or adds one), so no
//! thinking block is touched (api-rules.md §5.2, AN-08 row).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};
use turnkeeper_model::edit::object;
use turnkeeper_model::json::write_string;
use turnkeeper_model::{BlockKind, BlockRef, Draft, DraftBlock, Format, Kinds, NewBlock, Role};

use crate::ctx::{Ctx, Sink};
use crate::finding::Severity;
use crate::policy::ToolIdForm;

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
fn call_key(d: &Draft<'_, '_>, i: usize, j: usize) -> Option<(String, String)> {
    let b = d.block(i, j)?;
    if !matches!(b.kind(), BlockKind::ToolCall | BlockKind::ToolResult) {
        return None;
    }
    let name = b
        .str(b.block.name)
        .map(|n| n.into_owned())
        .unwrap_or_default();
    Some((key(&b).into_owned(), name))
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

fn analyse(d: &Draft<'_, '_>, first: usize, end: usize, calls: &[(String, String)]) -> Analysis {
    // Turns have a handful of calls: linear scans over a small vector beat hashing.
    let mut want: Vec<(&str, usize)> = Vec::with_capacity(calls.len());
    for (k, _) in calls {
        match want.iter_mut().find(|(w, _)| *w == k.as_str()) {
            Some((_, n)) => *n += 1,
            None => want.push((k.as_str(), 1)),
        }
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
    for (k, name) in calls {
        if let Some((_, n)) = want.iter_mut().find(|(w, n)| *w == k.as_str() && *n > 0) {
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

fn ids(format: Format) -> (&'static str, &'static str, &'static str, &'static str) {
    // (missing, order, late/placement, orphan)
    match format {
        Format::Gemini => ("GM-10", "GM-03", "GM-09", "GM-10"),
        _ => ("AN-08", "AN-09", "AN-11", "AN-10"),
    }
}

/// True when a call and a result name each other ([`key`]).
fn answers(call: &BlockRef<'_>, result: &BlockRef<'_>) -> bool {
    key(call) == key(result)
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
            .position(|&(k, j)| d.block(k, j).is_some_and(|c| answers(&c, &r)));
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

/// AN-08 to AN-11 (GM-03, GM-09, GM-10 for Gemini).
pub fn an08_pairing(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    let format = d.transcript().format;
    let (r_missing, r_order, r_late, r_orphan) = ids(format);
    let mut pending = Vec::new();
    let mut i = 0;
    while i < d.len() {
        match d.role(i) {
            Role::Assistant => {
                // Consecutive assistant messages are one turn (the API merges them, AN-02); their
                // calls are answered by the run of user messages that follows.
                let a_end = (i..d.len())
                    .find(|&k| d.role(k) != Role::Assistant)
                    .unwrap_or(d.len());
                if !(i..a_end).any(|k| d.summary(k).kinds.contains(BlockKind::ToolCall)) {
                    i = a_end;
                    continue;
                }
                let end = (a_end..d.len())
                    .find(|&k| d.role(k) != Role::User)
                    .unwrap_or(d.len());
                if turn_is_answered(d, i, a_end, end, &mut pending) {
                    i = end;
                    continue;
                }
                let calls: Vec<(String, String)> = (i..a_end)
                    .flat_map(|k| (0..d.block_count(k)).map(move |j| (k, j)))
                    .filter_map(|(k, j)| {
                        d.block(k, j)
                            .filter(|b| b.kind() == BlockKind::ToolCall)
                            .and_then(|_| call_key(d, k, j))
                    })
                    .collect();
                let last_asst = a_end - 1;
                if calls.is_empty() {
                    i = a_end;
                    continue;
                }
                if end == a_end {
                    let names: Vec<&str> = calls.iter().map(|(k, _)| k.as_str()).collect();
                    s.find(
                        d,
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
                    if s.apply {
                        let blocks: Vec<DraftBlock> = calls
                            .iter()
                            .filter_map(|(k, n)| {
                                synthetic_result(d, k, n, &ctx.policy.tool_result_placeholder)
                            })
                            .collect();
                        s.insert_message(
                            d,
                            r_missing,
                            a_end,
                            Role::User,
                            blocks,
                            format!(
                                "added error results for {} call(s) that never got one: {}",
                                calls.len(),
                                names.join(", ")
                            ),
                        );
                        // The assistant turn is no longer last: a thinking block it ends with
                        // (left alone as a prefill) is now a trailing thinking block (AN-19).
                        let gone = crate::rules::thinking::trailing_thinking(ctx, d, s, a_end - 1);
                        i = if gone { a_end } else { a_end + 1 };
                    } else {
                        i = a_end;
                    }
                    continue;
                }
                let a = analyse(d, a_end, end, &calls);
                if a.ok() {
                    i = end;
                    continue;
                }
                report(d, s, last_asst, &a, (r_missing, r_order, r_late, r_orphan));
                if !s.apply {
                    i = end;
                    continue;
                }
                let run = Run {
                    first: last_asst + 1,
                    end,
                    calls: &calls,
                    reorder: a.not_first,
                };
                i = rebuild(ctx, d, s, run, (r_missing, r_late, r_orphan));
            }
            Role::User => {
                // A user message no assistant call claimed: any result in it is an orphan.
                if !d.summary(i).kinds.contains(BlockKind::ToolResult) {
                    i += 1;
                    continue;
                }
                let mut j = 0;
                let mut found = false;
                while j < d.block_count(i) {
                    if d.block(i, j)
                        .is_some_and(|b| b.kind() == BlockKind::ToolResult)
                    {
                        found = true;
                        let id = call_key(d, i, j).map(|(k, _)| k).unwrap_or_default();
                        s.find(d, r_orphan, Severity::Error, i, Some(j),
                            format!("unexpected `tool_use_id` found in `tool_result` blocks: {id}. The previous message has no matching call"),
                            Some("remove the orphan result"));
                        if s.apply {
                            s.remove_block(d, r_orphan, i, j, format!("removed a result for `{id}`, which no call in the previous message made"));
                            continue;
                        }
                    }
                    j += 1;
                }
                if found && s.apply && d.block_count(i) == 0 && d.is_string_content(i).is_none() {
                    s.remove_message(
                        d,
                        r_orphan,
                        i,
                        "removed a message left empty by removing orphan results",
                    );
                    continue;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
}

fn report(
    d: &Draft<'_, '_>,
    s: &mut Sink,
    i: usize,
    a: &Analysis,
    rules: (&'static str, &'static str, &'static str, &'static str),
) {
    let (r_missing, r_order, r_late, r_orphan) = rules;
    if !a.missing.is_empty() {
        let ids: Vec<&str> = a.missing.iter().map(|(k, _)| k.as_str()).collect();
        s.find(
            d,
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
        s.find(
            d,
            r_order,
            Severity::Error,
            i + 1,
            None,
            "tool results must come first in the message, before any other block",
            Some("move the results to the front"),
        );
    }
    if a.late > 0 {
        s.find(d, r_late, Severity::Error, i + 1, None,
            format!("{} result(s) sit in a later message; nothing may stand between a call and its results", a.late),
            Some("move them to the front of the message right after the call"));
    }
    for &(k, j) in a.orphans.iter() {
        s.find(
            d,
            r_orphan,
            Severity::Error,
            k,
            Some(j),
            "a result whose id matches no call in the previous assistant message",
            Some("remove it"),
        );
    }
    for &(k, j) in a.dups.iter() {
        s.find(
            d,
            r_orphan,
            Severity::Error,
            k,
            Some(j),
            "a second result for the same call",
            Some("remove the duplicate"),
        );
    }
}

/// The run of user messages `[first, end)` that answers `calls`.
struct Run<'c> {
    first: usize,
    end: usize,
    calls: &'c [(String, String)],
    /// Results in the first message stood after other blocks (AN-09).
    reorder: bool,
}

/// Rebuilds a run so its first message starts with one result per call. Returns the index after
/// the run.
fn rebuild(
    ctx: &Ctx<'_>,
    d: &mut Draft<'_, '_>,
    s: &mut Sink,
    run: Run<'_>,
    rules: (&'static str, &'static str, &'static str),
) -> usize {
    let (r_missing, r_late, r_orphan) = rules;
    let Run {
        first,
        end,
        calls,
        reorder,
    } = run;
    // Take every result out of the run, remembering where it was.
    let mut want: HashMap<String, usize> = HashMap::new();
    for (k, _) in calls {
        *want.entry(k.clone()).or_insert(0) += 1;
    }
    let mut kept: HashMap<String, Vec<DraftBlock>> = HashMap::new();
    let mut k = first;
    let mut end = end;
    while k < end {
        let mut j = 0;
        while j < d.block_count(k) {
            let Some(b) = d.block(k, j) else { break };
            if b.kind() != BlockKind::ToolResult {
                j += 1;
                continue;
            }
            let key = call_key(d, k, j).map(|(x, _)| x).unwrap_or_default();
            match want.get_mut(&key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    if let Some(h) = d.block_handle(k, j) {
                        kept.entry(key.clone()).or_default().push(h);
                    }
                    let moved_from = crate::ctx::loc(d, k, Some(j)).path;
                    d.remove_block(k, j);
                    if k != first {
                        s.changed(d, r_late, "moved_block", first, None, format!("moved the result for `{key}` here from {moved_from}"));
                    }
                }
                Some(_) => s.remove_block(d, r_orphan, k, j, format!("removed a duplicate result for `{key}`")),
                None => s.remove_block(d, r_orphan, k, j, format!("removed a result for `{key}`, which the previous assistant message did not call")),
            }
        }
        if k != first && d.block_count(k) == 0 && d.is_string_content(k).is_none() {
            s.remove_message(
                d,
                r_late,
                k,
                "removed a message left empty once its results moved up",
            );
            end -= 1;
            continue;
        }
        k += 1;
    }
    // Results first, in call order; then synthetic ones; then the message's other blocks.
    let mut front: Vec<DraftBlock> = Vec::new();
    let mut synthesized = Vec::new();
    for (key, name) in calls {
        match kept.get_mut(key).and_then(|v| {
            if v.is_empty() {
                None
            } else {
                Some(v.remove(0))
            }
        }) {
            Some(h) => front.push(h),
            None => {
                if let Some(b) = synthetic_result(d, key, name, &ctx.policy.tool_result_placeholder)
                {
                    front.push(b);
                    synthesized.push(key.clone());
                }
            }
        }
    }
    let rest = d.take_blocks(first);
    front.extend(rest);
    d.set_blocks(first, front);
    if reorder {
        s.changed(
            d,
            "AN-09",
            "reordered_message",
            first,
            None,
            "put the tool results first, in call order",
        );
    }
    for key in synthesized {
        s.changed(
            d,
            r_missing,
            "inserted_block",
            first,
            None,
            format!("added an error result for `{key}`, a call that never got one"),
        );
    }
    end
}

/// True for a valid Anthropic client tool id (`^[a-zA-Z0-9_-]+$`, api-rules.md AN-12).
pub fn valid_tool_id(id: &str) -> bool {
    turnkeeper_model::json::is_tool_id(id)
}

fn sanitize(id: &str, taken: &HashSet<String>) -> String {
    let base: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = if base.is_empty() {
        "toolu_empty".to_owned()
    } else {
        base
    };
    if !taken.contains(&base) {
        return base;
    }
    let h = Sha256::digest(id.as_bytes());
    let suffix: String = h.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{base}_{suffix}")
}

/// Whether `id` has the form `form` requires.
pub fn tool_id_fits(form: ToolIdForm, id: &str) -> bool {
    match form {
        ToolIdForm::Alnum9 => id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric()),
        ToolIdForm::MaxLen(n) => valid_tool_id(id) && id.len() <= n,
        _ => valid_tool_id(id),
    }
}

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `len` base-62 characters drawn from SHA-256 of `id` and a round number.
fn hashed(id: &str, round: u32, len: usize) -> String {
    let mut h = Sha256::new();
    h.update(id.as_bytes());
    h.update(round.to_le_bytes());
    let digest = h.finalize();
    digest
        .iter()
        .take(len)
        .map(|b| char::from(BASE62[usize::from(*b) % BASE62.len()]))
        .collect()
}

/// The id `id` becomes under `form`: deterministic (the same id always maps to the same new id
/// within one request), distinct from every id already `taken`.
fn map_id(form: ToolIdForm, id: &str, taken: &HashSet<String>) -> String {
    match form {
        ToolIdForm::Alnum9 => (0..)
            .map(|round| hashed(id, round, 9))
            .find(|c| !taken.contains(c))
            .unwrap_or_default(),
        ToolIdForm::MaxLen(n) => {
            let s = sanitize(id, taken);
            if s.len() <= n && !taken.contains(&s) {
                return s;
            }
            // Keep a readable head, make the tail unique: head + '_' + 8 hash characters.
            let keep = n.saturating_sub(9);
            let head: String = s.chars().take(keep).collect();
            (0..)
                .map(|round| {
                    let tail = hashed(id, round, 8.min(n));
                    if keep == 0 {
                        tail
                    } else {
                        format!("{head}_{tail}")
                    }
                })
                .find(|c| !taken.contains(c))
                .unwrap_or_default()
        }
        _ => sanitize(id, taken),
    }
}

/// Whether message `i` is a signed turn: it holds redacted thinking or a thinking block with a
/// signature. Nothing inside such a turn is rewritten (prefix binding, AN-25).
fn signed_turn(d: &Draft<'_, '_>, i: usize) -> bool {
    d.summary(i).kinds.intersects(Kinds::THINKING)
        && d.blocks(i).any(|b| match b.kind() {
            BlockKind::RedactedThinking => true,
            BlockKind::Thinking => b.signature().is_some_and(|s| !s.is_empty()),
            _ => false,
        })
}

/// AN-12: tool ids must have the form the target requires (`^[a-zA-Z0-9_-]+$` for Anthropic;
/// [`ToolIdForm`] in the policy for Mistral's 9 alphanumerics or a length cap). Ids that do not
/// fit (often from other providers, such as Kimi's `functions.Bash:0`) are rewritten
/// deterministically, with a hash on collision, on both the call and its results. A call inside
/// a signed turn keeps its id, and so do its results: the finding stays, unrepaired.
pub fn an12_tool_ids(ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    let form = ctx.policy.tool_ids;
    // The common case, every id valid, costs one pass and no allocation.
    let all_valid = (0..d.len()).all(|i| {
        !d.summary(i).kinds.intersects(Kinds::CLIENT_TOOLS)
            || d.blocks(i).all(|b| match b.kind() {
                BlockKind::ToolCall if form == ToolIdForm::Anthropic => {
                    b.block.tool_id_valid(b.src)
                }
                BlockKind::ToolResult if form == ToolIdForm::Anthropic => {
                    b.block.tool_id_valid(b.src)
                }
                BlockKind::ToolCall => b.id().is_some_and(|id| tool_id_fits(form, &id)),
                BlockKind::ToolResult => b.tool_use_id().is_some_and(|id| tool_id_fits(form, &id)),
                _ => true,
            })
    });
    if all_valid {
        return;
    }
    let mut bad: Vec<(usize, usize, String, &'static str)> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    let mut frozen: HashSet<String> = HashSet::new();
    for i in 0..d.len() {
        let signed = d.summary(i).kinds.intersects(Kinds::CLIENT_TOOLS) && signed_turn(d, i);
        for (j, b) in d.blocks(i).enumerate() {
            let (field, id) = match b.kind() {
                BlockKind::ToolCall => ("id", b.id()),
                BlockKind::ToolResult => ("tool_use_id", b.tool_use_id()),
                _ => continue,
            };
            let id = id.map(|x| x.into_owned()).unwrap_or_default();
            if signed && field == "id" {
                frozen.insert(id.clone());
            }
            if tool_id_fits(form, &id) {
                taken.insert(id);
            } else {
                bad.push((i, j, id, field));
            }
        }
    }
    if bad.is_empty() {
        return;
    }
    let rule_text = match form {
        ToolIdForm::Alnum9 => "exactly 9 characters from [a-zA-Z0-9]".to_owned(),
        ToolIdForm::MaxLen(n) => format!("'^[a-zA-Z0-9_-]+$' and at most {n} characters"),
        _ => "'^[a-zA-Z0-9_-]+$'".to_owned(),
    };
    let mut map: HashMap<String, String> = HashMap::new();
    for (i, j, id, field) in bad {
        if frozen.contains(&id) {
            s.find(
                d,
                "AN-12",
                Severity::Error,
                i,
                Some(j),
                format!(
                    "`{field}` {id:?} does not match {rule_text}, but its call is in a signed turn"
                ),
                None,
            );
            continue;
        }
        let new = map
            .entry(id.clone())
            .or_insert_with(|| {
                let n = map_id(form, &id, &taken);
                taken.insert(n.clone());
                n
            })
            .clone();
        s.find(
            d,
            "AN-12",
            Severity::Error,
            i,
            Some(j),
            format!("`{field}` {id:?} does not match {rule_text}"),
            Some("rewrite the id on the call and its results"),
        );
        if s.apply {
            let mut v = String::new();
            write_string(&mut v, &new);
            let edited = d
                .block(i, j)
                .and_then(|b| object::set_key(b.raw(), field, &v))
                .and_then(|json| NewBlock::new(Format::Anthropic, json).ok());
            if let Some(nb) = edited {
                s.edit_block(
                    d,
                    "AN-12",
                    i,
                    j,
                    nb,
                    format!("rewrote tool id {id:?} as {new:?}"),
                );
            }
        }
    }
}

/// AN-15: a server tool result must follow a `server_tool_use` with the same id in the same
/// assistant message. An assistant message that ends in an unanswered `server_tool_use` is a
/// valid continuation and is left alone.
pub fn an15_server_tools(_ctx: &mut Ctx<'_>, d: &mut Draft<'_, '_>, s: &mut Sink) {
    for i in 0..d.len() {
        if !d.summary(i).kinds.intersects(Kinds::SERVER_TOOLS) {
            continue;
        }
        let mut seen: HashSet<String> = HashSet::new();
        let mut j = 0;
        while j < d.block_count(i) {
            let Some(b) = d.block(i, j) else { break };
            match b.kind() {
                BlockKind::ServerToolCall => {
                    seen.insert(b.id().map(|x| x.into_owned()).unwrap_or_default());
                }
                BlockKind::ServerToolResult => {
                    let id = b.tool_use_id().map(|x| x.into_owned()).unwrap_or_default();
                    if !seen.contains(&id) {
                        let t = b.type_name().into_owned();
                        s.find(d, "AN-15", Severity::Error, i, Some(j),
                            format!("unexpected `tool_use_id` found in `{t}` blocks: {id}. Each `{t}` block must have a corresponding `server_tool_use` block before it."),
                            Some("remove the orphan server result"));
                        if s.apply {
                            s.remove_block(
                                d,
                                "AN-15",
                                i,
                                j,
                                format!("removed a `{t}` whose `server_tool_use` is not before it"),
                            );
                            continue;
                        }
                    }
                }
                _ => {}
            }
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_map_deterministically_to_each_form() {
        let taken = HashSet::new();
        for (form, id) in [
            (ToolIdForm::Alnum9, "call_49c89af0"),
            (ToolIdForm::Alnum9, "toolu_01825dXWLSoJwCst1qTsiWdb"),
            (
                ToolIdForm::MaxLen(40),
                "ws_689e2d4880a0819d98acca37694989b00b15d90494fc6b87",
            ),
            (ToolIdForm::MaxLen(40), "functions.Bash:0"),
            (ToolIdForm::Anthropic, "functions.Bash:0"),
        ] {
            let a = map_id(form, id, &taken);
            assert!(tool_id_fits(form, &a), "{form:?} {id} -> {a}");
            assert_eq!(
                a,
                map_id(form, id, &taken),
                "{form:?} {id}: not deterministic"
            );
        }
        // A collision takes the next round, still of the form.
        let first = map_id(ToolIdForm::Alnum9, "x", &taken);
        let taken: HashSet<String> = [first.clone()].into();
        let second = map_id(ToolIdForm::Alnum9, "x", &taken);
        assert_ne!(first, second);
        assert!(tool_id_fits(ToolIdForm::Alnum9, &second));
        // A 40-character cap keeps a readable head.
        let capped = map_id(
            ToolIdForm::MaxLen(40),
            "ws_689e2d4880a0819d98acca37694989b00b15d90494fc6b87",
            &HashSet::new(),
        );
        assert!(
            capped.starts_with("ws_689e2d") && capped.len() == 40,
            "{capped}"
        );
    }
}
