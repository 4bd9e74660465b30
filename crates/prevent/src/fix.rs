//! The one door through which a rule finds and fixes: [`Fixer`].
//!
//! A rule never holds the [`Draft`] mutably. It gets a [`Fixer`], which owns the draft while the
//! rules run, reads as it (`Deref<Target = Draft>`, shared only) and offers each kind of edit as
//! a method that records the change
//! (rule, action, location, reason) as it makes it. In `check` the same methods record nothing
//! and change nothing and return `false`, so a rule is written once for both modes:
//!
//! ```text
//! f.find(RuleId::An05, Severity::Error, i, Some(j), "an empty text block", Some("remove it"));
//! if f.remove_block(RuleId::An05, i, j, "removed an empty text block") {
//!     continue; // the next block is at `j` now
//! }
//! j += 1;
//! ```
//!
//! So no change can go unreported, and `check` cannot change anything.

use std::ops::Deref;

use turnkeeper_guard::{fingerprint, is_guarded};
use turnkeeper_model::{Draft, DraftBlock, NewBlock, Role};

use crate::finding::{Change, Finding, RequestChange, Severity};
use crate::id::{ChangeAction, RuleId};

/// A location, in the input's terms where possible.
#[derive(Clone, Debug)]
pub struct Loc {
    /// The path (`messages[3].content[1]`).
    pub path: String,
    /// The input message index.
    pub message_index: Option<usize>,
    /// The input block index.
    pub block_index: Option<usize>,
}

/// Where message `i` (and block `j`) of the draft came from.
pub fn loc(d: &Draft<'_, '_>, i: usize, j: Option<usize>) -> Loc {
    let t = d.transcript();
    match (d.origin(i), j) {
        (Some(o), None) => Loc {
            path: t.message_path(o),
            message_index: Some(o),
            block_index: None,
        },
        (Some(o), Some(j)) => match d.block_origin(i, j) {
            Some((m, k)) => Loc {
                path: t.block_path(m, k),
                message_index: Some(m),
                block_index: Some(k),
            },
            None => Loc {
                path: format!("{} (new block)", t.block_path(o, j)),
                message_index: Some(o),
                block_index: None,
            },
        },
        (None, None) => Loc {
            path: format!("output {} (new message)", t.message_path(i)),
            message_index: None,
            block_index: None,
        },
        (None, Some(j)) => Loc {
            path: format!("output {} (new message)", t.block_path(i, j)),
            message_index: None,
            block_index: None,
        },
    }
}

/// What the rules found and did in one pass.
#[derive(Debug, Default)]
pub struct Sink {
    /// Findings.
    pub findings: Vec<Finding>,
    /// Changes made.
    pub changes: Vec<Change>,
    /// Request-level changes.
    pub request: Vec<RequestChange>,
    /// Guarded (thinking) input blocks removed or replaced, as reported.
    pub removed_guarded: usize,
    /// Raw texts of guarded blocks a rule put in (restored from the store, or the documented
    /// Gemini dummy signature): the ledger allows them.
    pub restored: Vec<String>,
    /// The smallest input message index a repair edited (for prefix binding, AN-25).
    pub first_edit: Option<usize>,
}

impl Sink {
    /// An empty sink.
    pub fn new() -> Self {
        Sink::default()
    }
}

/// A rule's handle on the draft: read it through `Deref`, find and fix through the methods.
/// In check mode every fix is a no-op that returns `false`.
pub struct Fixer<'t, 'a> {
    d: Draft<'t, 'a>,
    s: Sink,
    repair: bool,
}

/// Which neighbour [`Fixer::merge_into_neighbour`] moves a message's blocks into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Neighbour {
    /// The message before: the blocks go after its own.
    Previous,
    /// The message after: the blocks go before its own.
    Next,
}

impl<'t, 'a> Deref for Fixer<'t, 'a> {
    type Target = Draft<'t, 'a>;
    fn deref(&self) -> &Draft<'t, 'a> {
        &self.d
    }
}

impl std::fmt::Debug for Fixer<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fixer")
            .field("repair", &self.repair)
            .field("findings", &self.s.findings.len())
            .field("changes", &self.s.changes.len())
            .finish()
    }
}

