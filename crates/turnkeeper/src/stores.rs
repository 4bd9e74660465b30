//! The session stores agents keep on disk (feature `stores`, on by default): finding sessions,
//! reading them losslessly, and writing a repair safely.
//!
//! One module per agent: [`opencode`] (OpenCode's JSON tree and its SQLite database, Kilo's
//! `kilo.db`), [`claude_code`], [`codex`] and [`openclaw`]. What to change is decided by the
//! pure modules of the same names at the crate root ([`crate::opencode`], [`crate::claude_code`],
//! ...), which check a session and plan its repair; these modules find, load and write. Reading
//! never writes (a database is opened read-only, or read from a private copy when its write-ahead
//! log holds data). Every write keeps a backup and a manifest first, replaces files atomically,
//! and can be undone; [`InUse`] tells when the agent seems to be writing the session itself.
//!
//! Two error types: [`StoreError`] when a store cannot be found or read, [`WriteError`] when a
//! repair cannot be written or undone. (The turn store's own error is
//! [`crate::turns::TurnStoreError`].)
//!
//! ```
//! use turnkeeper::stores::opencode::{StoreKind, locate};
//!
//! // An OpenCode JSON-file store is a `storage` directory holding `session/`.
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir_all(dir.path().join("storage/session"))?;
//! let found = locate(Some(&dir.path().join("storage")))?;
//! assert_eq!(found.kind(), StoreKind::Json);
//! assert!(found.listing()?.sessions.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// Why a session store could not be found or read (a file system or SQLite error, a malformed
/// record, a session that is not there). Not [`crate::turns::TurnStoreError`], the turn store's.
pub use turnkeeper_stores::StoreError;
pub use turnkeeper_stores::write::{BACKUP_DIR, InUse, WriteError};

/// `2025-11-26 09:57`: epoch milliseconds as a UTC date and minute, the way session listings
/// show when a session was last changed.
///
/// ```
/// assert_eq!(turnkeeper::stores::utc_minute(1_764_151_020_000), "2025-11-26 09:57");
/// assert_eq!(turnkeeper::stores::utc_minute(-60_000), "1969-12-31 23:59");
/// ```
pub fn utc_minute(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = turnkeeper_stores::write::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem / 60 % 60
    )
}

pub mod opencode {
    //! OpenCode's stores: [`locate`] finds the store of a directory (a `storage` tree or a
    //! database) or of the default data directories; [`Located`] lists and loads its sessions
    //! ([`crate::opencode::Session`]). Repairs are written by [`crate::doctor`]; its backups are
    //! listed by [`list_backups`].

    pub use turnkeeper_stores::opencode::write::{
        Applied, Backup, Entry, EntryKind, MANIFEST, Manifest, Undone, in_use, list_backups,
    };
    pub use turnkeeper_stores::opencode::{
        JsonStore, Listing, Located, SessionSummary, SqliteStore, StoreKind, default_data_dirs,
        locate,
    };
    // The crash-test hook of the write layer: the facade's crash tests (tests/doctor_crash.rs)
    // kill a write after N steps through this variable, count the steps, and look for leftover
    // temporary files by this suffix. Not an API.
    #[doc(hidden)]
    pub use turnkeeper_stores::opencode::write::{CRASH_ENV, TMP_SUFFIX, crash_steps};
}

pub mod claude_code {
    //! Claude Code's sessions: [`projects_dir`] (`~/.claude/projects`, or `$CLAUDE_CONFIG_DIR`),
    //! [`list`], [`find`] and [`load`] a [`crate::claude_code::Session`]; [`apply`] writes a
    //! [`crate::claude_code::plan`]'s text over the file (backup and manifest first), [`undo`]
    //! puts the original bytes back; [`in_use`] tells whether Claude Code is writing it.

    pub use turnkeeper_stores::claude_code::{
        Applied, MANIFEST, Manifest, RECENT_SECONDS, SessionFile, apply, find, in_use, list, load,
        projects_dir, safe_session_id, undo,
    };
}

pub mod codex {
    //! Codex's rollouts: [`layout`] (`~/.codex`, or `$CODEX_HOME`), [`list`], [`find`] and
    //! [`load`] a [`crate::codex::Rollout`]; [`fork`] writes a [`crate::codex::plan`] as a new
    //! rollout beside the original (which stays), [`undo`] removes it; [`in_use`] tells whether
    //! Codex is writing the file.

    pub use turnkeeper_stores::codex::{
        Forked, Layout, RECENT_SECONDS, RolloutFile, find, fork, in_use, layout, list, load,
        rollout_file, safe_id, undo,
    };
    /// What [`undo`] did.
    pub use turnkeeper_stores::write::file::Undone;
}

pub mod openclaw {
    //! openclaw's sessions: [`session_dirs`] (`~/.openclaw/agents/*/sessions`), [`list`],
    //! [`find`] and [`load`] a [`crate::openclaw::Session`]; [`apply`] writes a
    //! [`crate::openclaw::plan`]'s text over the file (backup first), [`undo`] puts the original
    //! back; [`in_use`] tells whether openclaw is writing it.

    pub use turnkeeper_stores::openclaw::{
        Applied, RECENT_SECONDS, SessionFile, apply, find, in_use, list, load, safe_id,
        session_dirs, session_file, undo,
    };
}
