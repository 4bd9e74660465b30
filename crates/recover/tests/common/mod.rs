//! Shared test helpers: the real-error corpus and its development / held-out split.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use turnkeeper_recover::ErrorKind;

/// One labelled real error from `corpus/errors`.
#[derive(Debug, Clone, Deserialize)]
pub struct Item {
    /// Unique slug.
    pub id: String,
    /// Where it was seen: `owner/repo#N` or the GitHub URL of the thread.
    pub source: String,
    /// HTTP status as reported.
    #[allow(dead_code)]
    pub status: Option<u16>,
    /// Upstream provider as far as the source shows.
    #[allow(dead_code)]
    pub provider: String,
    /// The error text as it appeared.
    #[allow(dead_code)]
    pub body: String,
    /// The expected kind.
    #[allow(dead_code)]
    pub kind: ErrorKind,
}

/// Which part of the corpus an item belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(dead_code)]
pub enum Split {
    /// Rules may be written and tuned against these items.
    Development,
    /// Never looked at while tuning: the figure that measures generalisation.
    HeldOut,
}

impl Split {
    /// A short label for reports.
    #[allow(dead_code)]
    pub fn label(self) -> &'static str {
        match self {
            Split::Development => "development",
            Split::HeldOut => "held-out",
        }
    }
}

/// The fixed seed of the split. Changing it reshuffles which threads are held out, which
/// invalidates every held-out figure measured before: do not change it.
pub const SPLIT_SEED: u64 = 0x7475_726e_6b65_6570; // "turnkeep"

/// One thread in this many is held out (about a third).
pub const HELD_OUT_ONE_IN: u64 = 3;

impl Item {
    /// The source thread, normalised to `owner/repo#N` (lowercase), so that a URL and the short
    /// form of the same thread land in the same part.
    pub fn thread(&self) -> String {
        thread_key(&self.source)
    }

    /// The part of the split this item belongs to: every item of a thread goes the same way.
    #[allow(dead_code)]
    pub fn split(&self) -> Split {
        split_of(&self.thread())
    }
}

/// `owner/repo#N` from `owner/repo#N` or `https://github.com/owner/repo/(issues|pull)/N[...]`.
pub fn thread_key(source: &str) -> String {
    let s = source.trim();
    let s = s.strip_prefix("https://github.com/").unwrap_or(s);
    let mut parts = s.splitn(4, '/');
    let key = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(owner), Some(repo), Some("issues" | "pull"), Some(rest)) => {
            let number: String = rest.chars().take_while(char::is_ascii_digit).collect();
            format!("{owner}/{repo}#{number}")
        }
        _ => s.to_owned(),
    };
    key.to_ascii_lowercase()
}

/// FNV-1a over the seed's bytes and then the thread key; held out when the hash falls in one
/// residue class modulo [`HELD_OUT_ONE_IN`].
pub fn split_of(thread: &str) -> Split {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in SPLIT_SEED.to_le_bytes().iter().chain(thread.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    if h.is_multiple_of(HELD_OUT_ONE_IN) {
        Split::HeldOut
    } else {
        Split::Development
    }
}

/// Corpus files measured by a test of their own, with a schema of their own, and left out of
/// [`corpus`]: `fresh.jsonl` (issue 22's fresh set, thread and peer items; `tests/fresh.rs`).
pub const MEASURED_APART: &[&str] = &["fresh.jsonl"];

/// Every item of every `corpus/errors/*.jsonl` file but those [`MEASURED_APART`].
#[allow(dead_code)]
pub fn corpus() -> Vec<Item> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/errors");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus/errors exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| MEASURED_APART.contains(&n))
        })
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

/// Hits and totals per kind, for one part of the split.
#[derive(Debug, Default)]
#[allow(dead_code)]
pub struct Tally {
    /// `(hits, total)` per expected kind.
    pub per_kind: BTreeMap<ErrorKind, (usize, usize)>,
    /// `id: expected → got` for every miss.
    pub misses: Vec<String>,
}

#[allow(dead_code)]
impl Tally {
    /// Record one item and what it was classified as.
    pub fn add(&mut self, item: &Item, got: ErrorKind) {
        let e = self.per_kind.entry(item.kind).or_default();
        e.1 += 1;
        if got == item.kind {
            e.0 += 1;
        } else {
            self.misses.push(format!(
                "{} ({}): expected {}, got {got}",
                item.id, item.source, item.kind
            ));
        }
    }

    /// `(hits, total)` over every kind.
    pub fn overall(&self) -> (usize, usize) {
        self.per_kind
            .values()
            .fold((0, 0), |(h, n), (a, b)| (h + a, n + b))
    }
}

/// Percentage, 100 when there is nothing to count.
#[allow(dead_code)]
pub fn pct(hits: usize, total: usize) -> f64 {
    if total == 0 {
        100.0
    } else {
        100.0 * hits as f64 / total as f64
    }
}
