//! The OpenCode session doctor (feature `stores`): plan the repairs of a stored session, each
//! under its rule id (AN-04, AN-05, AN-08, AN-10, AN-18, AN-19, AN-23; the Anthropic-only ones
//! only for a session bound for Anthropic), and write them in place ([`apply`]: backup and
//! manifest first, every write atomic) or take them back ([`undo`]).
//!
//! The usual round: [`crate::stores::opencode::locate`] the store, load the session,
//! [`check_stored`] it, [`plan`] the repairs, [`simulate`] them and check again, then [`apply`].
//! (The planning is pure and also available without the feature, in [`crate::opencode`].)
//!
//! ```
//! use turnkeeper::doctor::{PlanOptions, plan};
//! use turnkeeper::opencode::load_export;
//!
//! // A user message with a whitespace-only text part (AN-05 when sent to Claude; OpenCode's
//! // own filter drops only `""`).
//! let export = r#"{"info":{"id":"ses_1"},"messages":[{"info":{"id":"msg_1","role":"user",
//!   "sessionID":"ses_1","time":{"created":1},"model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}},
//!   "parts":[{"id":"prt_1","type":"text","text":"Hi.","messageID":"msg_1","sessionID":"ses_1"},
//!            {"id":"prt_2","type":"text","text":"  ","messageID":"msg_1","sessionID":"ses_1"}]}],"todos":[]}"#;
//! let session = load_export(export, "example")?;
//! let planned = plan(&session, &PlanOptions::default());
//! let removed: Vec<(String, &str)> =
//!     planned.repairs.iter().map(|r| (r.rule().to_string(), r.part_id.as_str())).collect();
//! assert_eq!(removed, [("AN-05".to_owned(), "prt_2")]);
//! # Ok::<(), turnkeeper::Error>(())
//! ```

use turnkeeper_model::opencode::Plan;
use turnkeeper_stores::opencode::write::{self, Applied, Undone};
use turnkeeper_stores::opencode::{Located, StoreKind};

use crate::stores::WriteError;

// The planning is pure and lives in `crate::opencode` (so a build without `stores` has it);
// it is named here too so that a doctor round reads from one module.
#[doc(no_inline)]
pub use crate::opencode::{
    DoctorPlan, NEXT_PROMPT, PLACEHOLDER_TEXT, PlanOptions, Repair, RepairKind, has_errors,
    next_turn_body, plan, plan_checked, simulate,
};

/// Checks a stored session the way its next request will be sent; findings map back to OpenCode
/// message and part ids (the doctor's name for [`crate::opencode::check_session`]).
pub use crate::opencode::check_session as check_stored;

/// Where a session is stored, for [`apply`] and [`undo`].
#[derive(Debug, Clone, Copy)]
pub enum StoreRef<'p> {
    /// A JSON-file tree: its `storage` directory.
    Json(&'p std::path::Path),
    /// A SQLite store: the database file.
    Sqlite(&'p std::path::Path),
}

impl<'p> From<&'p Located> for StoreRef<'p> {
    fn from(l: &'p Located) -> Self {
        match l.kind() {
            StoreKind::Sqlite => StoreRef::Sqlite(l.path()),
            _ => StoreRef::Json(l.path()),
        }
    }
}

/// Writes `plan` to the store: a backup of everything it touches and a manifest first, then
/// each change atomically; [`undo`] takes it back.
///
/// # Errors
/// The write layer's [`WriteError`].
pub fn apply(store: StoreRef<'_>, plan: &DoctorPlan) -> Result<Applied, WriteError> {
    tracing::info!(session = %plan.session_id, repairs = plan.repairs.len(), "doctor: applying repairs");
    apply_plan(store, &plan.to_write_plan())
}

/// Writes a part-level plan of one's own ([`crate::opencode::Plan`] of
/// [`crate::opencode::PartChange`]s) the way [`apply`] writes the doctor's: backup and manifest
/// first, each change atomic, undone by [`undo`].
///
/// # Errors
/// The write layer's [`WriteError`] (an unsafe id, a part that is not there, a store in use, a
/// file system or SQLite error).
pub fn apply_plan(store: StoreRef<'_>, plan: &Plan) -> Result<Applied, WriteError> {
    match store {
        StoreRef::Json(root) => write::apply_json(root, plan),
        StoreRef::Sqlite(db) => write::apply_sqlite(db, plan),
    }
}

/// Restores `session` as it was before its last repair.
///
/// # Errors
/// The write layer's [`WriteError`] ([`WriteError::NoBackup`] when there is nothing to undo).
pub fn undo(store: StoreRef<'_>, session: &str, force: bool) -> Result<Undone, WriteError> {
    tracing::info!(session, "doctor: undo");
    match store {
        StoreRef::Json(root) => write::undo_json(root, session, force),
        StoreRef::Sqlite(db) => write::undo_sqlite(db, session, force),
    }
}
