//! Reading the input: a file, standard input, or an OpenCode storage directory.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use turnkeeper::model::opencode::store::{JsonStore, Session, SqliteStore};
use turnkeeper::{Format, FormatHint};

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum FormatArg {
    /// Tell from the input.
    #[default]
    Auto,
    /// Anthropic Messages request or response body.
    Anthropic,
    /// OpenCode export (`[{info, parts}]`) or storage directory.
    Opencode,
    /// Gemini generateContent body.
    Gemini,
}

impl FormatArg {
    pub fn hint(self) -> FormatHint {
        match self {
            FormatArg::Auto => FormatHint::Auto,
            FormatArg::Anthropic => FormatHint::Exactly(Format::Anthropic),
            FormatArg::Opencode => FormatHint::Exactly(Format::Opencode),
            FormatArg::Gemini => FormatHint::Exactly(Format::Gemini),
        }
    }
}

/// The input, read whole.
pub enum Input {
    /// A body (file or stdin), with the name to show.
    Text { name: String, text: String },
    /// An OpenCode storage directory.
    Storage(PathBuf),
}

/// Reads `path` (`None` or `-`: standard input). A directory is OpenCode storage.
pub fn read_input(path: Option<&Path>) -> Result<Input, String> {
    match path {
        None => read_stdin(),
        Some(p) if p.as_os_str() == "-" => read_stdin(),
        Some(p) if p.is_dir() => Ok(Input::Storage(p.to_owned())),
        Some(p) => {
            let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let text = String::from_utf8(bytes).map_err(|e| {
                format!(
                    "{}: invalid UTF-8 at byte {}",
                    p.display(),
                    e.utf8_error().valid_up_to()
                )
            })?;
            Ok(Input::Text {
                name: p.display().to_string(),
                text,
            })
        }
    }
}

fn read_stdin() -> Result<Input, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| format!("<stdin>: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "<stdin>: invalid UTF-8 at byte {}",
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok(Input::Text {
        name: "<stdin>".to_owned(),
        text,
    })
}

/// An opened OpenCode store of either kind.
pub enum Store {
    Json(JsonStore),
    Sqlite(SqliteStore),
}

/// Opens the OpenCode store at `dir`: `opencode.db` inside it (current versions), else the
/// JSON-file `storage/` tree (older versions).
pub fn open_store(dir: &Path) -> Result<Store, String> {
    let db = dir.join("opencode.db");
    if db.is_file() {
        return SqliteStore::open(&db)
            .map(Store::Sqlite)
            .map_err(|e| e.to_string());
    }
    if dir.extension().is_some_and(|x| x == "db") && dir.is_file() {
        return SqliteStore::open(dir)
            .map(Store::Sqlite)
            .map_err(|e| e.to_string());
    }
    JsonStore::open(dir)
        .map(Store::Json)
        .map_err(|e| e.to_string())
}

impl Store {
    /// Loads one session; with `None`, the most recently updated one.
    pub fn session(&self, id: Option<&str>) -> Result<Session, String> {
        let id = match id {
            Some(id) => id.to_owned(),
            None => {
                let listing = match self {
                    Store::Json(s) => s.list_sessions(),
                    Store::Sqlite(s) => s.list_sessions(),
                }
                .map_err(|e| e.to_string())?;
                listing
                    .sessions
                    .first()
                    .map(|s| s.id.clone())
                    .ok_or("the storage holds no session")?
            }
        };
        match self {
            Store::Json(s) => s.load_session(&id),
            Store::Sqlite(s) => s.load_session(&id),
        }
        .map_err(|e| e.to_string())
    }
}
