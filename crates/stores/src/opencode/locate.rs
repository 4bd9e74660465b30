//! Finding the store: which database or tree a directory holds, and the default data
//! directories of OpenCode and Kilo.

use std::path::{Path, PathBuf};

use turnkeeper_model::opencode::Session;

use super::sqlite::sidecar;
use super::{JsonStore, Listing, SqliteStore, StoreError};

/// What looked for a store names, for the error when none is found.
const LOOKED_FOR: &str = "an OpenCode or Kilo store: opencode.db, opencode-<channel>.db, \
                          kilo.db, or a storage/ tree with a session/ directory";

/// The kind of store found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreKind {
    /// OpenCode's JSON-file tree (≤ v1.1.65).
    Json,
    /// A SQLite database (OpenCode ≥ v1.2.0, or Kilo).
    Sqlite,
}

/// A located store, open for reading.
#[derive(Debug)]
pub enum Located {
    /// The JSON-file tree.
    Json(JsonStore),
    /// A SQLite database.
    Sqlite {
        /// The database, open.
        store: Box<SqliteStore>,
        /// Its path, canonical.
        path: PathBuf,
    },
}

impl Located {
    /// The kind of store.
    pub fn kind(&self) -> StoreKind {
        match self {
            Located::Json(_) => StoreKind::Json,
            Located::Sqlite { .. } => StoreKind::Sqlite,
        }
    }

    /// The JSON tree's `storage` directory, or the database file.
    pub fn path(&self) -> &Path {
        match self {
            Located::Json(s) => s.root(),
            Located::Sqlite { path, .. } => path,
        }
    }

    /// The directory backups go under: the `storage` directory, or the database's directory.
    pub fn root(&self) -> PathBuf {
        match self {
            Located::Json(s) => s.root().to_owned(),
            Located::Sqlite { path, .. } => path
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_owned),
        }
    }

    /// The files another process would hold open while using the store (for
    /// [`super::write::in_use`]): the database with its `-wal` and `-shm`, or the tree.
    pub fn in_use_targets(&self) -> Vec<PathBuf> {
        match self {
            Located::Json(s) => vec![s.root().to_owned()],
            Located::Sqlite { path, .. } => {
                vec![path.clone(), sidecar(path, "-wal"), sidecar(path, "-shm")]
            }
        }
    }

    /// Every session, newest first.
    ///
    /// # Errors
    /// When the store cannot be read as a whole.
    pub fn listing(&self) -> Result<Listing, StoreError> {
        match self {
            Located::Json(s) => s.list_sessions(),
            Located::Sqlite { store, .. } => store.list_sessions(),
        }
    }

    /// The same store opened again, to read what was written since this one was opened: a
    /// database is read as it was when opened (immutable, or a private copy while its
    /// write-ahead log holds data), so a session read back after a repair must come from a
    /// store opened after it.
    ///
    /// # Errors
    /// When the database can no longer be opened.
    pub fn reopened(&self) -> Result<Located, StoreError> {
        match self {
            Located::Json(s) => Ok(Located::Json(s.clone())),
            Located::Sqlite { path, .. } => open_db(path),
        }
    }

    /// One session.
    ///
    /// # Errors
    /// [`StoreError::UnsafeId`], [`StoreError::SessionNotFound`], or a read failure.
    pub fn load(&self, session_id: &str) -> Result<Session, StoreError> {
        match self {
            Located::Json(s) => s.load_session(session_id),
            Located::Sqlite { store, .. } => store.load_session(session_id),
        }
    }
}

/// The data directories to search when none is given, in order: `$OPENCODE_DB`'s directory is
/// not among them (see [`locate`]); `$XDG_DATA_HOME/opencode` and `$XDG_DATA_HOME/kilo`, else
/// `~/.local/share/opencode` and `~/.local/share/kilo` (the same on every OS,
/// opencode-storage.md §2.1; Kilo keeps the same format under its own name).
///
/// # Errors
/// [`StoreError::NoHome`] when neither variable is set.
pub fn default_data_dirs() -> Result<Vec<PathBuf>, StoreError> {
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|x| !x.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".local/share"))
            .ok_or(StoreError::NoHome)?,
    };
    Ok(vec![base.join("opencode"), base.join("kilo")])
}

