//! Whole session files: replacing one with a backup first, creating a new one beside it, and
//! undoing either, for the stores that keep a session in one file (Claude Code, openclaw, Codex).
//!
//! Every backup lives in `<root>/turnkeeper-backup/<session>/<stamp>/`: `original.jsonl` (the
//! bytes replaced, when a file was replaced) and `manifest.json`, written last and atomically;
//! a backup without its manifest is incomplete and ignored by an undo (it can exist only when
//! nothing was changed yet). The file itself is written atomically (a temporary file renamed over it): a run
//! killed at any step leaves it with its old bytes or its new ones, never a mix.
//!
//! The manifest keeps the shape the Claude Code doctor has always written (`session`, `file`,
//! `old_sha256`, `new_sha256`, `changes`, `undone`); `created` and `store` are added with
//! defaults, so older backups still undo.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fsops::{create_dirs, io_err, remove_durable, sha256, stamp_now, step, write_atomic};
use super::{BACKUP_DIR, WriteError};

/// The manifest's file name in a backup directory.
pub const MANIFEST: &str = "manifest.json";

/// The manifest of one repair of a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The session id.
    pub session: String,
    /// The file: its name in its directory when it was replaced; when the repair created it, its
    /// path relative to the backup root.
    pub file: String,
    /// The store (`claude-code`, `openclaw`, `codex`); absent in older manifests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// True when the repair created `file` (a new file beside the original, which it left
    /// alone): undo removes it.
    #[serde(default)]
    pub created: bool,
    /// SHA-256 of the original bytes (kept in the backup as `original.jsonl`); empty when the
    /// repair created the file.
    pub old_sha256: String,
    /// SHA-256 of the bytes the repair wrote.
    pub new_sha256: String,
    /// What the repair did, one line a change.
    pub changes: Vec<String>,
    /// True once undone.
    #[serde(default)]
    pub undone: bool,
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The backup directory (holding the manifest).
    pub backup: PathBuf,
}

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    /// The backup directory of the repair undone.
    pub backup: PathBuf,
    /// The file put back (a replaced file) or removed (a created one).
    pub file: PathBuf,
    /// True when the file was removed (the repair had created it).
    pub removed: bool,
}

/// Replaces `file` (whose bytes must still be `old`) with `new`, after backing `old` up under
/// `root` (a canonical directory) with a manifest listing `changes`.
///
/// # Errors
/// [`WriteError::Conflict`] when the file changed since it was read; I/O errors (then the file
/// is unchanged, or already fully new: the rename is the only step that changes it).
pub fn replace(
    root: &Path,
    store: &str,
    session: &str,
    file: &Path,
    old: &[u8],
    new: &[u8],
    changes: &[String],
) -> Result<Applied, WriteError> {
    let current = fs::read(file).map_err(io_err(file))?;
    if current != old {
        return Err(WriteError::Conflict {
            what: file.display().to_string(),
        });
    }
    let backup = new_backup(root, session)?;
    write_atomic(&backup.join("original.jsonl"), old)?;
    let manifest = Manifest {
        session: session.to_owned(),
        file: file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        store: Some(store.to_owned()),
        created: false,
        old_sha256: sha256(old),
        new_sha256: sha256(new),
        changes: changes.to_vec(),
        undone: false,
    };
    write_manifest(&backup, &manifest)?;
    step();
    write_atomic(file, new)?;
    Ok(Applied { backup })
}

