//! The recovery actions that edit a body of the OpenAI-style wire families themselves:
//! `drop_items` and `strip_item_ids` on an OpenAI Responses body, `drop_unsigned_reasoning` on a
//! Bedrock Converse body (BR-05) or a Chat body for the legacy `deepseek-reasoner` (DS-01).
//!
//! Sources: api-rules-reasoning-2026-11.md §0.3 (what a safe repair may do), §3.2 (OR-02, OR-03,
//! OR-04, OR-08, OR-13, OR-14), §4.2 (DS-01), §8.2 (BR-05) and §11 (only OR-04 is sent again,
//! once, after the drop).
//!
//! # What is edited
//! - A reasoning item (or a compaction item, a `reasoningContent` block, a `reasoning_content`
//!   field) goes **whole**, reported with its fingerprint, or stays byte for byte. Nothing of
//!   reasoning is written.
//! - An item's `id` member may be removed (§0.3 item 3: "strip an id that the target cannot
//!   resolve"); the item keeps every other byte, its `call_id` included. That holds for a
//!   reasoning item too when it keeps its `encrypted_content` (the id "may be omitted when
//!   `encrypted_content` is present", §3.1): the reasoning itself is untouched. No id is made up.
//! - When a reasoning item goes, the items it produced (the function and custom tool calls and
//!   assistant messages right after it) lose their server `id` (OR-02's repair, laravel/ai
//!   PR #1052), keeping `call_id`.
//!
//! # Which items `drop_items` takes
//! In this order, the first that names something this request holds:
//! 1. the item ids the error names (`for item rs_…`, `Duplicate item found with id …`), an id
//!    elided as `cmp_34....7bd` matching by its two ends;
//! 2. the item the error's location names (`input[N]`);
//! 3. for OR-04, the blob the error quotes (`The encrypted content gAAA...DQ== could not be
//!    verified.`, openai/codex#8145): the reasoning and compaction items whose
//!    `encrypted_content` has those two ends.
//!
//! An `organization_id did not match` error names one item, but the content is bound to the
//! organisation (ORT-06, XP-04): the key or route changed, so every item carrying
//! `encrypted_content` goes, or the single resend would fail on the next one.
//!
//! When none of them matches (the error names nothing, or only what this body does not hold):
//! for OR-04, the research's own repair, "all reasoning items if none is named", plus the stale
//! ones without `encrypted_content` ("can trigger it too, so drop those as well"): every
//! reasoning item and every compaction item carrying `encrypted_content` goes. This is the one
//! case where more than the error names is dropped, and only because the error says that the
//! request's encrypted content failed and nothing narrower is known; a note says so. The same
//! holds for an action planned without ids (OR-13: reasoning sent to a model without reasoning).
//! Otherwise (named ids, none here) the action is skipped: dropping what the error does not name
//! would lose reasoning for nothing.

use std::collections::{BTreeMap, HashMap};

use turnkeeper_guard::{GuardViolation, fingerprint};
use turnkeeper_model::ModelError;
use turnkeeper_model::wire::converse::{self as cv, BlockKind};
use turnkeeper_model::wire::responses::{self as rv, Encrypted, Item, ItemKind, ResponsesBody};
use turnkeeper_model::wire::{Edit, Piece, Plan, chat as ch, render, splice_into, write_array};
use turnkeeper_prevent::wire::responses::produced_with_id;
use turnkeeper_prevent::{Change, ChangeAction, RuleId};

use crate::diagnosis::{ConfigField, Diagnosis, ErrorKind};
use crate::normalize::Normalized;

/// A body edited by one action: the new body, its changes (in the input's terms) and remarks.
#[derive(Debug)]
pub(crate) struct Edited {
    /// The body to send.
    pub body: String,
    /// What was changed, each with its rule, path and reason.
    pub changes: Vec<Change>,
    /// Remarks for the caller.
    pub notes: Vec<String>,
}

