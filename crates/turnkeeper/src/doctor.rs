//! The OpenCode session doctor: plan the repairs of a stored session
//! ([`turnkeeper_prevent::opencode::doctor`], where each repair carries its rule id), and write
//! them in place through the stores crate's write layer ([`apply`]: backup first, every write
//! atomic) or take them back ([`undo`]).

use turnkeeper_stores::opencode::write::{self, Applied, Undone, WriteError};
use turnkeeper_stores::opencode::{Located, StoreKind};

pub use turnkeeper_prevent::opencode::doctor::{
    DoctorPlan, NEXT_PROMPT, PLACEHOLDER_TEXT, PlanOptions, Repair, RepairKind, has_errors,
    next_turn_body, plan, simulate,
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

/// Writes `plan` to the store (backup, manifest, atomic changes; see
/// [`turnkeeper_stores::opencode::write`]).
///
/// # Errors
/// The write layer's [`WriteError`].
pub fn apply(store: StoreRef<'_>, plan: &DoctorPlan) -> Result<Applied, WriteError> {
    let p = plan.to_write_plan();
    tracing::info!(session = %plan.session_id, repairs = plan.repairs.len(), "doctor: applying repairs");
    match store {
        StoreRef::Json(root) => write::apply_json(root, &p),
        StoreRef::Sqlite(db) => write::apply_sqlite(db, &p),
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
