//! Reading OpenCode sessions from their three forms: the JSON-file tree, the SQLite database
//! and an exported JSON document.
//!
//! All three produce the same [`Session`]: each message and part keeps its exact stored bytes
//! ([`StoredPart::raw`]) next to its typed view, and damage confined to one file or row becomes a
//! [`Problem`] in [`Session::problems`] instead of failing the whole load.
//!
//! Ids are taken from locations (file names, directory names, id columns), never from bodies,
//! as OpenCode's own importer does (opencode-storage.md §3.2). Every id that would be used to
//! build a path is checked with [`check_id`], and every path is resolved and checked to stay
//! under the storage root, so a hostile id or symlink cannot make us read elsewhere.
//!
//! Order: parts by id (OpenCode's own rule, §3.3); messages by `(time.created, id)`, which is
//! id order except across the 2026-08-14 wrap of OpenCode's id clock (§4.3).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::error::{OpencodeError, Origin, Problem, ProblemKind, check_id};
use super::types::{
    BodyIds, MessageInfo, Part, Peeked, SessionInfo, SessionTime, parse_message,
    parse_message_peeked, parse_part, parse_part_peeked, peek_object,
};

/// One stored part: exact bytes, typed view, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPart {
    /// The part id (from the file name, row or export entry).
    pub id: String,
    /// The message id (from the directory name, row or enclosing export entry).
    pub message_id: String,
    /// The exact stored JSON text: the whole file, the `data` column, or the export slice.
    /// Writing an unchanged part back means writing these bytes.
    pub raw: String,
    /// Ids found in the body (absent in SQLite `data`).
    pub body_ids: BodyIds,
    /// The typed view.
    pub typed: Part,
    /// Where it came from.
    pub origin: Origin,
}

/// One stored message with its parts in order.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// The message id (from the file name, row or export entry).
    pub id: String,
    /// The exact stored JSON text of the message info.
    pub raw: String,
    /// Ids found in the body.
    pub body_ids: BodyIds,
    /// The typed view.
    pub typed: MessageInfo,
    /// Parts, sorted by id.
    pub parts: Vec<StoredPart>,
    /// Where it came from.
    pub origin: Origin,
}

/// A whole session as read from one store.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// The session record (built from columns for SQLite; synthesised from message ids for a
    /// bare exported array).
    pub info: SessionInfo,
    /// The exact session file text (JSON store, or `info` of an `opencode export` document).
    pub raw_info: Option<String>,
    /// Messages in conversation order.
    pub messages: Vec<StoredMessage>,
    /// Problems found while loading; the affected files/rows were skipped.
    pub problems: Vec<Problem>,
}

impl Session {
    /// Renders the session as an exported JSON array of `{info, parts}`, splicing the stored
    /// bytes of every message and part unchanged.
    ///
    /// Bodies read from SQLite carry no id fields, so for those the ids are spliced in at the
    /// front of the object (as OpenCode rebuilds them on read, opencode-storage.md §5.4).
    pub fn to_export_array(&self) -> String {
        let mut out = String::from("[");
        for (i, m) in self.messages.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"info\":");
            let mut ids = Vec::new();
            if m.body_ids.id.is_none() {
                ids.push(("id", m.id.as_str()));
            }
            if m.body_ids.session_id.is_none() {
                ids.push(("sessionID", self.info.id.as_str()));
            }
            splice_ids(&mut out, &m.raw, &ids);
            out.push_str(",\"parts\":[");
            for (j, p) in m.parts.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                let mut ids = Vec::new();
                if p.body_ids.id.is_none() {
                    ids.push(("id", p.id.as_str()));
                }
                if p.body_ids.session_id.is_none() {
                    ids.push(("sessionID", self.info.id.as_str()));
                }
                if p.body_ids.message_id.is_none() {
                    ids.push(("messageID", m.id.as_str()));
                }
                splice_ids(&mut out, &p.raw, &ids);
            }
            out.push_str("]}");
        }
        out.push(']');
        out
    }
}

/// Appends `raw` (a JSON object) with `ids` inserted after its opening brace.
fn splice_ids(out: &mut String, raw: &str, ids: &[(&str, &str)]) {
    let trimmed = raw.trim();
    let Some(rest) = trimmed.strip_prefix('{') else {
        out.push_str(trimmed);
        return;
    };
    if ids.is_empty() {
        out.push_str(trimmed);
        return;
    }
    out.push('{');
    for (k, v) in ids {
        out.push_str(&serde_json::Value::from(*k).to_string());
        out.push(':');
        out.push_str(&serde_json::Value::from(*v).to_string());
        out.push(',');
    }
    let body = rest.trim_start();
    if body.starts_with('}') {
        out.pop();
    }
    out.push_str(body);
}