/// The result of an action on a body: the edit, or why it could not apply (the rung is skipped).
pub(crate) type Applied = Result<Edited, String>;

/// Why an edit could not be made: the body does not read, or the guard refused the output.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EditError {
    /// The body does not read as its family.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The output's reasoning is not the input's (a turnkeeper bug; nothing should be sent).
    #[error(transparent)]
    Guard(#[from] GuardViolation),
}

/// True for an OR-04 error: the request's encrypted content failed to verify (not a server
/// that takes no encrypted content at all, LS-03/OR-16, which is a request setting).
pub(crate) fn is_encrypted_failure(d: &Diagnosis) -> bool {
    if d.kind != ErrorKind::ReasoningItemOrphan {
        return false;
    }
    let m = Normalized::new(&d.message).lower;
    m.contains("encrypted") || m.contains("organization_id") || m.contains("invalid_encrypted")
}

/// The state of a Responses body under edit: which items stay, which lose their `id`.
struct Items<'b, 'a> {
    body: &'b ResponsesBody<'a>,
    keep: Vec<bool>,
    strip: Vec<bool>,
    /// Reasoning items (and references to one) removed: what they produced loses its id.
    reasoning_gone: Vec<usize>,
    changes: Vec<Change>,
}

impl<'b, 'a> Items<'b, 'a> {
    fn new(body: &'b ResponsesBody<'a>) -> Self {
        let n = body.items.len();
        Items {
            body,
            keep: vec![true; n],
            strip: vec![false; n],
            reasoning_gone: Vec::new(),
            changes: Vec::new(),
        }
    }

    fn item(&self, i: usize) -> &'b Item {
        &self.body.items[i]
    }

    fn id(&self, i: usize) -> Option<String> {
        self.item(i)
            .id
            .map(|s| s.decode(self.body.src).into_owned())
    }

    /// Removes item `i` whole; a reasoning or compaction item with its fingerprint.
    fn remove(&mut self, rule: RuleId, i: usize, reason: String) {
        if !self.keep[i] {
            return;
        }
        let it = self.item(i);
        self.keep[i] = false;
        let encrypted_kind = matches!(it.kind, ItemKind::Reasoning | ItemKind::Compaction);
        let reference = it.kind == ItemKind::ItemReference
            && self.id(i).is_some_and(|id| id.starts_with("rs_"));
        if it.kind == ItemKind::Reasoning || reference {
            self.reasoning_gone.push(i);
        }
        self.changes.push(Change {
            rule,
            action: ChangeAction::RemovedBlock,
            path: ResponsesBody::path(i),
            reason,
            fingerprint: encrypted_kind.then(|| fingerprint(it.span.get(self.body.src))),
        });
    }

    /// Removes the `id` member of item `i`, keeping every other byte of it.
    fn strip_id(&mut self, rule: RuleId, i: usize, reason: String) {
        if !self.keep[i] || self.strip[i] || self.item(i).member(self.body.src, "id").is_none() {
            return;
        }
        self.strip[i] = true;
        self.changes.push(Change {
            rule,
            action: ChangeAction::RemovedField,
            path: format!("{}.id", ResponsesBody::path(i)),
            reason,
            fingerprint: None,
        });
    }

    /// OR-02: the items right after a removed reasoning item that carry a server id lose it.
    fn strip_successors(&mut self) {
        let gone = self.reasoning_gone.clone();
        for i in gone {
            let mut j = i;
            while let Some(k) = (j + 1..self.keep.len()).find(|&k| self.keep[k]) {
                if !produced_with_id(self.item(k)) {
                    break;
                }
                if let Some(id) = self.id(k) {
                    self.strip_id(
                        RuleId::Or02,
                        k,
                        format!(
                            "the reasoning item {} before `{id}` was removed; sent with its id, \
                             the item would be \"provided without its required 'reasoning' \
                             item\" (OR-02); the rest of the item stays (a call keeps its \
                             `call_id`)",
                            ResponsesBody::path(i)
                        ),
                    );
                }
                j = k;
            }
        }
    }

    /// The edited body, checked; `None` when nothing changed.
    fn finish(self) -> Result<Option<(String, Vec<Change>)>, EditError> {
        let src = self.body.src;
        let n = self.body.input_at.elems.len();
        let mut plan = Plan::default();
        let mut removed = 0;
        for (i, it) in self.body.items.iter().enumerate() {
            if !self.keep[i] {
                plan.remove_item(n, i);
                if it.kind == ItemKind::Reasoning {
                    removed += 1;
                }
                continue;
            }
            if self.strip[i]
                && let Some(k) = it.member(src, "id")
                && let Some(e) = Edit::remove_member(&it.members, k)
            {
                plan.edit(i, e);
            }
        }
        let Some(out) = render(src, &self.body.input_at, plan) else {
            return Ok(None);
        };
        verify_responses(src, &out, removed)?;
        Ok(Some((out, self.changes)))
    }
}

