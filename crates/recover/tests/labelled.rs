//! Accuracy over the third-party labelled sets in `../shared/research/errors-labelled-sets.json`
//! (237 real errors from public threads, two sets collected on 2026-11-22 and 2026-11-24).
//!
//! The data is not copied into the repository: the test reads it beside the checkout and skips
//! with one printed line when it is absent (and fails when `CI=true`). It is split by source
//! thread with the corpus's own split ([`common::split_of`]), so a thread that also appears in
//! `corpus/errors` lands in the same part; the split is recorded, item by item, in
//! `corpus/errors/labelled-sets.split.tsv` and checked against the computed one here.
//!
//! Held-out misses are counted, never listed (so that nobody tunes on them by reading a test
//! log); set `TURNKEEPER_SHOW_HELD_OUT=1` to list them once a round of work is finished.
//! Items labelled `other` ("no kind fits") are not scored, but must not be called retryable.
//!
//! `cargo test -p turnkeeper-recover --test labelled -- --nocapture` prints the table.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{Split, pct, split_of, thread_key};
use serde::Deserialize;
use turnkeeper_recover::{ErrorKind, classify};

#[path = "../../testkit/src/shared.rs"]
mod shared;

/// Held-out accuracy over the scored items must reach this (percent; 97.3 measured).
const HELD_OUT_MIN: f64 = 95.0;
/// Development accuracy over the scored items must reach this (percent; 97.4 measured).
const DEVELOPMENT_MIN: f64 = 95.0;

/// One item of `errors-labelled-sets.json`.
#[derive(Debug, Deserialize)]
struct Labelled {
    id: String,
    source: String,
    http_status: Option<u16>,
    raw: String,
    /// An [`ErrorKind`] name, or `other` (no kind fits; not scored).
    category: String,
}

/// The labelled items, or `None` (with one printed line) when `../shared` is absent.
fn items() -> Option<Vec<Labelled>> {
    let dir = shared::shared_dir("research")?;
    let path = dir.join("errors-labelled-sets.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    #[derive(Deserialize)]
    struct File {
        items: Vec<Labelled>,
    }
    let file: File =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(file.items)
}

fn split_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/errors/labelled-sets.split.tsv")
}

/// The recorded split: `id → (thread, part)`.
fn recorded_split() -> BTreeMap<String, (String, String)> {
    let path = split_file();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 3, "{}: bad line {l:?}", path.display());
            (cols[0].to_owned(), (cols[1].to_owned(), cols[2].to_owned()))
        })
        .collect()
}

#[test]
fn the_recorded_split_is_the_computed_one() {
    let recorded = recorded_split();
    let Some(items) = items() else { return };
    assert_eq!(recorded.len(), items.len(), "one line per item");
    for item in &items {
        let thread = thread_key(&item.source);
        let part = split_of(&thread).label();
        assert_eq!(
            recorded.get(&item.id),
            Some(&(thread.clone(), part.to_owned())),
            "{}",
            item.id
        );
    }
    let threads: BTreeMap<&str, &str> = recorded
        .values()
        .map(|(t, p)| (t.as_str(), p.as_str()))
        .collect();
    let held = threads.values().filter(|p| **p == "held-out").count();
    let share = held as f64 / threads.len() as f64;
    assert!((0.25..=0.42).contains(&share), "held-out share {share:.2}");
}

/// Hits and totals per expected kind, misses and unscored items, for one part.
#[derive(Default)]
struct Part {
    per_kind: BTreeMap<ErrorKind, (usize, usize)>,
    misses: Vec<String>,
    /// `other` items: (classified `unknown`, total).
    other: (usize, usize),
    /// Items whose label is not retryable but whose verdict is.
    retried_hard: Vec<String>,
}

impl Part {
    fn overall(&self) -> (usize, usize) {
        self.per_kind
            .values()
            .fold((0, 0), |(h, n), (a, b)| (h + a, n + b))
    }
}

