//! Shared helpers of the doctor tests: the corpus, tree snapshots, repairing every session.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use turnkeeper::doctor::{self, PlanOptions, StoreRef};
use turnkeeper::opencode::Session;
use turnkeeper::stores::BACKUP_DIR;
use turnkeeper::stores::opencode::{JsonStore, SqliteStore};

pub type R<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// `corpus/opencode/doctor`.
pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/opencode/doctor")
}

/// The session ids of the doctor corpus, by name.
pub fn sessions() -> R<BTreeMap<String, String>> {
    Ok(serde_json::from_str(&fs::read_to_string(
        corpus().join("before/sessions.json"),
    )?)?)
}

/// Copies a directory tree.
pub fn copy_dir(src: &Path, dst: &Path) -> R {
    fs::create_dir_all(dst)?;
    for e in fs::read_dir(src)? {
        let e = e?;
        let to = dst.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &to)?;
        } else {
            fs::copy(e.path(), &to)?;
        }
    }
    Ok(())
}

/// Every file under `dir` (relative path → bytes), backups left out.
pub fn tree(dir: &Path) -> R<BTreeMap<String, Vec<u8>>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) -> R {
        for e in fs::read_dir(dir)? {
            let e = e?;
            let path = e.path();
            let rel = path
                .strip_prefix(base)?
                .to_string_lossy()
                .replace('\\', "/");
            if rel == BACKUP_DIR {
                continue;
            }
            if e.file_type()?.is_dir() {
                walk(base, &path, out)?;
            } else {
                out.insert(rel, fs::read(&path)?);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out)?;
    Ok(out)
}

/// Every message and part row of a database, as stable text (`time_updated` left out: a
/// repair sets it to the time of the change, as OpenCode's ORM does).
pub fn rows(db: &Path) -> R<String> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut out = String::new();
    for (table, cols) in [
        (
            "message",
            "id, session_id, time_created, CAST(data AS TEXT)",
        ),
        (
            "part",
            "id, message_id || ' ' || session_id, time_created, CAST(data AS TEXT)",
        ),
    ] {
        let mut stmt = conn.prepare(&format!("SELECT {cols} FROM {table} ORDER BY id"))?;
        let mut q = stmt.query([])?;
        while let Some(r) = q.next()? {
            let id: Option<String> = r.get(0)?;
            let owner: Option<String> = r.get(1)?;
            let t: Option<i64> = r.get(2)?;
            let data: Option<String> = r.get(3)?;
            out.push_str(&format!(
                "{table} {} {} {}\n  {}\n",
                id.unwrap_or_default(),
                owner.unwrap_or_default(),
                t.unwrap_or_default(),
                data.unwrap_or_default()
            ));
        }
    }
    Ok(out)
}

/// The message and part rows of each session (`rows:<session>` → text, `time_updated` left
/// out): each session changes in one transaction, so each is old or new as a whole.
pub fn rows_by_session(db: &Path) -> R<BTreeMap<String, Vec<u8>>> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut out: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for sql in [
        "SELECT session_id, 'message ' || id || ' ' || time_created || ' ' || CAST(data AS TEXT) \
         FROM message ORDER BY id",
        "SELECT session_id, 'part ' || id || ' ' || message_id || ' ' || time_created || ' ' || \
         CAST(data AS TEXT) FROM part ORDER BY id",
    ] {
        let mut stmt = conn.prepare(sql)?;
        let mut q = stmt.query([])?;
        while let Some(r) = q.next()? {
            let session: Option<String> = r.get(0)?;
            let line: Option<String> = r.get(1)?;
            let entry = out
                .entry(format!("rows:{}", session.unwrap_or_default()))
                .or_default();
            entry.extend_from_slice(line.unwrap_or_default().as_bytes());
            entry.push(b'\n');
        }
    }
    Ok(out)
}

/// A store under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `storage/` under the work directory.
    Json,
    /// `opencode.db` in the work directory.
    Sqlite,
}

impl Kind {
    /// The path to pass to the write side.
    pub fn path(self, work: &Path) -> PathBuf {
        match self {
            Kind::Json => work.join("storage"),
            Kind::Sqlite => work.join("opencode.db"),
        }
    }

    pub fn store_ref(self, path: &Path) -> StoreRef<'_> {
        match self {
            Kind::Json => StoreRef::Json(path),
            Kind::Sqlite => StoreRef::Sqlite(path),
        }
    }

    /// Loads a session.
    pub fn load(self, work: &Path, id: &str) -> R<Session> {
        Ok(match self {
            Kind::Json => JsonStore::open(work.join("storage"))?.load_session(id)?,
            Kind::Sqlite => SqliteStore::open(work.join("opencode.db"))?.load_session(id)?,
        })
    }

    /// A snapshot of the session data (files, or rows).
    pub fn snapshot(self, work: &Path) -> R<BTreeMap<String, Vec<u8>>> {
        match self {
            Kind::Json => tree(&work.join("storage")),
            Kind::Sqlite => rows_by_session(&work.join("opencode.db")),
        }
    }
}

/// Copies the broken stores of the corpus to a fresh directory.
pub fn fresh() -> R<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    copy_dir(
        &corpus().join("before/storage"),
        &dir.path().join("storage"),
    )?;
    fs::copy(
        corpus().join("before/opencode.db"),
        dir.path().join("opencode.db"),
    )?;
    Ok(dir)
}

/// Plans and applies the repairs of one session; returns how many were made.
pub fn repair(kind: Kind, work: &Path, id: &str) -> R<usize> {
    let session = kind.load(work, id)?;
    let plan = doctor::plan(&session, &PlanOptions::default());
    if plan.is_empty() {
        return Ok(0);
    }
    let path = kind.path(work);
    doctor::apply(kind.store_ref(&path), &plan)?;
    Ok(plan.repairs.len())
}