/// A reasoning item's bytes with its `id` member removed (what [`Items::strip_id`] leaves).
fn without_id(src: &str, it: &Item) -> Option<String> {
    let k = it.member(src, "id")?;
    let e = Edit::remove_member(&it.members, k)?;
    let mut s = String::new();
    splice_into(src, it.span, &mut [e], &mut s);
    Some(s)
}

/// Checks an edited Responses body against its input: every reasoning item of `out` is one of
/// `src`'s, byte for byte or without its `id` member, each used once; at most `removed` of the
/// input's are missing. Fails closed.
fn verify_responses(src: &str, out: &str, removed: usize) -> Result<(), GuardViolation> {
    let input = rv::read(src).map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
    let output = rv::read(out).map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
    let mut pool: Vec<(String, Option<String>)> = input
        .items
        .iter()
        .filter(|it| it.kind == ItemKind::Reasoning)
        .map(|it| (it.span.get(src).to_owned(), without_id(src, it)))
        .collect();
    for (j, it) in output.items.iter().enumerate() {
        if it.kind != ItemKind::Reasoning {
            continue;
        }
        let raw = it.span.get(out);
        match pool
            .iter()
            .position(|(a, b)| a == raw || b.as_deref() == Some(raw))
        {
            Some(k) => {
                pool.remove(k);
            }
            None => {
                return Err(GuardViolation::Altered {
                    path: ResponsesBody::path(j),
                    fingerprint: fingerprint(raw),
                });
            }
        }
    }
    if pool.len() > removed
        && let Some((raw, _)) = pool.first()
    {
        return Err(GuardViolation::Unreported {
            missing: pool.len() - removed,
            first_path: String::from("input"),
            fingerprint: fingerprint(raw),
        });
    }
    Ok(())
}

/// True when `id` is `named`, or `named` is an elided id (`cmp_34....7bd`, `rs_ab…yz`) whose two
/// ends `id` has.
fn id_matches(id: &str, named: &str) -> bool {
    if id == named {
        return true;
    }
    match elided(named) {
        Some((head, tail)) => {
            id.len() >= head.len() + tail.len() && id.starts_with(head) && id.ends_with(tail)
        }
        None => false,
    }
}

/// The two ends of a text elided with `...` or `…` (`gAAA...DQ==`).
fn elided(text: &str) -> Option<(&str, &str)> {
    let (head, rest) = text
        .split_once("...")
        .or_else(|| text.split_once('\u{2026}'))?;
    let tail = rest.trim_start_matches('.');
    (!head.is_empty() || !tail.is_empty()).then_some((head, tail))
}

/// What an OR-04 error quotes between `The encrypted content ` and ` could not be verified`:
/// an item (`for item rs_…`) or the blob itself (`gAAA...DQ==`).
enum Quoted {
    Item(String),
    Blob(String),
}

