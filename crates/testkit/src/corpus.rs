//! The checked-in corpus: the labelled real errors (embedded, so fuzz targets need no paths) and
//! the files under `corpus/` (read from disk, for the tests that replay every file).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;
use turnkeeper_recover::ErrorKind;

const ERROR_FILES: &[&str] = &[
    include_str!("../../../corpus/errors/public.jsonl"),
    include_str!("../../../corpus/errors/found.jsonl"),
];

/// One labelled real error from `corpus/errors/*.jsonl`.
#[derive(Debug, Clone, Deserialize)]
pub struct ErrorItem {
    /// Unique slug.
    pub id: String,
    /// HTTP status as reported.
    pub status: Option<u16>,
    /// The error text as it appeared.
    pub body: String,
    /// The labelled kind.
    pub kind: ErrorKind,
}

/// Parses JSON lines of error items; lines that are not items are skipped.
pub fn parse_error_lines(text: &str) -> Vec<ErrorItem> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Every labelled error of the embedded corpus.
pub fn errors() -> &'static [ErrorItem] {
    static ITEMS: OnceLock<Vec<ErrorItem>> = OnceLock::new();
    ITEMS.get_or_init(|| {
        ERROR_FILES
            .iter()
            .flat_map(|f| parse_error_lines(f))
            .collect()
    })
}

/// The repository root (two levels above this crate).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every regular file under `dir` (recursively), sorted; hidden files and READMEs skipped.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "README.md" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The corpus directories every fuzz body is replayed over.
pub const CORPUS_DIRS: &[&str] = &[
    "corpus/anthropic",
    "corpus/gemini",
    "corpus/damaged",
    "corpus/opencode",
    "corpus/claude_code",
    "corpus/errors",
    "corpus/regressions",
    "corpus/fuzz",
];
