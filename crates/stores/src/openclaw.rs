//! openclaw's sessions: `<state>/agents/<agent>/sessions/<uuid>.jsonl`, where `<state>` is
//! `$OPENCLAW_STATE_DIR`, else `~/.openclaw` (session-stores.md §5.1).
//!
//! Writing: [`apply`] replaces a session file atomically (never written over in place:
//! openclaw's own `doctor --fix` did, and left live transcripts empty, openclaw#127222), after
//! two backups: openclaw's own convention beside the file (`<file>.bak-<pid>-<ms>`, which
//! openclaw users know) and turnkeeper's, with a manifest, under
//! `<sessions>/turnkeeper-backup/<session>/<stamp>/` ([`crate::write::file`]). [`undo`] puts the
//! original back when the file is still what the repair wrote.

use std::fs;
use std::path::{Path, PathBuf};

use turnkeeper_model::openclaw::Session;

use crate::StoreError;
use crate::write::fsops::{io_err, sweep_tmp, write_atomic};
use crate::write::{InUse, WriteError, file, in_use_by};

/// The folders searched for sessions: `dir` (a state directory holding `agents/`, or a
/// sessions folder), else `$OPENCLAW_STATE_DIR`, else `~/.openclaw`.
///
/// # Errors
/// [`StoreError::NoHome`] when nothing is given and `HOME` is not set.
pub fn session_dirs(dir: Option<&Path>) -> Result<Vec<PathBuf>, StoreError> {
    let state = match dir {
        Some(d) if !d.join("agents").is_dir() => return Ok(vec![d.to_owned()]),
        Some(d) => d.to_owned(),
        None => match std::env::var_os("OPENCLAW_STATE_DIR").filter(|x| !x.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".openclaw"))
                .ok_or(StoreError::NoHome)?,
        },
    };
    let mut out = Vec::new();
    if let Ok(rd) = fs::read_dir(state.join("agents")) {
        for e in rd.flatten() {
            let s = e.path().join("sessions");
            if s.is_dir() {
                out.push(s);
            }
        }
    }
    out.sort();
    if out.is_empty() {
        out.push(state.join("agents/main/sessions"));
    }
    Ok(out)
}

/// One session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// The session id (the file's stem).
    pub id: String,
    /// The agent (the folder above `sessions/`).
    pub agent: String,
    /// The file.
    pub path: PathBuf,
    /// Its size.
    pub size: u64,
    /// Its modification time, epoch milliseconds.
    pub modified: i64,
}

/// True for an id turnkeeper builds a path from: a UUID's alphabet.
pub fn safe_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// Every session file in `dirs`, newest first (backups, resets and trajectories left out).
///
/// # Errors
/// [`StoreError::NoStore`] when none holds a session.
pub fn list(dirs: &[PathBuf]) -> Result<Vec<SessionFile>, StoreError> {
    let mut out = Vec::new();
    for d in dirs {
        let Ok(rd) = fs::read_dir(d) else { continue };
        for e in rd.flatten() {
            if let Some(f) = session_file(&e.path()) {
                out.push(f);
            }
        }
    }
    if out.is_empty() {
        return Err(StoreError::NoStore {
            dir: dirs.first().cloned().unwrap_or_default(),
            looked_for: "an openclaw session: <state>/agents/<agent>/sessions/<uuid>.jsonl"
                .to_owned(),
        });
    }
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.id.cmp(&b.id)));
    Ok(out)
}

/// The listing entry of a session file, `None` for anything else.
pub fn session_file(p: &Path) -> Option<SessionFile> {
    let name = p.file_name()?.to_string_lossy().into_owned();
    let id = name.strip_suffix(".jsonl")?.to_owned();
    if !safe_id(&id) || !p.is_file() {
        return None;
    }
    let meta = fs::metadata(p).ok()?;
    let agent = p
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    Some(SessionFile {
        id,
        agent,
        path: p.to_owned(),
        size: meta.len(),
        modified,
    })
}