fn quoted(message: &str) -> Option<Quoted> {
    const HEAD: &str = "the encrypted content ";
    const TAIL: &str = " could not be verified";
    let lower = message.to_ascii_lowercase();
    let at = lower.find(HEAD)? + HEAD.len();
    let end = at + lower[at..].find(TAIL)?;
    let text = message.get(at..end)?.trim();
    if let Some(item) = text
        .strip_prefix("for item ")
        .or_else(|| text.strip_prefix("for item"))
    {
        let item = item.trim().trim_matches(['\'', '"', '`']);
        return (!item.is_empty()).then(|| Quoted::Item(item.to_owned()));
    }
    (!text.is_empty()).then(|| Quoted::Blob(text.to_owned()))
}

/// True when item `it` carries `encrypted_content` matching the quoted `blob` (whole, or by the
/// two ends of an elided quote).
fn blob_matches(src: &str, it: &Item, blob: &str) -> bool {
    let Encrypted::Text(s) = it.encrypted else {
        return false;
    };
    let text = s.decode(src);
    if text.is_empty() {
        return false;
    }
    match elided(blob) {
        Some((head, tail)) => {
            text.len() >= head.len() + tail.len() && text.starts_with(head) && text.ends_with(tail)
        }
        None => text == blob,
    }
}

/// The rule a `drop_items` is reported under, by what the error says.
fn drop_rule(d: &Diagnosis, encrypted: bool) -> RuleId {
    let m = Normalized::new(&d.message).lower;
    if encrypted {
        RuleId::Or04
    } else if d.config == Some(ConfigField::ReasoningItems) {
        RuleId::Or13
    } else if m.contains("duplicateitem") {
        RuleId::Or14
    } else if m.contains("requiredfollowingitem") {
        RuleId::Or01
    } else if m.contains("notfound") {
        RuleId::Or03
    } else {
        RuleId::Recover
    }
}