/// Creates `file` (which must not exist; its directory is created under `root`) holding `new`,
/// after writing a manifest under `root` that names it, so that [`undo`] can remove it.
/// `rel` is `file` relative to `root`.
///
/// # Errors
/// [`WriteError::Conflict`] when `file` exists; I/O errors (then the file does not exist, or
/// holds all of `new`).
pub fn create(
    root: &Path,
    store: &str,
    session: &str,
    rel: &Path,
    new: &[u8],
    changes: &[String],
) -> Result<(Applied, PathBuf), WriteError> {
    let dir = rel.parent().unwrap_or(Path::new(""));
    let dir = create_dirs(root, dir)?;
    let name = rel.file_name().ok_or_else(|| WriteError::OutsideRoot {
        path: root.join(rel),
    })?;
    let file = dir.join(name);
    if file.exists() {
        return Err(WriteError::Conflict {
            what: file.display().to_string(),
        });
    }
    let backup = new_backup(root, session)?;
    let manifest = Manifest {
        session: session.to_owned(),
        file: rel.to_string_lossy().into_owned(),
        store: Some(store.to_owned()),
        created: true,
        old_sha256: String::new(),
        new_sha256: sha256(new),
        changes: changes.to_vec(),
        undone: false,
    };
    write_manifest(&backup, &manifest)?;
    step();
    write_atomic(&file, new)?;
    Ok((Applied { backup }, file))
}

/// Undoes the last repair of `session` under `root` not undone yet: puts the original bytes
/// back into `file` (a replaced file; `file` is where it is now), or removes the file the repair
/// created. Refused when that file is no longer what the repair wrote, unless `force`.
///
/// # Errors
/// [`WriteError::NoBackup`] when there is nothing to undo;
/// [`WriteError::ChangedSinceRepair`] as above; [`WriteError::Manifest`] when the backup does
/// not match its manifest.
pub fn undo(
    root: &Path,
    session: &str,
    file: Option<&Path>,
    force: bool,
) -> Result<Undone, WriteError> {
    let dir = root.join(BACKUP_DIR).join(session);
    let mut stamps: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    stamps.sort();
    let Some((backup, mut manifest)) = stamps.into_iter().rev().find_map(|b| {
        let m: Manifest = serde_json::from_slice(&fs::read(b.join(MANIFEST)).ok()?).ok()?;
        (!m.undone).then_some((b, m))
    }) else {
        return Err(WriteError::NoBackup {
            session: session.to_owned(),
        });
    };
    if manifest.created {
        let target = super::fsops::confined(root, Path::new(&manifest.file))?;
        match fs::read(&target) {
            Ok(current) => {
                if sha256(&current) != manifest.new_sha256 && !force {
                    return Err(WriteError::ChangedSinceRepair {
                        what: target.display().to_string(),
                    });
                }
                remove_durable(&target)?;
            }
            // A run killed between its manifest and its file: nothing to remove.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&target)(e)),
        }
        manifest.undone = true;
        write_manifest(&backup, &manifest)?;
        return Ok(Undone {
            backup,
            file: target,
            removed: true,
        });
    }
    let file = file.ok_or_else(|| WriteError::Manifest {
        path: backup.join(MANIFEST),
        detail: "the repair replaced a file, and no file was named to put it back into".to_owned(),
    })?;
    let current = fs::read(file).map_err(io_err(file))?;
    if sha256(&current) == manifest.old_sha256 {
        // A run killed between its manifest and its rename: the file still holds the original.
        // Nothing to put back; the backup is closed so that no later undo (with `--force`)
        // restores its now stale original over a file that has moved on.
        manifest.undone = true;
        write_manifest(&backup, &manifest)?;
        return Ok(Undone {
            backup,
            file: file.to_owned(),
            removed: false,
        });
    }
    if sha256(&current) != manifest.new_sha256 && !force {
        return Err(WriteError::ChangedSinceRepair {
            what: file.display().to_string(),
        });
    }
    let original = fs::read(backup.join("original.jsonl")).map_err(io_err(&backup))?;
    if sha256(&original) != manifest.old_sha256 {
        return Err(WriteError::Manifest {
            path: backup.join(MANIFEST),
            detail: "original.jsonl does not match the manifest".to_owned(),
        });
    }
    write_atomic(file, &original)?;
    manifest.undone = true;
    write_manifest(&backup, &manifest)?;
    Ok(Undone {
        backup,
        file: file.to_owned(),
        removed: false,
    })
}