impl<'t, 'a> Fixer<'t, 'a> {
    /// A handle on `d` that only finds (`repair == false`, for `check`) or also fixes. It owns
    /// the draft while the rules run; [`Fixer::finish`] gives it back with what was recorded.
    pub fn new(d: Draft<'t, 'a>, repair: bool) -> Self {
        Fixer {
            d,
            s: Sink::new(),
            repair,
        }
    }

    /// The draft and what the rules recorded.
    pub fn finish(self) -> (Draft<'t, 'a>, Sink) {
        (self.d, self.s)
    }

    /// The draft, for reading (also reachable through `Deref`).
    pub fn draft(&self) -> &Draft<'t, 'a> {
        &self.d
    }

    /// The smallest input message index a repair of this pass edited (AN-25).
    pub fn first_edit(&self) -> Option<usize> {
        self.s.first_edit
    }

    /// Records a finding about message `i` (block `j`).
    #[allow(clippy::too_many_arguments)]
    pub fn find(
        &mut self,
        rule: RuleId,
        severity: Severity,
        i: usize,
        j: Option<usize>,
        message: impl Into<String>,
        repair: Option<&str>,
    ) {
        let l = loc(&self.d, i, j);
        self.s.findings.push(Finding {
            rule,
            severity,
            path: l.path,
            message_index: l.message_index,
            block_index: l.block_index,
            message: message.into(),
            repair: repair.map(str::to_owned),
        });
    }

    /// Records a request-level finding (`path` is a parameter name).
    pub fn find_param(
        &mut self,
        rule: RuleId,
        severity: Severity,
        path: &str,
        message: impl Into<String>,
        repair: Option<&str>,
    ) {
        self.s.findings.push(Finding {
            rule,
            severity,
            path: path.to_owned(),
            message_index: None,
            block_index: None,
            message: message.into(),
            repair: repair.map(str::to_owned),
        });
    }

    fn note_edit(&mut self, i: usize) {
        let d = &self.d;
        let o = d
            .origin(i)
            .or_else(|| (i..d.len()).find_map(|k| d.origin(k)))
            .unwrap_or(usize::MAX);
        self.s.first_edit = Some(self.s.first_edit.map_or(o, |f| f.min(o)));
    }

    fn push(
        &mut self,
        rule: RuleId,
        action: ChangeAction,
        path: String,
        reason: String,
        fingerprint: Option<String>,
    ) {
        self.s.changes.push(Change {
            rule,
            action,
            path,
            reason,
            fingerprint,
        });
    }

    /// The finding `rule` made at message `i` (block `j`) has no safe repair after all: removing
    /// it would leave no message, or an empty one.
    fn cannot_repair(&mut self, rule: RuleId, i: usize, j: Option<usize>) {
        let path = loc(&self.d, i, j).path;
        if let Some(f) = self
            .s
            .findings
            .iter_mut()
            .rev()
            .find(|f| f.rule == rule && f.path == path && f.repair.is_some())
        {
            f.repair = None;
            f.message
                .push_str(" (left: removing it would leave the request without a message)");
        }
    }

    /// Runs `work` (a repair made of several fixes, whose planning costs more than the no-ops
    /// `check` would make of them) when repairing, and gives its result; in check mode it does
    /// nothing and gives `None`.
    pub fn fix_with<R>(&mut self, work: impl FnOnce(&mut Self) -> R) -> Option<R> {
        self.repair.then(|| work(self))
    }

    /// Removes block `j` of message `i`. A thinking block goes whole, its fingerprint reported.
    /// The last block of the only message is never removed.
    pub fn remove_block(
        &mut self,
        rule: RuleId,
        i: usize,
        j: usize,
        reason: impl Into<String>,
    ) -> bool {
        // The only message is never left empty (`"messages": [{"content": []}]` is refused):
        // the finding stays instead, with no repair offered (in check mode too, so that what
        // `repair` leaves says so).
        if self.d.len() == 1 && self.d.block_count(i) == 1 {
            self.cannot_repair(rule, i, Some(j));
            return false;
        }
        if !self.repair {
            return false;
        }
        let l = loc(&self.d, i, Some(j));
        let (guarded, fp) = match self.d.block(i, j) {
            Some(b) => (
                is_guarded(b.block) && b.orig.is_some(),
                is_guarded(b.block).then(|| fingerprint(b.raw())),
            ),
            None => return false,
        };
        if self.d.remove_block(i, j).is_none() {
            return false;
        }
        if guarded {
            self.s.removed_guarded += 1;
        }
        self.note_edit(i);
        self.push(rule, ChangeAction::RemovedBlock, l.path, reason.into(), fp);
        true
    }

