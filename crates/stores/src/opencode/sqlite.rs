//! OpenCode's SQLite store (≥ v1.2.0): `opencode.db`, and Kilo's `kilo.db`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use turnkeeper_model::opencode::session::{
    Session, StoredMessage, build_message, build_part, problem, sort_messages,
};
use turnkeeper_model::opencode::types::{SessionInfo, SessionTime};
use turnkeeper_model::opencode::{Origin, ProblemKind, check_id};

use super::{Listing, SessionSummary, StoreError};

/// The SQLite store of OpenCode ≥ v1.2.0 (`opencode.db`, opencode-storage.md §5), opened
/// read-only.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    conn: Connection,
    session_columns: BTreeSet<String>,
    /// The private copy read instead of a database with a live write-ahead log.
    _copy: Option<PrivateCopy>,
}

/// `<db><suffix>`: SQLite's `-wal` and `-shm` files beside a database.
pub(crate) fn sidecar(db: &Path, suffix: &str) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// `file:<path>?immutable=1`, the path percent-encoded where a URI needs it.
fn immutable_uri(db: &Path) -> String {
    let mut uri = String::from("file:");
    for c in db.to_string_lossy().chars() {
        match c {
            '%' | '?' | '#' => uri.push_str(&format!("%{:02X}", u32::from(c))),
            c => uri.push(c),
        }
    }
    uri + "?immutable=1"
}

/// A database copied with its `-wal` and `-shm` into a directory of our own, removed on drop.
#[derive(Debug)]
struct PrivateCopy {
    dir: PathBuf,
    db: PathBuf,
}

