//! Applying a plan to `opencode.db`, and undoing it.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::fsops::{confined, io_err, safe_id, sha256, step, sync_dir};
use super::manifest::{
    Entry, EntryKind, Manifest, latest, mark_undone, new_backup_dir, write_manifest,
};
use super::{Applied, PartChange, Plan, Undone, WriteError};
use turnkeeper_model::edit::object::remove_key;

/// The file name of the database copy inside a backup directory.
const BACKUP_DB: &str = "opencode.db";

/// Columns this writer reads and writes.
const PART_COLUMNS: [&str; 6] = [
    "id",
    "message_id",
    "session_id",
    "time_created",
    "time_updated",
    "data",
];

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> WriteError + '_ {
    move |source| WriteError::Sqlite {
        path: path.to_owned(),
        source,
    }
}

/// Opens the database read-write (never creating it), with OpenCode's busy timeout and foreign
/// keys on (opencode-storage.md §5.2, §5.3), and checks the `part` table's columns.
fn open(db: &Path) -> Result<Connection, WriteError> {
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql(db))?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(sql(db))?;
    conn.execute_batch("PRAGMA foreign_keys = ON")
        .map_err(sql(db))?;
    let mut stmt = conn
        .prepare("SELECT name FROM pragma_table_info('part')")
        .map_err(sql(db))?;
    let have: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(sql(db))?
        .collect::<Result<_, _>>()
        .map_err(sql(db))?;
    drop(stmt);
    for col in PART_COLUMNS {
        if !have.iter().any(|h| h == col) {
            return Err(WriteError::UnknownSchema {
                path: db.to_owned(),
                reason: format!("table `part` has no `{col}` column"),
            });
        }
    }
    Ok(conn)
}