    /// Removes message `i` (and the thinking blocks it holds, counted and fingerprinted). The
    /// last message left is never removed: the API rejects `"messages": []`, so the finding
    /// stays instead (and `repair` reports it as left).
    pub fn remove_message(&mut self, rule: RuleId, i: usize, reason: impl Into<String>) -> bool {
        if i < self.d.len() && self.d.len() == 1 {
            self.cannot_repair(rule, i, None);
            return false;
        }
        if !self.repair || i >= self.d.len() {
            return false;
        }
        let l = loc(&self.d, i, None);
        let guarded: Vec<String> = self
            .d
            .blocks(i)
            .filter(|b| is_guarded(b.block) && b.orig.is_some())
            .map(|b| fingerprint(b.raw()))
            .collect();
        self.note_edit(i);
        if self.d.remove_message(i).is_none() {
            return false;
        }
        self.s.removed_guarded += guarded.len();
        let mut reason = reason.into();
        if !guarded.is_empty() {
            reason.push_str(&format!(
                " (its {} thinking block(s) went with it)",
                guarded.len()
            ));
        }
        let fp = (!guarded.is_empty()).then(|| guarded.join(","));
        self.push(rule, ChangeAction::RemovedMessage, l.path, reason, fp);
        true
    }

    /// Inserts a new block at `j` of message `i`.
    pub fn insert_block(
        &mut self,
        rule: RuleId,
        i: usize,
        j: usize,
        block: DraftBlock,
        reason: impl Into<String>,
    ) -> bool {
        if !self.repair {
            return false;
        }
        self.d.insert_block(i, j, block);
        self.note_edit(i);
        let l = loc(&self.d, i, Some(j));
        self.push(
            rule,
            ChangeAction::InsertedBlock,
            l.path,
            reason.into(),
            None,
        );
        true
    }

    /// [`Fixer::insert_block`] with the block built only when it is inserted (never in check
    /// mode); nothing happens when `build` gives `None`.
    pub fn insert_block_with(
        &mut self,
        rule: RuleId,
        i: usize,
        j: usize,
        build: impl FnOnce(&Draft<'t, 'a>) -> Option<DraftBlock>,
        reason: impl Into<String>,
    ) -> bool {
        if !self.repair {
            return false;
        }
        match build(&self.d) {
            Some(block) => self.insert_block(rule, i, j, block, reason),
            None => false,
        }
    }

    /// Replaces block `j` of message `i` with an edited copy. Never for a thinking block: the
    /// guard fails the repair closed if one changes.
    pub fn edit_block(
        &mut self,
        rule: RuleId,
        i: usize,
        j: usize,
        block: NewBlock,
        reason: impl Into<String>,
    ) -> bool {
        self.replace_block(rule, (i, j), block, ChangeAction::EditedBlock, reason, true)
    }

    /// Replaces block `j` of message `i` with `block` and reports `action`; `prefix_edit` says
    /// whether it counts as an edit of the prefix (AN-25). The one place [`Fixer::edit_block`],
    /// [`Fixer::edit_cache_hint`] and [`Fixer::restore_signature`] swap a block.
    fn replace_block(
        &mut self,
        rule: RuleId,
        (i, j): (usize, usize),
        block: NewBlock,
        action: ChangeAction,
        reason: impl Into<String>,
        prefix_edit: bool,
    ) -> bool {
        if !self.repair {
            return false;
        }
        let l = loc(&self.d, i, Some(j));
        if self.d.remove_block(i, j).is_none() {
            return false;
        }
        self.d.insert_block(i, j, DraftBlock::New(Box::new(block)));
        if prefix_edit {
            self.note_edit(i);
        }
        self.push(rule, action, l.path, reason.into(), None);
        true
    }

