//! Applying a plan to the JSON-file tree, and undoing it.

use std::fs;
use std::path::{Path, PathBuf};

use super::fsops::{
    confined, create_dirs, io_err, read_opt, remove_durable, safe_id, sha256, sweep_tmp,
    write_atomic,
};
use super::manifest::{
    Entry, EntryKind, Manifest, latest, mark_undone, new_backup_dir, write_manifest,
};
use super::{Applied, PartChange, Plan, Undone, WriteError};
use turnkeeper_model::opencode::change::pretty_json;

/// One change resolved to a file.
struct Item<'p> {
    change: &'p PartChange,
    rel: PathBuf,
    path: PathBuf,
    old: Option<Vec<u8>>,
    new: Option<Vec<u8>>,
}

fn rel_part(message_id: &str, part_id: &str) -> Result<PathBuf, WriteError> {
    safe_id(message_id)?;
    safe_id(part_id)?;
    Ok(Path::new("part")
        .join(message_id)
        .join(format!("{part_id}.json")))
}

fn rel_str(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Applies `plan` to the JSON store whose `storage` directory is `root`: verifies every part
/// is still as the plan saw it, backs up the affected files and writes the manifest, then
/// makes each change atomically (see the [module docs](super)).
///
/// # Errors
/// [`WriteError::UnsafeId`], [`WriteError::OutsideRoot`], [`WriteError::Conflict`] before
/// anything is written; [`WriteError::Io`] at any step (files already replaced are complete,
/// and `undo` restores them).
pub fn apply_json(root: &Path, plan: &Plan) -> Result<Applied, WriteError> {
    let root = fs::canonicalize(root).map_err(io_err(root))?;
    safe_id(&plan.session_id)?;
    let mut items = Vec::new();
    for change in &plan.changes {
        let rel = rel_part(change.message_id(), change.part_id())?;
        let path = confined(&root, &rel)?;
        let current = read_opt(&path)?;
        let conflict = || WriteError::Conflict {
            what: path.display().to_string(),
        };
        let (old, new) = match change {
            PartChange::Remove { old_raw, .. } => {
                if current.as_deref() != Some(old_raw.as_bytes()) {
                    return Err(conflict());
                }
                (current, None)
            }
            PartChange::Replace {
                old_raw, new_raw, ..
            } => {
                if current.as_deref() != Some(old_raw.as_bytes()) {
                    return Err(conflict());
                }
                (current, Some(new_raw.clone().into_bytes()))
            }
            PartChange::Create { json, .. } => {
                if current.is_some() {
                    return Err(conflict());
                }
                (None, Some(pretty_json(json, 0).into_bytes()))
            }
        };
        items.push(Item {
            change,
            rel,
            path,
            old,
            new,
        });
    }
    // Parts of a message share a directory: sweep each directory once.
    let dirs: std::collections::BTreeSet<&Path> =
        items.iter().filter_map(|it| it.path.parent()).collect();
    for dir in dirs {
        sweep_tmp(dir);
    }

    // 1. Backup: the old bytes, then the manifest (the commit point of the backup).
    let (bdir, stamp) = new_backup_dir(&root, &plan.session_id)?;
    let brel = bdir.strip_prefix(&root).unwrap_or(&bdir).to_owned();
    let mut entries = Vec::new();
    for it in &items {
        if let Some(old) = &it.old {
            let target = brel.join("files").join(&it.rel);
            if let Some(parent) = target.parent() {
                create_dirs(&root, parent)?;
            }
            write_atomic(&confined(&root, &target)?, old)?;
        }
        entries.push(Entry {
            kind: match it.change {
                PartChange::Remove { .. } => EntryKind::Removed,
                PartChange::Replace { .. } => EntryKind::Changed,
                PartChange::Create { .. } => EntryKind::Created,
            },
            message_id: it.change.message_id().to_owned(),
            part_id: it.change.part_id().to_owned(),
            path: Some(rel_str(&it.rel)),
            sha256_old: it.old.as_deref().map(sha256),
            sha256_new: it.new.as_deref().map(sha256),
        });
    }
    let manifest = Manifest::new("json", &plan.session_id, stamp, None, entries);
    write_manifest(&bdir, &manifest)?;

    // 2. The changes, each atomic.
    for it in &items {
        match &it.new {
            Some(bytes) => {
                if let Some(parent) = it.rel.parent() {
                    create_dirs(&root, parent)?;
                }
                write_atomic(&it.path, bytes)?;
            }
            None => remove_durable(&it.path)?,
        }
    }
    Ok(Applied {
        backup: bdir,
        manifest,
    })
}

/// Restores the session as it was before the last repair applied to the JSON store at `root`:
/// changed and removed parts get their old bytes back, created parts are deleted, and the
/// backup is marked undone (so a second undo goes one repair further back).
///
/// Re-running an interrupted undo is safe. Without `force`, a part that changed after the
/// repair (neither its old nor its new bytes) stops the undo before anything is written.
///
/// # Errors
/// [`WriteError::NoBackup`], [`WriteError::ChangedSinceRepair`], [`WriteError::Manifest`],
/// [`WriteError::Io`], or a confinement error for a tampered manifest.
pub fn undo_json(root: &Path, session: &str, force: bool) -> Result<Undone, WriteError> {
    let root = fs::canonicalize(root).map_err(io_err(root))?;
    let backup = latest(&root, session)?;
    let Some(m) = &backup.manifest else {
        return Err(WriteError::NoBackup {
            session: session.to_owned(),
        });
    };
    let brel = backup
        .dir
        .strip_prefix(&root)
        .unwrap_or(&backup.dir)
        .to_owned();
    // Resolve and verify everything first.
    let mut work = Vec::new();
    for e in &m.entries {
        let rel = rel_part(&e.message_id, &e.part_id)?;
        if e.path.as_deref() != Some(rel_str(&rel).as_str()) {
            return Err(WriteError::Manifest {
                path: backup.dir.clone(),
                detail: format!("entry for {} names another path", e.part_id),
            });
        }
        let path = confined(&root, &rel)?;
        let current = read_opt(&path)?.map(|b| sha256(&b));
        let saved = match e.kind {
            EntryKind::Created => None,
            EntryKind::Changed | EntryKind::Removed => {
                let bpath = confined(&root, &brel.join("files").join(&rel))?;
                let bytes = fs::read(&bpath).map_err(io_err(&bpath))?;
                if Some(sha256(&bytes)) != e.sha256_old {
                    return Err(WriteError::Manifest {
                        path: bpath,
                        detail: "backup copy does not match its checksum".to_owned(),
                    });
                }
                Some(bytes)
            }
        };
        let expected = current.is_none() || current == e.sha256_new || current == e.sha256_old;
        if !force && !expected {
            return Err(WriteError::ChangedSinceRepair {
                what: path.display().to_string(),
            });
        }
        work.push((rel, path, saved));
    }
    let dirs: std::collections::BTreeSet<&Path> = work
        .iter()
        .filter_map(|(_, path, _)| path.parent())
        .collect();
    for dir in dirs {
        sweep_tmp(dir);
    }
    let (mut restored, mut deleted) = (0, 0);
    for (rel, path, saved) in work.iter().rev() {
        match saved {
            Some(bytes) => {
                if let Some(parent) = rel.parent() {
                    create_dirs(&root, parent)?;
                }
                write_atomic(path, bytes)?;
                restored += 1;
            }
            None => {
                remove_durable(path)?;
                deleted += 1;
            }
        }
    }
    mark_undone(&backup.dir)?;
    Ok(Undone {
        backup: backup.dir,
        restored,
        deleted,
    })
}
