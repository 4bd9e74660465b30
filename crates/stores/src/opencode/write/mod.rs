//! The write side of OpenCode storage: applying part-level changes to a session in place, with a
//! backup first and an `undo`.
//!
//! A [`Plan`] is a list of [`PartChange`]s for one session: remove a part, replace a part's
//! stored text, or create a new part. [`apply_json`] and [`apply_sqlite`] write a plan to the
//! JSON-file tree or to `opencode.db`; [`undo_json`] and [`undo_sqlite`] put the session back as
//! it was before the last applied plan. Deciding *what* to change is not this module's business
//! (see `turnkeeper_prevent::opencode::doctor`); this module only makes the writes safe:
//!
//! - **Nothing lost.** Before anything changes, every affected file (or, for SQLite, the whole
//!   database through SQLite's online backup API) is copied under
//!   `<root>/turnkeeper-backup/<session>/<stamp>/`, and a manifest listing the created, changed
//!   and removed parts (with SHA-256 of the old and new bytes) is written last, atomically. A
//!   backup without a manifest is incomplete and ignored by `undo`; it can only exist when
//!   nothing was changed yet.
//! - **Atomic.** Every file write goes to a temporary file in the same directory
//!   (`.<name>.turnkeeper-tmp`, which OpenCode's `*.json` glob does not see), is flushed with
//!   `fsync`, renamed over the target, and the directory is synced. A run killed at any moment
//!   leaves each file either old or new. SQLite changes happen in one `BEGIN IMMEDIATE`
//!   transaction.
//! - **Confined.** Ids come from files a user does not control. Every id is checked with
//!   [`check_id`](turnkeeper_model::opencode::check_id), every path is resolved and must stay under the storage root,
//!   and a symlink out of the root is refused.
//! - **Checked.** The plan carries the exact text it was computed from; when a part changed on
//!   disk since, the apply is refused ([`WriteError::Conflict`]) before anything is written.
//!
//! [`in_use`] tells whether OpenCode seems to be running on the store (see its docs).
//!
//! The file operations themselves (atomic write, confinement, crash hook, in-use detection) are
//! the stores' shared write layer, [`crate::write`]; this module re-exports what it used to
//! define. Crash testing: when the environment variable [`CRASH_ENV`] holds a number N, the
//! process aborts (as `kill -9` would) at the N-th write step. The steps are counted by
//! [`crash_steps`].

mod json;
mod manifest;
mod sqlite;

use std::path::PathBuf;

pub(crate) use crate::write::fsops;
pub use crate::write::{
    BACKUP_DIR, CRASH_ENV, InUse, TMP_SUFFIX, WriteError, civil_from_days, crash_steps, in_use,
    in_use_by,
};
pub use json::{apply_json, undo_json};
pub use manifest::{Backup, Entry, EntryKind, MANIFEST, Manifest, list_backups};
pub use sqlite::{apply_sqlite, undo_sqlite};
pub use turnkeeper_model::opencode::change::{PartChange, Plan, mint_part_id, pretty_json};

/// What an apply did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The backup directory (holding the manifest).
    pub backup: PathBuf,
    /// The manifest written there.
    pub manifest: Manifest,
}

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    /// The backup that was restored.
    pub backup: PathBuf,
    /// Parts restored (changed or removed by the repair).
    pub restored: usize,
    /// Parts deleted (created by the repair).
    pub deleted: usize,
}