/// The repairs of `session` under `root` not undone yet, oldest first, with their backup
/// directories.
pub fn pending(root: &Path, session: &str) -> Vec<(PathBuf, Manifest)> {
    let dir = root.join(BACKUP_DIR).join(session);
    let mut stamps: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    stamps.sort();
    stamps
        .into_iter()
        .filter_map(|b| {
            let m: Manifest = serde_json::from_slice(&fs::read(b.join(MANIFEST)).ok()?).ok()?;
            (!m.undone).then_some((b, m))
        })
        .collect()
}

/// A fresh backup directory for `session` under `root`.
fn new_backup(root: &Path, session: &str) -> Result<PathBuf, WriteError> {
    let base = Path::new(BACKUP_DIR).join(session);
    let first = stamp_now();
    let mut stamp = first.clone();
    let mut n = 1;
    while root.join(&base).join(&stamp).exists() {
        n += 1;
        stamp = format!("{first}-{n}");
    }
    create_dirs(root, &base.join(stamp))
}

fn write_manifest(dir: &Path, m: &Manifest) -> Result<(), WriteError> {
    let text = serde_json::to_string_pretty(m).map_err(|e| WriteError::Manifest {
        path: dir.join(MANIFEST),
        detail: e.to_string(),
    })?;
    write_atomic(&dir.join(MANIFEST), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_and_create_undo_to_the_same_bytes() -> Result<(), Box<dyn std::error::Error>> {
        let dir = std::env::temp_dir().join(format!("tk-file-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir)?;
        let root = fs::canonicalize(&dir)?;
        let f = root.join("s.jsonl");
        fs::write(&f, b"old\n")?;
        replace(&root, "test", "s", &f, b"old\n", b"new\n", &["x".into()])?;
        assert_eq!(fs::read(&f)?, b"new\n");
        let u = undo(&root, "s", Some(&f), false)?;
        assert!(!u.removed);
        assert_eq!(fs::read(&f)?, b"old\n");
        assert!(matches!(
            undo(&root, "s", Some(&f), false),
            Err(WriteError::NoBackup { .. })
        ));
        let (_, made) = create(&root, "test", "s", Path::new("a/b/n.jsonl"), b"n\n", &[])?;
        assert_eq!(fs::read(&made)?, b"n\n");
        assert!(create(&root, "test", "s", Path::new("a/b/n.jsonl"), b"n\n", &[]).is_err());
        fs::write(&made, b"n\nappended\n")?;
        assert!(matches!(
            undo(&root, "s", None, false),
            Err(WriteError::ChangedSinceRepair { .. })
        ));
        let u = undo(&root, "s", None, true)?;
        assert!(u.removed && !made.exists());
        assert_eq!(fs::read(&f)?, b"old\n");
        fs::remove_dir_all(&dir)?;
        Ok(())
    }

    #[test]
    fn a_backup_whose_file_was_never_replaced_is_closed_by_undo()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = std::env::temp_dir().join(format!("tk-file-stale-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir)?;
        let root = fs::canonicalize(&dir)?;
        let f = root.join("s.jsonl");
        fs::write(&f, b"old\n")?;
        replace(&root, "test", "s", &f, b"old\n", b"new\n", &["x".into()])?;
        // As if killed before the rename: the manifest is there, the file still the original.
        fs::write(&f, b"old\n")?;
        let u = undo(&root, "s", Some(&f), false)?;
        assert!(!u.removed);
        assert_eq!(fs::read(&f)?, b"old\n");
        assert!(pending(&root, "s").is_empty());
        // The file moves on; a forced undo finds nothing stale to put back over it.
        fs::write(&f, b"later\n")?;
        assert!(matches!(
            undo(&root, "s", Some(&f), true),
            Err(WriteError::NoBackup { .. })
        ));
        assert_eq!(fs::read(&f)?, b"later\n");
        fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
