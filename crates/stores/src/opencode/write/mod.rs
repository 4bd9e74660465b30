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
//! Crash testing: when the environment variable [`CRASH_ENV`] holds a number N, the process
//! aborts (as `kill -9` would) at the N-th write step. The steps are counted by [`crash_steps`].

pub(crate) mod fsops;
mod inuse;
mod json;
mod manifest;
mod sqlite;

use std::path::PathBuf;

pub use fsops::{CRASH_ENV, TMP_SUFFIX, civil_from_days, crash_steps};
pub use inuse::{InUse, in_use, in_use_by};
pub use json::{apply_json, undo_json};
pub use manifest::{Backup, Entry, EntryKind, MANIFEST, Manifest, list_backups};
pub use sqlite::{apply_sqlite, undo_sqlite};
pub use turnkeeper_model::opencode::change::{PartChange, Plan, mint_part_id, pretty_json};

/// The directory, directly under the storage root, that holds every backup.
pub const BACKUP_DIR: &str = "turnkeeper-backup";

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

/// Why a write could not be done. Nothing was changed unless the variant says otherwise.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A SQLite operation failed (a transaction is rolled back by SQLite).
    #[error("sqlite error on {path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: rusqlite::Error,
    },
    /// An id that cannot name a file safely.
    #[error("unsafe OpenCode id {id:?}: {reason}")]
    UnsafeId {
        /// The id.
        id: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A path resolves outside the storage root (through `..` or a symlink).
    #[error("{path} resolves outside the storage root; refusing to write")]
    OutsideRoot {
        /// The path.
        path: PathBuf,
    },
    /// The stored part is not what the plan was computed from (OpenCode or someone else wrote
    /// it in the meantime), or a part to create already exists.
    #[error("{what} changed on disk since it was read; nothing was written, run again")]
    Conflict {
        /// The file or row.
        what: String,
    },
    /// The database does not have the tables and columns this writer knows.
    #[error("{path}: not a recognised OpenCode database ({reason}); refusing to write")]
    UnknownSchema {
        /// The database.
        path: PathBuf,
        /// What is missing.
        reason: String,
    },
    /// A backup manifest could not be read.
    #[error("{path}: unreadable backup manifest: {detail}")]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// There is no complete backup of this session to undo.
    #[error("no backup of session {session} to undo")]
    NoBackup {
        /// The session.
        session: String,
    },
    /// A file changed since the repair wrote it; undoing would lose that change.
    #[error("{what} changed after the repair; undo would lose that change (use --force)")]
    ChangedSinceRepair {
        /// The file or row.
        what: String,
    },
}