/// One entry of a session listing.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    /// Session id.
    pub id: String,
    /// Title.
    pub title: String,
    /// `time.updated`, epoch milliseconds.
    pub updated: i64,
    /// Project id (the session file's directory, or the `project_id` column).
    pub project_id: String,
    /// Number of messages.
    pub messages: usize,
    /// Stored size in bytes: session, message and part files, or the `data` columns.
    pub size: u64,
}

/// A listing of sessions (newest first) and the problems met while listing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listing {
    /// Sessions, by `updated` descending.
    pub sessions: Vec<SessionSummary>,
    /// Problems; affected sessions were skipped.
    pub problems: Vec<Problem>,
}

fn problem(origin: Origin, kind: ProblemKind) -> Problem {
    Problem { origin, kind }
}

fn sort_messages(messages: &mut [StoredMessage]) {
    messages.sort_by(|a, b| {
        (a.typed.created(), a.id.as_str()).cmp(&(b.typed.created(), b.id.as_str()))
    });
    for m in messages {
        m.parts.sort_by(|a, b| a.id.cmp(&b.id));
    }
}

/// Records an id mismatch (body vs. location); returns false when the body id is unsafe and
/// the record must be skipped.
fn check_body_id(
    field: &'static str,
    found: Option<&String>,
    expected: &str,
    origin: &Origin,
    problems: &mut Vec<Problem>,
) -> bool {
    let Some(found) = found else { return true };
    if let Err(reason) = check_id(found) {
        problems.push(problem(
            origin.clone(),
            ProblemKind::UnsafeId {
                id: found.clone(),
                reason,
            },
        ));
        return false;
    }
    if found != expected {
        problems.push(problem(
            origin.clone(),
            ProblemKind::IdMismatch {
                field,
                found: found.clone(),
                expected: expected.to_owned(),
            },
        ));
    }
    true
}

fn shape_or_json(e: &serde_json::Error) -> ProblemKind {
    if e.is_data() {
        ProblemKind::WrongShape {
            detail: e.to_string(),
        }
    } else {
        ProblemKind::InvalidJson {
            detail: e.to_string(),
        }
    }
}

/// The record's id and parse when the id is safe and the text parsed; otherwise the problem,
/// recorded (an unsafe id first: it is what makes the record unusable wherever it came from).
fn safe_and_parsed<T>(
    id: String,
    parsed: Result<T, serde_json::Error>,
    origin: &Origin,
    problems: &mut Vec<Problem>,
) -> Option<(String, T)> {
    if let Err(reason) = check_id(&id) {
        problems.push(problem(
            origin.clone(),
            ProblemKind::UnsafeId { id, reason },
        ));
        return None;
    }
    match parsed {
        Ok(v) => Some((id, v)),
        Err(e) => {
            problems.push(problem(origin.clone(), shape_or_json(&e)));
            None
        }
    }
}

/// Builds a stored part from its text, or a problem.
fn build_part(
    id: String,
    message_id: &str,
    session_id: &str,
    raw: String,
    origin: Origin,
    problems: &mut Vec<Problem>,
) -> Option<StoredPart> {
    let parsed = parse_part(&raw);
    build_parsed_part(id, message_id, session_id, raw, parsed, origin, problems)
}

/// [`build_part`] of a part already parsed (`parsed` is `parse_part(&raw)`), for a loader that
/// needed the body's ids before it knew the part's id.
fn build_parsed_part(
    id: String,
    message_id: &str,
    session_id: &str,
    raw: String,
    parsed: Result<(BodyIds, Part), serde_json::Error>,
    origin: Origin,
    problems: &mut Vec<Problem>,
) -> Option<StoredPart> {
    let (id, (body_ids, typed)) = safe_and_parsed(id, parsed, &origin, problems)?;
    let ok = check_body_id("id", body_ids.id.as_ref(), &id, &origin, problems)
        && check_body_id(
            "messageID",
            body_ids.message_id.as_ref(),
            message_id,
            &origin,
            problems,
        )
        && check_body_id(
            "sessionID",
            body_ids.session_id.as_ref(),
            session_id,
            &origin,
            problems,
        );
    ok.then(|| StoredPart {
        id,
        message_id: message_id.to_owned(),
        raw,
        body_ids,
        typed,
        origin,
    })
}

