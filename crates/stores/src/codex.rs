//! Codex CLI's rollouts: `<home>/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`, where `<home>` is
//! `$CODEX_HOME`, else `~/.codex` (session-stores.md §6).
//!
//! Reading: [`layout`], [`list`], [`find`], [`load`]. A session is named by its `session_meta`
//! id.
//!
//! Writing: Codex appends to a rollout while it runs, so a repair never edits one: [`fork`]
//! writes a **new** rollout beside it (its first line a `session_meta` with a new id and
//! `forked_from_id` naming the original, then the kept lines), through the shared write layer's
//! [`file::create`] (a manifest under `<home>/turnkeeper-backup/<original id>/<stamp>/` first,
//! then the file, atomically); the original is left untouched. [`undo`] removes the new rollout
//! when it is still what the repair wrote. [`in_use`] tells whether Codex seems to be running on
//! the session.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use turnkeeper_model::codex::Rollout;

use crate::StoreError;
use crate::write::fsops::{civil_from_days, io_err};
use crate::write::{InUse, WriteError, file, in_use_by};

/// Where rollouts are: the root that holds backups, and the folder searched for rollouts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The Codex home (`~/.codex`), or the folder given when it has no `sessions/`.
    pub root: PathBuf,
    /// `<root>/sessions`, or the folder given.
    pub sessions: PathBuf,
}

/// The layout for `home` (a Codex home holding `sessions/`, else a folder of rollouts), or by
/// default `$CODEX_HOME`, else `~/.codex`.
///
/// # Errors
/// [`StoreError::NoHome`] when nothing is given and `HOME` is not set.
pub fn layout(home: Option<&Path>) -> Result<Layout, StoreError> {
    let root = match home {
        Some(p) => p.to_owned(),
        None => match std::env::var_os("CODEX_HOME").filter(|x| !x.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".codex"))
                .ok_or(StoreError::NoHome)?,
        },
    };
    let sessions = root.join("sessions");
    Ok(if sessions.is_dir() || home.is_none() {
        Layout { root, sessions }
    } else {
        Layout {
            sessions: root.clone(),
            root,
        }
    })
}

/// One rollout file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutFile {
    /// The session id (`session_meta.id`; the file name's UUID when the first line has none).
    pub id: String,
    /// The session it was forked from (`forked_from_id`).
    pub forked_from: Option<String>,
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time, epoch milliseconds.
    pub modified: i64,
}

/// True for a session id turnkeeper will look for or name a path with: a UUID's alphabet.
pub fn safe_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// The UUID at the end of a rollout's file name (`rollout-<ts>-<uuid>.jsonl`).
fn id_from_name(name: &str) -> Option<String> {
    let stem = name.strip_suffix(".jsonl")?;
    let tail = stem.get(stem.len().checked_sub(36)?..)?;
    safe_id(tail).then(|| tail.to_owned())
}

/// The `id` and `forked_from_id` of the first line, when it is a `session_meta`.
fn head(path: &Path) -> Option<(Option<String>, Option<String>)> {
    let mut first = String::new();
    BufReader::new(fs::File::open(path).ok()?)
        .read_line(&mut first)
        .ok()?;
    #[derive(serde::Deserialize)]
    struct Line {
        #[serde(rename = "type")]
        kind: String,
        payload: Meta,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        id: Option<String>,
        forked_from_id: Option<String>,
    }
    let l: Line = serde_json::from_str(first.trim_end()).ok()?;
    (l.kind == "session_meta").then_some((l.payload.id, l.payload.forked_from_id))
}

/// Every rollout under `sessions` (searched four folders deep), newest first.
///
/// # Errors
/// [`StoreError::NoStore`] when the folder does not exist or holds no rollout.
pub fn list(sessions: &Path) -> Result<Vec<RolloutFile>, StoreError> {
    let no_store = || StoreError::NoStore {
        dir: sessions.to_owned(),
        looked_for: "a Codex rollout: <home>/sessions/YYYY/MM/DD/rollout-*.jsonl".to_owned(),
    };
    if !sessions.is_dir() {
        return Err(no_store());
    }
    let mut out = Vec::new();
    walk(sessions, 0, &mut out);
    if out.is_empty() {
        return Err(no_store());
    }
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.id.cmp(&b.id)));
    Ok(out)
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<RolloutFile>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if depth < 4 && name != crate::write::BACKUP_DIR {
                walk(&p, depth + 1, out);
            }
            continue;
        }
        if !name.starts_with("rollout-") || !name.ends_with(".jsonl") {
            continue;
        }
        if let Some(f) = rollout_file(&p) {
            out.push(f);
        }
    }
}