    /// [`Fixer::edit_block`] for an edit of a block's cache hint only (`cache_control` removed):
    /// reported the same way, but not counted as an edit of the prefix, since "adding, moving or
    /// removing `cache_control`" keeps prefix-bound thinking valid (api-rules.md AN-25). Never
    /// for a thinking block.
    pub fn edit_cache_hint(
        &mut self,
        rule: RuleId,
        i: usize,
        j: usize,
        block: NewBlock,
        reason: impl Into<String>,
    ) -> bool {
        if self.d.block(i, j).is_none_or(|b| b.kind().is_thinking()) {
            return false;
        }
        self.replace_block(
            rule,
            (i, j),
            block,
            ChangeAction::EditedBlock,
            reason,
            false,
        )
    }

    /// Replaces top-level parameter `key` with `value` and reports it as a change at `path`
    /// (`tools[2].cache_control`, `context_management.edits`): for repairs of the request's own
    /// settings, recorded like [`Fixer::set_param`] with a path that says which part changed.
    pub fn edit_param(
        &mut self,
        rule: RuleId,
        key: &str,
        value: &str,
        path: &str,
        reason: &str,
    ) -> bool {
        if !self.repair {
            return false;
        }
        self.d.set_top(key, Some(value.to_owned()));
        self.s.request.push(RequestChange::SetParam {
            key: key.to_owned(),
            value: value.to_owned(),
            rule,
        });
        self.push(
            rule,
            ChangeAction::Request,
            path.to_owned(),
            reason.to_owned(),
            None,
        );
        true
    }

    /// [`Fixer::edit_block`] for the one signature turnkeeper may write: Gemini's documented
    /// dummy `thoughtSignature` (api-rules.md GM-05). The guard is told to accept the new bytes.
    pub fn set_dummy_signature(
        &mut self,
        rule: RuleId,
        i: usize,
        j: usize,
        block: NewBlock,
        reason: impl Into<String>,
    ) -> bool {
        let raw = block.json.clone();
        let done = self.edit_block(rule, i, j, block, reason);
        if done {
            self.s.restored.push(raw);
        }
        done
    }

    /// [`Fixer::edit_block`] for a signature put back as the provider sent it (the turn store):
    /// a Gemini `functionCall` part that lost its `thoughtSignature`, `block` being the part with
    /// the recorded one. Reported as [`ChangeAction::RestoredField`] at the block's path; the
    /// guard is told to accept the new bytes.
    pub fn restore_signature(
        &mut self,
        rule: RuleId,
        i: usize,
        j: usize,
        block: NewBlock,
        reason: impl Into<String>,
    ) -> bool {
        let raw = block.json.clone();
        let done = self.replace_block(
            rule,
            (i, j),
            block,
            ChangeAction::RestoredField,
            reason,
            true,
        );
        if done {
            self.s.restored.push(raw);
        }
        done
    }

    /// Moves block `from` (message, block) to position `to` (message, block), as one reported
    /// change. Positions are taken after the block left its place.
    pub fn move_block(
        &mut self,
        rule: RuleId,
        from: (usize, usize),
        to: (usize, usize),
        reason: impl Into<String>,
    ) -> bool {
        if !self.repair {
            return false;
        }
        let l = loc(&self.d, from.0, Some(from.1));
        let Some(h) = self.d.block_handle(from.0, from.1) else {
            return false;
        };
        if self.d.remove_block(from.0, from.1).is_none() {
            return false;
        }
        self.d.insert_block(to.0, to.1, h);
        self.note_edit(from.0.min(to.0));
        let to_path = loc(&self.d, to.0, None).path;
        let reason = format!("{} (to {to_path}, position {})", reason.into(), to.1);
        self.push(rule, ChangeAction::MovedBlock, l.path, reason, None);
        true
    }

    /// Inserts a new message at `i`.
    pub fn insert_message(
        &mut self,
        rule: RuleId,
        i: usize,
        role: Role,
        blocks: Vec<DraftBlock>,
        reason: impl Into<String>,
    ) -> bool {
        if !self.repair {
            return false;
        }
        self.d.insert_message(i, role, blocks);
        if i + 1 < self.d.len() {
            self.note_edit(i);
        }
        let l = loc(&self.d, i, None);
        self.push(
            rule,
            ChangeAction::InsertedMessage,
            l.path,
            reason.into(),
            None,
        );
        true
    }