/// `drop_items` on a Responses body (see the module docs for which items).
pub(crate) fn drop_items(src: &str, d: &Diagnosis, ids: &[String]) -> Result<Applied, EditError> {
    let body = rv::read(src)?;
    let encrypted = is_encrypted_failure(d);
    let rule = drop_rule(d, encrypted);
    let quote = if encrypted { quoted(&d.message) } else { None };
    let mut named: Vec<String> = ids.to_vec();
    if let Some(Quoted::Item(id)) = &quote
        && !named.iter().any(|n| n == id)
    {
        // The classifier reads `cmp_34....7bd` as `cmp_34`; the quote keeps both ends.
        named.retain(|n| !id.starts_with(n.as_str()));
        named.push(id.clone());
    }
    let mut x = Items::new(&body);
    let mut notes = Vec::new();
    let mut targets: Vec<(usize, String)> = Vec::new();
    for (i, it) in body.items.iter().enumerate() {
        let Some(id) = it.id.map(|s| s.decode(src)) else {
            continue;
        };
        if let Some(n) = named.iter().find(|n| id_matches(&id, n)) {
            targets.push((i, format!("the error names `{n}`")));
        }
    }
    if targets.is_empty()
        && let Some(n) = d.location.message
        && let Some(it) = body.items.get(n as usize)
        && (!encrypted || matches!(it.kind, ItemKind::Reasoning | ItemKind::Compaction))
    {
        targets.push((n as usize, format!("the error points at input[{n}]")));
    }
    if targets.is_empty()
        && let Some(Quoted::Blob(blob)) = &quote
    {
        for (i, it) in body.items.iter().enumerate() {
            if matches!(it.kind, ItemKind::Reasoning | ItemKind::Compaction)
                && blob_matches(src, it, blob)
            {
                targets.push((
                    i,
                    format!("its encrypted_content is the one the error quotes ({blob})"),
                ));
            }
        }
    }
    if encrypted
        && !targets.is_empty()
        && Normalized::new(&d.message)
            .lower
            .contains("organization_iddidnotmatch")
    {
        // ORT-06 / XP-04: encrypted content is bound to the organisation; one item of another
        // names a key or route change, so every encrypted item from before it is foreign too, and
        // the single resend must not fail on the next one.
        let why = "the encrypted content belongs to another organization (ORT-06: the key or \
                   route changed), so every item carrying encrypted_content goes";
        for (i, it) in body.items.iter().enumerate() {
            if matches!(it.kind, ItemKind::Reasoning | ItemKind::Compaction)
                && it.encrypted.is_set()
                && !targets.iter().any(|(t, _)| *t == i)
            {
                targets.push((i, why.to_owned()));
            }
        }
        targets.sort_by_key(|(i, _)| *i);
        notes.push(why.to_owned());
    }
    if targets.is_empty() {
        let what = match &quote {
            Some(Quoted::Blob(b)) => Some(format!("the encrypted content {b}")),
            _ if !named.is_empty() => Some(named.join(", ")),
            _ => None,
        };
        if !encrypted && !ids.is_empty() {
            return Ok(Err(format!(
                "the items the error names ({}) are not in this request",
                named.join(", ")
            )));
        }
        if let Some(w) = &what {
            notes.push(format!(
                "the error names {w}, which this request does not hold: was it reported for this body?"
            ));
        }
        let why = if encrypted {
            "the request's encrypted content failed to verify and the error names nothing this \
             request holds: every reasoning item goes (OR-04: \"all reasoning items if none is \
             named\", stale ones without encrypted_content included), and every compaction item \
             carrying encrypted_content (OR-09)"
        } else {
            "no item is named: every reasoning item and every compaction item goes"
        };
        for (i, it) in body.items.iter().enumerate() {
            let take = match it.kind {
                ItemKind::Reasoning => true,
                ItemKind::Compaction => !encrypted || it.encrypted.is_set(),
                ItemKind::ItemReference => {
                    !encrypted && x.id(i).is_some_and(|id| id.starts_with("rs_"))
                }
                _ => false,
            };
            if take {
                targets.push((i, why.to_owned()));
            }
        }
        if !targets.is_empty() {
            notes.push(why.to_owned());
        }
    }
    if targets.is_empty() {
        return Ok(Err(
            "this request holds no reasoning or compaction item to drop".to_owned(),
        ));
    }
    for (i, why) in targets {
        let what = if encrypted {
            "its encrypted content failed to verify"
        } else {
            "the provider refuses it"
        };
        x.remove(
            rule,
            i,
            format!("removed whole ({what}; {why}); a reasoning item is never edited"),
        );
    }
    x.strip_successors();
    match x.finish()? {
        Some((body, changes)) => {
            if encrypted {
                notes.push(
                    "send this body once: the same error again gives up (OR-04, never retried \
                     unchanged)"
                        .to_owned(),
                );
            }
            Ok(Ok(Edited {
                body,
                changes,
                notes,
            }))
        }
        None => Ok(Err("nothing to drop".to_owned())),
    }
}

/// The id prefix OpenAI requires for an item of `kind` (OR-08), when known.
fn id_prefix(kind: ItemKind) -> Option<&'static str> {
    match kind {
        ItemKind::Reasoning => Some("rs_"),
        ItemKind::FunctionCall => Some("fc_"),
        ItemKind::Message => Some("msg_"),
        _ => None,
    }
}

