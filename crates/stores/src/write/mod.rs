//! The write layer every store shares: atomic writes confined to a root (temporary file, fsync,
//! rename, directory sync), the crash-test hook that counts write steps, in-use detection through
//! `/proc`, and [`file`](mod@file): replacing, creating and undoing whole session files with a backup and a
//! manifest (Claude Code, openclaw, Codex). OpenCode's part-level writes are in
//! [`crate::opencode::write`], on the same operations.
//!
//! Crash testing: when the environment variable [`CRASH_ENV`] holds a number N, the process
//! aborts (as `kill -9` would) at the N-th write step. The steps are counted by [`crash_steps`].

pub mod file;
pub(crate) mod fsops;
mod inuse;

use std::path::PathBuf;

pub use fsops::{CRASH_ENV, TMP_SUFFIX, civil_from_days, crash_steps};
pub use inuse::{InUse, in_use, in_use_by};

/// The directory, directly under the storage root, that holds every backup.
pub const BACKUP_DIR: &str = "turnkeeper-backup";

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
    #[error("unsafe id {id:?}: {reason}")]
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
