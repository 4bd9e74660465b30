//! Shared test helpers: the real-error corpus.

use std::path::PathBuf;

use serde::Deserialize;
use turnkeeper_recover::ErrorKind;

/// One labelled real error from `corpus/errors`.
#[derive(Debug, Clone, Deserialize)]
pub struct Item {
    /// Unique slug.
    pub id: String,
    /// Where it was seen.
    #[allow(dead_code)]
    pub source: String,
    /// HTTP status as reported.
    pub status: Option<u16>,
    /// Upstream provider as far as the source shows.
    #[allow(dead_code)]
    pub provider: String,
    /// The error text as it appeared.
    pub body: String,
    /// The expected kind.
    #[allow(dead_code)]
    pub kind: ErrorKind,
}

/// Every item of every `corpus/errors/*.jsonl` file.
pub fn corpus() -> Vec<Item> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/errors");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus/errors exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut items = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("corpus file is readable");
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let item: Item = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", file.display(), n + 1));
            items.push(item);
        }
    }
    items
}