/// `strip_item_ids` on a Responses body: the ids the error names (OR-02, OR-08), or under
/// `store: false` every server id (OR-03).
pub(crate) fn strip_item_ids(
    src: &str,
    d: &Diagnosis,
    ids: &[String],
) -> Result<Applied, EditError> {
    let body = rv::read(src)?;
    let mut x = Items::new(&body);
    let mut notes = Vec::new();
    let m = Normalized::new(&d.message).lower;
    let or02 = m.contains("withoutitsrequiredreasoningitem");
    let or08 = m.contains("expectedanidthat");
    let mut named: Vec<usize> = Vec::new();
    for (i, it) in body.items.iter().enumerate() {
        let Some(id) = it.id.map(|s| s.decode(src)) else {
            continue;
        };
        if ids.iter().any(|n| id_matches(&id, n)) {
            named.push(i);
        }
    }
    if (or02 || or08 || !ids.is_empty())
        && named.is_empty()
        && let Some(n) = d.location.message
        && body.items.get(n as usize).is_some_and(|it| it.id.is_some())
    {
        named.push(n as usize);
    }
    if or08 && named.is_empty() {
        // `Invalid 'input[N].id': 'call_...'`: nothing exact is named; the ids without their
        // type's prefix are the ones the API refuses.
        for (i, it) in body.items.iter().enumerate() {
            if let (Some(p), Some(id)) = (id_prefix(it.kind), x.id(i))
                && !id.starts_with(p)
            {
                named.push(i);
            }
        }
        if !named.is_empty() {
            notes.push(
                "the error names no id this request holds: the ids without their type's prefix \
                 (rs_, fc_, msg_) go (OR-08)"
                    .to_owned(),
            );
        }
    }
    if or02 || or08 || !ids.is_empty() {
        if named.is_empty() {
            return Ok(Err(format!(
                "none of the ids the error names ({}) is in this request",
                if ids.is_empty() {
                    "none".to_owned()
                } else {
                    ids.join(", ")
                }
            )));
        }
        let (rule, why) = if or02 {
            (
                RuleId::Or02,
                "the error says the item was provided without its required reasoning item (OR-02)",
            )
        } else {
            (
                RuleId::Recover,
                "the API refuses this id (OR-08: an item id must carry its type's prefix)",
            )
        };
        for i in named {
            let it = x.item(i);
            let id = x.id(i).unwrap_or_default();
            match it.kind {
                ItemKind::Reasoning if !it.encrypted.is_set() => x.remove(
                    rule,
                    i,
                    format!(
                        "{why}; a reasoning item without its id and without encrypted_content \
                         names nothing, so it goes whole (`{id}`), never edited"
                    ),
                ),
                ItemKind::ItemReference => x.remove(
                    rule,
                    i,
                    format!("{why}; an item_reference is nothing but its id (`{id}`)"),
                ),
                _ => x.strip_id(
                    rule,
                    i,
                    format!("{why}: `{id}` removed, the rest of the item stays"),
                ),
            }
        }
    } else {
        // OR-03 under `store: false`: no server id resolves; send the items inline.
        if body.store != Some(false) {
            notes.push(
                "the error says items are not persisted (store: false), though this body does \
                 not say `store: false`: the ids are stripped as the error asks"
                    .to_owned(),
            );
        }
        let why = "items are not persisted when `store` is false (OR-03): the server cannot \
                   resolve this id";
        for i in 0..body.items.len() {
            let it = x.item(i);
            let Some(id) = x.id(i) else { continue };
            match it.kind {
                ItemKind::Reasoning if !it.encrypted.is_set() => x.remove(
                    RuleId::Or03,
                    i,
                    format!(
                        "{why} (`{id}`) and it carries no encrypted_content: removed whole, never \
                         edited"
                    ),
                ),
                ItemKind::ItemReference => x.remove(
                    RuleId::Or03,
                    i,
                    format!("{why} (`{id}`); an item_reference is nothing but its id"),
                ),
                _ => x.strip_id(
                    RuleId::Or03,
                    i,
                    format!("{why} (`{id}`); the item is sent inline without it"),
                ),
            }
        }
    }
    x.strip_successors();
    Ok(match x.finish()? {
        Some((body, changes)) => Ok(Edited {
            body,
            changes,
            notes,
        }),
        None => Err("no item of this request carries a server id to strip".to_owned()),
    })
}