/// The file of session `id`.
///
/// # Errors
/// [`StoreError::UnsafeId`], [`StoreError::SessionNotFound`].
pub fn find(dirs: &[PathBuf], id: &str) -> Result<SessionFile, StoreError> {
    if !safe_id(id) {
        return Err(StoreError::UnsafeId {
            id: id.to_owned(),
            reason: "an openclaw session id is a UUID",
        });
    }
    list(dirs)?
        .into_iter()
        .find(|s| s.id == id)
        .ok_or_else(|| StoreError::SessionNotFound { id: id.to_owned() })
}

/// Reads and parses a session file.
///
/// # Errors
/// [`StoreError::Io`], [`StoreError::NotSession`].
pub fn load(path: &Path) -> Result<Session, StoreError> {
    let bytes = fs::read(path).map_err(|source| StoreError::Io {
        path: path.to_owned(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| StoreError::Io {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
    })?;
    Session::parse(text, &path.display().to_string()).map_err(|e| StoreError::NotSession {
        store: "openclaw",
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

/// Seconds within which a change to the file means openclaw is probably writing it.
pub const RECENT_SECONDS: u64 = 120;

/// Is openclaw using the session? A process holding the file open, a process named
/// `openclaw` (the gateway), or a change within the last [`RECENT_SECONDS`].
///
/// # Errors
/// A message saying why nothing could be told.
pub fn in_use(file: &Path) -> Result<Option<InUse>, String> {
    if let Some(u) = in_use_by(
        &[file.to_owned()],
        &["openclaw", "openclaw-gateway"],
        "is an openclaw process",
    )? {
        return Ok(Some(u));
    }
    let age = fs::metadata(file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok());
    Ok(age.filter(|a| a.as_secs() < RECENT_SECONDS).map(|a| InUse {
        pid: 0,
        name: "openclaw".to_owned(),
        reason: format!("changed the file {}s ago", a.as_secs()),
    }))
}

/// What [`apply`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// turnkeeper's backup directory (manifest and original).
    pub backup: PathBuf,
    /// openclaw's backup beside the file (`<file>.bak-<pid>-<ms>`).
    pub openclaw_backup: PathBuf,
}

fn parts(file: &Path) -> Result<(PathBuf, PathBuf, String), WriteError> {
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = fs::canonicalize(dir).map_err(io_err(dir))?;
    let name = file.file_name().unwrap_or_default();
    let id = Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !safe_id(&id) {
        return Err(WriteError::UnsafeId {
            id,
            reason: "an openclaw session id is a UUID",
        });
    }
    Ok((dir.join(name), dir, id))
}

/// Replaces `file` (still `old`) with `new`: openclaw's backup beside it, turnkeeper's backup
/// and manifest, then the file, each written atomically.
///
/// # Errors
/// [`WriteError::Conflict`] when the file changed since it was read; I/O errors (the file is
/// then old or new, never a mix).
pub fn apply(file: &Path, old: &str, new: &str, changes: &[String]) -> Result<Applied, WriteError> {
    let (file, dir, id) = parts(file)?;
    // A temporary file a killed run left beside the session (never read: it is hidden and not
    // `.jsonl`), gone before anything is written.
    sweep_tmp(&dir);
    let current = fs::read(&file).map_err(io_err(&file))?;
    if current != old.as_bytes() {
        return Err(WriteError::Conflict {
            what: file.display().to_string(),
        });
    }
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let bak = dir.join(format!(
        "{}.bak-{}-{ms}",
        file.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    write_atomic(&bak, old.as_bytes())?;
    let done = file::replace(
        &dir,
        "openclaw",
        &id,
        &file,
        old.as_bytes(),
        new.as_bytes(),
        changes,
    )?;
    tracing::info!(file = %file.display(), backup = %done.backup.display(), "openclaw: repaired");
    Ok(Applied {
        backup: done.backup,
        openclaw_backup: bak,
    })
}

/// Puts back the original of the last repair of `file` not undone yet.
///
/// # Errors
/// [`WriteError::NoBackup`], [`WriteError::ChangedSinceRepair`] (unless `force`).
pub fn undo(file: &Path, force: bool) -> Result<PathBuf, WriteError> {
    let (file, dir, id) = parts(file)?;
    sweep_tmp(&dir);
    let done = file::undo(&dir, &id, Some(&file), force)?;
    Ok(done.backup)
}