/// Finds and opens the store at `path`, or in the default data directories when `None`.
///
/// `path` may be a database file, a directory holding one, OpenCode's data directory, or a
/// `storage/` tree. In a directory, a database wins over the JSON tree (it is authoritative once
/// it exists, opencode-storage.md §8): `opencode.db` or `kilo.db` first, else the one
/// `opencode-<channel>.db` / `kilo-<channel>.db` there is. With no `path`, `$OPENCODE_DB` (an
/// absolute path, or one relative to OpenCode's data directory) is used when set, then the
/// first default data directory that holds a store.
///
/// # Errors
/// [`StoreError::NoStore`] (saying what was looked for) when there is none,
/// [`StoreError::Ambiguous`] when a directory holds several non-default databases, or the
/// error of opening what was found.
pub fn locate(path: Option<&Path>) -> Result<Located, StoreError> {
    if let Some(p) = path {
        return locate_in(p);
    }
    let dirs = default_data_dirs()?;
    if let Some(db) = std::env::var_os("OPENCODE_DB").filter(|x| !x.is_empty()) {
        let db = PathBuf::from(db);
        let db = if db.is_absolute() {
            db
        } else {
            dirs[0].join(db)
        };
        return open_db(&db);
    }
    for dir in &dirs {
        if dir.is_dir() {
            match locate_in(dir) {
                Err(StoreError::NoStore { .. }) => {}
                found => return found,
            }
        }
    }
    Err(StoreError::NoStore {
        dir: dirs[0].clone(),
        looked_for: format!(
            "{LOOKED_FOR}, in {}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    })
}

fn open_db(db: &Path) -> Result<Located, StoreError> {
    let path = std::fs::canonicalize(db).map_err(|source| StoreError::Io {
        path: db.to_owned(),
        source,
    })?;
    let store = SqliteStore::open(&path)?;
    tracing::debug!(db = %path.display(), "store: SQLite database");
    Ok(Located::Sqlite {
        store: Box::new(store),
        path,
    })
}

fn locate_in(p: &Path) -> Result<Located, StoreError> {
    if p.is_file() {
        return open_db(p);
    }
    if !p.is_dir() {
        return Err(StoreError::Io {
            path: p.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
        });
    }
    let mut defaults = Vec::new();
    let mut channels = Vec::new();
    let entries = std::fs::read_dir(p).map_err(|source| StoreError::Io {
        path: p.to_owned(),
        source,
    })?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".db") else {
            continue;
        };
        if !e.path().is_file() {
            continue;
        }
        if stem == "opencode" || stem == "kilo" {
            defaults.push(name);
        } else if stem.starts_with("opencode-") || stem.starts_with("kilo-") {
            channels.push(name);
        }
    }
    defaults.sort();
    channels.sort();
    let chosen = match (defaults.first(), channels.as_slice()) {
        (Some(d), _) => Some(d.clone()),
        (None, [one]) => Some(one.clone()),
        (None, []) => None,
        (None, many) => {
            return Err(StoreError::Ambiguous {
                dir: p.to_owned(),
                candidates: many.to_vec(),
            });
        }
    };
    if let Some(name) = chosen {
        return open_db(&p.join(name));
    }
    let tree = if p.join("storage").join("session").is_dir() {
        Some(p.join("storage"))
    } else if p.join("session").is_dir() {
        Some(p.to_owned())
    } else {
        None
    };
    match tree {
        Some(t) => {
            tracing::debug!(tree = %t.display(), "store: JSON tree");
            Ok(Located::Json(JsonStore::open(&t)?))
        }
        None => Err(StoreError::NoStore {
            dir: p.to_owned(),
            looked_for: LOOKED_FOR.to_owned(),
        }),
    }
}
