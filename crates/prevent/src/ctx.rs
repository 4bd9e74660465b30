//! What every rule sees: the target (profile, mode, betas), the policy, the store, and the sink
//! that collects findings and changes.

use turnkeeper_guard::{TurnStore, fingerprint, is_guarded};
use turnkeeper_model::{BlockRef, Draft, DraftBlock, Kinds, NewBlock, Role};

use crate::finding::{Change, Finding, RequestChange, Severity};
use crate::id::{ChangeAction, RuleId};
use crate::policy::Policy;
use crate::profile::{Mode, Profile};

/// The target of a check: the model's profile and the request's own settings.
#[derive(Clone, Debug)]
pub struct Ctx<'s> {
    /// The model profile.
    pub profile: Profile,
    /// The thinking mode in force (updated when a rule changes it, e.g. AN-16 disabling thinking).
    pub mode: Mode,
    /// The mode as the request gave it, before any rule changed it.
    pub requested_mode: Option<Mode>,
    /// The policy.
    pub policy: &'s Policy,
    /// The turn store, if one was given.
    pub store: Option<&'s TurnStore>,
    /// `anthropic-beta` values the request is sent with.
    pub betas: Vec<String>,
    /// True when `thinking.block_binding.prefix_mismatch_behavior` is `drop_block` and the beta
    /// is sent: the API drops blocks whose prefix changed instead of failing.
    pub drop_block: bool,
}

/// The beta header that enables `block_binding` (api-rules.md §1.2, AN-25).
pub const BINDING_BETA: &str = "thinking-binding-controls-2026-08-01";

impl Ctx<'_> {
    /// True when thinking is on (manual or adaptive).
    pub fn thinking_on(&self) -> bool {
        self.mode != Mode::Off
    }
}

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

/// Collects what the rules find and do.
#[derive(Debug, Default)]
pub struct Sink {
    /// Apply repairs (`repair`) or only report (`check`).
    pub apply: bool,
    /// Findings.
    pub findings: Vec<Finding>,
    /// Changes made.
    pub changes: Vec<Change>,
    /// Request-level changes.
    pub request: Vec<RequestChange>,
    /// Guarded (thinking) input blocks removed or replaced, as reported.
    pub removed_guarded: usize,
    /// Raw texts of guarded blocks restored from the store (allowed by the ledger).
    pub restored: Vec<String>,
    /// The smallest input message index a repair edited (for prefix binding, AN-25); `usize::MAX`
    /// when no earlier message was edited.
    pub first_edit: Option<usize>,
}

impl Sink {
    /// A sink for `check` (`apply == false`) or `repair`.
    pub fn new(apply: bool) -> Self {
        Sink {
            apply,
            ..Sink::default()
        }
    }