impl PrivateCopy {
    fn of(db: &Path) -> Result<PrivateCopy, StoreError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "turnkeeper-read-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| StoreError::Io { path, source }
        };
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let copy = PrivateCopy {
            db: dir.join("store.db"),
            dir,
        };
        std::fs::copy(db, &copy.db).map_err(io(db))?;
        for suffix in ["-wal", "-shm"] {
            let from = sidecar(db, suffix);
            if from.is_file() {
                std::fs::copy(&from, sidecar(&copy.db, suffix)).map_err(io(&from))?;
            }
        }
        Ok(copy)
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl SqliteStore {
    /// Opens the database for reading and checks that `session`, `message` and `part` have the
    /// columns this reader uses.
    ///
    /// Reading never changes the user's files. A database without a write-ahead log (no
    /// `-wal`, or an empty one) is opened `immutable`, which creates no `-wal`/`-shm` and takes
    /// no lock. One whose `-wal` holds data (OpenCode is running, or was killed; some real
    /// stores hold every row in the log) is copied with its `-wal` and `-shm` into a private
    /// temporary directory and read there, because SQLite writes to the `-shm` of a log it
    /// reads. The copy is removed when the store is dropped.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when it cannot be opened; [`StoreError::Io`] when the copy
    /// fails; [`StoreError::UnknownSchema`] when a table or column is missing.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let sql = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let wal = sidecar(&path, "-wal");
        let live_log = std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
        let (conn, copy) = if live_log {
            let copy = PrivateCopy::of(&path)?;
            tracing::debug!(db = %path.display(), copy = %copy.db.display(), "reading a copy: the write-ahead log holds data");
            let conn = Connection::open_with_flags(
                &copy.db,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(sql)?;
            (conn, Some(copy))
        } else {
            let conn = Connection::open_with_flags(
                immutable_uri(&path),
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI,
            )
            .map_err(sql)?;
            (conn, None)
        };
        let mut store = SqliteStore {
            path,
            conn,
            session_columns: BTreeSet::new(),
            _copy: copy,
        };
        let required: [(&str, &[&str]); 3] = [
            ("session", &["id", "title", "time_created", "time_updated"]),
            ("message", &["id", "session_id", "time_created", "data"]),
            ("part", &["id", "message_id", "session_id", "data"]),
        ];
        for (table, cols) in required {
            let have = store.columns(table)?;
            if have.is_empty() {
                let go = store.columns("sessions")?.contains("id")
                    && store.columns("messages")?.contains("parts");
                let reason = if go {
                    "this is the database of the Go `opencode` (opencode-ai/opencode, now Charm's \
                     Crush), a different program whose sessions turnkeeper does not read"
                        .to_owned()
                } else {
                    format!("no `{table}` table")
                };
                return Err(StoreError::UnknownSchema {
                    path: store.path.clone(),
                    reason,
                });
            }
            for col in cols {
                if !have.contains(*col) {
                    return Err(StoreError::UnknownSchema {
                        path: store.path.clone(),
                        reason: format!("table `{table}` has no `{col}` column"),
                    });
                }
            }
            if table == "session" {
                store.session_columns = have;
            }
        }
        Ok(store)
    }

    fn sql_err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn columns(&self, table: &str) -> Result<BTreeSet<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM pragma_table_info(?1)")
            .map_err(|e| self.sql_err(e))?;
        let rows = stmt
            .query_map([table], |r| r.get::<_, String>(0))
            .map_err(|e| self.sql_err(e))?;
        let mut out = BTreeSet::new();
        for r in rows {
            out.insert(r.map_err(|e| self.sql_err(e))?);
        }
        Ok(out)
    }

    /// Lists every session, newest first; `size` is the total length of its message and part
    /// `data`.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when a query fails.
    pub fn list_sessions(&self) -> Result<Listing, StoreError> {
        let project = if self.session_columns.contains("project_id") {
            "s.project_id"
        } else {
            "''"
        };
        let sql = format!(
            "SELECT s.id, s.title, s.time_updated, {project}, \
               (SELECT COUNT(*) FROM message m WHERE m.session_id = s.id), \
               (SELECT COALESCE(SUM(LENGTH(CAST(m.data AS BLOB))), 0) FROM message m WHERE m.session_id = s.id) + \
               (SELECT COALESCE(SUM(LENGTH(CAST(p.data AS BLOB))), 0) FROM part p WHERE p.session_id = s.id) \
             FROM session s ORDER BY s.time_updated DESC, s.id"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.sql_err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, Option<String>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<i64>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, i64>(5)?,
                ))
            })
            .map_err(|e| self.sql_err(e))?;
        let mut listing = Listing::default();
        for row in rows {
            let (id, title, updated, project, count, size) = row.map_err(|e| self.sql_err(e))?;
            let id = id.unwrap_or_default();
            if let Err(reason) = check_id(&id) {
                listing.problems.push(problem(
                    Origin::Row {
                        table: "session",
                        id: id.clone(),
                    },
                    ProblemKind::UnsafeId { id, reason },
                ));
                continue;
            }
            listing.sessions.push(SessionSummary {
                id,
                title: title.unwrap_or_default(),
                updated: updated.unwrap_or_default(),
                project_id: project.unwrap_or_default(),
                messages: usize::try_from(count).unwrap_or(0),
                size: u64::try_from(size).unwrap_or(0),
            });
        }
        Ok(listing)
    }

    fn session_info(&self, session_id: &str) -> Result<Option<SessionInfo>, StoreError> {
        let col = |name: &str| {
            if self.session_columns.contains(name) {
                name.to_owned()
            } else {
                "NULL".to_owned()
            }
        };
        let sql = format!(
            "SELECT id, title, time_created, time_updated, {}, {}, {}, {}, {}, {}, {}, {} \
             FROM session WHERE id = ?1",
            col("slug"),
            col("project_id"),
            col("directory"),
            col("parent_id"),
            col("version"),
            col("time_compacting"),
            col("time_archived"),
            col("share_url"),
        );
        self.conn
            .query_row(&sql, [session_id], |r| {
                let share: Option<String> = r.get(11)?;
                Ok(SessionInfo {
                    id: r.get(0)?,
                    title: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                    time: SessionTime {
                        created: r.get::<_, Option<i64>>(2)?.unwrap_or_default(),
                        updated: r.get::<_, Option<i64>>(3)?.unwrap_or_default(),
                        compacting: r.get(9)?,
                        archived: r.get(10)?,
                    },
                    slug: r.get(4)?,
                    project_id: r.get(5)?,
                    directory: r.get(6)?,
                    parent_id: r.get(7)?,
                    version: r.get(8)?,
                    share: share.map(|url| serde_json::json!({ "url": url })),
                    summary: None,
                    revert: None,
                })
            })
            .optional()
            .map_err(|e| self.sql_err(e))
    }

    /// Loads one session with all its messages and parts.
    ///
    /// # Errors
    /// [`StoreError::UnsafeId`], [`StoreError::SessionNotFound`] (no session row and no
    /// message rows), [`StoreError::Sqlite`] when a query fails.
    pub fn load_session(&self, session_id: &str) -> Result<Session, StoreError> {
        check_id(session_id).map_err(|reason| StoreError::UnsafeId {
            id: session_id.to_owned(),
            reason,
        })?;
        let mut problems = Vec::new();
        let info = self.session_info(session_id)?;
        let mut messages: Vec<StoredMessage> = Vec::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        {
            let mut stmt = self
                .conn
                .prepare(
                    "SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id",
                )
                .map_err(|e| self.sql_err(e))?;
            let rows = stmt
                .query_map([session_id], |r| {
                    Ok((r.get::<_, Option<String>>(0)?, text_column(r, 1)))
                })
                .map_err(|e| self.sql_err(e))?;
            for row in rows {
                let (id, data) = row.map_err(|e| self.sql_err(e))?;
                let id = id.unwrap_or_default();
                let origin = Origin::Row {
                    table: "message",
                    id: id.clone(),
                };
                let raw = match data {
                    Ok(t) => t,
                    Err(kind) => {
                        problems.push(problem(origin, kind));
                        continue;
                    }
                };
                if let Some(m) = build_message(id, session_id, raw, origin, &mut problems) {
                    index.insert(m.id.clone(), messages.len());
                    messages.push(m);
                }
            }
        }
        if info.is_none() && messages.is_empty() && problems.is_empty() {
            return Err(StoreError::SessionNotFound {
                id: session_id.to_owned(),
            });
        }
        let mut orphans: BTreeMap<String, usize> = BTreeMap::new();
        {
            let mut stmt = self
                .conn
                .prepare(
                    "SELECT id, message_id, data FROM part \
                     WHERE session_id = ?1 \
                        OR message_id IN (SELECT id FROM message WHERE session_id = ?1) \
                     ORDER BY message_id, id",
                )
                .map_err(|e| self.sql_err(e))?;
            let rows = stmt
                .query_map([session_id], |r| {
                    Ok((
                        r.get::<_, Option<String>>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        text_column(r, 2),
                    ))
                })
                .map_err(|e| self.sql_err(e))?;
            for row in rows {
                let (id, message_id, data) = row.map_err(|e| self.sql_err(e))?;
                let id = id.unwrap_or_default();
                let message_id = message_id.unwrap_or_default();
                let Some(&slot) = index.get(&message_id) else {
                    *orphans.entry(message_id).or_default() += 1;
                    continue;
                };
                let origin = Origin::Row {
                    table: "part",
                    id: id.clone(),
                };
                let raw = match data {
                    Ok(t) => t,
                    Err(kind) => {
                        problems.push(problem(origin, kind));
                        continue;
                    }
                };
                if let Some(p) = build_part(id, &message_id, session_id, raw, origin, &mut problems)
                {
                    messages[slot].parts.push(p);
                }
            }
        }
        for (message_id, count) in orphans {
            problems.push(problem(
                Origin::Row {
                    table: "message",
                    id: message_id.clone(),
                },
                ProblemKind::OrphanParts { message_id, count },
            ));
        }
        sort_messages(&mut messages);
        Ok(Session {
            info: info.unwrap_or_else(|| SessionInfo {
                id: session_id.to_owned(),
                ..SessionInfo::default()
            }),
            raw_info: None,
            messages,
            problems,
        })
    }
}

/// Reads a `data` column as text (TEXT, or BLOB holding UTF-8).
fn text_column(r: &rusqlite::Row<'_>, i: usize) -> Result<String, ProblemKind> {
    use rusqlite::types::ValueRef;
    match r.get_ref(i) {
        Ok(ValueRef::Text(t) | ValueRef::Blob(t)) => {
            String::from_utf8(t.to_vec()).map_err(|e| ProblemKind::InvalidJson {
                detail: format!("not UTF-8: {e}"),
            })
        }
        Ok(ValueRef::Null) => Err(ProblemKind::WrongShape {
            detail: "data is NULL".to_owned(),
        }),
        Ok(_) => Err(ProblemKind::WrongShape {
            detail: "data is not text".to_owned(),
        }),
        Err(e) => Err(ProblemKind::Unreadable {
            detail: e.to_string(),
        }),
    }
}
