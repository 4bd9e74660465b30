//! The backup manifest: what a repair created, changed and removed.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fsops::{confined, create_dirs, safe_id, stamp_now, write_atomic};
use super::{BACKUP_DIR, WriteError};

/// The manifest's file name inside a backup directory. Its presence means the backup is
/// complete; after an undo it is renamed to `manifest.undone.json`.
pub const MANIFEST: &str = "manifest.json";

/// The manifest's name once the backup has been restored by an undo.
pub(crate) const UNDONE: &str = "manifest.undone.json";

/// What a repair did to one part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A new part.
    Created,
    /// A part whose stored text was replaced.
    Changed,
    /// A part that was deleted.
    Removed,
}

/// One part touched by a repair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// What was done.
    pub kind: EntryKind,
    /// The message id.
    pub message_id: String,
    /// The part id.
    pub part_id: String,
    /// JSON store: the part file relative to the storage root (`part/<msg>/<prt>.json`); the
    /// old bytes are kept at `files/<path>` in the backup directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// SHA-256 of the old bytes (changed, removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256_old: Option<String>,
    /// SHA-256 of the new bytes (created, changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256_new: Option<String>,
}

/// A backup manifest (`manifest.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Manifest format version (1).
    pub format: u32,
    /// The tool and version that wrote it.
    pub tool: String,
    /// `json` or `sqlite`.
    pub store: String,
    /// The session.
    pub session: String,
    /// When (UTC, also the directory name).
    pub stamp: String,
    /// SQLite: the backup copy of the database, relative to the backup directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// The parts touched, in the order they were changed.
    pub entries: Vec<Entry>,
}

impl Manifest {
    /// The manifest (format 1, written by this version of turnkeeper) of a backup of `session`
    /// in a `store` (`json` or `sqlite`).
    pub fn new(
        store: &str,
        session: &str,
        stamp: String,
        database: Option<String>,
        entries: Vec<Entry>,
    ) -> Manifest {
        Manifest {
            format: 1,
            tool: format!("turnkeeper {}", env!("CARGO_PKG_VERSION")),
            store: store.to_owned(),
            session: session.to_owned(),
            stamp,
            database,
            entries,
        }
    }
}

/// One backup of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backup {
    /// The backup directory.
    pub dir: PathBuf,
    /// The directory name (a UTC time stamp).
    pub stamp: String,
    /// The manifest; `None` for an incomplete backup (a run stopped before changing anything).
    pub manifest: Option<Manifest>,
    /// True once an undo restored it.
    pub undone: bool,
}

/// Creates a fresh backup directory for `session` under `root`.
pub(crate) fn new_backup_dir(root: &Path, session: &str) -> Result<(PathBuf, String), WriteError> {
    safe_id(session)?;
    let base = Path::new(BACKUP_DIR).join(session);
    let first = stamp_now();
    let mut stamp = first.clone();
    let mut n = 1;
    while root.join(&base).join(&stamp).exists() {
        n += 1;
        stamp = format!("{first}-{n}");
    }
    let dir = create_dirs(root, &base.join(&stamp))?;
    Ok((dir, stamp))
}

/// Writes the manifest atomically: from this moment the backup is complete.
pub(crate) fn write_manifest(dir: &Path, m: &Manifest) -> Result<(), WriteError> {
    let text = serde_json::to_string_pretty(m).map_err(|e| WriteError::Manifest {
        path: dir.join(MANIFEST),
        detail: e.to_string(),
    })?;
    write_atomic(&dir.join(MANIFEST), text.as_bytes())
}

/// Lists the backups of `session` under the storage root `root`, oldest first.
///
/// # Errors
/// [`WriteError::UnsafeId`] for an unsafe session id; [`WriteError::Io`] when the backup
/// directory cannot be read.
pub fn list_backups(root: &Path, session: &str) -> Result<Vec<Backup>, WriteError> {
    safe_id(session)?;
    let root = fs::canonicalize(root).map_err(super::fsops::io_err(root))?;
    let base = Path::new(BACKUP_DIR).join(session);
    let dir = confined(&root, &base)?;
    let mut out = Vec::new();
    let entries = match fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(super::fsops::io_err(&dir)(e)),
    };
    for e in entries.flatten() {
        let Ok(stamp) = e.file_name().into_string() else {
            continue;
        };
        let Ok(bdir) = confined(&root, &base.join(&stamp)) else {
            continue;
        };
        if !bdir.is_dir() {
            continue;
        }
        let (file, undone) = if bdir.join(MANIFEST).is_file() {
            (bdir.join(MANIFEST), false)
        } else {
            (bdir.join(UNDONE), true)
        };
        let manifest = match fs::read(&file) {
            Ok(bytes) => Some(serde_json::from_slice::<Manifest>(&bytes).map_err(|e| {
                WriteError::Manifest {
                    path: file.clone(),
                    detail: e.to_string(),
                }
            })?),
            Err(_) => None,
        };
        out.push(Backup {
            dir: bdir,
            stamp,
            undone: undone && manifest.is_some(),
            manifest,
        });
    }
    out.sort_by(|a, b| a.stamp.cmp(&b.stamp));
    Ok(out)
}

/// The newest complete backup not yet undone.
pub(crate) fn latest(root: &Path, session: &str) -> Result<Backup, WriteError> {
    list_backups(root, session)?
        .into_iter()
        .rev()
        .find(|b| b.manifest.is_some() && !b.undone)
        .ok_or_else(|| WriteError::NoBackup {
            session: session.to_owned(),
        })
}

/// Marks a backup as restored (renames its manifest, atomically).
pub(crate) fn mark_undone(dir: &Path) -> Result<(), WriteError> {
    fs::rename(dir.join(MANIFEST), dir.join(UNDONE))
        .map_err(super::fsops::io_err(&dir.join(MANIFEST)))?;
    super::fsops::step();
    super::fsops::sync_dir(dir)
}