/// `drop_unsigned_reasoning` on a Converse body (BR-05): every `reasoningContent` block without
/// a signature (or redacted content) goes whole.
pub(crate) fn drop_unsigned_converse(src: &str) -> Result<Applied, EditError> {
    let body = cv::read(src)?;
    let mut plan = Plan::default();
    let mut changes = Vec::new();
    for (i, m) in body.messages.iter().enumerate() {
        let Some(arr) = m.content_array() else {
            continue;
        };
        let gone: Vec<bool> = m
            .blocks
            .iter()
            .map(|b| b.kind == BlockKind::Reasoning && !b.reasoning.is_some_and(|r| r.is_signed()))
            .collect();
        if !gone.contains(&true) {
            continue;
        }
        for (k, b) in m.blocks.iter().enumerate().filter(|(k, _)| gone[*k]) {
            changes.push(Change {
                rule: RuleId::Br05,
                action: ChangeAction::RemovedBlock,
                path: format!("messages[{i}].content[{k}]"),
                reason: "unsigned reasoningContent, which DeepSeek R1 on Converse refuses on \
                         replay (\"User messages cannot contain reasoning content\", BR-05): \
                         removed whole, never edited"
                    .to_owned(),
                fingerprint: Some(fingerprint(b.span.get(src))),
            });
        }
        let pieces: Vec<Piece> = (0..m.blocks.len())
            .filter(|k| !gone[*k])
            .map(Piece::Orig)
            .collect();
        let text = write_array(src, arr, &pieces, &mut BTreeMap::new());
        plan.edit(
            i,
            Edit {
                span: arr.span,
                text,
            },
        );
    }
    let Some(out) = render(src, &body.messages_at, plan) else {
        return Ok(Err(
            "no unsigned reasoningContent block in this request".to_owned()
        ));
    };
    verify_converse(src, &out, changes.len())?;
    Ok(Ok(Edited {
        body: out,
        changes,
        notes: Vec::new(),
    }))
}

/// Every `reasoningContent` block of `out` is one of `src`'s, byte for byte, each used once, and
/// exactly `removed` are missing.
fn verify_converse(src: &str, out: &str, removed: usize) -> Result<(), GuardViolation> {
    let blocks = |text: &str| -> Result<Vec<String>, GuardViolation> {
        let b = cv::read(text).map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
        Ok(b.messages
            .iter()
            .flat_map(|m| m.blocks.iter())
            .filter(|b| b.kind == BlockKind::Reasoning)
            .map(|b| b.span.get(text).to_owned())
            .collect())
    };
    let mut pool: HashMap<String, usize> = HashMap::new();
    let input = blocks(src)?;
    for raw in &input {
        *pool.entry(raw.clone()).or_default() += 1;
    }
    let output = blocks(out)?;
    for raw in &output {
        match pool.get_mut(raw) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                return Err(GuardViolation::Altered {
                    path: "messages".to_owned(),
                    fingerprint: fingerprint(raw),
                });
            }
        }
    }
    if input.len() - output.len() != removed {
        return Err(GuardViolation::Unreported {
            missing: (input.len() - output.len()).saturating_sub(removed),
            first_path: "messages".to_owned(),
            fingerprint: String::new(),
        });
    }
    Ok(())
}