    /// [`Fixer::insert_message`] with the blocks built only when it is inserted (never in
    /// check mode).
    pub fn insert_message_with(
        &mut self,
        rule: RuleId,
        i: usize,
        role: Role,
        build: impl FnOnce(&Draft<'t, 'a>) -> Vec<DraftBlock>,
        reason: impl Into<String>,
    ) -> bool {
        if !self.repair {
            return false;
        }
        let blocks = build(&self.d);
        self.insert_message(rule, i, role, blocks, reason)
    }

    /// Appends message `i`'s blocks to message `i - 1` and removes message `i` (a merge of
    /// same-role neighbours), as one reported change.
    pub fn merge_into_previous(&mut self, rule: RuleId, i: usize) -> bool {
        if i == 0 || i >= self.d.len() {
            return false;
        }
        let at = self.d.block_count(i - 1);
        self.merge_into_neighbour(rule, i, Neighbour::Previous, |n| {
            format!("merged the next message's {n} block(s) after block {at}")
        })
    }

    /// Moves message `i`'s blocks into its neighbour (after the previous message's blocks, or
    /// before the next one's) and removes message `i`, as one reported change (a
    /// [`ChangeAction::MergedMessage`] at the neighbour, whose reason `reason` words from the
    /// number of blocks moved). Blocks keep their bytes and their order.
    pub fn merge_into_neighbour(
        &mut self,
        rule: RuleId,
        i: usize,
        into: Neighbour,
        reason: impl FnOnce(usize) -> String,
    ) -> bool {
        let to = match into {
            Neighbour::Previous => i.checked_sub(1),
            Neighbour::Next => i.checked_add(1),
        };
        let Some(to) = to.filter(|&to| self.repair && i < self.d.len() && to < self.d.len()) else {
            return false;
        };
        let moved = self.d.take_blocks(i);
        let n = moved.len();
        let kept = self.d.take_blocks(to);
        let list = match into {
            Neighbour::Previous => kept.into_iter().chain(moved).collect(),
            Neighbour::Next => moved.into_iter().chain(kept).collect(),
        };
        self.d.set_blocks(to, list);
        self.note_edit(to.min(i));
        let l = loc(&self.d, to, None);
        self.d.remove_message(i);
        self.push(rule, ChangeAction::MergedMessage, l.path, reason(n), None);
        true
    }

    /// Replaces message `i`'s blocks with the provider's original (the turn store). The
    /// replaced thinking blocks count as removed; the restored ones (`guarded`, their raw
    /// texts) are allowed by the guard.
    pub fn restore_message(
        &mut self,
        rule: RuleId,
        i: usize,
        blocks: Vec<DraftBlock>,
        guarded: Vec<String>,
    ) -> bool {
        if !self.repair {
            return false;
        }
        let replaced = self
            .d
            .blocks(i)
            .filter(|b| is_guarded(b.block) && b.orig.is_some())
            .count();
        self.d.set_blocks(i, blocks);
        self.s.removed_guarded += replaced;
        self.s.restored.extend(guarded);
        self.note_edit(i);
        let l = loc(&self.d, i, None);
        self.push(
            rule,
            ChangeAction::RestoredMessage,
            l.path,
            "put back the assistant turn exactly as the provider returned it (turn store)"
                .to_owned(),
            None,
        );
        true
    }

    /// Records that a `cache_control` breakpoint of message `i` was dropped (it went with a
    /// removed block and had nowhere to go).
    pub fn dropped_field(&mut self, rule: RuleId, i: usize, reason: impl Into<String>) -> bool {
        if !self.repair {
            return false;
        }
        self.note_edit(i);
        let l = loc(&self.d, i, None);
        self.push(
            rule,
            ChangeAction::RemovedField,
            l.path,
            reason.into(),
            None,
        );
        true
    }