fn measure(items: &[Labelled]) -> BTreeMap<Split, Part> {
    let mut parts: BTreeMap<Split, Part> = BTreeMap::new();
    for item in items {
        let d = classify(item.http_status, &item.raw);
        let part = parts
            .entry(split_of(&thread_key(&item.source)))
            .or_default();
        let expected = ErrorKind::from_name(&item.category);
        if d.retryable && !expected.is_some_and(ErrorKind::is_retryable) {
            part.retried_hard
                .push(format!("{} ({})", item.id, item.source));
        }
        let Some(expected) = expected else {
            assert_eq!(item.category, "other", "{}: unknown label", item.id);
            part.other.1 += 1;
            if d.kind == ErrorKind::Unknown {
                part.other.0 += 1;
            }
            continue;
        };
        let e = part.per_kind.entry(expected).or_default();
        e.1 += 1;
        if d.kind == expected {
            e.0 += 1;
        } else {
            part.misses.push(format!(
                "{} ({}): expected {expected}, got {}",
                item.id, item.source, d.kind
            ));
        }
    }
    parts
}

fn print_table(parts: &BTreeMap<Split, Part>) {
    let empty = Part::default();
    let dev = parts.get(&Split::Development).unwrap_or(&empty);
    let held = parts.get(&Split::HeldOut).unwrap_or(&empty);
    let kinds: BTreeSet<ErrorKind> = dev
        .per_kind
        .keys()
        .chain(held.per_kind.keys())
        .copied()
        .collect();
    println!(
        "{:<28} {:>13} {:>8} {:>13} {:>8}",
        "kind", "development", "acc", "held-out", "acc"
    );
    let row = |name: &str, (dh, dn): (usize, usize), (hh, hn): (usize, usize)| {
        println!(
            "{name:<28} {:>13} {:>7.1}% {:>13} {:>7.1}%",
            format!("{dh}/{dn}"),
            pct(dh, dn),
            format!("{hh}/{hn}"),
            pct(hh, hn)
        );
    };
    let cell = |p: &Part, k: ErrorKind| p.per_kind.get(&k).copied().unwrap_or((0, 0));
    for k in kinds {
        row(k.as_str(), cell(dev, k), cell(held, k));
    }
    row("overall (scored)", dev.overall(), held.overall());
    row("other (unscored): unknown", dev.other, held.other);
    for m in &dev.misses {
        println!("miss [development] {m}");
    }
    if std::env::var("TURNKEEPER_SHOW_HELD_OUT").is_ok_and(|v| v == "1") {
        for m in &held.misses {
            println!("miss [held-out] {m}");
        }
    } else {
        println!(
            "held-out misses: {} (not listed; TURNKEEPER_SHOW_HELD_OUT=1 lists them)",
            held.misses.len()
        );
    }
}

#[test]
fn labelled_sets_accuracy() {
    let Some(items) = items() else { return };
    let parts = measure(&items);
    print_table(&parts);
    let empty = Part::default();
    let dev = parts.get(&Split::Development).unwrap_or(&empty);
    let held = parts.get(&Split::HeldOut).unwrap_or(&empty);
    // A hard error called retryable is the worst defect: an agent would resend it until it
    // gives up. Development items are named; held-out ones only counted.
    assert!(
        dev.retried_hard.is_empty() && held.retried_hard.is_empty(),
        "hard errors called retryable: development {:?}, held-out {} item(s)",
        dev.retried_hard,
        held.retried_hard.len()
    );
    let (hh, hn) = held.overall();
    let (dh, dn) = dev.overall();
    assert!(
        pct(hh, hn) >= HELD_OUT_MIN,
        "held-out {:.1}% < {HELD_OUT_MIN}%",
        pct(hh, hn)
    );
    assert!(
        pct(dh, dn) >= DEVELOPMENT_MIN,
        "development {:.1}% < {DEVELOPMENT_MIN}%",
        pct(dh, dn)
    );
}