/// `drop_unsigned_reasoning` on a Chat body for the legacy `deepseek-reasoner` (DS-01): the
/// `reasoning_content` field of every message goes, whole, one change per message.
pub(crate) fn drop_reasoning_content_chat(src: &str) -> Result<Applied, EditError> {
    let body = ch::read(src)?;
    let mut plan = Plan::default();
    let mut changes = Vec::new();
    for (i, m) in body.messages.iter().enumerate() {
        let Some(v) = m.reasoning_content else {
            continue;
        };
        let Some(e) = m
            .member(src, "reasoning_content")
            .and_then(|k| Edit::remove_member(&m.members, k))
        else {
            continue;
        };
        plan.edit(i, e);
        changes.push(Change {
            rule: RuleId::Recover,
            action: ChangeAction::RemovedField,
            path: format!("messages[{i}].reasoning_content"),
            reason: "the legacy deepseek-reasoner refuses reasoning_content in its input (DS-01: \
                     \"The reasoning_content is an intermediate result for display purposes \
                     only\"): the field removed whole, never edited"
                .to_owned(),
            fingerprint: Some(fingerprint(v.span.get(src))),
        });
    }
    let Some(out) = render(src, &body.messages_at, plan) else {
        return Ok(Err(
            "no message of this request carries reasoning_content".to_owned()
        ));
    };
    let after = ch::read(&out).map_err(|e| GuardViolation::Unreadable(e.to_string()))?;
    if after.messages.len() != body.messages.len()
        || after.messages.iter().any(|m| m.reasoning_content.is_some())
    {
        return Err(GuardViolation::Unreadable(
            "removing reasoning_content changed more than that field".to_owned(),
        )
        .into());
    }
    Ok(Ok(Edited {
        body: out,
        changes,
        notes: Vec::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elided_ids_and_blobs_match_by_their_two_ends() {
        assert!(id_matches("cmp_3456abc7bd", "cmp_34....7bd"));
        assert!(!id_matches("cmp_3456abc7be", "cmp_34....7bd"));
        assert!(id_matches("rs_1", "rs_1"));
        assert!(!id_matches("rs_12", "rs_1"));
        assert_eq!(elided("gAAA...DQ=="), Some(("gAAA", "DQ==")));
        assert_eq!(elided("Work...out."), Some(("Work", "out.")));
        assert_eq!(elided("gAAAA"), None);
    }

    #[test]
    fn the_guards_refuse_altered_or_unreported_reasoning() {
        let src = r#"{"input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gA"},{"type":"reasoning","id":"rs_2","summary":[]}]}"#;
        // Byte-identical, or without its id: allowed.
        assert!(verify_responses(src, src, 0).is_ok());
        let stripped = src.replacen(r#""id":"rs_1","#, "", 1);
        assert!(verify_responses(src, &stripped, 0).is_ok());
        // Its encrypted content changed: refused.
        let altered = src.replacen(r#""gA""#, r#""gB""#, 1);
        assert!(matches!(
            verify_responses(src, &altered, 0),
            Err(GuardViolation::Altered { .. })
        ));
        // One gone, unreported: refused; reported: allowed.
        let one = r#"{"input":[{"type":"reasoning","id":"rs_2","summary":[]}]}"#;
        assert!(matches!(
            verify_responses(src, one, 0),
            Err(GuardViolation::Unreported { missing: 1, .. })
        ));
        assert!(verify_responses(src, one, 1).is_ok());

        let cv = r#"{"messages":[{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"t"}}},{"text":"a"}]}]}"#;
        let gone = r#"{"messages":[{"role":"assistant","content":[{"text":"a"}]}]}"#;
        assert!(verify_converse(cv, gone, 1).is_ok());
        assert!(verify_converse(cv, gone, 0).is_err());
        let edited = cv.replacen(r#""t""#, r#""u""#, 1);
        assert!(matches!(
            verify_converse(cv, &edited, 0),
            Err(GuardViolation::Altered { .. })
        ));
    }

    #[test]
    fn the_quote_is_an_item_or_a_blob() {
        let q = quoted("The encrypted content gAAA...DQ== could not be verified.");
        assert!(matches!(q, Some(Quoted::Blob(b)) if b == "gAAA...DQ=="));
        let q = quoted(
            "The encrypted content for item rs_0a18 could not be verified. Reason: Encrypted content could not be decrypted or parsed.",
        );
        assert!(matches!(q, Some(Quoted::Item(i)) if i == "rs_0a18"));
        assert!(quoted("Encrypted content organization_id did not match").is_none());
    }
}