    /// Sets a top-level request parameter.
    pub fn set_param(&mut self, rule: RuleId, key: &str, value: &str, reason: &str) -> bool {
        if !self.repair {
            return false;
        }
        self.d.set_top(key, Some(value.to_owned()));
        self.s.request.push(RequestChange::SetParam {
            key: key.to_owned(),
            value: value.to_owned(),
            rule,
        });
        self.push(
            rule,
            ChangeAction::Request,
            key.to_owned(),
            reason.to_owned(),
            None,
        );
        true
    }

    /// Asks the caller to send an `anthropic-beta` value.
    pub fn add_beta(&mut self, rule: RuleId, value: &str) -> bool {
        if !self.repair {
            return false;
        }
        if !self
            .s
            .request
            .iter()
            .any(|r| matches!(r, RequestChange::AddBeta { value: v, .. } if v == value))
        {
            self.s.request.push(RequestChange::AddBeta {
                value: value.to_owned(),
                rule,
            });
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnkeeper_model::{Format, FormatHint, read};

    /// A user turn, an assistant turn with a thinking block, and a user turn of two blocks.
    const BODY: &str = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"EqQBCkYI"},{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"text","text":"r"},{"type":"text","text":"s"}]}]}"#;

    const THINKING: &str = r#"{"type":"thinking","thinking":"t","signature":"EqQBCkYI"}"#;

    fn text(t: &str) -> NewBlock {
        NewBlock::new(
            Format::Anthropic,
            format!(r#"{{"type":"text","text":"{t}"}}"#),
        )
        .expect("a block")
    }

    fn new(t: &str) -> DraftBlock {
        DraftBlock::New(Box::new(text(t)))
    }

    /// Every change as `RULE action path #fingerprint: reason`.
    fn changes(s: &Sink) -> Vec<String> {
        s.changes
            .iter()
            .map(|c| {
                let fp = c
                    .fingerprint
                    .as_deref()
                    .map(|f| format!(" #{f}"))
                    .unwrap_or_default();
                format!("{} {} {}{fp}: {}", c.rule, c.action, c.path, c.reason)
            })
            .collect()
    }

    #[test]
    fn in_check_mode_no_fix_changes_or_records_anything() {
        let t = read(BODY, FormatHint::Auto).expect("reads");
        let mut f = Fixer::new(Draft::new(&t), false);
        let done = [
            f.remove_block(RuleId::An05, 2, 1, "x"),
            f.remove_message(RuleId::An04, 2, "x"),
            f.insert_block(RuleId::An08, 2, 0, new("n"), "x"),
            f.insert_block_with(RuleId::An08, 2, 0, |_| Some(new("n")), "x"),
            f.edit_block(RuleId::An06, 0, 0, text("e"), "x"),
            f.set_dummy_signature(RuleId::Gm01, 0, 0, text("e"), "x"),
            f.move_block(RuleId::An18, (1, 1), (1, 0), "x"),
            f.insert_message(RuleId::An01, 0, Role::User, vec![new("n")], "x"),
            f.insert_message_with(RuleId::An01, 0, Role::User, |_| vec![new("n")], "x"),
            f.merge_into_previous(RuleId::An02, 2),
            f.restore_message(RuleId::An22, 1, vec![new("n")], vec![]),
            f.dropped_field(RuleId::An05, 2, "x"),
            f.set_param(RuleId::An16, "thinking", "{}", "x"),
            f.add_beta(RuleId::An25, "b"),
        ];
        assert_eq!(done, [false; 14]);
        assert_eq!(f.fix_with(|_| 7), None);
        assert_eq!(f.first_edit(), None);
        assert_eq!(f.draft().len(), 3);
        let (d, s) = f.finish();
        assert!(matches!(d.output(), std::borrow::Cow::Borrowed(b) if b == BODY));
        assert!(s.changes.is_empty() && s.request.is_empty() && s.findings.is_empty());
        assert_eq!(
            (s.removed_guarded, s.restored.len(), s.first_edit),
            (0, 0, None)
        );
    }

    #[test]
    fn every_fix_records_its_change_in_the_inputs_terms() {
        let t = read(BODY, FormatHint::Auto).expect("reads");
        let mut f = Fixer::new(Draft::new(&t), true);
        assert_eq!(f.fix_with(|f| f.len()), Some(3));
        assert!(f.remove_block(RuleId::An05, 2, 1, "r1"));
        assert_eq!(f.first_edit(), Some(2));
        assert!(!f.remove_block(RuleId::An05, 2, 5, "no such block"));
        assert!(f.insert_block(RuleId::An08, 2, 1, new("n"), "r2"));
        assert!(!f.insert_block_with(RuleId::An08, 2, 0, |_| None, "nothing built"));
        assert!(f.edit_block(RuleId::An06, 0, 0, text("q2"), "r3"));
        assert_eq!(f.first_edit(), Some(0));
        assert!(f.move_block(RuleId::An18, (1, 1), (1, 0), "r4"));
        assert!(f.dropped_field(RuleId::An05, 2, "r5"));
        assert!(f.set_param(RuleId::An16, "thinking", r#"{"type":"disabled"}"#, "r6"));
        assert!(f.add_beta(RuleId::An25, "beta-1"));
        assert!(f.add_beta(RuleId::An25, "beta-1"));
        assert!(f.remove_message(RuleId::An03, 1, "r7"));
        assert!(!f.remove_message(RuleId::An03, 9, "no such message"));
        assert!(f.insert_message(RuleId::An01, 0, Role::User, vec![new("first")], "r8"));
        assert!(f.insert_message_with(RuleId::An01, 3, Role::User, |_| vec![new("last")], "r9"));
        let (d, s) = f.finish();
        assert_eq!(
            changes(&s),
            [
                "AN-05 removed_block messages[2].content[1]: r1",
                "AN-08 inserted_block messages[2].content[1] (new block): r2",
                "AN-06 edited_block messages[0].content[0]: r3",
                "AN-18 moved_block messages[1].content[1]: r4 (to messages[1], position 0)",
                "AN-05 removed_field messages[2]: r5",
                "AN-16 request thinking: r6",
                "AN-03 removed_message messages[1] #13549ecd3ce4eeae: r7 (its 1 thinking block(s) went with it)",
                "AN-01 inserted_message output messages[0] (new message): r8",
                "AN-01 inserted_message output messages[3] (new message): r9",
            ]
        );
        assert_eq!(
            d.output(),
            r#"{"thinking":{"type":"disabled"},"messages":[{"role":"user","content":[{"type":"text","text":"first"}]},{"role":"user","content":[{"type":"text","text":"q2"}]},{"role":"user","content":[{"type":"text","text":"r"},{"type":"text","text":"n"}]},{"role":"user","content":[{"type":"text","text":"last"}]}]}"#
        );
        // The removed message's thinking block, by its fingerprint.
        assert_eq!(fingerprint(THINKING), "13549ecd3ce4eeae");
        assert_eq!(s.removed_guarded, 1);
        assert_eq!(s.first_edit, Some(0));
        assert_eq!(s.request.len(), 2, "{:?}", s.request);
    }

    #[test]
    fn merges_restores_and_dummy_signatures_are_recorded() {
        let t = read(BODY, FormatHint::Auto).expect("reads");
        let mut f = Fixer::new(Draft::new(&t), true);
        assert!(!f.merge_into_previous(RuleId::An02, 0));
        assert!(!f.merge_into_previous(RuleId::An02, 3));
        assert!(f.restore_message(
            RuleId::An22,
            1,
            vec![new("restored")],
            vec!["raw".to_owned()]
        ));
        assert!(f.set_dummy_signature(RuleId::Gm01, 2, 0, text("sig"), "r1"));
        assert!(f.merge_into_previous(RuleId::An02, 2));
        let (d, s) = f.finish();
        assert_eq!(
            changes(&s),
            [
                "AN-22 restored_message messages[1]: put back the assistant turn exactly as the provider returned it (turn store)",
                "GM-01 edited_block messages[2].content[0]: r1",
                "AN-02 merged_message messages[1]: merged the next message's 2 block(s) after block 1",
            ]
        );
        assert_eq!(s.removed_guarded, 1);
        assert_eq!(
            s.restored,
            [
                "raw".to_owned(),
                r#"{"type":"text","text":"sig"}"#.to_owned()
            ]
        );
        assert_eq!(s.first_edit, Some(1));
        assert_eq!(
            d.output(),
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":[{"type":"text","text":"restored"},{"type":"text","text":"sig"},{"type":"text","text":"s"}]}]}"#
        );
    }

    #[test]
    fn a_merge_is_an_edit_of_the_earlier_message() {
        let body = r#"{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"assistant","content":"c"}]}"#;
        let t = read(body, FormatHint::Auto).expect("reads");
        let mut f = Fixer::new(Draft::new(&t), true);
        assert!(f.merge_into_previous(RuleId::An02, 2));
        assert_eq!(f.first_edit(), Some(1));
    }

    /// Appending a message edits no input message, so it sets no first edit (AN-25 looks from
    /// the first edit on); a message put in front of an input message does. Kills `i + 1` turned
    /// into `i * 1` in `insert_message`, under which an appended message counted as an edit.
    #[test]
    fn an_appended_message_is_no_edit_of_the_input() {
        let t = read(BODY, FormatHint::Auto).expect("reads");
        let mut f = Fixer::new(Draft::new(&t), true);
        assert!(f.insert_message(RuleId::An08, 3, Role::User, vec![new("r")], "appended"));
        assert_eq!(f.first_edit(), None);
        assert!(f.insert_message(RuleId::An08, 2, Role::User, vec![new("m")], "in front"));
        assert_eq!(f.first_edit(), Some(2));
    }

    /// Removing a message past the end of a one-message draft does nothing: it is no last
    /// message, so the finding about it keeps its repair. Kills `i < self.d.len()` turned into
    /// `<=` in `remove_message`, under which the finding was marked unrepairable.
    #[test]
    fn removing_a_message_past_the_end_leaves_its_finding_alone() {
        let body = r#"{"messages":[{"role":"user","content":"q"}]}"#;
        let t = read(body, FormatHint::Auto).expect("reads");
        for repair in [false, true] {
            let mut f = Fixer::new(Draft::new(&t), repair);
            f.find(
                RuleId::An04,
                Severity::Error,
                1,
                None,
                "gone",
                Some("remove it"),
            );
            assert!(!f.remove_message(RuleId::An04, 1, "x"));
            let (d, s) = f.finish();
            assert_eq!(d.output(), body);
            let found: Vec<String> = s
                .findings
                .iter()
                .map(|x| format!("{} {} {:?}: {}", x.rule, x.path, x.repair, x.message))
                .collect();
            assert_eq!(
                found,
                ["AN-04 output messages[1] (new message) Some(\"remove it\"): gone"],
                "repair: {repair}"
            );
        }
    }

    #[test]
    fn the_only_message_is_never_emptied_and_its_finding_says_so() {
        let body = r#"{"messages":[{"role":"user","content":[{"type":"text","text":" "}]}]}"#;
        let t = read(body, FormatHint::Auto).expect("reads");
        for repair in [false, true] {
            let mut f = Fixer::new(Draft::new(&t), repair);
            f.find(
                RuleId::An05,
                Severity::Error,
                0,
                Some(0),
                "blank",
                Some("remove it"),
            );
            f.find(
                RuleId::An04,
                Severity::Error,
                0,
                None,
                "empty",
                Some("remove it"),
            );
            f.find_param(RuleId::Cfg05, Severity::Warning, "thinking", "low", None);
            assert!(!f.remove_block(RuleId::An05, 0, 0, "x"));
            assert!(!f.remove_message(RuleId::An04, 0, "x"));
            let (d, s) = f.finish();
            assert_eq!(d.output(), body);
            let found: Vec<String> = s
                .findings
                .iter()
                .map(|x| {
                    format!(
                        "{} {:?} {} {:?} {:?} {:?}: {}",
                        x.rule,
                        x.severity,
                        x.path,
                        x.message_index,
                        x.block_index,
                        x.repair,
                        x.message
                    )
                })
                .collect();
            assert_eq!(
                found,
                [
                    "AN-05 Error messages[0].content[0] Some(0) Some(0) None: blank (left: removing it would leave the request without a message)",
                    "AN-04 Error messages[0] Some(0) None None: empty (left: removing it would leave the request without a message)",
                    "CFG-05 Warning thinking None None None: low",
                ],
                "repair: {repair}"
            );
        }
    }
}
