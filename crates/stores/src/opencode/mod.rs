//! OpenCode's and Kilo's session stores: reading, locating, and writing in place.
//!
//! - [`JsonStore`]: the JSON-file tree of OpenCode ≤ v1.1.65 (`storage/{session,message,part}`).
//! - [`SqliteStore`]: the SQLite database of OpenCode ≥ v1.2.0 (`opencode.db`, or
//!   `opencode-<channel>.db`), and of Kilo, the OpenCode fork (`kilo.db`), opened read-only.
//! - [`locate`]: which store a directory (or the default data directory) holds.
//! - [`write`](mod@write): applying a part-level plan with a backup first, and undoing it.
//!
//! Both readers yield `turnkeeper_model::opencode::Session`, whose messages and parts keep their
//! exact stored bytes; damage confined to one file or row becomes a `Problem` in the session
//! instead of failing the load.
//!
//! ```no_run
//! use turnkeeper_model::opencode::{AnthropicOptions, to_anthropic_request};
//! use turnkeeper_stores::opencode::locate;
//! # fn main() -> Result<(), turnkeeper_stores::StoreError> {
//! let store = locate(None)?; // $XDG_DATA_HOME/opencode, else ~/.local/share/opencode (or kilo)
//! for s in store.listing()?.sessions {
//!     let session = store.load(&s.id)?;
//!     let request = to_anthropic_request(&session, None, &AnthropicOptions::default());
//!     println!("{}: {} bytes, {} notes", s.id, request.body.len(), request.notes.len());
//! }
//! # Ok(())
//! # }
//! ```

mod json;
mod locate;
mod sqlite;
pub mod write;

use std::path::PathBuf;

pub use json::JsonStore;
pub use locate::{Located, StoreKind, default_data_dirs, locate};
pub use sqlite::SqliteStore;
use turnkeeper_model::opencode::{OpencodeError, Problem};

/// A failure that stops a store operation as a whole.
///
/// Damage confined to one file or row is not an error: it becomes a `Problem` and the rest of
/// the session still loads.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Reading a file or directory failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path that could not be read.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The SQLite database could not be opened or queried.
    #[error("sqlite error on {path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: rusqlite::Error,
    },
    /// The database does not have the tables/columns of a known OpenCode schema.
    #[error("{path} is not a recognised OpenCode database: {reason}")]
    UnknownSchema {
        /// The database file.
        path: PathBuf,
        /// What is missing, and what the file seems to be instead.
        reason: String,
    },
    /// An id given by the caller cannot be used safely (path separators, `..`, absolute, empty).
    #[error("unsafe OpenCode id {id:?}: {reason}")]
    UnsafeId {
        /// The rejected id.
        id: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// No session with this id exists in the store.
    #[error("session {id:?} not found")]
    SessionNotFound {
        /// The id that was looked up.
        id: String,
    },
    /// The directory holds no store of the kind looked for.
    #[error("{}: no store here (looked for {looked_for})", dir.display())]
    NoStore {
        /// The directory searched.
        dir: PathBuf,
        /// What was looked for, in words.
        looked_for: String,
    },
    /// The directory holds several databases and none is the default one.
    #[error("{}: several databases ({}); name one with --storage", dir.display(), candidates.join(", "))]
    Ambiguous {
        /// The directory searched.
        dir: PathBuf,
        /// The database files found.
        candidates: Vec<String>,
    },
    /// No data directory was given and none can be derived from the environment.
    #[error("no store given and neither XDG_DATA_HOME nor HOME is set")]
    NoHome,
    /// A file that is not a Claude Code session (no line is a JSON object).
    #[error("{}: not a Claude Code session: {reason}", path.display())]
    NotClaudeCode {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A file that is not a session of the store it was read as (a Codex rollout, an openclaw
    /// transcript).
    #[error("{}: not a {store} session: {reason}", path.display())]
    NotSession {
        /// The store (`Codex`, `openclaw`).
        store: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// An exported session could not be read.
    #[error(transparent)]
    Export(#[from] OpencodeError),
}

/// One entry of a session listing.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    /// Session id.
    pub id: String,
    /// Title.
    pub title: String,
    /// `time.updated`, epoch milliseconds.
    pub updated: i64,
    /// Project id (the session file's directory, or the `project_id` column).
    pub project_id: String,
    /// Number of messages.
    pub messages: usize,
    /// Stored size in bytes: session, message and part files, or the `data` columns.
    pub size: u64,
}

/// A listing of sessions (newest first) and the problems met while listing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listing {
    /// Sessions, by `updated` descending.
    pub sessions: Vec<SessionSummary>,
    /// Problems; affected sessions were skipped.
    pub problems: Vec<Problem>,
}