/// Builds a stored message (without parts) from its text, or a problem.
fn build_message(
    id: String,
    session_id: &str,
    raw: String,
    origin: Origin,
    problems: &mut Vec<Problem>,
) -> Option<StoredMessage> {
    let parsed = parse_message(&raw);
    build_parsed_message(id, session_id, raw, parsed, origin, problems)
}

/// [`build_message`] of a message already parsed (`parsed` is `parse_message(&raw)`).
fn build_parsed_message(
    id: String,
    session_id: &str,
    raw: String,
    parsed: Result<(BodyIds, MessageInfo), serde_json::Error>,
    origin: Origin,
    problems: &mut Vec<Problem>,
) -> Option<StoredMessage> {
    let (id, (body_ids, typed)) = safe_and_parsed(id, parsed, &origin, problems)?;
    let ok = check_body_id("id", body_ids.id.as_ref(), &id, &origin, problems)
        && check_body_id(
            "sessionID",
            body_ids.session_id.as_ref(),
            session_id,
            &origin,
            problems,
        );
    ok.then(|| StoredMessage {
        id,
        raw,
        body_ids,
        typed,
        parts: Vec::new(),
        origin,
    })
}

// ---------------------------------------------------------------------------------------------
// JSON-file tree
// ---------------------------------------------------------------------------------------------

/// The JSON-file store of OpenCode ≤ v1.1.65: `storage/{session,message,part}/…`
/// (opencode-storage.md §3.1).
#[derive(Debug, Clone)]
pub struct JsonStore {
    root: PathBuf,
}