/// The stored `data` of a part row (TEXT, or BLOB holding UTF-8), `None` when absent.
fn part_data(conn: &Connection, db: &Path, id: &str) -> Result<Option<String>, WriteError> {
    conn.query_row(
        "SELECT CAST(data AS TEXT) FROM part WHERE id = ?1",
        [id],
        |r| r.get::<_, Option<String>>(0),
    )
    .optional()
    .map_err(sql(db))
    .map(Option::flatten)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back on error.
fn immediate<T>(
    conn: &Connection,
    db: &Path,
    body: impl FnOnce() -> Result<T, WriteError>,
) -> Result<T, WriteError> {
    conn.execute_batch("BEGIN IMMEDIATE").map_err(sql(db))?;
    match body() {
        Ok(v) => {
            conn.execute_batch("COMMIT").map_err(sql(db))?;
            step();
            Ok(v)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Applies `plan` to the SQLite store `db` (`opencode.db`).
///
/// First copies the whole database with SQLite's online backup API to
/// `<dir of db>/turnkeeper-backup/<session>/<stamp>/opencode.db`; then, under one write lock
/// (`BEGIN IMMEDIATE`), checks that every part row, live and in the copy, is still what the plan
/// saw, writes the manifest, makes every change, and commits. A run killed before the commit
/// leaves the database unchanged (SQLite rolls the journal back on the next open).
///
/// # Errors
/// [`WriteError::UnknownSchema`], [`WriteError::Conflict`], [`WriteError::Sqlite`],
/// [`WriteError::Io`]; in every case the transaction is rolled back.
pub fn apply_sqlite(db: &Path, plan: &Plan) -> Result<Applied, WriteError> {
    let db = fs::canonicalize(db).map_err(io_err(db))?;
    let root = db
        .parent()
        .map(Path::to_owned)
        .ok_or_else(|| WriteError::OutsideRoot { path: db.clone() })?;
    safe_id(&plan.session_id)?;
    for c in &plan.changes {
        safe_id(c.message_id())?;
        safe_id(c.part_id())?;
    }
    let conn = open(&db)?;
    // Back up first, outside the write lock (the online backup cannot read a database its own
    // connection is writing). The copy is checked against the plan below, under the lock.
    let (bdir, stamp) = new_backup_dir(&root, &plan.session_id)?;
    let copy = confined(
        &root,
        &bdir.strip_prefix(&root).unwrap_or(&bdir).join(BACKUP_DB),
    )?;
    backup_to(&conn, &db, &copy)?;
    sync_dir(&bdir)?;
    let saved =
        Connection::open_with_flags(&copy, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(sql(&copy))?;
    let manifest = immediate(&conn, &db, || {
        // Verify: the live rows and the backup's rows are what the plan was computed from.
        let mut entries = Vec::new();
        for c in &plan.changes {
            let current = part_data(&conn, &db, c.part_id())?;
            let in_copy = part_data(&saved, &copy, c.part_id())?;
            let conflict = || WriteError::Conflict {
                what: format!("part row {}", c.part_id()),
            };
            let (kind, old, new) = match c {
                PartChange::Remove { old_raw, .. } => {
                    (EntryKind::Removed, Some(old_raw.as_str()), None)
                }
                PartChange::Replace {
                    old_raw, new_raw, ..
                } => (
                    EntryKind::Changed,
                    Some(old_raw.as_str()),
                    Some(new_raw.clone()),
                ),
                PartChange::Create { json, .. } => (EntryKind::Created, None, Some(data_of(json))),
            };
            if current.as_deref() != old || in_copy.as_deref() != old {
                return Err(conflict());
            }
            entries.push(Entry {
                kind,
                message_id: c.message_id().to_owned(),
                part_id: c.part_id().to_owned(),
                path: None,
                sha256_old: old.map(|o| sha256(o.as_bytes())),
                sha256_new: new.as_deref().map(|n| sha256(n.as_bytes())),
            });
        }
        let manifest = Manifest::new(
            "sqlite",
            &plan.session_id,
            stamp.clone(),
            Some(BACKUP_DB.to_owned()),
            entries,
        );
        write_manifest(&bdir, &manifest)?;
        // Change.
        let now = now_ms();
        for c in &plan.changes {
            let n = match c {
                PartChange::Remove { part_id, message_id, .. } => conn.execute(
                    "DELETE FROM part WHERE id = ?1 AND message_id = ?2",
                    params![part_id, message_id],
                ),
                PartChange::Replace {
                    part_id,
                    message_id,
                    new_raw,
                    ..
                } => conn.execute(
                    "UPDATE part SET data = ?1, time_updated = ?2 WHERE id = ?3 AND message_id = ?4",
                    params![new_raw, now, part_id, message_id],
                ),
                PartChange::Create {
                    part_id,
                    message_id,
                    json,
                    time,
                } => conn.execute(
                    "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) \
                     VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                    params![part_id, message_id, plan.session_id, time, data_of(json)],
                ),
            }
            .map_err(sql(&db))?;
            if n != 1 {
                return Err(WriteError::Conflict {
                    what: format!("part row {}", c.part_id()),
                });
            }
            step();
        }
        Ok(manifest)
    })?;
    Ok(Applied {
        backup: bdir,
        manifest,
    })
}

/// The `data` column of a new part: the object without its id fields (§5.4), compact.
fn data_of(json: &str) -> String {
    let mut data = json.to_owned();
    for key in ["id", "sessionID", "messageID"] {
        if let Some(d) = remove_key(&data, key) {
            data = d;
        }
    }
    turnkeeper_model::opencode::compact_json(&data)
}

/// Copies the database to `copy` with the online backup API, a few pages per step.
fn backup_to(conn: &Connection, db: &Path, copy: &Path) -> Result<(), WriteError> {
    let mut dst = Connection::open(copy).map_err(sql(copy))?;
    {
        let b = rusqlite::backup::Backup::new(conn, &mut dst).map_err(sql(db))?;
        let mut waits = 0;
        loop {
            step();
            match b.step(16).map_err(sql(db))? {
                rusqlite::backup::StepResult::Done => break,
                rusqlite::backup::StepResult::More => {}
                _ if waits < 250 => {
                    waits += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    return Err(sql(db)(rusqlite::Error::SqliteFailure(
                        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                        Some("the database stayed locked during the backup".to_owned()),
                    )));
                }
            }
        }
    }
    dst.close().map_err(|(_, e)| sql(copy)(e))?;
    fs::File::open(copy)
        .and_then(|f| f.sync_all())
        .map_err(io_err(copy))?;
    step();
    Ok(())
}

/// Restores the session as it was before the last repair applied to the SQLite store `db`:
/// in one transaction, parts the repair changed or removed are copied back from the backup
/// database, and parts it created are deleted; then the backup is marked undone.
///
/// Re-running an interrupted undo is safe. Without `force`, a part row that changed after the
/// repair stops the undo before anything is written.
///
/// # Errors
/// [`WriteError::NoBackup`], [`WriteError::ChangedSinceRepair`], [`WriteError::Manifest`],
/// [`WriteError::Sqlite`], [`WriteError::Io`].
pub fn undo_sqlite(db: &Path, session: &str, force: bool) -> Result<Undone, WriteError> {
    let db = fs::canonicalize(db).map_err(io_err(db))?;
    let root = db
        .parent()
        .map(Path::to_owned)
        .ok_or_else(|| WriteError::OutsideRoot { path: db.clone() })?;
    let backup = latest(&root, session)?;
    let Some(m) = &backup.manifest else {
        return Err(WriteError::NoBackup {
            session: session.to_owned(),
        });
    };
    let name = m.database.as_deref().unwrap_or(BACKUP_DB);
    safe_id(name)?;
    let copy: PathBuf = confined(
        &root,
        &backup
            .dir
            .strip_prefix(&root)
            .unwrap_or(&backup.dir)
            .join(name),
    )?;
    let conn = open(&db)?;
    let bk =
        Connection::open_with_flags(&copy, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(sql(&copy))?;
    let (restored, deleted) = immediate(&conn, &db, || {
        let (mut restored, mut deleted) = (0, 0);
        let mut rows = Vec::new();
        for e in &m.entries {
            safe_id(&e.part_id)?;
            let current = part_data(&conn, &db, &e.part_id)?.map(|d| sha256(d.as_bytes()));
            let expected = current.is_none() || current == e.sha256_new || current == e.sha256_old;
            if !force && !expected {
                return Err(WriteError::ChangedSinceRepair {
                    what: format!("part row {}", e.part_id),
                });
            }
            let saved = match e.kind {
                EntryKind::Created => None,
                EntryKind::Changed | EntryKind::Removed => {
                    let row = bk
                        .query_row(
                            "SELECT id, message_id, session_id, time_created, time_updated, data \
                             FROM part WHERE id = ?1",
                            [&e.part_id],
                            |r| {
                                Ok((
                                    r.get::<_, rusqlite::types::Value>(0)?,
                                    r.get::<_, rusqlite::types::Value>(1)?,
                                    r.get::<_, rusqlite::types::Value>(2)?,
                                    r.get::<_, rusqlite::types::Value>(3)?,
                                    r.get::<_, rusqlite::types::Value>(4)?,
                                    r.get::<_, rusqlite::types::Value>(5)?,
                                ))
                            },
                        )
                        .optional()
                        .map_err(sql(&copy))?;
                    let Some(row) = row else {
                        return Err(WriteError::Manifest {
                            path: copy.clone(),
                            detail: format!("part {} is not in the backup", e.part_id),
                        });
                    };
                    Some(row)
                }
            };
            rows.push((e, saved));
        }
        for (e, saved) in rows.into_iter().rev() {
            match saved {
                None => {
                    conn.execute("DELETE FROM part WHERE id = ?1", [&e.part_id])
                        .map_err(sql(&db))?;
                    deleted += 1;
                }
                Some((id, mid, sid, tc, tu, data)) => {
                    conn.execute(
                        "INSERT OR REPLACE INTO part \
                         (id, message_id, session_id, time_created, time_updated, data) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![id, mid, sid, tc, tu, data],
                    )
                    .map_err(sql(&db))?;
                    restored += 1;
                }
            }
            step();
        }
        Ok((restored, deleted))
    })?;
    mark_undone(&backup.dir)?;
    Ok(Undone {
        backup: backup.dir,
        restored,
        deleted,
    })
}
