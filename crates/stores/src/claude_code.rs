//! Claude Code's session store: `<config>/projects/<encoded-cwd>/<session-uuid>.jsonl`, where
//! `<config>` is `$CLAUDE_CONFIG_DIR`, else `~/.claude` (session-stores.md §4.1).
//!
//! Reading: [`projects_dir`], [`list`], [`find`] and [`load`] (the text, parsed by
//! `turnkeeper_model::claude_code::Session`). Sub-agent transcripts
//! (`<session>/subagents/agent-*.jsonl`) are not sessions of their own and are not listed.
//!
//! Writing: [`apply`] replaces a session file with a repaired text through the stores' shared
//! write layer's atomic write ([`crate::write::file`]) (temporary file, fsync, rename, directory sync; crash steps counted for
//! the crash test), after copying the original under
//! `<project>/turnkeeper-backup/<session>/<stamp>/` with a manifest (SHA-256 of the old and new
//! bytes) written last; [`undo`] puts the original back when the file is still what the repair
//! wrote. [`in_use`] tells whether Claude Code seems to be running on the session.

use std::fs;
use std::path::{Path, PathBuf};

use turnkeeper_model::claude_code::Session;

use crate::StoreError;
use crate::write::fsops::io_err;
use crate::write::{InUse, WriteError, file, in_use_by};

pub use crate::write::file::MANIFEST;

/// The projects directory: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`; `config`
/// overrides both (a config directory holding `projects/`, else the directory itself: the
/// projects directory, or one project's).
///
/// # Errors
/// [`StoreError::NoHome`] when nothing is given and `HOME` is not set.
pub fn projects_dir(config: Option<&Path>) -> Result<PathBuf, StoreError> {
    let base = match config {
        // A config directory (holding `projects/`), or the projects directory or one project
        // directory itself.
        Some(p) if p.join("projects").is_dir() => p.to_owned(),
        Some(p) => return Ok(p.to_owned()),
        None => match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|x| !x.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".claude"))
                .ok_or(StoreError::NoHome)?,
        },
    };
    Ok(base.join("projects"))
}

/// One session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// The session id (the file's stem).
    pub id: String,
    /// The project directory's name (the encoded working directory).
    pub project: String,
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time, epoch milliseconds.
    pub modified: i64,
}

/// True for a session id turnkeeper will build a path from: the UUID alphabet only, after the
/// `agent-` of a sub-agent's transcript (`<session>/subagents/agent-<hex>.jsonl`).
pub fn safe_session_id(id: &str) -> bool {
    let rest = id.strip_prefix("agent-").unwrap_or(id);
    !rest.is_empty() && id.len() <= 64 && rest.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// Every session file under `projects` (a project directory is also accepted), newest first.
///
/// # Errors
/// [`StoreError::NoStore`] when the directory does not exist or holds no session file.
pub fn list(projects: &Path) -> Result<Vec<SessionFile>, StoreError> {
    let no_store = || StoreError::NoStore {
        dir: projects.to_owned(),
        looked_for: "a Claude Code session: <projects>/<project>/<session-uuid>.jsonl".to_owned(),
    };
    let entries = fs::read_dir(projects).map_err(|_| no_store())?;
    let mut dirs = Vec::new();
    let mut out = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            dirs.push(p);
        } else {
            push_session(&p, projects, &mut out);
        }
    }
    for d in dirs {
        if let Ok(rd) = fs::read_dir(&d) {
            for e in rd.flatten() {
                push_session(&e.path(), &d, &mut out);
            }
        }
    }
    if out.is_empty() {
        return Err(no_store());
    }
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.id.cmp(&b.id)));
    Ok(out)
}

fn push_session(p: &Path, project: &Path, out: &mut Vec<SessionFile>) {
    if p.extension().is_none_or(|x| x != "jsonl") || !p.is_file() {
        return;
    }
    let Some(id) = p.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
        return;
    };
    if !safe_session_id(&id) {
        return;
    }
    let Ok(meta) = fs::metadata(p) else {
        return;
    };
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    out.push(SessionFile {
        id,
        project: project
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        path: p.to_owned(),
        size: meta.len(),
        modified,
    });
}

