//! The session stores coding agents keep on disk, read losslessly and written safely.
//!
//! - [`opencode`]: OpenCode's (and Kilo's) stores: the JSON-file tree of OpenCode ≤ v1.1.65, the
//!   SQLite database of later versions (`opencode.db`, `opencode-<channel>.db`, Kilo's
//!   `kilo.db`), where to find them ([`opencode::locate`]), and the write layer that applies a
//!   part-level plan with a backup first and an undo ([`opencode::write`]).
//! - [`claude_code`]: Claude Code's `~/.claude/projects/*/*.jsonl` sessions: listing, loading,
//!   and replacing a session file through the shared write layer (backup, manifest, undo).
//! - [`write`](mod@write): the write layer every store shares: atomic writes, the crash-test hook, in-use
//!   detection, and whole session files replaced or created with a backup and an undo.
//!
//! Reading never writes: a database is opened read-only, and one with a write-ahead log is read
//! from a private copy, so the user's directory is byte-identical afterwards. What to change in
//! a session is decided elsewhere (`turnkeeper_prevent::opencode::doctor`); this crate only makes
//! the reads faithful and the writes atomic, backed up and undoable.
//!
//! The wire formats (OpenCode's messages and parts, the conversion to an Anthropic request) are
//! pure and live in `turnkeeper_model::opencode`; this crate adds the I/O around them, and is the
//! only one of the workspace that links SQLite.

pub mod claude_code;
pub mod codex;
pub mod openclaw;
pub mod opencode;
pub mod write;

pub use opencode::StoreError;