impl JsonStore {
    /// Opens a JSON store. `path` is the `storage` directory or OpenCode's data directory that
    /// contains it.
    ///
    /// # Errors
    /// [`OpencodeError::Io`] when the directory cannot be resolved.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, OpencodeError> {
        let path = path.as_ref();
        let storage = if path.join("storage").is_dir() && !path.join("session").is_dir() {
            path.join("storage")
        } else {
            path.to_path_buf()
        };
        let root = fs::canonicalize(&storage).map_err(|source| OpencodeError::Io {
            path: storage.clone(),
            source,
        })?;
        Ok(JsonStore { root })
    }

    /// The resolved `storage` directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `path` and checks that it stays under the root.
    fn inside(&self, path: &Path) -> Result<PathBuf, ProblemKind> {
        let real = fs::canonicalize(path).map_err(|e| ProblemKind::Unreadable {
            detail: e.to_string(),
        })?;
        if real.starts_with(&self.root) {
            Ok(real)
        } else {
            Err(ProblemKind::OutsideRoot)
        }
    }

    /// Lists `(stem, path)` of the `*.json` files in a directory under the root.
    fn json_files(&self, dir: &Path, problems: &mut Vec<Problem>) -> Vec<(String, PathBuf)> {
        let mut out = Vec::new();
        if !dir.exists() {
            return out;
        }
        let real = match self.inside(dir) {
            Ok(r) => r,
            Err(kind) => {
                problems.push(problem(Origin::File(dir.to_path_buf()), kind));
                return out;
            }
        };
        let entries = match fs::read_dir(&real) {
            Ok(e) => e,
            Err(e) => {
                problems.push(problem(
                    Origin::File(dir.to_path_buf()),
                    ProblemKind::Unreadable {
                        detail: e.to_string(),
                    },
                ));
                return out;
            }
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                problems.push(problem(
                    Origin::File(dir.join(&name)),
                    ProblemKind::UnsafeId {
                        id: name.to_string_lossy().into_owned(),
                        reason: "not UTF-8",
                    },
                ));
                continue;
            };
            if let Some(stem) = name.strip_suffix(".json") {
                out.push((stem.to_owned(), dir.join(name)));
            }
        }
        out.sort();
        out
    }

    /// Subdirectory names of a directory under the root.
    fn subdirs(&self, dir: &Path, problems: &mut Vec<Problem>) -> Vec<String> {
        let mut out = Vec::new();
        let Ok(real) = self.inside(dir) else {
            return out;
        };
        let Ok(entries) = fs::read_dir(&real) else {
            return out;
        };
        for entry in entries.flatten() {
            if !entry.path().is_dir() {
                continue;
            }
            match entry.file_name().into_string() {
                Ok(name) => match check_id(&name) {
                    Ok(()) => out.push(name),
                    Err(reason) => problems.push(problem(
                        Origin::File(dir.join(&name)),
                        ProblemKind::UnsafeId { id: name, reason },
                    )),
                },
                Err(name) => problems.push(problem(
                    Origin::File(dir.join(&name)),
                    ProblemKind::UnsafeId {
                        id: name.to_string_lossy().into_owned(),
                        reason: "not UTF-8",
                    },
                )),
            }
        }
        out.sort();
        out
    }

    /// Reads a file under the root as UTF-8 text.
    fn read(&self, path: &Path) -> Result<String, ProblemKind> {
        let real = self.inside(path)?;
        let bytes = fs::read(real).map_err(|e| ProblemKind::Unreadable {
            detail: e.to_string(),
        })?;
        String::from_utf8(bytes).map_err(|e| ProblemKind::InvalidJson {
            detail: format!("not UTF-8: {e}"),
        })
    }

    fn file_len(&self, path: &Path) -> u64 {
        self.inside(path)
            .ok()
            .and_then(|p| fs::metadata(p).ok())
            .map_or(0, |m| m.len())
    }

    /// Lists every session, newest first.
    ///
    /// # Errors
    /// Never for damaged entries (they become problems); currently infallible otherwise, but
    /// kept fallible for future layouts.
    pub fn list_sessions(&self) -> Result<Listing, OpencodeError> {
        let mut listing = Listing::default();
        let session_dir = self.root.join("session");
        for project in self.subdirs(&session_dir, &mut listing.problems) {
            let dir = session_dir.join(&project);
            for (id, path) in self.json_files(&dir, &mut listing.problems) {
                let origin = Origin::File(path.clone());
                if let Err(reason) = check_id(&id) {
                    listing
                        .problems
                        .push(problem(origin, ProblemKind::UnsafeId { id, reason }));
                    continue;
                }
                let info = match self.read(&path) {
                    Ok(text) => match serde_json::from_str::<SessionInfo>(&text) {
                        Ok(info) => {
                            let body = (!info.id.is_empty()).then(|| info.id.clone());
                            if !check_body_id(
                                "id",
                                body.as_ref(),
                                &id,
                                &origin,
                                &mut listing.problems,
                            ) {
                                continue;
                            }
                            info
                        }
                        Err(e) => {
                            listing.problems.push(problem(origin, shape_or_json(&e)));
                            continue;
                        }
                    },
                    Err(kind) => {
                        listing.problems.push(problem(origin, kind));
                        continue;
                    }
                };
                let mut size = self.file_len(&path);
                let mut scratch = Vec::new();
                let messages = self.json_files(&self.root.join("message").join(&id), &mut scratch);
                for (mid, mpath) in &messages {
                    size += self.file_len(mpath);
                    if check_id(mid).is_ok() {
                        for (_, ppath) in
                            self.json_files(&self.root.join("part").join(mid), &mut scratch)
                        {
                            size += self.file_len(&ppath);
                        }
                    }
                }
                listing.sessions.push(SessionSummary {
                    id,
                    title: info.title,
                    updated: info.time.updated,
                    project_id: project.clone(),
                    messages: messages.len(),
                    size,
                });
            }
        }
        listing
            .sessions
            .sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.id.cmp(&b.id)));
        Ok(listing)
    }

    /// Loads one session with all its messages and parts.
    ///
    /// # Errors
    /// [`OpencodeError::UnsafeId`] for an id that could escape the root;
    /// [`OpencodeError::SessionNotFound`] when neither a session file nor a message directory
    /// exists for it.
    pub fn load_session(&self, session_id: &str) -> Result<Session, OpencodeError> {
        check_id(session_id).map_err(|reason| OpencodeError::UnsafeId {
            id: session_id.to_owned(),
            reason,
        })?;
        let mut problems = Vec::new();
        let file_name = format!("{session_id}.json");
        let session_dir = self.root.join("session");
        let mut info = None;
        let mut raw_info = None;
        for project in self.subdirs(&session_dir, &mut Vec::new()) {
            let path = session_dir.join(&project).join(&file_name);
            if !path.is_file() {
                continue;
            }
            let origin = Origin::File(path.clone());
            match self.read(&path) {
                Ok(text) => match serde_json::from_str::<SessionInfo>(&text) {
                    Ok(mut parsed) => {
                        if !parsed.id.is_empty() && parsed.id != session_id {
                            let found = std::mem::take(&mut parsed.id);
                            check_body_id("id", Some(&found), session_id, &origin, &mut problems);
                            parsed.id = session_id.to_owned();
                        }
                        if parsed.project_id.is_none() {
                            parsed.project_id = Some(project.clone());
                        }
                        info = Some(parsed);
                        raw_info = Some(text);
                    }
                    Err(e) => problems.push(problem(origin, shape_or_json(&e))),
                },
                Err(kind) => problems.push(problem(origin, kind)),
            }
            break;
        }
        let message_dir = self.root.join("message").join(session_id);
        if info.is_none() && raw_info.is_none() && problems.is_empty() && !message_dir.is_dir() {
            return Err(OpencodeError::SessionNotFound {
                id: session_id.to_owned(),
            });
        }
        let mut messages = Vec::new();
        let mut known: BTreeSet<String> = BTreeSet::new();
        for (mid, path) in self.json_files(&message_dir, &mut problems) {
            known.insert(mid.clone());
            let origin = Origin::File(path.clone());
            let raw = match self.read(&path) {
                Ok(t) => t,
                Err(kind) => {
                    problems.push(problem(origin, kind));
                    continue;
                }
            };
            let Some(mut message) = build_message(mid, session_id, raw, origin, &mut problems)
            else {
                continue;
            };
            let part_dir = self.root.join("part").join(&message.id);
            for (pid, ppath) in self.json_files(&part_dir, &mut problems) {
                let origin = Origin::File(ppath.clone());
                match self.read(&ppath) {
                    Ok(raw) => {
                        if let Some(p) =
                            build_part(pid, &message.id, session_id, raw, origin, &mut problems)
                        {
                            message.parts.push(p);
                        }
                    }
                    Err(kind) => problems.push(problem(origin, kind)),
                }
            }
            messages.push(message);
        }
        // Part directories of messages that were skipped or never existed: count them as
        // orphans when they belong to this session.
        let loaded: BTreeSet<&str> = messages.iter().map(|m| m.id.as_str()).collect();
        let all_messages = self.all_message_ids();
        let part_root = self.root.join("part");
        for mid in self.subdirs(&part_root, &mut Vec::new()) {
            if loaded.contains(mid.as_str()) {
                continue;
            }
            let skipped_here = known.contains(&mid);
            if !skipped_here && all_messages.contains(&mid) {
                continue;
            }
            let files = self.json_files(&part_root.join(&mid), &mut Vec::new());
            let belongs = skipped_here
                || files.first().is_some_and(|(_, p)| {
                    self.read(p)
                        .ok()
                        .and_then(|t| serde_json::from_str::<BodyIds>(&t).ok())
                        .and_then(|ids| ids.session_id)
                        .is_some_and(|s| s == session_id)
                });
            if belongs && !files.is_empty() {
                problems.push(problem(
                    Origin::File(part_root.join(&mid)),
                    ProblemKind::OrphanParts {
                        message_id: mid,
                        count: files.len(),
                    },
                ));
            }
        }
        sort_messages(&mut messages);
        let info = info.unwrap_or_else(|| SessionInfo {
            id: session_id.to_owned(),
            ..SessionInfo::default()
        });
        Ok(Session {
            info,
            raw_info,
            messages,
            problems,
        })
    }

    /// Every message id of the store (directory listing only).
    fn all_message_ids(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let dir = self.root.join("message");
        for sid in self.subdirs(&dir, &mut Vec::new()) {
            for (mid, _) in self.json_files(&dir.join(sid), &mut Vec::new()) {
                out.insert(mid);
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// SQLite
// ---------------------------------------------------------------------------------------------

/// The SQLite store of OpenCode ≥ v1.2.0 (`opencode.db`, opencode-storage.md §5), opened
/// read-only.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    conn: Connection,
    session_columns: BTreeSet<String>,
}

impl SqliteStore {
    /// Opens the database read-only and checks that `session`, `message` and `part` have the
    /// columns this reader uses.
    ///
    /// # Errors
    /// [`OpencodeError::Sqlite`] when it cannot be opened; [`OpencodeError::UnknownSchema`] when
    /// a table or column is missing.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, OpencodeError> {
        let path = path.as_ref().to_path_buf();
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| OpencodeError::Sqlite {
            path: path.clone(),
            source,
        })?;
        let mut store = SqliteStore {
            path,
            conn,
            session_columns: BTreeSet::new(),
        };
        let required: [(&str, &[&str]); 3] = [
            ("session", &["id", "title", "time_created", "time_updated"]),
            ("message", &["id", "session_id", "time_created", "data"]),
            ("part", &["id", "message_id", "session_id", "data"]),
        ];
        for (table, cols) in required {
            let have = store.columns(table)?;
            if have.is_empty() {
                return Err(OpencodeError::UnknownSchema {
                    path: store.path.clone(),
                    reason: format!("no `{table}` table"),
                });
            }
            for col in cols {
                if !have.contains(*col) {
                    return Err(OpencodeError::UnknownSchema {
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

    fn sql_err(&self, source: rusqlite::Error) -> OpencodeError {
        OpencodeError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn columns(&self, table: &str) -> Result<BTreeSet<String>, OpencodeError> {
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
    /// [`OpencodeError::Sqlite`] when a query fails.
    pub fn list_sessions(&self) -> Result<Listing, OpencodeError> {
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

    fn session_info(&self, session_id: &str) -> Result<Option<SessionInfo>, OpencodeError> {
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
    /// [`OpencodeError::UnsafeId`], [`OpencodeError::SessionNotFound`] (no session row and no
    /// message rows), [`OpencodeError::Sqlite`] when a query fails.
    pub fn load_session(&self, session_id: &str) -> Result<Session, OpencodeError> {
        check_id(session_id).map_err(|reason| OpencodeError::UnsafeId {
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
            return Err(OpencodeError::SessionNotFound {
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

// ---------------------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------------------

/// One `{info, parts}` entry, borrowing the document's text (no copy until a part is kept).
#[derive(Deserialize)]
struct ExportEntry<'a> {
    #[serde(borrow)]
    info: &'a RawValue,
    #[serde(default, borrow)]
    parts: Vec<&'a RawValue>,
}

/// An [`ExportEntry`] as the loader uses it: the exact slices of the info and of each part,
/// each with what a quick reading read of it in passing (its discriminants and ids), so that it
/// is not scanned again for them.
struct Entry<'a> {
    info: (&'a str, Option<Peeked>),
    parts: Vec<(&'a str, Option<Peeked>)>,
}

impl<'a> From<ExportEntry<'a>> for Entry<'a> {
    fn from(e: ExportEntry<'a>) -> Self {
        Entry {
            info: (e.info.get(), None),
            parts: e.parts.into_iter().map(|p| (p.get(), None)).collect(),
        }
    }
}

/// Reads the value at the scanner: an object through [`peek_object`], anything else skipped.
fn peeked_value<'a>(
    sc: &mut crate::json::Scanner<'a>,
) -> Result<(&'a str, Option<Peeked>), GiveUp> {
    let text = sc.src();
    if sc.peek_kind()? == crate::json::Kind::Object {
        let (span, peeked) = peek_object(sc)?;
        Ok((span.get(text), peeked))
    } else {
        Ok((sc.skip_value()?.get(text), None))
    }
}

/// Gives up on a quick reading (see [`quick_entries`]).
struct GiveUp;

impl From<crate::json::SyntaxError> for GiveUp {
    fn from(_: crate::json::SyntaxError) -> Self {
        GiveUp
    }
}

/// The bare-array export read with the crate's scanner, which skips long strings faster than
/// serde: `Some` only for a plain array of objects with one `info` and at most one array
/// `parts` (other keys ignored, as serde ignores them), spelled without escapes. Then serde's
/// `Vec<ExportEntry>` would read the same slices (both trim whitespace around a raw value);
/// anything else is left to serde, its result and its error.
fn quick_entries(text: &str) -> Option<Vec<Entry<'_>>> {
    use crate::json::Scanner;
    // `array` and `object` refuse any other kind of value, which gives the reading up.
    let mut sc = Scanner::new(text).ok()?;
    let mut entries = Vec::new();
    sc.array(|sc, _| -> Result<(), GiveUp> {
        let mut info = None;
        let mut parts: Option<Vec<(&str, Option<Peeked>)>> = None;
        sc.object(|sc, key| -> Result<(), GiveUp> {
            if key.escaped {
                return Err(GiveUp);
            }
            match key.raw(text) {
                "info" if info.is_none() => info = Some(peeked_value(sc)?),
                "parts" if parts.is_none() => {
                    let mut list = Vec::new();
                    sc.array(|sc, _| -> Result<(), GiveUp> {
                        list.push(peeked_value(sc)?);
                        Ok(())
                    })?;
                    parts = Some(list);
                }
                "info" | "parts" => return Err(GiveUp),
                _ => {
                    sc.skip_value()?;
                }
            }
            Ok(())
        })?;
        entries.push(Entry {
            info: info.ok_or(GiveUp)?,
            parts: parts.unwrap_or_default(),
        });
        Ok(())
    })
    .ok()?;
    sc.finish().ok()?;
    Some(entries)
}

#[derive(Deserialize)]
struct ExportDocument<'a> {
    #[serde(borrow)]
    info: &'a RawValue,
    #[serde(borrow)]
    messages: Vec<ExportEntry<'a>>,
}

/// Loads a session from exported JSON: either a bare array of `{info, parts}` (what OpenCode
/// hands plugins, peers.md §1) or the `opencode export` document `{info, messages: [...]}`.
///
/// Every message and part keeps the exact slice of the document it came from. For a bare
/// array the session id is taken from the messages' `sessionID`.
///
/// # Errors
/// [`OpencodeError::InvalidExport`] when the text is not JSON or has neither shape.
pub fn load_export(text: &str, origin: &str) -> Result<Session, OpencodeError> {
    let invalid = |reason: String| OpencodeError::InvalidExport {
        origin: origin.to_owned(),
        reason,
    };
    let read = match quick_entries(text) {
        Some(entries) => Ok(entries),
        None => serde_json::from_str::<Vec<ExportEntry<'_>>>(text)
            .map(|v| v.into_iter().map(Entry::from).collect::<Vec<_>>()),
    };
    let (raw_info, entries, base) = match read {
        Ok(entries) => (None, entries, String::new()),
        Err(array_err) => match serde_json::from_str::<ExportDocument<'_>>(text) {
            Ok(doc) => (
                Some(doc.info),
                doc.messages.into_iter().map(Entry::from).collect(),
                ".messages".to_owned(),
            ),
            Err(_) => return Err(invalid(array_err.to_string())),
        },
    };
    let mut problems = Vec::new();
    let mut info = match &raw_info {
        Some(raw) => serde_json::from_str::<SessionInfo>(raw.get())
            .map_err(|e| invalid(format!("session info: {e}")))?,
        None => SessionInfo::default(),
    };
    if info.id.is_empty() {
        info.id = entries
            .iter()
            .find_map(|e| super::types::body_ids(e.info.0).session_id)
            .unwrap_or_default();
    }
    if let Err(reason) = check_id(&info.id) {
        problems.push(problem(
            Origin::Export(String::new()),
            ProblemKind::UnsafeId {
                id: std::mem::take(&mut info.id),
                reason,
            },
        ));
    }
    let session_id = info.id.clone();
    let mut messages = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let (info, info_peeked) = entry.info;
        let origin = Origin::Export(format!("{base}[{i}].info"));
        let parsed = parse_message_peeked(info, info_peeked);
        let mid = match &parsed {
            Ok((ids, _)) => ids.id.clone(),
            Err(_) => super::types::body_ids(info).id,
        };
        let Some(mid) = mid else {
            problems.push(problem(
                origin,
                ProblemKind::WrongShape {
                    detail: "message info has no id".to_owned(),
                },
            ));
            continue;
        };
        let Some(mut message) = build_parsed_message(
            mid,
            &session_id,
            info.to_owned(),
            parsed,
            origin,
            &mut problems,
        ) else {
            if !entry.parts.is_empty() {
                problems.push(problem(
                    Origin::Export(format!("{base}[{i}].parts")),
                    ProblemKind::OrphanParts {
                        message_id: String::new(),
                        count: entry.parts.len(),
                    },
                ));
            }
            continue;
        };
        for (j, (raw, peeked)) in entry.parts.into_iter().enumerate() {
            let origin = Origin::Export(format!("{base}[{i}].parts[{j}]"));
            // The export's part has its id only in its body: one parse gives both (the ids
            // alone, as `BodyIds` reads them, when the part does not parse).
            let parsed = parse_part_peeked(raw, peeked);
            let pid = match &parsed {
                Ok((ids, _)) => ids.id.clone(),
                Err(_) => super::types::body_ids(raw).id,
            };
            let Some(pid) = pid else {
                problems.push(problem(
                    origin,
                    ProblemKind::WrongShape {
                        detail: "part has no id".to_owned(),
                    },
                ));
                continue;
            };
            if let Some(p) = build_parsed_part(
                pid,
                &message.id,
                &session_id,
                raw.to_owned(),
                parsed,
                origin,
                &mut problems,
            ) {
                message.parts.push(p);
            }
        }
        messages.push(message);
    }
    sort_messages(&mut messages);
    Ok(Session {
        info,
        raw_info: raw_info.map(|r| r.get().to_owned()),
        messages,
        problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the scanner reads an export, it reads what serde reads: the same slices, or it
    /// leaves the export to serde. Each case is one way an export can be unusual.
    #[test]
    fn quick_entries_read_what_serde_reads() {
        let cases = [
            r#"[{"info":{"id":"msg_1"},"parts":[{"id":"prt_1"},{"id":"prt_2"}]}]"#,
            " [ { \"parts\" : [ 1 , \"x\" ] , \"info\" : { \"id\" : \"msg_1\" } } ] ",
            r#"[{"info":{"id":"msg_1"}}]"#,
            r#"[{"info":null,"parts":[]}]"#,
            r#"[{"info":{"id":"msg_1"},"parts":null}]"#,
            r#"[{"info":{"id":"msg_1"},"parts":{"a":1}}]"#,
            r#"[{"info":{"id":"msg_1"},"info":{"id":"msg_2"}}]"#,
            r#"[{"info":{"id":"msg_1"},"parts":[],"parts":[]}]"#,
            r#"[{"info":{"id":"msg_1"},"extra":[1,{"b":2}]}]"#,
            r#"[{"info":{"role":"user","id":"msg_1"},"parts":[{"ty\u0070e":"text","text":"a"},{"type":"text","id":"prt_1","id":"prt_2","text":"b"},{"type":"text","id":5,"text":"c"},{"type":"text","text":"d","id":"prt_3"}]}]"#,
            r#"[{"\u0069nfo":{"id":"msg_1"}}]"#,
            r#"[{"parts":[]}]"#,
            r#"[[{"id":"msg_1"},[]]]"#,
            r#"[5]"#,
            r#"[]"#,
            r#"{"info":{"id":"ses_1"},"messages":[]}"#,
            r#"[{"info":{"id":"msg_1"}}] trailing"#,
            r#"[{"info":{"id":"msg_1"}"#,
        ];
        let mut quick_read = 0;
        for text in cases {
            let slow = serde_json::from_str::<Vec<ExportEntry<'_>>>(text)
                .map(|v| v.into_iter().map(Entry::from).collect::<Vec<_>>());
            let Some(quick) = quick_entries(text) else {
                continue;
            };
            quick_read += 1;
            let slow =
                slow.unwrap_or_else(|e| panic!("serde refuses what the scanner read: {text}: {e}"));
            let pairs = |v: &[Entry<'_>]| -> Vec<(String, Vec<String>)> {
                v.iter()
                    .map(|e| {
                        (
                            e.info.0.to_owned(),
                            e.parts.iter().map(|p| p.0.to_owned()).collect(),
                        )
                    })
                    .collect()
            };
            assert_eq!(pairs(&quick), pairs(&slow), "{text}");
            // What was read in passing gives the parse a record gets alone, unusual ones too.
            let outcome = |r: Result<(BodyIds, Part), serde_json::Error>| match r {
                Ok(v) => Ok(v),
                Err(e) => Err(e.to_string()),
            };
            for e in quick {
                for (raw, peeked) in e.parts {
                    assert_eq!(
                        outcome(parse_part_peeked(raw, peeked)),
                        outcome(parse_part(raw)),
                        "{raw}"
                    );
                }
                let (info, info_peeked) = e.info;
                let alone = parse_message(info).map_err(|e| e.to_string());
                let peeked = parse_message_peeked(info, info_peeked).map_err(|e| e.to_string());
                assert_eq!(peeked, alone, "{info}");
            }
        }
        assert_eq!(quick_read, 7, "the plain cases are read by the scanner");
    }
}