/// A rollout file's listing entry, `None` when it names no session.
pub fn rollout_file(p: &Path) -> Option<RolloutFile> {
    let meta = fs::metadata(p).ok()?;
    let name = p.file_name()?.to_string_lossy().into_owned();
    let (id, forked_from) = head(p).unwrap_or((None, None));
    let id = id.filter(|i| safe_id(i)).or_else(|| id_from_name(&name))?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    Some(RolloutFile {
        id,
        forked_from,
        path: p.to_owned(),
        size: meta.len(),
        modified,
    })
}

/// The rollout of session `id` under `sessions`.
///
/// # Errors
/// [`StoreError::UnsafeId`] for an id outside the UUID alphabet,
/// [`StoreError::SessionNotFound`] when no rollout has it.
pub fn find(sessions: &Path, id: &str) -> Result<RolloutFile, StoreError> {
    if !safe_id(id) {
        return Err(StoreError::UnsafeId {
            id: id.to_owned(),
            reason: "a Codex session id is a UUID",
        });
    }
    list(sessions)?
        .into_iter()
        .find(|s| s.id == id)
        .ok_or_else(|| StoreError::SessionNotFound { id: id.to_owned() })
}

/// Reads and parses a rollout.
///
/// # Errors
/// [`StoreError::Io`] when it cannot be read or is not UTF-8; [`StoreError::NotSession`] when
/// no line is a rollout record.
pub fn load(path: &Path) -> Result<Rollout, StoreError> {
    let bytes = fs::read(path).map_err(|source| StoreError::Io {
        path: path.to_owned(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| StoreError::Io {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
    })?;
    Rollout::parse(text, &path.display().to_string()).map_err(|e| StoreError::NotSession {
        store: "Codex",
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

/// Seconds within which a change to the file means Codex is probably still writing it.
pub const RECENT_SECONDS: u64 = 120;

/// Is Codex using the rollout? A process holding the file open, a process named `codex`, or a
/// change within the last [`RECENT_SECONDS`].
///
/// # Errors
/// A message saying why nothing could be told.
pub fn in_use(file: &Path) -> Result<Option<InUse>, String> {
    if let Some(u) = in_use_by(&[file.to_owned()], &["codex"], "is a Codex process")? {
        return Ok(Some(u));
    }
    let age = fs::metadata(file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok());
    Ok(age.filter(|a| a.as_secs() < RECENT_SECONDS).map(|a| InUse {
        pid: 0,
        name: "codex".to_owned(),
        reason: format!("changed the file {}s ago", a.as_secs()),
    }))
}

/// What [`fork`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forked {
    /// The new session's id (resume it with `codex resume <id>`).
    pub id: String,
    /// The new rollout.
    pub path: PathBuf,
    /// The backup directory holding the manifest.
    pub backup: PathBuf,
}

/// Now, as (epoch milliseconds, `YYYY-MM-DDTHH:MM:SS.mmmZ`, `YYYY-MM-DDTHH-MM-SS`, (y, m, d)).
fn now() -> (u128, String, String, (i64, u32, u32)) {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let secs = i64::try_from(ms / 1000).unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (rem / 3600, rem / 60 % 60, rem % 60);
    (
        ms,
        format!(
            "{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{:03}Z",
            ms % 1000
        ),
        format!("{y:04}-{m:02}-{d:02}T{hh:02}-{mm:02}-{ss:02}"),
        (y, m, d),
    )
}

/// A new UUID, version 7 (the time-ordered form Codex uses): the time in milliseconds, then
/// bits from a hash of the time, the process and `seed`.
pub fn new_uuid_v7(ms: u128, seed: &str) -> String {
    use sha2::{Digest, Sha256};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let h = Sha256::digest(format!("{nanos}:{}:{seed}", std::process::id()).as_bytes());
    let mut b = [0u8; 16];
    let t = (ms & 0xffff_ffff_ffff) as u64;
    b[..6].copy_from_slice(&t.to_be_bytes()[2..]);
    b[6..].copy_from_slice(&h[..10]);
    b[6] = 0x70 | (b[6] & 0x0f);
    b[8] = 0x80 | (b[8] & 0x3f);
    let hex = turnkeeper_guard::hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The `session_meta` line of a fork of `original`: its own payload with a new `id`,
/// `forked_from_id` naming the original, and the time of the fork.
fn meta_line(original: &Rollout, id: &str, ts: &str) -> Result<String, WriteError> {
    let payload = original
        .lines
        .iter()
        .find(|l| l.kind == turnkeeper_model::codex::LineKind::SessionMeta)
        .and_then(|l| l.payload)
        .map_or("{}", |(a, b)| &original.text[a..b]);
    let mut meta: serde_json::Map<String, serde_json::Value> = serde_json::from_str(payload)
        .map_err(|e| WriteError::Manifest {
            path: PathBuf::from("session_meta"),
            detail: format!("the original's session_meta does not read: {e}"),
        })?;
    let original_id = original.meta.id.clone().unwrap_or_default();
    meta.insert("id".into(), id.into());
    meta.insert("timestamp".into(), ts.into());
    meta.insert("forked_from_id".into(), original_id.into());
    let line = serde_json::json!({"timestamp": ts, "type": "session_meta", "payload": meta});
    Ok(format!("{line}\n"))
}

/// Writes the repaired copy of `original` (read from `source`) as a new rollout: a
/// `session_meta` line naming the original in `forked_from_id`, then `kept` (the kept lines,
/// each with its newline). In the Codex home's `sessions/YYYY/MM/DD/` (today, UTC) when `layout`
/// is given, else beside `source`. The original is not touched.
///
/// # Errors
/// [`WriteError`]s of the write layer; [`WriteError::UnsafeId`] when the original has no safe id.
pub fn fork(
    layout: Option<&Layout>,
    source: &Path,
    original: &Rollout,
    kept: &str,
    changes: &[String],
) -> Result<Forked, WriteError> {
    let original_id = original
        .meta
        .id
        .clone()
        .filter(|i| safe_id(i))
        .ok_or_else(|| WriteError::UnsafeId {
            id: original.meta.id.clone().unwrap_or_default(),
            reason: "a Codex session id is a UUID",
        })?;
    let (ms, ts, name_ts, (y, m, d)) = now();
    let id = new_uuid_v7(ms, &original_id);
    let name = format!("rollout-{name_ts}-{id}.jsonl");
    let (root, rel) = match layout {
        Some(l) => {
            let root = fs::canonicalize(&l.root).map_err(io_err(&l.root))?;
            let sessions = fs::canonicalize(&l.sessions).map_err(io_err(&l.sessions))?;
            let under = sessions.strip_prefix(&root).unwrap_or(Path::new(""));
            let rel = under
                .join(format!("{y:04}"))
                .join(format!("{m:02}"))
                .join(format!("{d:02}"))
                .join(&name);
            (root, rel)
        }
        None => {
            let dir = source
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            (
                fs::canonicalize(dir).map_err(io_err(dir))?,
                PathBuf::from(&name),
            )
        }
    };
    let mut text = meta_line(original, &id, &ts)?;
    text.push_str(kept);
    let (applied, path) =
        file::create(&root, "codex", &original_id, &rel, text.as_bytes(), changes)?;
    tracing::info!(file = %path.display(), "codex: repaired copy written");
    Ok(Forked {
        id,
        path,
        backup: applied.backup,
    })
}

/// Removes the repaired copy the last repair of session `original_id` wrote (the original was
/// never changed). The backups are under `layout.root`, or beside `source` for a rollout named
/// by its file.
///
/// # Errors
/// [`WriteError::NoBackup`] when there is nothing to undo; [`WriteError::ChangedSinceRepair`]
/// when the copy was appended to (Codex resumed it), unless `force`.
pub fn undo(root: &Path, original_id: &str, force: bool) -> Result<file::Undone, WriteError> {
    if !safe_id(original_id) {
        return Err(WriteError::UnsafeId {
            id: original_id.to_owned(),
            reason: "a Codex session id is a UUID",
        });
    }
    let root = fs::canonicalize(root).map_err(io_err(root))?;
    file::undo(&root, original_id, None, force)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_uuids_and_come_from_the_name_when_the_meta_has_none() {
        assert_eq!(
            id_from_name("rollout-2026-04-10T09-55-11-019d781a-be34-7041-abb1-577f9360b907.jsonl")
                .as_deref(),
            Some("019d781a-be34-7041-abb1-577f9360b907")
        );
        assert_eq!(id_from_name("rollout-x.jsonl"), None);
        assert!(!safe_id("../etc"));
        let u = new_uuid_v7(0x0190_0000_0000, "seed");
        assert_eq!(u.len(), 36);
        assert!(safe_id(&u));
        assert_eq!(&u[14..15], "7");
    }
}