    /// Records a finding.
    #[allow(clippy::too_many_arguments)]
    pub fn find(
        &mut self,
        d: &Draft<'_, '_>,
        rule: RuleId,
        severity: Severity,
        i: usize,
        j: Option<usize>,
        message: impl Into<String>,
        repair: Option<&str>,
    ) {
        let l = loc(d, i, j);
        self.findings.push(Finding {
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
        self.findings.push(Finding {
            rule,
            severity,
            path: path.to_owned(),
            message_index: None,
            block_index: None,
            message: message.into(),
            repair: repair.map(str::to_owned),
        });
    }

    fn note_edit(&mut self, d: &Draft<'_, '_>, i: usize) {
        let o = d
            .origin(i)
            .or_else(|| (i..d.len()).find_map(|k| d.origin(k)))
            .unwrap_or(usize::MAX);
        self.first_edit = Some(self.first_edit.map_or(o, |f| f.min(o)));
    }

    /// Removes block `j` of message `i`, reporting it.
    pub fn remove_block(
        &mut self,
        d: &mut Draft<'_, '_>,
        rule: RuleId,
        i: usize,
        j: usize,
        reason: impl Into<String>,
    ) {
        let l = loc(d, i, Some(j));
        let (guarded, fp) = match d.block(i, j) {
            Some(b) => (
                is_guarded(b.block) && b.orig.is_some(),
                is_guarded(b.block).then(|| fingerprint(b.raw())),
            ),
            None => (false, None),
        };
        if d.remove_block(i, j).is_some() {
            if guarded {
                self.removed_guarded += 1;
            }
            self.note_edit(d, i);
            self.changes.push(Change {
                rule,
                action: ChangeAction::RemovedBlock,
                path: l.path,
                reason: reason.into(),
                fingerprint: fp,
            });
        }
    }

    /// Removes message `i`, reporting it (and counting the thinking blocks it held).
    pub fn remove_message(
        &mut self,
        d: &mut Draft<'_, '_>,
        rule: RuleId,
        i: usize,
        reason: impl Into<String>,
    ) {
        let l = loc(d, i, None);
        let guarded: Vec<String> = d
            .blocks(i)
            .filter(|b| is_guarded(b.block) && b.orig.is_some())
            .map(|b| fingerprint(b.raw()))
            .collect();
        self.note_edit(d, i);
        if d.remove_message(i).is_some() {
            self.removed_guarded += guarded.len();
            let mut reason = reason.into();
            if !guarded.is_empty() {
                reason.push_str(&format!(
                    " (its {} thinking block(s) went with it)",
                    guarded.len()
                ));
            }
            self.changes.push(Change {
                rule,
                action: ChangeAction::RemovedMessage,
                path: l.path,
                reason,
                fingerprint: (!guarded.is_empty()).then(|| guarded.join(",")),
            });
        }
    }

    /// Inserts a new block at `j` of message `i`, reporting it.
    pub fn insert_block(
        &mut self,
        d: &mut Draft<'_, '_>,
        rule: RuleId,
        i: usize,
        j: usize,
        block: DraftBlock,
        reason: impl Into<String>,
    ) {
        d.insert_block(i, j, block);
        self.note_edit(d, i);
        let l = loc(d, i, Some(j));
        self.changes.push(Change {
            rule,
            action: ChangeAction::InsertedBlock,
            path: l.path,
            reason: reason.into(),
            fingerprint: None,
        });
    }

    /// Replaces block `j` of message `i` with an edited copy (never for guarded blocks).
    pub fn edit_block(
        &mut self,
        d: &mut Draft<'_, '_>,
        rule: RuleId,
        i: usize,
        j: usize,
        block: NewBlock,
        reason: impl Into<String>,
    ) {
        let l = loc(d, i, Some(j));
        if d.remove_block(i, j).is_some() {
            d.insert_block(i, j, DraftBlock::New(Box::new(block)));
            self.note_edit(d, i);
            self.changes.push(Change {
                rule,
                action: ChangeAction::EditedBlock,
                path: l.path,
                reason: reason.into(),
                fingerprint: None,
            });
        }
    }

    /// Inserts a new message at `i`, reporting it.
    pub fn insert_message(
        &mut self,
        d: &mut Draft<'_, '_>,
        rule: RuleId,
        i: usize,
        role: Role,
        blocks: Vec<DraftBlock>,
        reason: impl Into<String>,
    ) {
        d.insert_message(i, role, blocks);
        if i + 1 < d.len() {
            self.note_edit(d, i);
        }
        let l = loc(d, i, None);
        self.changes.push(Change {
            rule,
            action: ChangeAction::InsertedMessage,
            path: l.path,
            reason: reason.into(),
            fingerprint: None,
        });
    }

    /// Records a generic change (moves, restores) already applied to the draft.
    pub fn changed(
        &mut self,
        d: &Draft<'_, '_>,
        rule: RuleId,
        action: ChangeAction,
        i: usize,
        j: Option<usize>,
        reason: impl Into<String>,
    ) {
        let l = loc(d, i, j);
        self.note_edit(d, i);
        self.changes.push(Change {
            rule,
            action,
            path: l.path,
            reason: reason.into(),
            fingerprint: None,
        });
    }

    /// Sets a top-level request parameter, reporting it.
    pub fn set_param(
        &mut self,
        d: &mut Draft<'_, '_>,
        rule: RuleId,
        key: &str,
        value: &str,
        reason: impl Into<String>,
    ) {
        d.set_top(key, Some(value.to_owned()));
        self.request.push(RequestChange::SetParam {
            key: key.to_owned(),
            value: value.to_owned(),
            rule,
        });
        self.changes.push(Change {
            rule,
            action: ChangeAction::Request,
            path: key.to_owned(),
            reason: reason.into(),
            fingerprint: None,
        });
    }

    /// Asks the caller to send an `anthropic-beta` value.
    pub fn add_beta(&mut self, rule: RuleId, value: &str) {
        if !self
            .request
            .iter()
            .any(|r| matches!(r, RequestChange::AddBeta { value: v, .. } if v == value))
        {
            self.request.push(RequestChange::AddBeta {
                value: value.to_owned(),
                rule,
            });
        }
    }
}

/// Helpers over draft blocks used by several rules.
pub trait DraftExt {
    /// True when message `i` holds at least one block and only `tool_result` blocks.
    fn only_tool_results(&self, i: usize) -> bool;
    /// True when message `i` holds a thinking or redacted thinking block.
    fn has_thinking(&self, i: usize) -> bool;
    /// The kind of the first block of message `i`.
    fn first_kind(&self, i: usize) -> Option<turnkeeper_model::BlockKind>;
}

impl DraftExt for Draft<'_, '_> {
    fn only_tool_results(&self, i: usize) -> bool {
        self.summary(i)
            .kinds
            .is_only(turnkeeper_model::BlockKind::ToolResult)
    }
    fn has_thinking(&self, i: usize) -> bool {
        self.summary(i).kinds.intersects(Kinds::THINKING)
    }
    fn first_kind(&self, i: usize) -> Option<turnkeeper_model::BlockKind> {
        self.block(i, 0).map(|b| b.kind())
    }
}

/// A block's decoded id, or an empty string.
pub fn id_of(b: &BlockRef<'_>) -> String {
    b.id().map(|c| c.into_owned()).unwrap_or_default()
}
