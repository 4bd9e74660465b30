//! OpenCode's JSON-file store (≤ v1.1.65): `storage/{session,message,part}/…`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use turnkeeper_model::opencode::session::{
    Session, build_message, build_part, check_body_id, problem, shape_or_json, sort_messages,
};
use turnkeeper_model::opencode::types::{BodyIds, SessionInfo};
use turnkeeper_model::opencode::{Origin, Problem, ProblemKind, check_id};

use super::{Listing, SessionSummary, StoreError};

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
    /// [`StoreError::Io`] when the directory cannot be resolved.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let storage = if path.join("storage").is_dir() && !path.join("session").is_dir() {
            path.join("storage")
        } else {
            path.to_path_buf()
        };
        let root = fs::canonicalize(&storage).map_err(|source| StoreError::Io {
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
    pub fn list_sessions(&self) -> Result<Listing, StoreError> {
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
    /// [`StoreError::UnsafeId`] for an id that could escape the root;
    /// [`StoreError::SessionNotFound`] when neither a session file nor a message directory
    /// exists for it.
    pub fn load_session(&self, session_id: &str) -> Result<Session, StoreError> {
        check_id(session_id).map_err(|reason| StoreError::UnsafeId {
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
            return Err(StoreError::SessionNotFound {
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