/// The file of session `id` under `projects`.
///
/// # Errors
/// [`StoreError::UnsafeId`] for an id outside the UUID alphabet (never joined to a path),
/// [`StoreError::SessionNotFound`] when no project holds it.
pub fn find(projects: &Path, id: &str) -> Result<SessionFile, StoreError> {
    if !safe_session_id(id) {
        return Err(StoreError::UnsafeId {
            id: id.to_owned(),
            reason: "a Claude Code session id is a UUID (a sub-agent's: agent-<hex>)",
        });
    }
    list(projects)?
        .into_iter()
        .find(|s| s.id == id)
        .ok_or_else(|| StoreError::SessionNotFound { id: id.to_owned() })
}

/// Reads and parses a session file.
///
/// # Errors
/// [`StoreError::Io`] when it cannot be read or is not UTF-8; [`StoreError::NotClaudeCode`]
/// when no line is a JSON object.
pub fn load(path: &Path) -> Result<Session, StoreError> {
    let bytes = fs::read(path).map_err(|source| StoreError::Io {
        path: path.to_owned(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| StoreError::Io {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
    })?;
    Session::parse(text, &path.display().to_string()).map_err(|e| StoreError::NotClaudeCode {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

/// Seconds within which a change to the file means Claude Code is probably still writing it.
pub const RECENT_SECONDS: u64 = 120;

/// Is Claude Code using the session? A process holding the file open, a process named
/// `claude`, or a change within the last [`RECENT_SECONDS`] (Claude Code appends a line at a
/// time and closes the file in between).
///
/// # Errors
/// A message saying why nothing could be told.
pub fn in_use(file: &Path) -> Result<Option<InUse>, String> {
    if let Some(u) = in_use_by(&[file.to_owned()], &["claude"], "is a Claude Code process")? {
        return Ok(Some(u));
    }
    let age = fs::metadata(file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok());
    Ok(age.filter(|a| a.as_secs() < RECENT_SECONDS).map(|a| InUse {
        pid: 0,
        name: "claude".to_owned(),
        reason: format!("changed the file {}s ago", a.as_secs()),
    }))
}

pub use crate::write::file::Manifest;

/// What [`apply`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The backup directory.
    pub backup: PathBuf,
}

/// Replaces `file` (whose bytes must still be `old`) with `new`, after backing `old` up with a
/// manifest listing `changes` (the shared whole-file write, [`crate::write::file::replace`]).
///
/// # Errors
/// [`WriteError::Conflict`] when the file changed since it was read; I/O errors (then the file
/// is unchanged, or already fully new: the rename is the only step that changes it).
pub fn apply(file: &Path, old: &str, new: &str, changes: &[String]) -> Result<Applied, WriteError> {
    let (dir, _, session) = parts(file)?;
    let file = dir.join(file.file_name().unwrap_or_default());
    let done = file::replace(
        &dir,
        "claude-code",
        &session,
        &file,
        old.as_bytes(),
        new.as_bytes(),
        changes,
    )?;
    tracing::info!(file = %file.display(), backup = %done.backup.display(), "claude-code: repaired");
    Ok(Applied {
        backup: done.backup,
    })
}

/// Puts back the original of the last repair of `file` that is not undone yet. Refused when the
/// file is no longer what the repair wrote (Claude Code appended since), unless `force`.
///
/// # Errors
/// [`WriteError::NoBackup`] when there is nothing to undo; [`WriteError::Conflict`] as above.
pub fn undo(file: &Path, force: bool) -> Result<PathBuf, WriteError> {
    let (dir, _, session) = parts(file)?;
    let file = dir.join(file.file_name().unwrap_or_default());
    let done = file::undo(&dir, &session, Some(&file), force)?;
    tracing::info!(file = %file.display(), backup = %done.backup.display(), "claude-code: undone");
    Ok(done.backup)
}

/// The file's directory (resolved: the backup is confined to it, which compares resolved
/// paths, so a relative `--file` or one under a symbolic link works), name and session id (its
/// stem, which must be a safe id).
fn parts(file: &Path) -> Result<(PathBuf, String, String), WriteError> {
    let dir = file
        .parent()
        .map(|d| {
            if d.as_os_str().is_empty() {
                Path::new(".")
            } else {
                d
            }
        })
        .ok_or_else(|| WriteError::OutsideRoot {
            path: file.to_owned(),
        })?;
    let dir = fs::canonicalize(dir).map_err(io_err(dir))?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let session = file
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !safe_session_id(&session) {
        return Err(WriteError::UnsafeId {
            id: session,
            reason: "a Claude Code session id is a UUID (a sub-agent's: agent-<hex>)",
        });
    }
    Ok((dir, name, session))
}
