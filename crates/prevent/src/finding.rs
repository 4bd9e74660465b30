//! Findings, changes and the repair report.

use serde::Serialize;

use crate::id::{ChangeAction, RuleId};

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; the provider accepts it.
    Info,
    /// The provider may accept it, or turnkeeper cannot tell (e.g. "unverifiable").
    Warning,
    /// The provider rejects the request.
    Error,
}

/// One thing `check` found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule id (`AN-16`, `GM-01`, `CFG-07`, ...).
    pub rule: RuleId,
    /// Severity.
    pub severity: Severity,
    /// Where, in the input's terms (`messages[5].content[0]`, `max_tokens`).
    pub path: String,
    /// The message index, when the finding is about a message.
    pub message_index: Option<usize>,
    /// The block index, when it is about a block.
    pub block_index: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// What the policy would do about it; `None` when it cannot be repaired safely.
    pub repair: Option<String>,
}

/// One change `repair` made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The rule that made it.
    pub rule: RuleId,
    /// What was done.
    pub action: ChangeAction,
    /// Where, in the input's terms (or `output:` followed by the output location for new items).
    pub path: String,
    /// Why.
    pub reason: String,
    /// For a removed or replaced thinking block: its fingerprint (see `turnkeeper_guard`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// A change to the request outside the transcript: a parameter or a header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RequestChange {
    /// A top-level body parameter was set.
    SetParam {
        /// The key (`thinking`).
        key: String,
        /// The new JSON value.
        value: String,
        /// The rule.
        rule: RuleId,
    },
    /// The caller must send this `anthropic-beta` value with the request.
    AddBeta {
        /// The header value.
        value: String,
        /// The rule.
        rule: RuleId,
    },
}

/// What `repair` did and what is left.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The changes, in the order they were made.
    pub changes: Vec<Change>,
    /// Changes to the request outside the messages.
    pub request_changes: Vec<RequestChange>,
    /// What `check` still finds on the repaired body.
    pub findings_left: Vec<Finding>,
}

impl Report {
    /// True when nothing was changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.request_changes.is_empty()
    }

    /// True when an error-level finding is left.
    pub fn has_errors(&self) -> bool {
        self.findings_left
            .iter()
            .any(|f| f.severity == Severity::Error)
    }
}
